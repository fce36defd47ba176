r"""Deployed integer-valued (ε, δ)-DP noise on ℤ, calibrated, audited and with certified costs.

Noise X on ℤ added to an integer query f of sensitivity Δ (|f(D) − f(D')| <= Δ) is (ε, δ)-DP iff
for every shift 1 <= s <= Δ (and −s)

.. math:: \delta_s = \sum_{x\in\mathbb Z} \bigl[p(x) - e^{\varepsilon} p(x+s)\bigr]_+ \le \delta

(the hockey-stick form [QHFL22, Thm 2, corrected in :mod:`optmech.audit`]).  Every law here is
symmetric, so δ_{−s} = δ_s (substitute x → −x) and the shifts 1..Δ suffice; a translate X + T has
the same δ_s (substitute x → x − T).  The laws:

* ``discrete_laplace`` — the two-sided geometric p(x) = (1 − λ)/(1 + λ)·λ^{|x|}, λ = e^{−ε/Δ}.
* ``truncated_geometric`` — the truncated double geometric (truncated discrete Laplace) p(x) = λ^{|x|}/Z_T
  on [−T, T], same λ, T the smallest integer with δ(T) <= δ; and ``truncated_geometric_nonneg``, its
  translate X + T on [0, 2T] (the non-negative noise deployed by attribution systems).
* ``discrete_gaussian`` — p(x) ∝ e^{−x²/(2σ²)} [CKS20], σ calibrated to (ε, δ) (see
  :func:`discrete_gaussian_law`), audited by :func:`optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_delta`.
* ``rounded_tulap`` — round(Δ·N) with N the Tulap canonical noise distribution of (ε, δ) [AV23]
  (the discrete CND of [AR23] at Δ = 1).

Proofs
------
**Discrete Laplace.**  p(x)/p(x+s) = λ^{|x|−|x+s|} <= λ^{−|s|} = e^{ε|s|/Δ} <= e^ε for |s| <= Δ, so every
term of δ_s is 0: ε-DP, hence (ε, δ)-DP for every δ >= 0.  With c = (1 − λ)/(1 + λ),
Σ_{k>=1} kλ^k = λ/(1 − λ)² and Σ_{k>=1} k²λ^k = λ(1 + λ)/(1 − λ)³ give

.. math:: E|X| = \frac{2\lambda}{(1-\lambda)(1+\lambda)} = \frac{2\lambda}{1-\lambda^2},\qquad
          E X^2 = \frac{2\lambda(1+\lambda)}{(1-\lambda)^3}\cdot\frac{1-\lambda}{1+\lambda} = \frac{2\lambda}{(1-\lambda)^2}.

**Truncated double geometric.**  On [−T, T], Z_T = 1 + 2 S_0, S_0 = Σ_{k=1}^T λ^k = λ(1 − λ^T)/(1 − λ).
For 1 <= s <= Δ, a term with x and x + s both in [−T, T] is [p(x) − e^ε p(x+s)]_+ = 0 by the ratio bound
above; a term with x + s > T is p(x); x < −T contributes nothing.  Hence

.. math:: \delta_s(T) = \sum_{x=\max(T-s+1,\,-T)}^{T} p(x),

the mass of the top min(s, 2T + 1) points: increasing in s, so the worst shift is s = Δ.  If T < Δ − 1
the top Δ points contain [0, T], of mass >= 1/2 by symmetry, so δ(T) >= 1/2.  For T >= Δ − 1

.. math:: \delta(T) = \frac{\lambda^{T-\Delta+1}(1-\lambda^\Delta)}{(1-\lambda) Z_T},

strictly decreasing in T (numerator decreasing, Z_T increasing).  So for δ < 1/2 the set
{T : δ(T) <= δ} is [T*, ∞) with T* >= Δ − 1; solving with u = λ^T,
δ(T) <= δ ⇔ u(λ^{1−Δ}(1 − λ^Δ) + 2δλ) <= δ(1 + λ), i.e.

.. math:: T^* = \Bigl\lceil \ln\frac{\delta(1+\lambda)}{\lambda^{1-\Delta} - \lambda + 2\delta\lambda} \Big/ \ln\lambda \Bigr\rceil

(clipped below at Δ − 1), and :func:`truncated_geometric_law` checks δ(T*) <= δ < δ(T* − 1) in interval
arithmetic.  Moments: with S_1 = Σ_{k=1}^T kλ^k = λ(1 − (T+1)λ^T + Tλ^{T+1})/(1 − λ)² and
S_2 = Σ_{k=1}^T k²λ^k = λ(1 + λ − (T+1)²λ^T + (2T² + 2T − 1)λ^{T+1} − T²λ^{T+2})/(1 − λ)³ (differentiate
the finite geometric sum twice; checked against brute-force sums in tests/test_deployed_integer.py),
E|X| = 2S_1/Z_T and E X² = 2S_2/Z_T.  The translate Y = X + T >= 0 has E|Y| = E Y = T (E X = 0 by symmetry)
and E Y² = E X² + T².

**Rounded Tulap.**  Tulap(0, b, 0) [AS18, AV23] is G₁ − G₂ + U with G_i i.i.d. geometric (P(G = k) =
(1 − b)b^k) and U ~ U(−½, ½): its density is c·b^{|k|} on the cell [k − ½, k + ½), c = (1 − b)/(1 + b), and its
upper tail beyond K + ½ is b^{K+1}/(1 + b).  For (ε, δ) take b = e^{−ε} and q = 2δb/(1 − b + 2δb) and
truncate to the central 1 − q mass, [−t, t] with P(N > t) = q/2 (t inside the cell K with
b^{K+1}/(1+b) <= q/2 < b^K/(1+b): t = K + ½ − (q/2 − b^{K+1}/(1 + b))/(c b^K)).  [AV23] prove this
N ~ Tulap(0, b, q) is a canonical noise distribution for f_{ε,δ}: for every shift m ∈ [0, 1] the test of
N against N + m is (ε, δ)-DP.  Δ·N shifted by s ∈ [1, Δ] is Δ·(N + s/Δ), so Δ·N is (ε, δ)-DP for
sensitivity Δ on ℝ; rounding to the nearest integer is post-processing, and for an integer f,
round(f(D) + ΔN) = f(D) + round(ΔN).  So X = round(ΔN) is (ε, δ)-DP on ℤ at sensitivity Δ.  Its pmf is
P(X = j) = ∫_{j−½}^{j+½} g(y) dy, g(y) = f_N(y/Δ)/Δ, the density of ΔN: each interval [j − ½, j + ½) ∩ [−Δt, Δt]
meets at most two cells Δ[k − ½, k + ½) (its length 1 is <= Δ), each of constant density
c b^{|k|}/((1 − q)Δ), so the pmf is a sum of at most two length × density products (computed so).
At Δ = 1 the mechanism is tight: δ(ε) = δ exactly (so it is calibrated at δ(1 − 2⁻³⁰), see below).

Arithmetic
----------
Closed forms (the Laplace and truncated geometric δ, T*, moments) are evaluated in mpmath interval
arithmetic (``mpmath.iv``, 60 digits), so each reported interval encloses the exact value of the real law.
pmf arrays are floats; each carries a rigorous bound ``pmf_error`` on Σ_x |p_float(x) − p(x)| (assuming
numpy's ``exp`` within 4 ulps — glibc's is within 1 — and a 16-ulp allowance for every other operation),
and ``tail_mass`` bounds the exact mass outside the window.  :func:`window_delta` audits a float window
with outward rounding and adds (1 + e^ε)·pmf_error + tail_mass, so ``audited_delta`` bounds the exact law's
δ(ε).  The rounded Tulap and discrete Gaussian costs are summed over the window in float with the same
allowances (lower end: the window only; upper end: plus a tail bound, or
:func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_cost` for the Gaussian).

Audit size.  The audit is O(N·Δ) (N window points).  When N·Δ exceeds :data:`FULL_AUDIT_LIMIT` the
shifts audited are a subsample (:data:`SUBSAMPLE` evenly spaced shifts, always including 1 and Δ): for
the discrete Laplace and the truncated geometric δ_s is proven non-decreasing in s above (so s = Δ is the
worst), for the rounded Tulap every shift is covered by [AV23]'s theorem; ``audit_shifts`` says which.
The Tulap is calibrated at δ·(1 − 2⁻³⁰) because it is tight: its exact δ equals its calibration δ, which a
float audit cannot certify below that δ.

Sources (full citations in :data:`optmech.sources.WORKS`): [CKS20]; [AS18] (the Tulap distribution);
[AV23] (canonical noise distributions); [AR23] (discrete CNDs; the rounded CND at Δ = 1).

Tested by: tests/test_deployed_integer.py.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator

import mpmath
import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.approx.discrete_gaussian import (discrete_gaussian_cost, discrete_gaussian_delta,
                                                         discrete_gaussian_log_normaliser)

__all__ = ["IntegerLaw", "window_delta", "discrete_laplace_law", "truncated_geometric_law", "truncated_geometric_delta",
           "truncated_geometric_nonneg_law", "discrete_gaussian_law", "rounded_tulap_law", "rounded_tulap_at", "deployed_laws",
           "enclose_moments", "LAW_NAMES", "FULL_AUDIT_LIMIT", "SUBSAMPLE"]

U = 2.0**-53
#: above this many N·Δ operations the audit runs on a subsample of shifts (see the module docstring)
FULL_AUDIT_LIMIT = 3e8
#: shifts audited in a subsampled audit (1 and Δ included)
SUBSAMPLE = 64
#: the window of an infinitely supported law keeps all but this much mass (each side, roughly)
TAIL_TARGET = 1e-24
#: relative allowance on one float pmf entry (beyond the argument error of exp)
_ETA = 32.0 * U
#: the names of the laws, in table order
LAW_NAMES = ("discrete_laplace", "truncated_geometric", "truncated_geometric_nonneg", "discrete_gaussian",
             "rounded_tulap")
_DPS = 60


@dataclass
class IntegerLaw:
    """One calibrated integer noise law and its certificates.

    ``pmf[i]`` is the (float) mass at ``offset + i``; ``pmf_error`` bounds Σ|p_float − p_exact| over the
    window and ``tail_mass`` the exact mass outside it (0 for a finite support).  ``audited_delta`` is a
    rigorous upper bound on the exact law's δ(ε) over the shifts named by ``audit_shifts``;
    ``cost_abs`` and ``cost_square`` enclose E|X| and E X² of the exact law.
    """

    name: str
    epsilon: float
    delta: float
    sensitivity: int
    parameters: dict
    offset: int
    pmf: np.ndarray = field(repr=False)
    pmf_error: float
    tail_mass: float
    audited_delta: float
    audit_shifts: str
    cost_abs: tuple[float, float]
    cost_square: tuple[float, float]
    note: str = ""
    #: the certified bound used for ``private``: ``audited_delta``, or a smaller proven one (the closed-form
    #: δ(T) of the truncated geometric in interval arithmetic; 0 for the ε-DP discrete Laplace)
    delta_bound: float | None = None

    def __post_init__(self) -> None:
        if self.delta_bound is None:
            self.delta_bound = self.audited_delta

    def cost(self, cost: str) -> tuple[float, float]:
        """The enclosure of E|X| (``"abs"``) or E X² (``"square"``)."""
        if cost == "abs":
            return self.cost_abs
        if cost == "square":
            return self.cost_square
        raise SpecError(f"deployed integer laws have the costs abs and square, got {cost!r}")

    @property
    def private(self) -> bool:
        """δ(ε) <= δ is certified (``delta_bound``)."""
        return self.delta_bound <= self.delta


# ---------------------------------------------------------------------------------------------------------
# checks and interval helpers


@contextlib.contextmanager
def _iv_precision(dps: int = _DPS) -> Iterator[None]:
    """mpmath's interval context at ``dps`` digits (restored afterwards)."""
    old = mpmath.iv.dps
    mpmath.iv.dps = dps
    try:
        yield
    finally:
        mpmath.iv.dps = old


