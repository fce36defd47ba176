r"""Gaussian noise for (ε, δ)-DP on ℝ and ℝ^d: the exact privacy profile, the classic and analytic σ
calibrations, the costs of N(0, σ²I_d) and the :class:`Gaussian` mechanism.

Sources (tags used throughout):

* **[DR14]** C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014:
  Thm A.1, the classic calibration σ = Δ·sqrt(2 ln(1.25/δ))/ε for 0 < ε < 1.
* **[BW18]** B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy:
  Analytical Calibration and Optimal Denoising", ICML 2018: Thm 8, the exact δ(ε) of N(0, σ²).

The discrete Gaussian on ℤ [CKS20] is in :mod:`optmech.mechanisms.approx.discrete_gaussian`; it uses
this module's argument checks (:func:`check_sigma`, :func:`check_gaussian_epsilon`,
:func:`check_gaussian_delta`), :func:`calibrate_or_check` and :func:`marginal_cost`.

The exact privacy profile [BW18, Thm 8]
---------------------------------------
For X ~ N(0, σ²) and a shift of size Δ, with a = Δ/σ,

.. math:: \delta_G(\sigma) = \Phi\Big(\frac{a}{2} - \frac{\epsilon}{a}\Big)
          - e^{\epsilon}\,\Phi\Big(-\frac{a}{2} - \frac{\epsilon}{a}\Big)
          = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\epsilon\sigma}{\Delta}\Big)
          - e^{\epsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\epsilon\sigma}{\Delta}\Big),

and N(0, σ²) is (ε, δ)-DP iff δ_G(σ) <= δ.

*δ_G is decreasing in σ* [derived, checking BW18's use of it in their Algorithm 1].  Write
x₁ = a/2 − ε/a, x₂ = −a/2 − ε/a.  Since x₁² − x₂² = −2ε, e^ε φ(x₂) = φ(x₁), so

.. math:: \frac{d\delta_G}{da} = \varphi(x_1)\Big(\frac12 + \frac{\epsilon}{a^2}\Big)
          - e^{\epsilon}\varphi(x_2)\Big(-\frac12 + \frac{\epsilon}{a^2}\Big) = \varphi(x_1) > 0 .

δ_G is therefore strictly increasing in a = Δ/σ, i.e. strictly decreasing in σ, with
δ_G → 0 as σ → ∞ and δ_G → 1 as σ → 0 (ε > 0; for ε = 0, δ_G = erf(a/(2√2)) → 0 and 1 too);
equivalently δ_G(σ) = ∫₀^{Δ/σ} φ(t/2 − ε/t) dt > 0.  Hence for every δ ∈ (0, 1) there is exactly
one σ* with δ_G(σ*) = δ, and {σ : δ_G(σ) <= δ} = [σ*, ∞).  The same identity shows that the
hockey-stick divergence grows with the shift, so a shift of *at most* Δ is covered by the formula at Δ.

*d dimensions.*  N(0, σ²I_d) is rotation invariant: for a shift t the privacy loss depends on t
only through ‖t‖₂ (rotate t onto the first axis; the other coordinates cancel), so δ(ε) is
δ_G with Δ = ‖t‖₂, and the worst shift is the largest ‖t‖₂.  For ℓ2 sensitivity Δ that is Δ.
For ℓ1 sensitivity Δ it is Δ too: ‖t‖₂ <= ‖t‖₁ <= Δ, with equality for a shift along one axis.

Numerics
--------
δ_G is a difference of two terms that cancel when σ ≫ Δ, so it is evaluated in mpmath with
Φ(x) = erfc(−x/√2)/2 at 50 significant digits or more: after the subtraction at least 45 digits
must remain (the precision doubles until they do).  :func:`analytic_gaussian_sigma` accepts a σ only
when δ_G(σ) <= δ·(1 − 10⁻³⁰) at that precision: the margin 10⁻³⁰ (relative) is 15 orders of
magnitude above the relative error of the mpmath value (≲ 10⁻⁴⁵), and 14 orders below a float
ulp, so the returned σ is the smallest double accepted and its predecessor is not accepted.

Tested by: tests/test_approx_references.py.
"""

