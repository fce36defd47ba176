r"""Reference mechanisms for (ε, δ)-DP on ℝ, ℝ^d and ℤ: upper bounds on the optimal cost V*.

Sources (tags used throughout; full citations in :mod:`optmech.mechanisms.gaussian` for the first three):

* **[DR14]** Dwork & Roth 2014, Thm A.1: the classic Gaussian calibration (0 < ε < 1).
* **[BW18]** Balle & Wang, ICML 2018, Thm 8: the exact δ(ε) of Gaussian noise (analytic calibration).
* **[CKS20]** Canonne, Kamath & Steinke, NeurIPS 2020: the discrete Gaussian on ℤ.
* **[GDGK20]** Q. Geng, W. Ding, R. Guo, S. Kumar, "Tight Analysis of Privacy and Utility Tradeoff
  in Approximate Differential Privacy", AISTATS 2020: the truncated Laplace mechanism.
* [Geng13], [GKOV15], [KHP15]: the ε-DP staircase and Laplace laws (δ = 0, hence (ε, δ)-DP).

Every function returns :class:`~optmech.mechanisms.approx_bounds.Bound` objects of kind
``upper``: the expected cost of one (ε, δ)-DP (or stronger) additive noise law, with its
calibration in ``parameters`` and its source in ``note``.  ``valid`` is False when a side
condition fails (the classic Gaussian for ε >= 1) or the value is not finite (ε = 0 for the
ε-DP laws).

The truncated Laplace mechanism [GDGK20], verified from first principles
--------------------------------------------------------------------------
With λ = Δ/ε, A = λ ln(1 + (e^ε − 1)/(2δ)) and a = A/λ, the density is
f(x) = B e^{−|x|/λ} on [−A, A], B = 1/(2λ(1 − e^{−a})) (so ∫f = 2Bλ(1 − e^{−a}) = 1).

*δ(ε) for a shift t ∈ (0, Δ]* [derived].  For neighbouring inputs the outputs have densities f
and f(· − t); δ(ε) = ∫ (f(x) − e^ε f(x − t))_+ dx (the shift −t gives the same value by
x ↦ −x, and f(x − t) against e^ε f(x) too, by x ↦ t − x).  Split the line:

* x ∈ [t − A, A] (both densities positive): f(x)/f(x − t) = e^{(|x−t| − |x|)/λ} <= e^{t/λ}
  <= e^{Δ/λ} = e^ε, so the integrand is 0;
* x > A: f(x) = 0, the integrand is 0;
* x ∈ [−A, t − A): f(x − t) = 0, the integrand is f(x).

Hence δ(t) = ∫_{−A}^{min(t−A, A)} f.  For t <= A (the whole piece is in x <= 0):

.. math:: \delta(t) = B\lambda e^{-a}\big(e^{t/\lambda} - 1\big)
                    = \frac{e^{t/\lambda} - 1}{2(e^{a} - 1)},

increasing in t; at t = Δ, with e^a = 1 + (e^ε − 1)/(2δ), δ(Δ) = (e^ε − 1)/(2(e^ε − 1)/(2δ)) = δ:
**the maximum over |t| <= Δ is δ, attained at t = Δ** (and the mechanism is not (ε, δ')-DP for
any δ' < δ).  This needs A >= Δ, i.e. δ <= 1/2.  For δ > 1/2, A < Δ and for t ∈ (A, Δ]
δ(t) = ½ + Bλ(1 − e^{−(t−A)/λ}); at t = Δ this is ½ + (δ − ½)e^{a−ε} < δ (as e^a < e^ε), so the
mechanism is still (ε, δ)-DP but the bound is not attained [derived; the paper's regime is
small δ].  (2A > Δ always: A/Δ = ln(1 + (e^ε − 1)/(2δ))/ε > ln((1 + e^ε)/2)/ε >= ½ since
(1 + e^ε)/2 >= e^{ε/2}, so the shifted supports overlap and δ(Δ) < 1.)

Rounding: λ is rounded up and a = ln(1 + (e^ε − 1)/(2δ)) is evaluated in mpmath and rounded up,
A = λa rounded up, so that the float parameters satisfy Δ/λ <= ε and e^{A/λ} >= 1 + (e^ε − 1)/(2δ):
by the formula above the law actually sampled from is (ε, δ)-DP (δ(Δ) is decreasing in A/λ).

*Costs* [derived]: E|X|^P = 2B∫₀^A x^P e^{−x/λ} dx = λ^P γ(P + 1, a)/(1 − e^{−a}) with γ the lower
incomplete gamma function (P = 1: λ − A/(e^a − 1); P = 2: 2λ² − (A² + 2Aλ)/(e^a − 1)),
evaluated in mpmath at 40 digits and rounded up.

Other references
----------------
* ``gaussian`` / ``analytic_gaussian``: N(0, σ²I_d) with σ from :func:`~optmech.mechanisms.gaussian.classic_gaussian_sigma`
  / :func:`~optmech.mechanisms.gaussian.analytic_gaussian_sigma`, for the ℓ2 sensitivity: Δ for
  ``norm="l2"``, and Δ for ``norm="l1"`` too (the worst ℓ1-bounded shift lies on an axis).
* ``laplace``: δ = 0.  1-D: scale Δ/ε.  d-D, ℓ1: i.i.d. Laplace(Δ/ε) coordinates.
* ``l2_laplace`` (in place of ``laplace`` for d-D, ℓ2; the name pure d-D solves give it): the
  ℓ2-Laplace (K-norm) density ∝ e^{−ε‖x‖₂/Δ} [KHP15, Thm 8], ε-DP since
  e^{ε(‖x − t‖₂ − ‖x‖₂)/Δ} <= e^{ε‖t‖₂/Δ}; ‖X‖₂ ~ Gamma(d, Δ/ε), so E‖X‖₂ = dΔ/ε and
  E‖X‖₂² = d(d+1)Δ²/ε².
* ``staircase``: δ = 0.  1-D: the optimum over ε-DP noise [Geng13, Thm 2.4] (for other costs the
  best staircase, still an ε-DP upper bound).  d-D: the best ℓ1 staircase [GKOV15], for ℓ2
  sensitivity Δ with ℓ1 sensitivity √d·Δ (‖t‖₁ <= √d‖t‖₂).
* ``uniform``: U[−Δ/(2δ), Δ/(2δ)] in 1-D, (0, δ)-DP: TV(U, U + t) = |t|δ/Δ <= δ.  d-D: the
  product, TV = 1 − Π(1 − |t_i|δ/Δ) <= ‖t‖₁δ/Δ (ℓ1 sensitivity Δ; √d·Δ for ℓ2).
* ``discrete_gaussian`` (ℤ): σ from :func:`~optmech.mechanisms.gaussian.discrete_gaussian_sigma`.

Tested by: tests/test_approx_references.py.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx_bounds import Bound, check_delta, check_dim, check_epsilon, make_bound, resolve_cost
from optmech.mechanisms.base import Mechanism, Privacy, Reference

__all__ = [
    "TruncatedLaplaceParameters",
    "truncated_laplace",
    "truncated_laplace_shift_delta",
    "truncated_laplace_cost",
    "truncated_laplace_reference",
    "TruncatedLaplace",
    "continuous_approx_references",
    "discrete_approx_references",
    "NORMS",
]

#: Sensitivity norms accepted in d-D.
NORMS = ("l1", "l2")


def _check_tl(epsilon, delta, sensitivity) -> tuple[float, float, float]:
    eps = nx.check_epsilon(epsilon)
    return eps, check_delta(delta), nx.check_sensitivity(sensitivity)


# --------------------------------------------------------------------------------------------
# truncated Laplace [GDGK20]


class TruncatedLaplaceParameters(NamedTuple):
    """λ, A and B of the truncated Laplace density B e^{−|x|/λ} on [−A, A] [GDGK20].

    >>> import math
    >>> p = truncated_laplace(1.0, 0.1, 1.0)
    >>> p.lam, math.isclose(p.A, math.log(1 + math.expm1(1.0) / 0.2), rel_tol=1e-15)   # λ = Δ/ε, A = λ ln(1 + (e − 1)/(2δ))
    (1.0, True)
    """

    lam: float
    A: float
    B: float


def truncated_laplace(epsilon, delta, sensitivity) -> TruncatedLaplaceParameters:
    r"""The calibration of the truncated Laplace mechanism [GDGK20]: λ, A, B.

    .. math:: \lambda = \frac{\Delta}{\epsilon},\quad
              A = \frac{\Delta}{\epsilon}\ln\Big(1 + \frac{e^{\epsilon} - 1}{2\delta}\Big),\quad
              B = \frac{1}{2\lambda(1 - e^{-A/\lambda})}

    The law is (ε, δ)-DP for sensitivity Δ, with δ(ε) = δ exactly at the shift Δ when δ <= 1/2
    (derivation in the module docstring).  λ and A are rounded up (A/λ in mpmath), which keeps
    the float parameters (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float in (0, 700]
    delta : float in (0, 1)
    sensitivity : float > 0

    >>> p = truncated_laplace(1.0, 0.1, 1.0)
    >>> import math
    >>> math.isclose(2 * p.B * p.lam * (1 - math.exp(-p.A / p.lam)), 1.0)     # normalised
    True
    """
    import mpmath

    eps, dlt, D = _check_tl(epsilon, delta, sensitivity)
    lam = D / eps
    if lam * eps < D:
        lam = nx.up_ulps(lam)
    with mpmath.workdps(50):
        e = mpmath.mpf(eps)
        a = mpmath.log1p(mpmath.expm1(e) / (2 * mpmath.mpf(dlt)))
        a_up = nx.mp_round_up(a, 30)
        A = float(mpmath.mpf(lam) * mpmath.mpf(a_up))
        while mpmath.mpf(A) / mpmath.mpf(lam) < mpmath.mpf(a_up):
            A = nx.up_ulps(A)
        B = float(1 / (2 * mpmath.mpf(lam) * -mpmath.expm1(-mpmath.mpf(A) / mpmath.mpf(lam))))
    return TruncatedLaplaceParameters(lam, A, B)


def truncated_laplace_shift_delta(shift, epsilon, delta, sensitivity) -> float:
    r"""δ(ε) of the truncated Laplace law [GDGK20] between X and X + t, |t| = ``shift`` (derived).

    δ(t) = (e^{|t|/λ} − 1)/(2(e^a − 1)) for |t| <= A, ½ + (1 − e^{−(|t|−A)/λ})/(2(1 − e^{−a}))
    for A < |t| <= 2A, 1 beyond (a = A/λ; module docstring).  ε here is the mechanism's ε (its
    λ = Δ/ε); the divergence is taken at that same ε.

    >>> import math
    >>> math.isclose(truncated_laplace_shift_delta(1.0, 1.0, 0.1, 1.0), 0.1, rel_tol=1e-12)   # = δ at t = Δ
    True
    >>> truncated_laplace_shift_delta(0.5, 1.0, 0.1, 1.0) < 0.1
    True
    """
    eps, dlt, D = _check_tl(epsilon, delta, sensitivity)
    if isinstance(shift, bool) or not isinstance(shift, (int, float)) or not math.isfinite(float(shift)):
        raise SpecError(f"shift must be a finite real number, got {shift!r}")
    t = abs(float(shift))
    lam, A, _ = truncated_laplace(eps, dlt, D)
    a = A / lam
    if t <= A:
        return math.expm1(t / lam) / (2.0 * math.expm1(a))
    if t <= 2.0 * A:
        return 0.5 + -math.expm1(-(t - A) / lam) / (2.0 * -math.expm1(-a))
    return 1.0


def _tl_cost_detail(cost, eps: float, dlt: float, D: float) -> tuple[float, bool, str, dict]:
    import mpmath

    lam, A, B = truncated_laplace(eps, dlt, D)
    params = {"lambda": lam, "A": A, "B": B}
    marg = resolve_cost(cost, 1)[0]
    p = nx.power_of(marg)
    if p is not None:
        with mpmath.workdps(40):
            L, a, P = mpmath.mpf(lam), mpmath.mpf(A) / mpmath.mpf(lam), mpmath.mpf(p)
            v = L**P * mpmath.gammainc(P + 1, 0, a) / -mpmath.expm1(-a)
            return (nx.mp_round_up(v, 30), True,
                    "closed form E|X|^P = lambda^P gamma(P+1, A/lambda)/(1 - e^(-A/lambda)) [derived], mpmath, rounded up",
                    params)
    from optmech.mechanisms.gaussian import cost_breaks, expr_cost_quad

    def density(x):
        return B * math.exp(-abs(x) / lam)

    v, err = expr_cost_quad(marg, density, cost_breaks(marg, -A, A))
    return (nx.up_ulps(v + err, 4), False,
            f"numeric: scipy quad over [-A, A] cut at the cost's breakpoints, plus its error estimate ({err:.1e}); "
            "not certified", params)


def truncated_laplace_reference(cost, epsilon, delta, sensitivity) -> Reference:
    r"""E L(X) under the truncated Laplace law [GDGK20], as a :class:`~optmech.mechanisms.base.Reference`.

    ``abs``, ``square``, ``pow:P``: λ^P γ(P + 1, A/λ)/(1 − e^{−A/λ}) (closed form, rounded up);
    expressions: scipy quad (``exact=False``).

    >>> ref = truncated_laplace_reference("abs", 1.0, 0.1, 1.0)
    >>> import math
    >>> p = truncated_laplace(1.0, 0.1, 1.0)
    >>> ref.name, math.isclose(ref.value, p.lam - p.A / math.expm1(p.A / p.lam), rel_tol=1e-14)
    ('truncated_laplace', True)
    """
    eps, dlt, D = _check_tl(epsilon, delta, sensitivity)
    value, exact, note, params = _tl_cost_detail(cost, eps, dlt, D)
    return Reference("truncated_laplace", value, params, exact, note)


def truncated_laplace_cost(cost, epsilon, delta, sensitivity) -> float:
    r"""E L(X) under the truncated Laplace law [GDGK20] (rounded up; see :func:`truncated_laplace_reference`).

    >>> import math
    >>> p = truncated_laplace(0.5, 0.01, 2.0)
    >>> a = p.A / p.lam
    >>> math.isclose(truncated_laplace_cost("square", 0.5, 0.01, 2.0),
    ...              2 * p.lam**2 - (p.A**2 + 2 * p.A * p.lam) / math.expm1(a), rel_tol=1e-13)
    True
    """
    return truncated_laplace_reference(cost, epsilon, delta, sensitivity).value


class TruncatedLaplace(Mechanism):
    r"""Truncated Laplace noise B e^{−|x|/λ} on [−A, A] for (ε, δ)-DP [GDGK20].

    Parameters
    ----------
    epsilon : float in (0, 700]
    delta : float in (0, 1)
    sensitivity : float > 0

    Notes
    -----
    (ε, δ)-DP for shifts up to Δ, with δ(ε) = δ at the shift Δ when δ <= 1/2 (module docstring).
    ``sample`` inverts the cdf of |X| and draws a sign (floating point: not exactly DP).

    >>> mech = TruncatedLaplace(epsilon=1.0, delta=0.1, sensitivity=1.0)
    >>> round(mech.A, 6), mech.support() == (-mech.A, mech.A), float(mech.cdf(0.0))
    (2.260868, True, 0.5)
    >>> p = mech.privacy()
    >>> p.notion, p.delta <= 0.1
    ('approx', True)
    >>> bool(np.all(np.abs(mech.sample(1000, rng=0)) <= mech.A))
    True
    >>> TruncatedLaplace.from_dict(mech.to_dict()) == mech
    True
    """

    name = "truncated_laplace"

    def __init__(self, *, epsilon, delta, sensitivity=1.0) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self.delta = check_delta(delta)
        self.lam, self.A, self.B = truncated_laplace(self.epsilon, self.delta, self.sensitivity)
        self._a = self.A / self.lam

    @property
    def parameters(self) -> dict:
        return {"delta": self.delta, "lambda": self.lam, "A": self.A, "B": self.B}

    def to_dict(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": self.delta, "sensitivity": self.sensitivity}

    def privacy(self) -> Privacy:
        real = truncated_laplace_shift_delta(self.sensitivity, self.epsilon, self.delta, self.sensitivity)
        return Privacy("approx", self.epsilon, min(real, self.delta), self.sensitivity, "abs",
                       "delta(epsilon) of the truncated Laplace law at the shift Delta, the worst shift "
                       "[GDGK20; derived in optmech.mechanisms.approx_references]")

    def support(self) -> tuple[float, float]:
        """``(−A, A)``."""
        return (-self.A, self.A)

    def _pdf(self, x):
        return np.where(np.abs(x) <= self.A, self.B * np.exp(-np.abs(x) / self.lam), 0.0)

    def _logpdf(self, x):
        with np.errstate(divide="ignore"):
            return np.where(np.abs(x) <= self.A, math.log(self.B) - np.abs(x) / self.lam, -np.inf)

    def _sf(self, x):
        # x >= 0: P(X > x) = (e^{−x/λ} − e^{−a})/(2(1 − e^{−a})), 0 beyond A; x < 0: 1 − P(X > −x)
        y = np.minimum(np.abs(x), self.A)
        t = np.exp(-y / self.lam) * -np.expm1(-(self._a - y / self.lam)) / (2.0 * -math.expm1(-self._a))
        return np.where(x >= 0, t, 1.0 - t)

    def _ppf(self, q):
        # |X| quantile at r ∈ [0, 1]: −λ ln(1 − r(1 − e^{−a})); q < 1/2 ↔ r = 1 − 2q on the negative side
        u = -math.expm1(-self._a)
        r = np.abs(2.0 * q - 1.0)
        mag = np.minimum(-self.lam * np.log1p(-r * u), self.A)
        return np.where(q < 0.5, -mag, mag) + 0.0

    def _sample(self, n, rng):
        u = -math.expm1(-self._a)
        mag = np.minimum(-self.lam * np.log1p(-rng.random(n) * u), self.A)
        return np.where(rng.random(n) < 0.5, -mag, mag)

    def _entropy(self):
        # h = −E ln f = −ln B + E|X|/λ
        return -math.log(self.B) + truncated_laplace_cost("abs", self.epsilon, self.delta, self.sensitivity) / self.lam

    def _expected_cost(self, cost):
        return truncated_laplace_cost(cost, self.epsilon, self.delta, self.sensitivity)


# --------------------------------------------------------------------------------------------
# reference sets


def _check_norm(norm: Any) -> str:
    if not isinstance(norm, str) or norm.strip().lower() not in NORMS:
        raise SpecError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    return norm.strip().lower()


def _gaussian_bounds(cost_arg, eps: float, dlt: float, D2: float, d: int, where: str) -> list[Bound]:
    from optmech.mechanisms.gaussian import (
        analytic_gaussian_sigma,
        classic_gaussian_sigma,
        gaussian_delta,
        gaussian_reference,
    )

    out = []
    classic = classic_gaussian_sigma(eps, dlt, D2)
    conds = {"epsilon_in_0_1": classic.valid}
    params: dict[str, Any] = {"sigma": classic.sigma, "l2_sensitivity": D2, "dim": d, "theorem": "[DR14, Thm A.1]"}
    if math.isinf(classic.sigma):
        out.append(make_bound("gaussian", math.inf, "upper", conds, params, True, "NOT a bound: " + classic.note))
    else:
        ref = gaussian_reference(cost_arg, classic.sigma, d)
        real = gaussian_delta(classic.sigma, eps, D2)
        params["exact_delta"] = real
        note = f"classic Gaussian, {where}: {classic.note}; cost: {ref.note}"
        if not classic.valid:
            note = (f"NOT a valid bound ([DR14, Thm A.1] needs 0 < epsilon < 1): the exact delta at this sigma is "
                    f"{real:.3g} [BW18, Thm 8], {'<=' if real <= dlt else 'above'} delta = {dlt:g}; " + note)
        out.append(make_bound("gaussian", ref.value, "upper", conds, params, ref.exact, note))
    sigma = analytic_gaussian_sigma(eps, dlt, D2)
    ref = gaussian_reference(cost_arg, sigma, d)
    params = {"sigma": sigma, "l2_sensitivity": D2, "dim": d, "exact_delta": gaussian_delta(sigma, eps, D2),
              "theorem": "[BW18, Thm 8]"}
    out.append(make_bound("analytic_gaussian", ref.value, "upper", {}, params, ref.exact,
                          f"analytic Gaussian, {where}: the smallest sigma with exact delta(epsilon) <= delta "
                          f"[BW18, Thm 8]; cost: {ref.note}"))
    return out


def continuous_approx_references(cost, epsilon, delta, sensitivity, dim=1, norm="l1") -> list[Bound]:
    r"""Upper bounds on V* for (ε, δ)-DP additive noise on ℝ (d = 1) or ℝ^d: one per reference law.

    Parameters
    ----------
    cost : Cost or str
        1-D: any cost (``l1``/``l2``/``linf`` mean ``abs``, ``l2sq`` means ``square``).
        d > 1: ``l1``, ``l2``, ``l2sq`` or ``linf``.
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : float > 0
        Δ, in ``norm`` when d > 1.
    dim : int in [1, 8]
    norm : {"l1", "l2"}
        The sensitivity's norm in d-D (ignored in 1-D).

    Returns
    -------
    list of Bound
        Named ``gaussian`` (classic, ``valid=False`` unless 0 < ε < 1 [DR14, Thm A.1]),
        ``analytic_gaussian`` [BW18, Thm 8], ``truncated_laplace`` (1-D only, [GDGK20]),
        ``laplace`` (δ = 0; in d-D with ``norm="l1"`` i.i.d. coordinates), ``l2_laplace`` (in its place
        for d-D ``norm="l2"``: the ℓ2-Laplace [KHP15, Thm 8], the name pure d-D solves use), ``staircase`` (δ = 0,
        [Geng13, Thm 2.4] / [GKOV15]) and ``uniform`` ((0, δ)-DP), all of kind ``upper``; each
        carries its calibration in ``parameters`` (module docstring).

    >>> bs = {b.name: b for b in continuous_approx_references("abs", 0.5, 0.01, 1.0)}
    >>> sorted(bs)
    ['analytic_gaussian', 'gaussian', 'laplace', 'staircase', 'truncated_laplace', 'uniform']
    >>> bs["analytic_gaussian"].value < bs["gaussian"].value, bs["gaussian"].valid
    (True, True)
    >>> bs["truncated_laplace"].value < bs["laplace"].value     # δ > 0 helps
    True
    >>> nd = {b.name: b for b in continuous_approx_references("l2", 1.0, 0.01, 1.0, dim=2, norm="l2")}
    >>> nd["l2_laplace"].value, nd["gaussian"].valid             # ℓ2-Laplace: E‖X‖₂ = dΔ/ε
    (2.0, False)
    """
    eps, dlt, D, d = check_epsilon(epsilon), check_delta(delta), nx.check_sensitivity(sensitivity), check_dim(dim)
    nrm = _check_norm(norm)
    marg, name_nd = resolve_cost(cost, d)
    cost_arg = marg if d == 1 else name_nd
    if d == 1:
        where, D1 = "1-D", D
    elif nrm == "l1":
        where, D1 = f"d = {d}, l1 sensitivity {D:g} (l2 sensitivity {D:g}, a shift along one axis)", D
    else:
        where, D1 = f"d = {d}, l2 sensitivity {D:g}", nx.up_ulps(math.sqrt(d) * D, 2)
    out = _gaussian_bounds(cost_arg, eps, dlt, D, d, where)
    pos = {"epsilon_positive": eps > 0.0}

    # truncated Laplace (1-D)
    if d == 1:
        if eps == 0.0:
            out.append(make_bound("truncated_laplace", math.inf, "upper", pos, {}, True,
                                  "not defined at epsilon = 0 (lambda = Delta/epsilon; its limit is the uniform): NOT a bound"))
        else:
            ref = truncated_laplace_reference(marg, eps, dlt, D)
            out.append(make_bound("truncated_laplace", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                                  "truncated Laplace B e^(-|x|/lambda) on [-A, A], (epsilon, delta)-DP with delta(epsilon) "
                                  f"= delta at the shift Delta [GDGK20; derived]; cost: {ref.note}"))

    # Laplace (δ = 0)
    if eps == 0.0:
        out.append(make_bound("laplace", math.inf, "upper", pos, {"dim": d}, True, "not defined at epsilon = 0: NOT a bound"))
    elif d == 1:
        from optmech.mechanisms.laplace import laplace_reference

        ref = laplace_reference(marg, eps, D)
        out.append(make_bound("laplace", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                              "epsilon-DP hence (epsilon, delta)-DP [Geng13, §2.6.1]; " + ref.note))
    elif nrm == "l1":
        from optmech.mechanisms.multidim import laplace_nd_cost

        value = laplace_nd_cost(name_nd, eps, D, d)
        out.append(make_bound("laplace", value, "upper", pos, {"scale": D / eps, "dim": d, "law": "product"},
                              name_nd != "l2", "i.i.d. Laplace(Delta/epsilon) coordinates, epsilon-DP for l1 sensitivity "
                              "Delta [GKOV15, Def. 3]" + ("; E||X||_2 numeric" if name_nd == "l2" else "")))
    else:
        from optmech.mechanisms.multidim import l2_laplace_cost

        value = l2_laplace_cost(name_nd, eps, d, D)
        out.append(make_bound("l2_laplace", value, "upper", pos, {"scale": D / eps, "dim": d, "law": "l2_laplace"},
                              name_nd != "linf", "l2-Laplace density ~ exp(-epsilon ||x||_2/Delta), epsilon-DP for l2 "
                              "sensitivity Delta [KHP15, Thm 8]; ||X||_2 ~ Gamma(d, Delta/epsilon): E||X||_2 = d Delta/epsilon, "
                              "E||X||_2^2 = d(d+1) Delta^2/epsilon^2"))

    # staircase (δ = 0)
    if eps == 0.0:
        out.append(make_bound("staircase", math.inf, "upper", pos, {"dim": d}, True, "not defined at epsilon = 0: NOT a bound"))
    elif d == 1:
        from optmech.mechanisms.staircase import optimal_gamma, staircase_cost, staircase_reference

        ref = staircase_reference(marg, eps, D)
        if ref is not None:
            out.append(make_bound("staircase", ref.value, "upper", pos, dict(ref.parameters), ref.exact,
                                  "the delta = 0 optimum, epsilon-DP hence (epsilon, delta)-DP; " + ref.note))
        else:
            g = optimal_gamma(marg, eps, D)
            v = staircase_cost(marg, eps, D, g)
            out.append(make_bound("staircase", v, "upper", pos, {"gamma": g}, False,
                                  "the best staircase [Geng13, (2.13)] for a cost not proven symmetric nondecreasing: "
                                  "epsilon-DP hence an upper bound, not known to be the delta = 0 optimum; numeric"))
    elif nrm == "l2" and name_nd in ("l2", "l2sq"):
        # the staircase in the sensitivity's own norm: f(x) = g(||x||_2) with the 1-D staircase profile g, so
        # f(x)/f(x + v) = g(r)/g(r') with |r - r'| <= ||v||_2 <= Delta (triangle inequality): epsilon-DP
        # [MDA26]; its cost is the closed-form radial moment E R^m (the cone factor of ||x||_2 on its own sphere
        # is 1) at the numerically chosen gamma, a valid law whatever gamma is
        from optmech.mechanisms.multidim import optimal_gamma_nd, staircase_nd_cost

        g = optimal_gamma_nd(name_nd, eps, d, D)  # γ* does not depend on the norm (the cone factor does not)
        value = staircase_nd_cost(name_nd, eps, D, g, d, norm="l2")
        out.append(make_bound("staircase", value, "upper", pos, {"dim": d, "gamma": g, "norm": "l2"}, True,
                              "the l2 staircase g(||x||_2) [MDA26] at its best gamma, epsilon-DP for l2 sensitivity "
                              "Delta (triangle inequality), hence (epsilon, delta)-DP; closed-form radial moment"))
    else:
        from optmech.mechanisms.multidim import staircase_nd_optimal_cost

        value = staircase_nd_optimal_cost(name_nd, eps, D1, d)
        out.append(make_bound("staircase", value, "upper", pos, {"dim": d, "l1_sensitivity": D1}, False,
                              f"the best l1 staircase [GKOV15] for l1 sensitivity {D1:g}, epsilon-DP hence (epsilon, delta)-DP"
                              + ("" if nrm == "l1" else " (l1 sensitivity sqrt(d) x the l2 sensitivity)")))

    # uniform ((0, δ)-DP)
    half = D1 / (2.0 * dlt)
    if d == 1:
        lo, hi = marg.integral(np.array([-half]), np.array([half]), pieces=4096)
        value = nx.up_ulps(float(hi[0]) / (2.0 * half), 2)
        exact = marg.kind != "expr"
        note = ("U[-Delta/(2 delta), Delta/(2 delta)], (0, delta)-DP: TV(U, U + t) = |t| delta/Delta [derived]; cost: "
                + ("closed-form integral, outward rounded" if exact else "rigorous upper enclosure of the integral (4096 pieces)"))
        params: dict[str, Any] = {"half_width": half, "dim": 1}
    else:
        from optmech.mechanisms.uniform import UniformContinuous

        value = UniformContinuous(delta=dlt, sensitivity=D1, dim=d).expected_cost(name_nd)
        exact = name_nd != "l2"
        note = (f"product U[-a, a]^d, a = {half:g}, (0, delta)-DP for l1 sensitivity {D1:g}: TV <= ||t||_1 delta/Delta_1 "
                "[derived]" + ("" if nrm == "l1" else " (l1 sensitivity sqrt(d) x the l2 sensitivity)"))
        params = {"half_width": half, "dim": d, "l1_sensitivity": D1}
    out.append(make_bound("uniform", value, "upper", {}, params, exact, note))
    return out


def discrete_approx_references(cost, epsilon, delta, sensitivity) -> list[Bound]:
    r"""Upper bounds on V* for (ε, δ)-DP noise on ℤ from the discrete Gaussian [CKS20].

    One Bound, ``discrete_gaussian``: σ = :func:`~optmech.mechanisms.gaussian.discrete_gaussian_sigma`
    (ε, δ, Δ), its δ(ε) re-evaluated (an upper bound over shifts 1..Δ) and its cost as an exact sum
    plus a rigorous tail bound (:func:`~optmech.mechanisms.gaussian.discrete_gaussian_reference`).
    ``valid`` needs both the tail bound and δ(ε) <= δ.

    Parameters
    ----------
    cost : Cost or str
        Any 1-D cost.
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : int >= 1

    >>> (b,) = discrete_approx_references("square", 1.0, 1e-5, 1)
    >>> b.name, b.valid, b.parameters["realised_delta"] <= 1e-5
    ('discrete_gaussian', True, True)
    >>> b.value >= b.parameters["sigma"] ** 2 * 0.99        # ≈ σ² for σ ≫ 1
    True
    """
    from optmech.mechanisms.gaussian import discrete_gaussian_delta, discrete_gaussian_reference, discrete_gaussian_sigma

    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    D = nx.check_sensitivity(sensitivity, integer=True)
    marg = resolve_cost(cost, 1)[0]
    sigma = discrete_gaussian_sigma(eps, dlt, D)
    real = discrete_gaussian_delta(sigma, eps, D)
    ref = discrete_gaussian_reference(marg, sigma)
    conds = {"tail_bounded": bool(ref.parameters["tail_bounded"]), "delta_verified": real <= dlt}
    params = {"sigma": sigma, "realised_delta": real, "sensitivity": D}
    return [make_bound("discrete_gaussian", ref.value, "upper", conds, params, ref.exact,
                       "discrete Gaussian on Z, the smallest sigma (to 1e-12) with delta(epsilon) <= delta over integer "
                       f"shifts 1..Delta [CKS20]; cost: {ref.note}")]