def _check(epsilon: float, delta: float, sensitivity: int) -> tuple[float, float, int]:
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise SpecError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    eps, dlt = float(epsilon), float(delta)
    if not (math.isfinite(eps) and 0.0 < eps <= 30.0):
        raise SpecError(f"epsilon must be in (0, 30], got {epsilon!r}")
    if not (0.0 < dlt < 0.5):
        raise SpecError(f"delta must be in (0, 0.5), got {delta!r}")
    return eps, dlt, int(sensitivity)


def _ends(x) -> tuple[float, float]:
    """(lo, hi) floats enclosing an mpmath interval (rounded outward)."""
    lo = float(mpmath.mpf(x.a))
    hi = float(mpmath.mpf(x.b))
    return float(np.nextafter(lo, -np.inf)), float(np.nextafter(hi, np.inf))


def _lam(eps: float, D: int):
    """λ = e^{−ε/Δ} as an mpmath interval (ε read exactly as its double)."""
    return mpmath.iv.exp(-mpmath.iv.mpf(eps) / D)


def _sum_up(x: np.ndarray) -> float:
    """An upper bound on the exact sum of the nonnegative floats ``x`` (pairwise sum, error γ_{log2 n + 1})."""
    n = max(int(x.size), 1)
    s = float(np.sum(x))
    return float(np.nextafter(s * (1.0 + (math.log2(n) + 3.0) * U), np.inf))