from __future__ import annotations

import math
import struct
from numbers import Real
from typing import Any, NamedTuple

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Privacy, Reference

__all__ = [
    "SigmaCalibrated",
    "ClassicSigma",
    "classic_gaussian_sigma",
    "analytic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_cost",
    "gaussian_reference",
    "Gaussian",
    "MARGIN_DIGITS",
]

#: σ is accepted only when δ_G(σ) <= δ·(1 − 10^-MARGIN_DIGITS) (mpmath error ≲ 10^-45 relative).
MARGIN_DIGITS = 30
#: Significant digits that must survive the subtraction in δ_G.
_KEEP_DIGITS = 45
#: Starting (and minimum) mpmath precision in decimal digits.
_MIN_DPS = 50
#: Largest precision tried before giving up (σ/Δ beyond ~1e1000).
_MAX_DPS = 4000
#: Largest σ of a Gaussian calibration (beyond it no finite double is safe to return).
_SIGMA_MAX = 1e300
#: Dimensions accepted by :func:`gaussian_cost`.
_MAX_DIM = 128


# --------------------------------------------------------------------------------------------
# validation and rounding helpers


def check_gaussian_epsilon(epsilon: Any) -> float:
    """ε as a float in [0, EPS_MAX] (``optmech.mechanisms.numerics``), else SpecError; also used by
    :mod:`optmech.mechanisms.approx.discrete_gaussian`."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not math.isfinite(float(epsilon)):
        raise SpecError(f"epsilon must be a finite real number >= 0, got {epsilon!r}")
    eps = float(epsilon)
    if not 0.0 <= eps <= nx.EPS_MAX:
        raise SpecError(f"epsilon must be in [0, {nx.EPS_MAX:g}], got {epsilon!r}")
    return eps


def calibrate_or_check(name: str, sigma, epsilon, delta, sensitivity: float, calibrate, delta_of) -> tuple:
    """(ε or None, σ, δ or None) of a Gaussian-type law: σ given (checked against δ when ε and δ are
    both given, δ computed when only ε is), or calibrated from (ε, δ) by ``calibrate``; ``delta_of``
    is the law's exact δ(ε)."""
    eps = None if epsilon is None else check_gaussian_epsilon(epsilon)
    dlt = None if delta is None else check_gaussian_delta(delta)
    if sigma is None:
        if eps is None or dlt is None:
            raise SpecError(f"{name} needs sigma, or epsilon and delta to calibrate it")
        sig = calibrate(eps, dlt, sensitivity)
    else:
        sig = check_sigma(sigma)
    if eps is not None:
        real = delta_of(sig, eps, sensitivity)
        if dlt is not None and real > dlt:
            raise SpecError(f"sigma = {sig!r} is too small for (epsilon, delta) = ({eps!r}, {dlt!r}): its exact delta "
                            f"is {real:.6g}")
        dlt = real if dlt is None else dlt
    return eps, sig, dlt


def check_gaussian_delta(delta: Any) -> float:
    """δ as a float in the open interval (0, 1) (a Gaussian law has no pure-DP δ = 0), else SpecError."""
    if isinstance(delta, bool) or not isinstance(delta, Real) or not math.isfinite(float(delta)):
        raise SpecError(f"delta must be a real number in (0, 1), got {delta!r}")
    d = float(delta)
    if not 0.0 < d < 1.0:
        raise SpecError(f"delta must be in (0, 1) for Gaussian noise, got {delta!r}")
    return d


def check_sigma(sigma: Any) -> float:
    """σ as a finite float > 0, else SpecError."""
    if isinstance(sigma, bool) or not isinstance(sigma, Real):
        raise SpecError(f"sigma must be a real number, got {sigma!r}")
    s = float(sigma)
    if not (0.0 < s < math.inf):
        raise SpecError(f"sigma must be finite and > 0, got {sigma!r}")
    return s


