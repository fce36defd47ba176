r"""Truncated Laplace noise for (ε, δ)-DP: on ℝ the truncated Laplace mechanism [GDGK20]
(:class:`TruncatedLaplace`), on ℤ the truncated discrete Laplace with an exact δ
(:class:`TruncatedDiscreteLaplace`).

Sources (tags used throughout; full citations in :data:`optmech.sources.WORKS`):

* **[GDGK20]** Q. Geng, W. Ding, R. Guo, S. Kumar, "Tight Analysis of Privacy and Utility Tradeoff
  in Approximate Differential Privacy", AISTATS 2020: the truncated Laplace mechanism.

The truncated discrete Laplace's half-width T is calibrated, with its proof in interval arithmetic,
by :func:`optmech.mechanisms.approx.deployed_integer.truncated_geometric_law`.

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

The truncated discrete Laplace on ℤ, calibrated to (ε, δ) with an exact δ
---------------------------------------------------------------------------
.. math:: p(k) = \lambda^{|k|} / Z_T \ \text{ on } |k| \le T, \qquad \lambda = e^{-\epsilon/\Delta},
          \qquad Z_T = 1 + 2\lambda\frac{1-\lambda^T}{1-\lambda}.

Inside [−T, T] the ratio p(k)/p(k + s) is at most λ^{-|s|} <= e^ε for |s| <= Δ; so the hockey-stick
divergence at shift s is the mass of the top min(s, 2T + 1) points, largest at s = Δ:
δ(T) = λ^{T−Δ+1}(1 − λ^Δ)/((1 − λ) Z_T) for T >= Δ − 1 (derivation and the smallest T with
δ(T) <= δ in :mod:`optmech.mechanisms.approx.deployed_integer`, evaluated there in interval arithmetic).
This is the "truncated integer noise with an exact δ" practitioners ask DP libraries for; as
noise on ℕ it is the translate X + T (``--domain nonnegative``).

**Exact sampler.**  Draws of the discrete Laplace with the same λ (exact inversion,
:func:`optmech.exact.laws.discrete_laplace`) are kept when |k| <= T and redrawn otherwise.  Rejection
is exact: the kept draw has the law of the discrete Laplace conditioned on [−T, T], which is p.  The
number of redraws is independent of the value kept (each round is independent), so it reveals
nothing about the noise; the acceptance probability is 1 − 2λ^{T+1}/(1 + λ), above 1 − 2δ.

Tested by: tests/test_approx_references.py, tests/test_truncated_discrete_laplace.py.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx.bounds import check_delta, resolve_cost
from optmech.mechanisms.base import Mechanism, Privacy, Reference

__all__ = [
    "TruncatedLaplaceParameters",
    "truncated_laplace",
    "truncated_laplace_shift_delta",
    "truncated_laplace_cost",
    "truncated_laplace_reference",
    "TruncatedLaplace",
    "TruncatedDiscreteLaplace",
]


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
    from optmech.mechanisms.approx.gaussian import cost_breaks, expr_cost_quad

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
                       "[GDGK20; derived in optmech.mechanisms.approx.truncated]")

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
# the truncated discrete Laplace on ℤ (truncated double geometric)


class TruncatedDiscreteLaplace(Mechanism):
    r"""Truncated discrete Laplace p(k) ∝ λ^{|k|} on [−T, T], λ = e^{−ε/Δ}: (ε, δ)-DP with δ = δ(T) exactly.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1/2), optional
        The target: T is the smallest half-width with δ(T) <= δ (certified in interval arithmetic).
    sensitivity : int >= 1
    half_width : int, optional
        T itself (instead of ``delta``); the guarantee is then (ε, δ(T)).

    >>> m = TruncatedDiscreteLaplace(epsilon=1.0, delta=1e-6, sensitivity=10)
    >>> m.half_width, m.privacy().delta <= 1e-6
    (137, True)
    >>> lam = math.exp(-0.1); k = np.arange(-137, 138); p = lam ** np.abs(k); p /= p.sum()
    >>> math.isclose(m.expected_cost("abs"), float((np.abs(k) * p).sum()), rel_tol=1e-12)
    True
    >>> draws = m.exact_sampler().sample(1000, rng=1)
    >>> int(np.abs(draws).max()) <= 137
    True
    >>> TruncatedDiscreteLaplace.from_dict(m.to_dict()).half_width
    137
    """

    name = "truncated_discrete_laplace"
    lattice = True

    def __init__(self, *, epsilon, delta=None, sensitivity=1, half_width=None) -> None:
        from optmech.mechanisms.approx.deployed_integer import truncated_geometric_delta, truncated_geometric_law

        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        D = int(self.sensitivity)
        if (delta is None) == (half_width is None):
            raise SpecError("TruncatedDiscreteLaplace takes one of delta (the target) or half_width (T)")
        if half_width is None:
            law = truncated_geometric_law(self.epsilon, nx.check_unit_interval(delta, "delta"), D)
            self.half_width = int(law.parameters["T"])
            self.delta = float(law.delta_bound)
        else:
            if isinstance(half_width, bool) or int(half_width) != half_width or int(half_width) < 0:
                raise SpecError(f"half_width must be a nonnegative integer, got {half_width!r}")
            self.half_width = int(half_width)
            self.delta = float(truncated_geometric_delta(self.epsilon, D, self.half_width))
        lam = self.lam
        T = self.half_width
        self._log_z = math.log1p(2.0 * lam * -math.expm1(T * math.log(lam)) / (1.0 - lam)) if T > 0 else 0.0

    @property
    def lam(self) -> float:
        return math.exp(-self.epsilon / self.sensitivity)

    @property
    def parameters(self) -> dict:
        return {"half_width": self.half_width, "delta": self.delta}

    def to_dict(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "sensitivity": self.sensitivity,
                "half_width": self.half_width, "delta": self.delta}

    @classmethod
    def from_dict(cls, d: dict) -> "TruncatedDiscreteLaplace":
        return cls(epsilon=d["epsilon"], sensitivity=d.get("sensitivity", 1), half_width=d["half_width"])

    def __repr__(self) -> str:
        return (f"TruncatedDiscreteLaplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, "
                f"half_width={self.half_width})")

    def __eq__(self, other) -> bool:
        return isinstance(other, TruncatedDiscreteLaplace) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.epsilon, self.sensitivity, self.half_width))

    def privacy(self) -> Privacy:
        return Privacy("approx", self.epsilon, self.delta, self.sensitivity, "abs",
                       f"delta(epsilon) = the mass of the top {self.sensitivity} points of [-T, T], T = {self.half_width}, "
                       "in interval arithmetic, rounded up (optmech.mechanisms.approx.truncated)")

    def support(self) -> tuple[float, float]:
        return (float(-self.half_width), float(self.half_width))

    def _pmf(self, k):
        inside = np.abs(k) <= self.half_width
        return np.where(inside, np.exp(-self.epsilon * np.abs(k) / self.sensitivity - self._log_z), 0.0)

    def _logpmf(self, k):
        a = self.epsilon / self.sensitivity
        return self._on_lattice(k, lambda i: np.where(np.abs(i) <= self.half_width, -a * np.abs(i) - self._log_z,
                                                      -np.inf))

    def _sf(self, n):
        # P(X > n) for n >= 0: Σ_{k=n+1}^T λ^k / Z = λ^{n+1}(1 − λ^{T−n})/((1 − λ)Z); by symmetry below 0
        lam, T = self.lam, self.half_width
        n = np.asarray(n, dtype=float)
        m = np.where(n >= 0, n, -n - 1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            tail = np.where(m >= T, 0.0,
                            lam ** (m + 1.0) * -np.expm1((T - m) * math.log(lam)) / ((1.0 - lam) * math.exp(self._log_z)))
        return np.where(n >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        from optmech.mechanisms.laplace import DiscreteLaplace

        untruncated = DiscreteLaplace(epsilon=self.epsilon, sensitivity=self.sensitivity)  # same λ; rejection below
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            y = untruncated.sample(todo.size, rng=rng)
            ok = np.abs(y) <= self.half_width
            out[todo[ok]] = y[ok]
            todo = todo[~ok]
        return out

    def _exact_sampler(self):
        """Exact rejection from the exact discrete Laplace of the same λ (module docstring)."""
        from optmech.exact import ExactSampler
        from optmech.exact.laws import discrete_laplace

        law = discrete_laplace(Fraction(self.epsilon) / self.sensitivity)
        T = self.half_width

        def draw(n: int, source) -> np.ndarray:
            out = law.sample(n, source)
            bad = np.flatnonzero(np.abs(out) > T)
            while bad.size:
                redo = law.sample(bad.size, source)
                out[bad] = redo
                bad = bad[np.abs(redo) > T]
            return out

        return ExactSampler(draw, dim=1, mechanism=repr(self),
                            privacy=self._exact_privacy("the discrete Laplace conditioned on [-T, T] exactly (rejection), "
                                                        "eps read as the exact rational value of its float"),
                            law="truncated discrete Laplace, exact inversion and rejection outside [-T, T]")

    def _entropy(self):
        k = np.arange(-self.half_width, self.half_width + 1, dtype=float)
        p = self._pmf(k)
        return float(-np.sum(p * np.log(p)))

    def _expected_cost(self, cost):
        k = np.arange(-self.half_width, self.half_width + 1, dtype=float)
        p = self._pmf(k)
        values = np.asarray(cost(k), dtype=float)
        return math.fsum(p * values)