def _sum_down(x: np.ndarray) -> float:
    n = max(int(x.size), 1)
    s = float(np.sum(x))
    return max(0.0, float(np.nextafter(s * (1.0 - (math.log2(n) + 3.0) * U), -np.inf)))


# ---------------------------------------------------------------------------------------------------------
# the audit


def window_delta(p: np.ndarray, epsilon: float, shifts: np.ndarray, *, pmf_error: float = 0.0,
                 tail_mass: float = 0.0) -> np.ndarray:
    r"""Upper bounds on δ_s = Σ_x [p(x) − e^ε p(x+s)]_+ of an exact law, one per shift s in ``shifts`` (>= 1).

    ``p`` is a float window (zero outside it) within Σ|p − p_exact| <= ``pmf_error`` of the exact law on
    the window, whose mass outside the window is <= ``tail_mass``.  Bound: the project's outward-rounded
    hockey-stick sum of the window's masses as given (:func:`optmech.audit.hockey_stick_1d`, not
    renormalised; terms whose x + s leaves the window count as p(x)) plus (1 + e^ε)·pmf_error
    (|[a − cb]_+ − [a' − cb']_+| <= |a − a'| + c|b − b'|) plus tail_mass (terms at x outside the window are
    <= p(x); dropping p(x + s) for x + s outside the window only raises a term); rounded up, clipped to 1.
    """
    from optmech.audit import hockey_stick_1d

    shifts = np.asarray(shifts, dtype=np.int64)
    if shifts.size and int(shifts.min()) < 1:
        raise SpecError(f"shifts must be >= 1, got {int(shifts.min())}")
    body = hockey_stick_1d(np.asarray(p, dtype=float), shifts, epsilon, renormalise=False)
    extra = (1.0 + math.exp(epsilon) * (1 + 4 * U)) * pmf_error + tail_mass
    return np.minimum(1.0, np.nextafter((body + extra) * (1.0 + 4.0 * U), np.inf))