def _check_dim(dim: Any) -> int:
    return nx.check_int_range(dim, "dim", 1, _MAX_DIM)


def _bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<q", b))[0]


def marginal_cost(cost, dim: int):
    """(1-D Cost, None) for dim = 1; (None, name) for dim > 1 (``l1``, ``l2``, ``l2sq``, ``linf``)."""
    from optmech.mechanisms.approx.bounds import resolve_cost

    marginal, name = resolve_cost(cost, dim)
    return (marginal, None) if dim == 1 else (None, name)


# --------------------------------------------------------------------------------------------
# the exact privacy profile of N(0, σ²) [BW18, Thm 8]


def _delta_g_mp(sigma: float, eps: float, sens: float):
    """δ_G(σ) as an mpmath number with >= 45 correct digits (precision raised until they survive)."""
    import mpmath

    dps = _MIN_DPS
    while dps <= _MAX_DPS:
        with mpmath.workdps(dps + 10):
            a = mpmath.mpf(sens) / mpmath.mpf(sigma)
            e = mpmath.mpf(eps)
            x1 = a / 2 - e / a
            x2 = -a / 2 - e / a
            root2 = mpmath.sqrt(2)
            t1 = mpmath.erfc(-x1 / root2) / 2
            t2 = mpmath.exp(e) * mpmath.erfc(-x2 / root2) / 2
            d = t1 - t2
            if d > 0 and t1 <= d * mpmath.mpf(10) ** (dps - _KEEP_DIGITS):
                return +d
        dps *= 2
    raise ArithmeticError(f"delta_G(sigma = {sigma!r}) needs more than {_MAX_DPS} digits")


def gaussian_delta(sigma, epsilon, sensitivity) -> float:
    r"""The exact δ(ε) of N(0, σ²) for shifts up to Δ [BW18, Thm 8], as a float upper bound.

    .. math:: \delta = \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\epsilon\sigma}{\Delta}\Big)
              - e^{\epsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\epsilon\sigma}{\Delta}\Big)

    Also the δ(ε) of N(0, σ²I_d) for ℓ2 sensitivity Δ (rotation invariance), and for ℓ1
    sensitivity Δ (the worst shift, along an axis, has ℓ2 norm Δ); see the module docstring.

    Parameters
    ----------
    sigma : float > 0
    epsilon : float in [0, 700]
    sensitivity : float > 0
        Δ (ℓ2 sensitivity in d-D).

    Returns
    -------
    float
        δ evaluated in mpmath (>= 45 correct digits) and rounded up to the next double.

    >>> d = gaussian_delta(1.0, 1.0, 1.0)       # Φ(−1/2) − e Φ(−3/2)
    >>> round(d, 12)
    0.126936737507
    >>> gaussian_delta(2.0, 1.0, 1.0) < d      # decreasing in σ
    True
    """
    s, eps, D = check_sigma(sigma), check_gaussian_epsilon(epsilon), nx.check_sensitivity(sensitivity)
    return min(nx.mp_round_up(_delta_g_mp(s, eps, D)), 1.0)


class ClassicSigma(NamedTuple):
    """The classic calibration: σ, whether [DR14, Thm A.1]'s hypothesis 0 < ε < 1 holds, and a note.

    >>> c = classic_gaussian_sigma(0.5, 1e-5, 1.0)
    >>> c.valid, round(c.sigma, 6)                  # 2·sqrt(2 ln 125000)
    (True, 9.689611)
    """

    sigma: float
    valid: bool
    note: str