def _audit(p: np.ndarray, eps: float, D: int, pmf_error: float, tail_mass: float, *,
           subsample_ok: str | None) -> tuple[float, str]:
    """(δ bound, description): every shift 1..Δ, or (large N·Δ, ``subsample_ok`` naming why that suffices)
    :data:`SUBSAMPLE` shifts including 1 and Δ."""
    if p.size * D <= FULL_AUDIT_LIMIT or subsample_ok is None:
        shifts = np.arange(1, D + 1)
        what = f"all shifts 1..{D}"
    else:
        shifts = np.unique(np.linspace(1, D, SUBSAMPLE).round().astype(np.int64))
        what = f"{shifts.size} shifts of 1..{D} incl. 1 and {D} (N·Δ = {p.size * D:.2g}; {subsample_ok})"
    return float(np.max(window_delta(p, eps, shifts, pmf_error=pmf_error, tail_mass=tail_mass))), what


def enclose_moments(k: np.ndarray, m: np.ndarray, err: np.ndarray | float) -> tuple[tuple[float, float],
                                                                                   tuple[float, float]]:
    r"""Enclosures of Σ|k|·p(k) and Σk²·p(k) over a window, for exact masses within |p − m| <= err of ``m``.

    Each product |k|m or k²m is one rounding (|k| <= 2^26, so k² is exact), the pairwise sums are widened
    by γ_{log2 n + 3}, and Σ L·err is added/subtracted (rounded up).  Mass outside the window is not
    included (the caller adds its tail bound to the upper end).
    """
    k = np.asarray(k, dtype=float)
    if k.size and float(np.max(np.abs(k))) > 2.0**26:
        raise SpecError("enclose_moments needs |k| <= 2^26 (k² exact in float64)")
    ak = np.abs(k)
    err = np.broadcast_to(np.asarray(err, dtype=float), m.shape)
    out = []
    for L in (ak, k * k):
        lo = _sum_down(L * m) * (1 - 2 * U) - _sum_up(L * err) * (1 + 2 * U)
        hi = (_sum_up(L * m) + _sum_up(L * err)) * (1 + 4 * U)
        out.append((max(0.0, float(np.nextafter(lo, -np.inf))), float(np.nextafter(hi, np.inf))))
    return out[0], out[1]


def _geometric_window(eps: float, D: int, norm_lo: float, norm_hi: float, W: int) -> tuple[np.ndarray, float]:
    """(p, pmf_error): p(x) = norm·e^{−(ε/Δ)|x|} for |x| <= W in float, norm ∈ [norm_lo, norm_hi]."""
    a = eps / D
    x = np.abs(np.arange(-W, W + 1, dtype=float))
    arg = a * x                                   # relative error <= 2u (a rounded, product rounded)
    norm = 0.5 * (norm_lo + norm_hi)
    p = norm * np.exp(-arg)
    rel = _ETA + 2.0 * U * float(arg.max() if arg.size else 0.0) * 1.01 + (norm_hi - norm_lo) / norm_lo
    return p, _sum_up(p) * rel * 1.01


# ---------------------------------------------------------------------------------------------------------
# the laws