def classic_gaussian_sigma(epsilon, delta, sensitivity) -> ClassicSigma:
    r"""σ = Δ·sqrt(2 ln(1.25/δ))/ε, the classic Gaussian calibration [DR14, Thm A.1].

    [DR14, Thm A.1] assumes 0 < ε < 1 (and c² > 2 ln(1.25/δ) strictly for σ = cΔ/ε; equality is
    covered because δ_G is continuous and decreasing in σ).  Outside 0 < ε < 1 the calibration
    is **not guaranteed**: ``valid`` is False, and for large ε it is indeed not private (δ_G
    at this σ exceeds δ; [BW18] §2 shows it cannot be extended to ε → ∞).  σ is rounded up by
    2 ulps; ε = 0 gives σ = inf.

    Parameters
    ----------
    epsilon : float in [0, 700]
    delta : float in (0, 1)
    sensitivity : float > 0 (ℓ2 sensitivity in d-D)

    >>> c = classic_gaussian_sigma(0.5, 1e-5, 1.0)
    >>> import math
    >>> c.sigma >= math.sqrt(2 * math.log(1.25e5)) / 0.5, c.valid
    (True, True)
    >>> classic_gaussian_sigma(2.0, 1e-5, 1.0).valid
    False
    """
    eps, dlt, D = check_gaussian_epsilon(epsilon), check_gaussian_delta(delta), nx.check_sensitivity(sensitivity)
    ok = 0.0 < eps < 1.0
    if eps == 0.0:
        return ClassicSigma(math.inf, False, "not defined at epsilon = 0 ([DR14, Thm A.1] needs 0 < epsilon < 1)")
    sigma = nx.up_ulps(D * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps, 2)
    if ok:
        note = "sigma = Delta sqrt(2 ln(1.25/delta))/epsilon, (epsilon, delta)-DP for 0 < epsilon < 1 [DR14, Thm A.1]"
    else:
        note = (f"NOT guaranteed: [DR14, Thm A.1] assumes 0 < epsilon < 1, here epsilon = {eps:g}; "
                "check gaussian_delta(sigma, epsilon, sensitivity) <= delta [BW18, Thm 8]")
    return ClassicSigma(sigma, ok, note)


def analytic_gaussian_sigma(epsilon, delta, sensitivity) -> float:
    r"""The smallest σ with δ_G(σ) <= δ [BW18, Thm 8], to full double precision, rounded up.

    δ_G is strictly decreasing in σ (module docstring), so {σ : δ_G(σ) <= δ} = [σ*, ∞).  The
    search brackets σ* by doubling/halving from Δ and bisects on the bit patterns of the doubles
    (at most 64 steps).  A double σ is *accepted* when δ_G(σ) <= δ·(1 − 10⁻³⁰) in mpmath with at
    least 45 correct digits (margin 10⁻³⁰ relative, 15 orders above mpmath's error).  The result
    is the smallest accepted double: δ_G(σ) <= δ holds with that margin, and its predecessor
    (one ulp below) is not accepted.

    Parameters
    ----------
    epsilon : float in [0, 700]
        ε = 0 is allowed (then δ_G = erf(Δ/(2√2σ))).
    delta : float in (0, 1)
    sensitivity : float > 0 (ℓ2 sensitivity in d-D)

    Raises
    ------
    SpecError
        Bad parameters, or σ* beyond 1e300.

    >>> s = analytic_gaussian_sigma(1.0, 1e-5, 1.0)
    >>> round(s, 9)
    3.730631635
    >>> gaussian_delta(s, 1.0, 1.0) <= 1e-5 < gaussian_delta(s * (1 - 1e-12), 1.0, 1.0)
    True
    >>> analytic_gaussian_sigma(0.5, 1e-5, 1.0) < classic_gaussian_sigma(0.5, 1e-5, 1.0).sigma   # [BW18]
    True
    """
    import mpmath

    eps, dlt, D = check_gaussian_epsilon(epsilon), check_gaussian_delta(delta), nx.check_sensitivity(sensitivity)
    with mpmath.workdps(_MIN_DPS + 10):
        target = mpmath.mpf(dlt) * (1 - mpmath.mpf(10) ** -MARGIN_DIGITS)

    def accepted(s: float) -> bool:
        return _delta_g_mp(s, eps, D) <= target

    s = D
    if accepted(s):
        hi = s
        lo = s / 2.0
        while accepted(lo):
            hi, lo = lo, lo / 2.0
            if lo == 0.0:
                raise SpecError("no positive sigma fails delta_G <= delta: check epsilon and delta")
    else:
        lo = s
        hi = 2.0 * s
        while not accepted(hi):
            lo, hi = hi, 2.0 * hi
            if hi > _SIGMA_MAX:
                raise SpecError(f"the analytic Gaussian sigma exceeds {_SIGMA_MAX:g} for epsilon = {eps!r}, "
                                f"delta = {dlt!r}, sensitivity = {D!r}")
    bl, bh = _bits(lo), _bits(hi)
    while bh - bl > 1:
        mid = (bl + bh) // 2
        if accepted(_from_bits(mid)):
            bh = mid
        else:
            bl = mid
    return _from_bits(bh)


# --------------------------------------------------------------------------------------------
# costs of N(0, σ² I_d)


def _normal_linf_mean_mp(d: int):
    """E‖Z‖∞ for Z ~ N(0, I_d): ∫₀^∞ 1 − (1 − erfc(t/√2))^d dt by mpmath tanh-sinh quadrature."""
    import mpmath

    def f(t):
        return 1 - (1 - mpmath.erfc(t / mpmath.sqrt(2))) ** d

    return mpmath.quad(f, [0, 1, 2, 4, 8, 16, mpmath.inf], error=True)


def expr_cost_quad(cost, density, pieces: list[float]) -> tuple[float, float]:
    """∫ L(x)·density(x) dx over the consecutive intervals of ``pieces`` (ends may be ±inf), by scipy quad.

    Returns (value, summed absolute error estimate): a numeric route, not certified.

    >>> from optmech.costs import parse_cost
    >>> v, err = expr_cost_quad(parse_cost("max(x, 0)"), lambda x: 0.5 if abs(x) <= 1 else 0.0, [-1.0, 0.0, 1.0])
    >>> round(v, 12), err < 1e-12                  # ∫₀¹ x/2 dx
    (0.25, True)
    """
    import warnings

    from scipy import integrate

    def g(x):
        return float(nx.evaluate(cost, np.array([x]))[0]) * density(x)

    total, err = 0.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in zip(pieces[:-1], pieces[1:]):
            if b <= a:
                continue
            v, e = integrate.quad(g, a, b, limit=400, epsabs=0.0, epsrel=1e-13)
            total += v
            err += abs(e)
    return total, err


def cost_breaks(cost, lo: float, hi: float) -> list[float]:
    """[lo, the cost's breakpoints and 0 strictly inside (lo, hi) in order, hi]: where to cut a quadrature.

    >>> from optmech.costs import parse_cost
    >>> cost_breaks(parse_cost("where(x > 2, x, 0)"), -5.0, 5.0)
    [-5.0, 0.0, 2.0, 5.0]
    """
    try:
        bp = [float(b) for b in cost.breakpoints()]
    except AttributeError:
        bp = []
    inner = sorted({b for b in bp + [0.0] if lo < b < hi})
    return [lo, *inner, hi]