def discrete_laplace_law(epsilon: float, delta: float, sensitivity: int) -> IntegerLaw:
    r"""The discrete Laplace p(x) = (1 − λ)/(1 + λ)·λ^{|x|}, λ = e^{−ε/Δ}: ε-DP (δ = 0), module docstring.

    E|X| = 2λ/(1 − λ²), E X² = 2λ/(1 − λ)² in interval arithmetic.  The window is |x| <= W with
    2λ^{W+1}/(1 + λ) <= :data:`TAIL_TARGET` (the exact tail mass beyond W, bounded in intervals).
    """
    eps, dlt, D = _check(epsilon, delta, sensitivity)
    with _iv_precision():
        lam = _lam(eps, D)
        c = (1 - lam) / (1 + lam)
        m1 = 2 * lam / (1 - lam * lam)
        m2 = 2 * lam / (1 - lam) ** 2
        W = int(math.ceil(math.log(TAIL_TARGET / 2) / (-eps / D)))
        tail = 2 * lam ** (W + 1) / (1 + lam)
        c_lo, c_hi = _ends(c)
        tail_hi = _ends(tail)[1]
    p, perr = _geometric_window(eps, D, c_lo, c_hi, W)
    audited, what = _audit(p, eps, D, perr, tail_hi, subsample_ok="δ_s proven 0 for every shift")
    return IntegerLaw("discrete_laplace", eps, dlt, D, {"lambda": float(mpmath.mpf(lam.a)), "scale": D / eps},
                      -W, p, perr, tail_hi, audited, what, _ends(m1), _ends(m2),
                      "ε-DP: δ(ε) = 0 exactly (the audit adds rounding and the window's tail)", 0.0)


def _tg_delta(lam, D: int, T: int):
    """δ(T) of the truncated geometric on [−T, T] in intervals: the mass of its top min(Δ, 2T + 1) points."""
    Z = 1 + 2 * lam * (1 - lam**T) / (1 - lam)
    top = T - D + 1
    if top >= 0:
        return lam**top * (1 - lam**D) / ((1 - lam) * Z)
    if top <= -T:
        return mpmath.iv.mpf(1)
    # x from top < 0 to T: the masses at 1..T, at 0 and at 1..|top|
    s = lambda n: lam * (1 - lam**n) / (1 - lam)  # noqa: E731
    return (s(T) + 1 + s(-top)) / Z


def truncated_geometric_delta(epsilon: float, sensitivity: int, half_width: int) -> float:
    """A rigorous upper bound (interval arithmetic, rounded up) of δ(ε) of the truncated double geometric
    on [−T, T], T = ``half_width``: the mass of its top min(Δ, 2T + 1) points (module docstring).

    >>> import math
    >>> lam = math.exp(-1.0)                      # Δ = 1: δ(T) = λ^T / Z_T
    >>> z = 1 + 2 * lam * (1 - lam**5) / (1 - lam)
    >>> math.isclose(truncated_geometric_delta(1.0, 1, 5), lam**5 / z, rel_tol=1e-12)
    True
    """
    eps, _, D = _check(epsilon, 0.25, sensitivity)   # (δ is not used here)
    if isinstance(half_width, bool) or int(half_width) != half_width or int(half_width) < 0:
        raise SpecError(f"half_width must be a nonnegative integer, got {half_width!r}")
    with _iv_precision():
        return _ends(_tg_delta(_lam(eps, D), D, int(half_width)))[1]


def truncated_geometric_law(epsilon: float, delta: float, sensitivity: int) -> IntegerLaw:
    r"""The truncated double geometric p(x) = λ^{|x|}/Z_T on [−T, T], λ = e^{−ε/Δ}, T the smallest integer with
    δ(T) <= δ (module docstring: δ(T) = λ^{T−Δ+1}(1 − λ^Δ)/((1 − λ)Z_T), decreasing for T >= Δ − 1).

    T is the closed-form T*, then moved until δ(T) <= δ < δ(T − 1) is certified in interval arithmetic.
    """
    eps, dlt, D = _check(epsilon, delta, sensitivity)
    with _iv_precision():
        lam = _lam(eps, D)
        d = mpmath.iv.mpf(dlt)
        arg = d * (1 + lam) / (lam ** (1 - D) - lam + 2 * d * lam)
        Tstar = mpmath.iv.log(arg) / mpmath.iv.log(lam)
        T = max(D - 1, int(math.ceil(float(mpmath.mpf(Tstar.a)))))

        def ok(t: int) -> bool:
            return _ends(_tg_delta(lam, D, t))[1] <= dlt

        while not ok(T):
            T += 1
        while T > 0 and not (_ends(_tg_delta(lam, D, T - 1))[0] > dlt):
            if ok(T - 1):
                T -= 1
            else:
                raise SpecError(f"cannot certify the minimal T near {T} (δ(T − 1) is within rounding of δ)")
        exact_delta = _tg_delta(lam, D, T)
        Z = 1 + 2 * lam * (1 - lam**T) / (1 - lam)
        S1 = lam * (1 - (T + 1) * lam**T + T * lam ** (T + 1)) / (1 - lam) ** 2
        S2 = lam * (1 + lam - (T + 1) ** 2 * lam**T + (2 * T * T + 2 * T - 1) * lam ** (T + 1)
                    - T * T * lam ** (T + 2)) / (1 - lam) ** 3
        m1, m2 = 2 * S1 / Z, 2 * S2 / Z
        n_lo, n_hi = _ends(1 / Z)
        prev = _ends(_tg_delta(lam, D, T - 1))[0] if T > 0 else 1.0
    p, perr = _geometric_window(eps, D, n_lo, n_hi, T)
    audited, what = _audit(p, eps, D, perr, 0.0, subsample_ok="δ_s proven non-decreasing in s")
    return IntegerLaw("truncated_geometric", eps, dlt, D,
                      {"lambda": float(mpmath.mpf(lam.a)), "T": T, "delta_T": _ends(exact_delta)[1],
                       "delta_T_minus_1": prev}, -T, p, perr, 0.0, audited, what, _ends(m1), _ends(m2),
                      f"support [−{T}, {T}]; exact δ(ε) = {_ends(exact_delta)[1]:.6g} (closed form)",
                      min(audited, _ends(exact_delta)[1]))


def truncated_geometric_nonneg_law(epsilon: float, delta: float, sensitivity: int,
                                   base: IntegerLaw | None = None) -> IntegerLaw:
    r"""Y = X + T, X the truncated double geometric: support [0, 2T] ⊆ ℕ, the same δ_s (a translate),
    E|Y| = T, E Y² = E X² + T² (module docstring).  ``base`` reuses an already computed X."""
    x = base if base is not None else truncated_geometric_law(epsilon, delta, sensitivity)
    T = int(x.parameters["T"])
    sq = (float(np.nextafter(x.cost_square[0] + T * T, -np.inf)), float(np.nextafter(x.cost_square[1] + T * T, np.inf)))
    return IntegerLaw("truncated_geometric_nonneg", x.epsilon, x.delta, x.sensitivity, dict(x.parameters), 0, x.pmf,
                      x.pmf_error, 0.0, x.audited_delta, x.audit_shifts + " (the audit of X; Y is a translate)",
                      (float(T), float(T)), sq, f"support [0, {2 * T}], X + T", x.delta_bound)


def _dg_shift_delta_float(sigma: float, eps: float, s: int, log_z: float) -> float:
    """δ_s of the discrete Gaussian in plain float (a search aid, not a bound): Σ_{k<c} p(k)(1 − e^{ε+(2ks−s²)/(2σ²)})."""
    c = s / 2.0 - sigma * sigma * eps / s
    hi = int(math.floor(c)) + 1
    lo = min(hi, 0) - int(math.ceil(14.0 * sigma)) - 2
    k = np.arange(lo, hi + 1, dtype=float)
    x = eps + (2.0 * k * s - s * s) / (2.0 * sigma * sigma)
    w = np.maximum(-np.expm1(x), 0.0)
    return float(np.sum(np.exp(-k * k / (2.0 * sigma * sigma) - log_z) * w))