def _gaussian_cost_detail(cost, sigma: float, dim: int) -> tuple[float, bool, str]:
    import mpmath

    marg, name = marginal_cost(cost, dim)
    with mpmath.workdps(40):
        s = mpmath.mpf(sigma)
        if dim == 1:
            p = nx.power_of(marg)
            if p is not None:
                # E|X|^P = σ^P 2^{P/2} Γ((P+1)/2)/√π  (P = 1: σ√(2/π); P = 2: σ²)
                pp = mpmath.mpf(p)
                v = s**pp * mpmath.power(2, pp / 2) * mpmath.gamma((pp + 1) / 2) / mpmath.sqrt(mpmath.pi)
                return nx.mp_round_up(v), True, "closed form E|X|^P = sigma^P 2^(P/2) Gamma((P+1)/2)/sqrt(pi)"
        else:
            d = mpmath.mpf(dim)
            if name == "l1":
                return nx.mp_round_up(d * s * mpmath.sqrt(2 / mpmath.pi)), True, "closed form d sigma sqrt(2/pi)"
            if name == "l2sq":
                return nx.mp_round_up(d * s * s), True, "closed form d sigma^2"
            if name == "l2":
                v = s * mpmath.sqrt(2) * mpmath.gamma((d + 1) / 2) / mpmath.gamma(d / 2)
                return nx.mp_round_up(v), True, "closed form sigma sqrt(2) Gamma((d+1)/2)/Gamma(d/2) (chi distribution)"
            v, err = _normal_linf_mean_mp(dim)
            v = s * (v + 10 * abs(err) + mpmath.mpf(10) ** -28)
            return (nx.mp_round_up(v), False,
                    "numeric: sigma E||Z||_inf = sigma int_0^inf 1 - (1 - erfc(t/sqrt 2))^d dt by mpmath tanh-sinh "
                    "quadrature at 40 digits, plus 10x its error estimate (documented, not certified)")
    # 1-D expression: E L(σZ) by scipy quad in x, cut at the cost's breakpoints and at ±40σ
    inv = 1.0 / (sigma * math.sqrt(2.0 * math.pi))

    def density(x):
        return inv * math.exp(-0.5 * (x / sigma) ** 2)

    pieces = [-math.inf, *cost_breaks(marg, -40.0 * sigma, 40.0 * sigma), math.inf]
    v, err = expr_cost_quad(marg, density, pieces)
    if not math.isfinite(v):
        return math.inf, False, "numeric: the cost's integral against the Gaussian diverges"
    return (nx.up_ulps(v + err, 4), False,
            f"numeric: scipy quad of L(x) phi(x/sigma)/sigma cut at the cost's breakpoints, plus its error estimate "
            f"({err:.1e}); not certified")


def gaussian_reference(cost, sigma, dim=1) -> Reference:
    r"""E L(X) for X ~ N(0, σ²I_d) as a :class:`~optmech.mechanisms.base.Reference` named ``gaussian``.

    ``exact`` is True for the closed forms (see :func:`gaussian_cost`), False for ``linf`` and
    1-D expressions; ``note`` says how the value was obtained.

    >>> ref = gaussian_reference("square", 2.0)
    >>> ref.name, ref.value >= 4.0, ref.exact, ref.parameters
    ('gaussian', True, True, {'sigma': 2.0, 'dim': 1})
    """
    s, d = check_sigma(sigma), _check_dim(dim)
    value, exact, note = _gaussian_cost_detail(cost, s, d)
    return Reference("gaussian", value, {"sigma": s, "dim": d}, exact, note)


def gaussian_cost(cost, sigma, dim=1) -> float:
    r"""E L(X) for X ~ N(0, σ²I_d), rounded up (an upper bound on the exact value).

    Closed forms, evaluated in mpmath at 40 digits and rounded up to the next double:

    * 1-D: ``abs`` σ√(2/π), ``square`` σ², ``pow:P`` σ^P 2^{P/2} Γ((P+1)/2)/√π.
    * d-D: ``l1`` dσ√(2/π), ``l2sq`` dσ², ``l2`` σ√2 Γ((d+1)/2)/Γ(d/2) (σ times a χ_d mean).

    Numeric (``exact=False`` in :func:`gaussian_reference`):

    * d-D ``linf``: σ ∫₀^∞ 1 − (1 − erfc(t/√2))^d dt by mpmath tanh-sinh quadrature (40 digits)
      plus 10× its error estimate: documented quadrature, not certified.
    * 1-D expression costs: scipy ``quad`` of L(x)φ(x/σ)/σ cut at the cost's breakpoints and at
      ±40σ, plus quad's error estimate: not certified.

    In 1-D the names ``l1``, ``l2``, ``linf`` mean ``abs`` and ``l2sq`` means ``square``.

    >>> import math
    >>> 0.0 <= gaussian_cost("abs", 1.0) - math.sqrt(2 / math.pi) <= 2e-16          # rounded up
    True
    >>> gaussian_cost("square", 3.0) >= 9.0, gaussian_cost("l2sq", 1.0, dim=3) >= 3.0
    (True, True)
    >>> round(gaussian_cost("l2", 1.0, dim=2), 12)      # σ√(π/2) for d = 2
    1.253314137316
    """
    return gaussian_reference(cost, sigma, dim).value


# --------------------------------------------------------------------------------------------
# the Gaussian mechanism (1-D)


class SigmaCalibrated:
    """What the Gaussian laws share: their parameters are σ and the δ they were calibrated or checked to
    (ε may be None for a law given by σ alone), and ``to_dict`` records exactly those."""

    name: str
    sigma: float
    delta: float
    _epsilon: float | None

    @property
    def parameters(self) -> dict:
        return {"sigma": self.sigma, "delta": self.delta}

    def to_dict(self) -> dict:
        return {"name": self.name, "sigma": self.sigma, "epsilon": self._epsilon, "delta": self.delta,
                "sensitivity": self.sensitivity}


class Gaussian(SigmaCalibrated, Mechanism):
    r"""Gaussian noise N(0, σ²) for (ε, δ)-DP with sensitivity Δ [BW18, Thm 8].

    Parameters
    ----------
    sigma : float > 0, optional
        The noise scale.  Omitted: the analytic calibration
        :func:`analytic_gaussian_sigma` (ε, δ) (both then required).
    epsilon : float in [0, 700], optional
        With ``sigma`` and no ``delta``: δ = :func:`gaussian_delta` (σ, ε, Δ).
    delta : float in (0, 1), optional
        With ``sigma`` and ``epsilon``: checked, δ_G(σ) <= δ (else SpecError).
    sensitivity : float > 0

    Notes
    -----
    ``privacy()`` needs ε (the guarantee is a whole curve δ(ε)); ``sample`` draws with numpy's
    normal generator (floating point: not exactly DP, see :mod:`optmech.mechanisms.rng`).

    >>> mech = Gaussian(epsilon=1.0, delta=1e-5)
    >>> round(mech.sigma, 6), mech.privacy().notion
    (3.730632, 'approx')
    >>> float(mech.cdf(0.0)), mech.expected_cost("square") >= mech.sigma ** 2
    (0.5, True)
    >>> g = Gaussian(sigma=2.0, epsilon=1.0)                     # δ from the exact profile
    >>> g.delta == gaussian_delta(2.0, 1.0, 1.0)
    True
    >>> Gaussian.from_dict(g.to_dict()) == g
    True
    """

    name = "gaussian"
    lattice = False

    def __init__(self, *, sigma=None, epsilon=None, delta=None, sensitivity=1.0) -> None:
        self._sensitivity = nx.check_sensitivity(sensitivity)
        self._epsilon, self.sigma, self.delta = calibrate_or_check("Gaussian", sigma, epsilon, delta, self._sensitivity,
                                                            analytic_gaussian_sigma, gaussian_delta)

    def privacy(self) -> Privacy:
        if self._epsilon is None:
            raise SpecError("Gaussian(sigma=...) without epsilon has no single guarantee: use gaussian_delta(sigma, epsilon, sensitivity)")
        return Privacy("approx", self._epsilon, self.delta, self.sensitivity, "abs",
                       "exact delta(epsilon) of N(0, sigma^2) for shifts up to the sensitivity [BW18, Thm 8]")

    def _pdf(self, x):
        z = x / self.sigma
        return np.exp(-0.5 * z * z) / (self.sigma * math.sqrt(2.0 * math.pi))

    def _logpdf(self, x):
        z = x / self.sigma
        return -0.5 * z * z - math.log(self.sigma * math.sqrt(2.0 * math.pi))

    def _sf(self, x):
        from scipy.special import ndtr

        return ndtr(-x / self.sigma)

    def _ppf(self, q):
        from scipy.special import ndtri

        return self.sigma * ndtri(q) + 0.0

    def _sample(self, n, rng):
        return rng.normal(0.0, self.sigma, size=n)

    def _entropy(self):
        return 0.5 * math.log(2.0 * math.pi * math.e * self.sigma**2)

    def _expected_cost(self, cost):
        return gaussian_cost(cost, self.sigma)