def discrete_gaussian_law(epsilon: float, delta: float, sensitivity: int) -> IntegerLaw:
    r"""The discrete Gaussian [CKS20], σ calibrated to (ε, δ) at sensitivity Δ.

    Search: bisection (relative 1e-10) on the float δ_Δ(σ) of shift Δ alone (O(σ) a step), from the
    continuous analytic σ.  Certificate: :func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_delta`
    (σ, ε, Δ), the rigorous bound over *every* shift 1..Δ, must be <= δ; if not, σ is raised by 1e-9 relative
    steps (then doubling steps) until it is.  So the law is certified (ε, δ)-DP; that σ is the smallest
    to 1e-10 assumes δ_s largest at s = Δ and monotone in σ (checked against
    :func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_sigma` at small Δ in tests; not proven).
    This replaces discrete_gaussian_sigma, whose O(Δσ)-per-step bisection takes tens of minutes at
    Δ = 1000, ε = 0.1.  Costs: upper end :func:`~optmech.mechanisms.approx.discrete_gaussian.discrete_gaussian_cost`
    (exact sum plus tail bound); lower end the float window |k| <= K, K ≈ 10σ, summed with allowances.
    """
    from optmech.mechanisms.approx.gaussian import analytic_gaussian_sigma

    eps, dlt, D = _check(epsilon, delta, sensitivity)

    def fdelta(s: float) -> float:
        return _dg_shift_delta_float(s, eps, D, discrete_gaussian_log_normaliser(s))

    hi = analytic_gaussian_sigma(eps, dlt, float(D))
    while fdelta(hi) > dlt:
        hi *= 1.25
    lo = hi / 1.25
    while fdelta(lo) <= dlt:
        hi, lo = lo, lo / 1.25
    while hi / lo - 1.0 > 1e-10:
        mid = math.sqrt(lo * hi)
        if fdelta(mid) <= dlt:
            hi = mid
        else:
            lo = mid
    sigma = hi
    audited = discrete_gaussian_delta(sigma, eps, D)
    steps = 0
    while audited > dlt:
        steps += 1
        sigma *= (1.0 + 1e-9) if steps <= 8 else 2.0 ** (1.0 / 64)
        audited = discrete_gaussian_delta(sigma, eps, D)
    log_z = discrete_gaussian_log_normaliser(sigma)
    K = int(math.ceil(10.0 * sigma)) + 2
    k = np.arange(-K, K + 1, dtype=float)
    expo = k * k / (2.0 * sigma * sigma) + log_z
    p = np.exp(-expo)
    err = p * (_ETA + 16.0 * U * (expo + 1.0))
    (a_lo, _), (s_lo, _) = enclose_moments(k, p, err)
    two_s2 = 2.0 * sigma * sigma
    m = K + 1.0   # Σ_{|k|>K} p(k) <= 2p(K+1)/(1 − e^{−(2K+3)/(2σ²)}) (ratios p(j+1)/p(j) decrease)
    tail = 2.0 * math.exp(-m * m / two_s2 - log_z) / -math.expm1(-(2.0 * m + 1.0) / two_s2) * (1 + 1e-12)
    a_hi = discrete_gaussian_cost("abs", sigma)
    s_hi = discrete_gaussian_cost("square", sigma)
    return IntegerLaw("discrete_gaussian", eps, dlt, D, {"sigma": sigma}, -K, p, _sum_up(err), tail, audited,
                      f"all shifts 1..{D} (discrete_gaussian_delta)", (min(a_lo, a_hi), a_hi), (min(s_lo, s_hi), s_hi),
                      "σ smallest to 1e-10 relative for the worst shift Δ; δ certified over every shift")


def _tulap_parameters(eps: float, dlt: float):
    """(b, q, c, K, t) of Tulap(0, e^{−ε}, q) for (ε, δ) [AV23], as mpmath intervals (K an int)."""
    iv = mpmath.iv
    b = iv.exp(-iv.mpf(eps))
    d = iv.mpf(dlt)
    q = 2 * d * b / (1 - b + 2 * d * b)
    c = (1 - b) / (1 + b)
    # K: b^{K+1}/(1+b) <= q/2 < b^K/(1+b); start from the float estimate and certify
    K = max(0, int(math.floor(math.log(float(mpmath.mpf((q * (1 + b) / 2).a))) / -eps)) - 1)
    while not (_ends(b ** (K + 1) / (1 + b))[1] < _ends(q / 2)[0]):
        K += 1
    while K > 0 and _ends(b**K / (1 + b))[1] < _ends(q / 2)[0]:
        K -= 1
    if not (_ends(b**K / (1 + b))[0] > _ends(q / 2)[1]):
        raise SpecError("the Tulap truncation point falls within rounding of a cell boundary")
    t = K + iv.mpf(0.5) - (q / 2 - b ** (K + 1) / (1 + b)) / (c * b**K)
    return b, q, c, K, t


def rounded_tulap_law(epsilon: float, delta: float, sensitivity: int) -> IntegerLaw:
    r"""round(Δ·N), N ~ Tulap(0, e^{−ε}, q), q = 2δ'b/(1 − b + 2δ'b) [AV23], δ' = δ − margin.

    The law is tight (its exact δ(ε) is δ'), so the float audit can certify δ(ε) <= δ only with a margin:
    δ' = δ(1 − 2⁻³⁰) first, then, if the audit bound exceeds δ, δ' = δ(1 − 2⁻³⁰) − 2(1 + e^ε)·pmf_error
    (the audit's own allowance for the float pmf), at most twice more.  ``parameters["delta_calibrated"]``
    is the δ' used.  See :func:`rounded_tulap_at` for the construction.
    """
    eps, dlt, D = _check(epsilon, delta, sensitivity)
    dcal = dlt * (1.0 - 2.0**-30)
    law = rounded_tulap_at(eps, dlt, D, dcal)
    for _ in range(3):
        if law.audited_delta <= dlt:
            break
        dcal = dlt * (1.0 - 2.0**-30) - 2.0 * (1.0 + math.exp(eps)) * law.pmf_error * 2.0 ** _
        law = rounded_tulap_at(eps, dlt, D, dcal)
    return law


def rounded_tulap_at(epsilon: float, delta: float, sensitivity: int, delta_calibrated: float) -> IntegerLaw:
    r"""round(Δ·N), N ~ Tulap(0, e^{−ε}, q), q = 2δ'b/(1 − b + 2δ'b) [AV23], δ' = ``delta_calibrated``
    (the target δ is ``delta``: ``private`` compares the audit with it).

    The pmf is built cell by cell (module docstring): for each integer j, the pieces of
    [j − ½, j + ½) ∩ [−Δt, Δt] in the cells Δ[k − ½, k + ½) times the density c b^{|k|}/((1 − q)Δ).
    ``pmf_error`` bounds the float error (relative allowances per entry, plus the error of the float
    Δt at the two boundary bins).  δ is certified by :func:`window_delta` (``audited_delta``) and holds by
    [AV23]'s theorem plus post-processing.  Costs from the (finite) pmf by :func:`enclose_moments`.
    """
    eps, dlt, D = _check(epsilon, delta, sensitivity)
    dcal = float(delta_calibrated)
    if not 0.0 < dcal <= dlt:
        raise SpecError(f"delta_calibrated must be in (0, delta], got {delta_calibrated!r}")
    with _iv_precision():
        b, q, c, K, t = _tulap_parameters(eps, dcal)
        dens = c / ((1 - q) * D)
        dens_lo, dens_hi = _ends(dens)
        Dt_lo, Dt_hi = _ends(D * t)
        t_mid = 0.5 * sum(_ends(t))
    Dt = float(np.nextafter(Dt_lo, np.inf)) if Dt_lo < Dt_hi else Dt_lo
    J = int(math.floor(Dt + 0.5)) + 1
    j = np.arange(-J, J + 1, dtype=float)
    lo = np.maximum(j - 0.5, -Dt)
    hi = np.minimum(j + 0.5, Dt)
    k1 = np.floor(lo / D + 0.5)                 # the cell of lo (cells [D(k−½), D(k+½)))
    edge = D * (k1 + 0.5)                       # its right end (exact: |D(k+½)| < 2^52)
    len1 = np.clip(np.minimum(hi, edge) - lo, 0.0, None)
    len2 = np.clip(hi - edge, 0.0, None)        # the next cell k1 + 1
    dmid = 0.5 * (dens_lo + dens_hi)
    m1 = len1 * np.exp(-eps * np.abs(k1))
    m2 = len2 * np.exp(-eps * np.abs(k1 + 1.0))
    p = dmid * (m1 + m2)
    rel = _ETA + 2.0 * U * eps * (K + 2) + (dens_hi - dens_lo) / dens_lo
    err = p * rel * 1.01
    # the float Δt is within |Δt_hi − Δt_lo| + u·Δt of the exact one: the two boundary bins' lengths
    berr = (abs(Dt_hi - Dt_lo) + 2.0 * U * Dt) * dens_hi * 2.0
    err[0] += berr
    err[-1] += berr
    err[1] += berr
    err[-2] += berr
    perr = _sum_up(err)
    audited, what = _audit(p, eps, D, perr, 0.0, subsample_ok="every shift covered by [AV23]'s CND theorem")
    ca, cs = enclose_moments(j, p, err)
    return IntegerLaw("rounded_tulap", eps, dlt, D,
                      {"b": math.exp(-eps), "q": float(mpmath.mpf(q.b)), "t": t_mid, "delta_calibrated": dcal},
                      -J, p, perr, 0.0, audited, what, ca, cs,
                      f"round({D}·N), N ~ Tulap(0, e^-ε, q) truncated at ±{t_mid:.6g}; calibrated at δ' = {dcal!r}")


_BUILDERS: dict[str, Callable[[float, float, int], IntegerLaw]] = {
    "discrete_laplace": discrete_laplace_law,
    "truncated_geometric": truncated_geometric_law,
    "discrete_gaussian": discrete_gaussian_law,
    "rounded_tulap": rounded_tulap_law,
}


def deployed_laws(epsilon: float, delta: float, sensitivity: int,
                  names: tuple[str, ...] = LAW_NAMES) -> dict[str, IntegerLaw]:
    """The laws named (default: all of :data:`LAW_NAMES`) calibrated to (ε, δ) at sensitivity Δ."""
    out: dict[str, IntegerLaw] = {}
    for n in names:
        if n == "truncated_geometric_nonneg":
            base = out.get("truncated_geometric") or truncated_geometric_law(epsilon, delta, sensitivity)
            out[n] = truncated_geometric_nonneg_law(epsilon, delta, sensitivity, base)
        elif n in _BUILDERS:
            out[n] = _BUILDERS[n](epsilon, delta, sensitivity)
        else:
            raise SpecError(f"unknown law {n!r}; choose from {', '.join(LAW_NAMES)}")
    return out
