r"""The d-dimensional staircase on ℝ^d for pure ε-DP: :class:`StaircaseND` (``staircase_nd``), its
normaliser, moments, costs, optimal γ and sampler.

* :class:`StaircaseND`: the ℓ1 staircase [GKOV15, §II; Geng13, §3.2], ε-DP for ℓ1 sensitivity Δ
  (and, with ``norm=``, the staircase in the ball of ℓ2, ℓ∞, ℓp or weighted ℓp: see "Staircases in
  other norms" below),

  .. math::

      f_\gamma(x) = a(\gamma)\, b^{\lfloor \|x\|_1/\Delta - \gamma\rfloor + 1}, \qquad
      a(\gamma) = \frac{d!}{2^d\Delta^d N_d(\gamma)}, \qquad b = e^{-\epsilon},

  with :math:`c_k = \sum_{i\ge0} i^k b^i` and
  :math:`N_m(\gamma) = \sum_{j=1}^m \binom{m}{j} c_{m-j}(b + (1-b)\gamma^j)` ([GKOV15] §II).

The shared d-D conventions and cost names (:data:`~optmech.mechanisms.base_nd.COSTS_ND`) are in
:mod:`~optmech.mechanisms.base_nd`; volumes, cone measures and cross-norm moments in
:mod:`~optmech.mechanisms.geometry`.

Derivations used here [derived; each is checked in tests/test_mechanisms_multidim.py]:

* **Positive form of N_m.**  Σ_k b^k (k+1)^m = c_m/b gives
  :math:`N_m(\gamma) = (1-b)\sum_{j=0}^{m}\binom{m}{j}\gamma^j c_{m-j} = (1-b)^{-m}\tilde N_m(\gamma)`
  with :math:`\tilde N_m(\gamma) = \sum_j \binom{m}{j}((1-b)\gamma)^j \hat c_{m-j}` and
  :math:`\hat c_k = (1-b)^{k+1}c_k = b\sum_j A(k,j)b^j` (Eulerian numbers, ĉ_0 = 1): every term
  is positive and bounded by k!, so nothing overflows or cancels for any ε in (0, 700].
* **Moments**: E‖X‖₁^m = Δ^m (d/(d+m)) N_{d+m}(γ)/N_d(γ).  The
  direction Θ = X/‖X‖₁ is uniform (cone measure) on the ℓ1 sphere and independent of ‖X‖₁, so
  E‖X‖₂² = (2/(d+1)) E‖X‖₁², E‖X‖∞ = E‖X‖₁ H_d/d (mean largest of d uniform spacings), and
  E‖X‖₂ = E‖X‖₁ E‖G‖₂/d for G i.i.d. Exp(1) (:mod:`~optmech.mechanisms.geometry`).
* **Optimal γ.**  l1, l2, linf are all proportional to E‖X‖₁, so they share γ*; l2sq uses
  E‖X‖₁².  d = 1: the closed forms of :mod:`optmech.mechanisms.staircase`.  d = 2, l1: the
  larger root in [0, 1] of the quartic (1−b)²γ⁴ + 4b(1−b)γ³ + 6b²γ² − 2b(2b+1)γ + b² = 0 (the
  numerator of dV/dγ; it is convex on γ ≥ 0, positive at 0 and 1; the smaller root is a local
  maximum on the γ-circle).  Otherwise: the roots of the stationarity polynomial
  Ñ'_{d+M}Ñ_d − Ñ_{d+M}Ñ'_d in mpmath, located by sign changes on a grid of the circle and
  bisection, compared with γ = 0 ≡ 1.  For small ε V(γ) is extremely flat (relative spread
  ≈ 3e-3 (ε/2π)^d, e.g. 1e-182 at d = 64, ε = 0.01), so the working precision is >= 50 digits plus
  that many, and is raised whenever the spread seen on the grid is within 25 digits of it.
* **Sampler**: (k, β) from an inverse-CDF table of the shell masses
  b^k((k+γ)^d − k^d), b^{k+1}((k+1)^d − (k+γ)^d) (written as positive sums) truncated where the
  tail is < 2^−60; when that table would exceed 2^19 shells (tiny ε) the shell index comes from the
  exact mixture Pr(k) ∝ b^k Σ_{i<d} C(d,i)(uγ^{d−i} + b) k^i, each k^i b^k being, by Worpitzky's
  identity k^i = Σ_j A(i,j) C(k+j, i), a mixture of shifted negative binomials.  Radius within the
  shell R = (lo^d + U(hi^d − lo^d))^{1/d} (evaluated as hi·(1 − (1−U)(1 − (lo/hi)^d))^{1/d});
  direction G/‖G‖₁ with G_j = ±Exp(1) = Laplace(1).  Floating point: not exactly DP (see :mod:`optmech.mechanisms.rng`).

Staircases in other norms [derived; [GKOV15] is the ℓ1 case].  K is ``l1``, ``l2``, ``linf``,
``lp:P`` (P >= 1) or a weighted ℓp, ‖x‖_K = (Σ w_i|x_i|^p)^{1/p} (``weights=``); B_K its unit ball.

* **Density and privacy.**  f(x) = a_K b^{⌊‖x‖_K/Δ − γ⌋ + 1}, the 1-D staircase profile g of
  r = ‖x‖_K.  For ‖t‖_K <= Δ, |‖x+t‖_K − ‖x‖_K| <= ‖t‖_K <= Δ (triangle inequality), so the
  level moves by at most one and f(x) <= e^ε f(x+t).
* **Radial law.**  By the polar factorisation of :mod:`~optmech.mechanisms.geometry`, R = ‖X‖_K
  and Θ = X/‖X‖_K are independent, Θ under the cone measure μ_K and R ∝ h(r) r^{d−1}: the radial
  law of the ℓ1 staircase for every K, so the shell sampler, N_d and the moments
  E‖X‖_K^m = Δ^m (d/(d+m)) N_{d+m}/N_d are unchanged, and a_K = 1/(vol(B_K) Δ^d N_d(γ)) (ℓ1:
  vol = 2^d/d! gives a(γ) above).  Directions: Θ ~ μ_K (geometry's direction samplers).
* **Costs in other norms.**  E‖X‖_L^m = Δ^m E[R^m] E_{μ_K}‖Θ‖_L^m with the cone factor of
  :func:`~optmech.mechanisms.geometry.cone_factor`; unweighted ℓ1 keeps every route above.  Other
  (K, L, m) raise SpecError.
* **Optimal γ.**  The cone factor does not depend on γ, so γ* = argmin E[R^m] is
  :func:`optimal_gamma_nd` for every K (m = 1 for l1, l2, linf; 2 for l2sq; M for pow:M).
* **d = 1.**  Every unweighted norm is |x| (same normaliser, pdf, samples and costs as ℓ1);
  weighted, ‖x‖ = w^{1/p}|x|: the 1-D staircase with sensitivity Δ w^{−1/p}.

Tested by: tests/test_mechanisms_multidim.py.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Privacy
from optmech.mechanisms.base_nd import COSTS_ND, NDMechanism, check_dim, nd_cost_error, parse_nd_cost
from optmech.mechanisms.geometry import (
    Ball,
    ball_directions_scaled,
    ball_norm,
    cone_factor,
    cone_moments,
    exp_l2_mean,
    harmonic,
    l1_directions_scaled,
    log_ball_volume,
    parse_norm,
)

__all__ = [
    "StaircaseND",
    "staircase_nd_normaliser",
    "staircase_nd_moment",
    "staircase_nd_cost",
    "optimal_gamma_nd",
    "staircase_nd_optimal_cost",
    "MAX_MOMENT",
    "MAX_TABLE_SHELLS",
]

#: Largest staircase moment order (E‖X‖₁^M).
MAX_MOMENT = 60

#: Largest number of shells in the sampler's inverse-CDF table (beyond it: the exact mixture).
MAX_TABLE_SHELLS = 1 << 19


def _integer_power(cost, m: float) -> int:
    if not float(m).is_integer() or m > MAX_MOMENT:
        raise SpecError(f"cost {cost!r}: the staircase supports pow:M for integers 0 <= M <= {MAX_MOMENT}")
    return int(m)


# --------------------------------------------------------------------------------------------
# scaled series constants and N_m


@functools.lru_cache(maxsize=None)
def _eulerian(k: int) -> tuple[int, ...]:
    return tuple(nx.eulerian_row(k))


def _chat(b: float, m_max: int) -> list[float]:
    """ĉ_k = (1−b)^{k+1} c_k = b Σ_j A(k, j) b^j for k >= 1, ĉ_0 = 1 (cf. nx.series_constants)."""
    out = [1.0]
    for k in range(1, m_max + 1):
        poly = 0.0
        for coef in reversed(_eulerian(k)):
            poly = poly * b + float(coef)
        out.append(b * poly)
    return out


def _ntilde(m: int, u: float, gamma: float, chat: list[float]) -> float:
    """Ñ_m(γ) = (1−b)^m N_m(γ) = Σ_j C(m, j) (uγ)^j ĉ_{m−j} (positive terms)."""
    ug = u * gamma
    return math.fsum(math.comb(m, j) * ug**j * chat[m - j] for j in range(m + 1))


def _check_stair(epsilon, sensitivity, gamma, dim):
    return nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity), nx.check_unit_interval(gamma, "gamma"), check_dim(dim)


def _log_normaliser(eps: float, delta: float, gamma: float, d: int) -> float:
    b, u = nx.b_and_u(eps)
    nt = _ntilde(d, u, gamma, _chat(b, d))
    return math.lgamma(d + 1.0) + d * math.log(u / (2.0 * delta)) - math.log(nt)


def staircase_nd_normaliser(epsilon, sensitivity, gamma, dim, *, norm="l1", weights=None) -> float:
    r"""a(γ) = d!/(2^dΔ^d N_d(γ)) [GKOV15, §II] (0.0 if it underflows); in another norm K,
    a_K(γ) = 1/(vol(B_K) Δ^d N_d(γ)) [derived: module docstring].

    >>> import math
    >>> from optmech.mechanisms import staircase_normaliser
    >>> math.isclose(staircase_nd_normaliser(1, 1, 0.3, 1), staircase_normaliser(1, 1, 0.3))    # d = 1
    True
    >>> a, b, g = staircase_nd_normaliser(1, 1, 0.3, 2), math.exp(-1), 0.3
    >>> piece = lambda lo, hi: 2 * (hi * hi - lo * lo)   # ∫ 4r dr: the ℓ1 circle of radius r has length 4r
    >>> total = a * (piece(0, g) + sum(b**k * piece(k - 1 + g, k + g) for k in range(1, 200)))
    >>> math.isclose(total, 1.0)                         # level k on k − 1 + γ <= ‖x‖₁ < k + γ
    True
    >>> square = staircase_nd_normaliser(1, 1, 0.3, 2, norm="linf")   # vol(B_∞) = 4 = 2 vol(B_1)
    >>> math.isclose(2 * square, staircase_nd_normaliser(1, 1, 0.3, 2))
    True
    """
    eps, delta, gamma, d = _check_stair(epsilon, sensitivity, gamma, dim)
    return math.exp(_log_normaliser_ball(eps, delta, gamma, d, parse_norm(norm, weights, d)))


def _moment(m: int, eps: float, delta: float, gamma: float, d: int) -> float:
    b, u = nx.b_and_u(eps)
    chat = _chat(b, d + m)
    ratio = _ntilde(d + m, u, gamma, chat) / _ntilde(d, u, gamma, chat)
    return d / (d + m) * ratio * (delta / u) ** m


def staircase_nd_moment(m, epsilon, sensitivity, gamma, dim) -> float:
    r"""E‖X‖₁^m = Δ^m (d/(d+m)) N_{d+m}(γ)/N_d(γ) [derived].

    Integer 0 <= m <= 60; evaluated in the positive, scaled form Ñ of the module docstring.  It is
    also E‖X‖_K^m for the staircase in any norm K (the same radial law).

    >>> import math
    >>> a, b, g = staircase_nd_normaliser(1, 1, 0.3, 2), math.exp(-1), 0.3
    >>> piece = lambda lo, hi: 4 * (hi**3 - lo**3) / 3   # ∫ r · 4r dr
    >>> direct = a * (piece(0, g) + sum(b**k * piece(k - 1 + g, k + g) for k in range(1, 200)))
    >>> math.isclose(staircase_nd_moment(1, 1, 1, 0.3, 2), direct)
    True
    """
    m = nx.check_int_range(m, "m", 0, MAX_MOMENT)
    eps, delta, gamma, d = _check_stair(epsilon, sensitivity, gamma, dim)
    return _moment(m, eps, delta, gamma, d)


def _log_normaliser_ball(eps: float, delta: float, gamma: float, d: int, ball: Ball) -> float:
    """log a_K = log a_{ℓ1} + log vol(B_1) − log vol(B_K): a_K vol(B_K) Δ^d N_d(γ) = 1."""
    la = _log_normaliser(eps, delta, gamma, d)
    if ball.plain_l1 or (d == 1 and ball.weights is None):
        return la
    return la + (d * math.log(2.0) - math.lgamma(d + 1.0)) - log_ball_volume(ball, d)


# --------------------------------------------------------------------------------------------
# staircase costs


def _stair_cost(name: str, m, eps: float, delta: float, gamma: float, d: int, cost) -> float:
    if name == "pow":
        return _moment(_integer_power(cost, m), eps, delta, gamma, d)
    if name == "l2sq":
        return 2.0 / (d + 1.0) * _moment(2, eps, delta, gamma, d)
    r1 = _moment(1, eps, delta, gamma, d)
    if name == "l1":
        return r1
    if name == "linf":
        return r1 * harmonic(d) / d
    return r1 * exp_l2_mean(d) / d  # l2


def staircase_nd_cost(cost, epsilon, sensitivity, gamma, dim, *, norm="l1", weights=None) -> float:
    """E L(X) of the d-D staircase for a cost name in COSTS_ND or ``pow:M`` (‖x‖₁^M, integer M).

    l1 = E‖X‖₁, l2sq = (2/(d+1)) E‖X‖₁², linf = E‖X‖₁ H_d/d, l2 = E‖X‖₁ E‖G‖₂/d (G i.i.d.
    Exp(1)); see the module docstring.  In another ``norm`` K: Δ^m E[R^m] E‖Θ‖_L^m where the
    cone factor has an exact form, else SpecError.

    >>> import math
    >>> from optmech.mechanisms import staircase_cost_square
    >>> math.isclose(staircase_nd_cost("l2sq", 1, 1, 0.3, 1), staircase_cost_square(1, 1, 0.3))   # d = 1
    True
    >>> staircase_nd_cost("l1", 1, 1, 0.3, 2) == staircase_nd_moment(1, 1, 1, 0.3, 2)
    True
    >>> cube = staircase_nd_cost("l1", 1, 1, 0.3, 2, norm="linf")     # E‖Θ‖₁ = 1 + (d − 1)/2 on ∂B_∞
    >>> math.isclose(cube, 1.5 * staircase_nd_moment(1, 1, 1, 0.3, 2))
    True
    """
    eps, delta, gamma, d = _check_stair(epsilon, sensitivity, gamma, dim)
    ball = parse_norm(norm, weights, d)
    parsed = parse_nd_cost(cost)
    if parsed is None:
        raise nd_cost_error(cost)
    return _stair_cost_ball(parsed[0], parsed[1], eps, delta, gamma, d, ball, cost)


def _cost_order(name: str, m) -> tuple[str, int]:
    """(L, m) of a parsed cost: l1/l2/linf are ‖·‖_L^1, l2sq is ‖·‖₂², pow:M is ‖·‖₁^M."""
    if name == "l2sq":
        return "l2", 2
    if name == "pow":
        return "l1", int(m)
    return name, 1


def _stair_cost_ball(name: str, m, eps: float, delta: float, gamma: float, d: int, ball: Ball, cost) -> float:
    """E L(X) = Δ^m E[R^m] E‖Θ‖_L^m (R ⊥ Θ) for the staircase in the norm ``ball``."""
    if ball.plain_l1:
        return _stair_cost(name, m, eps, delta, gamma, d, cost)
    if d == 1:  # ‖x‖_K = |x|/a₁: the 1-D staircase with sensitivity a₁Δ
        return _stair_cost(name, m, eps, delta * float(ball.scale(1)[0]), gamma, 1, cost)
    if name == "pow":
        _integer_power(cost, m)
    target, order = _cost_order(name, m)
    factor = cone_factor(ball, target, order, d)
    if factor is None:
        exact = [c for c in COSTS_ND if cone_factor(ball, *_cost_order(c, None), d) is not None]
        raise SpecError(f"cost {cost!r}: no exact E L(X) for the staircase in the {ball.label} norm in {d}-D "
                        f"(exact here: {', '.join(exact)}, moment(m) = E||X||^m in its own norm)")
    return _moment(order, eps, delta, gamma, d) * factor


# --------------------------------------------------------------------------------------------
# optimal gamma


def gamma_quartic(eps: float) -> float | None:
    """Larger root in [0, 1] of Q(γ) = (1−b)²γ⁴ + 4b(1−b)γ³ + 6b²γ² − 2b(2b+1)γ + b² [derived].

    Scaled as γ = s t, s = (2b)^{1/3}, so that nothing underflows at large ε:
    Q(st)/s⁴ = u²t⁴ + 2us²t³ + (3/2)s⁴t² − (1+2b)t + s²/4.  Q is convex on γ >= 0 (Q'' >= 0),
    Q(0) = b² > 0, Q(1) = 1 > 0: the larger root lies between the minimiser and 1.
    """
    from scipy import optimize

    b, u = nx.b_and_u(eps)
    s = (2.0 * b) ** (1.0 / 3.0)
    s2 = s * s

    def q(t):
        return (((u * u * t + 2.0 * u * s2) * t + 1.5 * s2 * s2) * t - (1.0 + 2.0 * b)) * t + s2 / 4.0

    def dq(t):
        return ((4.0 * u * u * t + 6.0 * u * s2) * t + 3.0 * s2 * s2) * t - (1.0 + 2.0 * b)

    hi = 1.0 / s  # γ = 1
    if hi > 2.0 and dq(2.0) > 0.0 and q(2.0) > 0.0:
        hi = 2.0  # both roots of interest are O(1) in t: keep the bracket short
    t_min = optimize.brentq(dq, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    if not q(t_min) < 0.0:
        return None
    t = optimize.brentq(q, t_min, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return min(max(s * t, 0.0), 1.0)


def gamma_mp_digits(eps: float, d: int, m: int) -> int:
    """Working digits for the γ* search.  For small ε the relative spread of V over the circle is
    about 3e-3 (ε/2π)^d (measured for d = 8..64; Bernoulli-polynomial limit), and the stationarity
    polynomial cancels about as many digits; :func:`gamma_mp` checks the spread it sees and
    raises the precision if this estimate was short."""
    return 50 + int(math.ceil((d + m + 2) * max(0.0, math.log10(2.0 * math.pi / eps))))


@functools.lru_cache(maxsize=256)
def gamma_mp(eps: float, d: int, m: int) -> float:
    """argmin over the γ-circle of E‖X‖₁^m, by the roots of the stationarity polynomial (mpmath),
    at a precision of at least 25 digits beyond the relative spread of V over the grid."""
    dps = gamma_mp_digits(eps, d, m)
    for _ in range(8):
        g, flat_digits = _gamma_mp_at(eps, d, m, dps)
        if flat_digits + 25.0 <= dps:
            return g
        dps = 2 * dps if not math.isfinite(flat_digits) else max(dps + 20, int(math.ceil(flat_digits)) + 40)
    raise ArithmeticError(f"optimal gamma search did not resolve V for epsilon={eps}, dim={d}")  # pragma: no cover


def _gamma_mp_at(eps: float, d: int, m: int, dps: int) -> tuple[float, float]:
    """(γ*, −log10 of the relative spread of V on the grid) at ``dps`` digits."""
    import mpmath

    with mpmath.workdps(dps):
        mp = mpmath.mp
        e = mp.mpf(eps)
        b = mp.exp(-e)
        u = -mp.expm1(-e)
        chat = [mp.mpf(1)]
        for k in range(1, d + m + 1):
            poly = mp.mpf(0)
            for coef in reversed(_eulerian(k)):
                poly = poly * b + coef
            chat.append(b * poly)
        num = [math.comb(d + m, j) * u**j * chat[d + m - j] for j in range(d + m + 1)]  # Ñ_{d+m}, ascending
        den = [math.comb(d, j) * u**j * chat[d - j] for j in range(d + 1)]  # Ñ_d
        dnum = [j * num[j] for j in range(1, len(num))]
        dden = [j * den[j] for j in range(1, len(den))]
        stat = [mp.mpf(0)] * (len(num) + len(den) - 2)
        for i, x in enumerate(dnum):
            for j, y in enumerate(den):
                stat[i + j] += x * y
        for i, x in enumerate(num):
            for j, y in enumerate(dden):
                stat[i + j - 1] -= x * y

        def horner(c, g):
            acc = mp.mpf(0)
            for x in reversed(c):
                acc = acc * g + x
            return acc

        def value(g):
            return horner(num, g) / horner(den, g)

        # grid on [0, 1]: uniform, geometric near both ends and around the large-ε estimate
        # γ ≈ (d b/m)^{1/(d+m)} (from V ∝ (γ^{d+m} + b)/(γ^d + b) when b → 0)
        log_est = (math.log(d / m) - eps) / (d + m)
        lo = min(-14.0 * math.log(10.0), log_est - 10.0)
        pts = set(np.linspace(0.0, 1.0, 129).tolist())
        pts.update(np.exp(np.arange(lo, math.log(0.5), 0.25)).tolist())
        pts.update((1.0 - np.geomspace(1e-14, 1e-2, 25)).tolist())
        grid = [mp.mpf(g) for g in sorted(pts)]
        sgn = [horner(stat, g) for g in grid]
        vals = [value(g) for g in grid]

        def bisect(a, c):
            for _ in range(400):
                mid = (a + c) / 2
                if horner(stat, mid) < 0:
                    a = mid
                else:
                    c = mid
                if c - a <= mp.mpf(2) ** -80 * c:
                    break
            return (a + c) / 2

        candidates = [mp.mpf(0)]  # the kink γ = 0 ≡ 1
        for i in range(len(grid) - 1):
            if sgn[i] < 0 <= sgn[i + 1]:  # V decreasing then increasing: a local minimum
                candidates.append(grid[i + 1] if sgn[i + 1] == 0 else bisect(grid[i], grid[i + 1]))
        best = min(candidates, key=value)
        i = min(range(len(grid)), key=lambda j: vals[j])
        if vals[i] < value(best):  # a minimum hidden between grid points: golden section on V
            a, c = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
            phi = (mp.sqrt(5) - 1) / 2
            for _ in range(300):
                x1, x2 = c - phi * (c - a), a + phi * (c - a)
                if value(x1) < value(x2):
                    c = x2
                else:
                    a = x1
                if c - a <= mp.mpf(2) ** -70 * c:
                    break
            best = (a + c) / 2
        g = float(best)
        spread = max(vals) / min(vals) - 1
        flat_digits = float(-mpmath.log10(spread)) if spread > 0 else math.inf
        return (0.0 if g >= 1.0 else g), flat_digits


def _gamma_star(name: str, m, eps: float, d: int, cost) -> float:
    order = 2 if name == "l2sq" else (1 if name != "pow" else _integer_power(cost, m))
    if order == 0:
        return 0.0  # E‖X‖₁^0 = 1 for every γ
    if d == 1:
        from optmech.mechanisms.staircase import gamma_moment

        return gamma_moment(order, eps)
    if d == 2 and order == 1:
        g = gamma_quartic(eps)
        if g is not None:
            return g
    return gamma_mp(eps, d, order)


def optimal_gamma_nd(cost, epsilon, dim, sensitivity=1.0) -> float:
    """γ* = argmin over the γ-circle (0 ≡ 1) of the d-D staircase cost (independent of Δ).

    d = 1: closed forms [Geng13, Thm 2.5, 2.7]; d = 2 and an ℓ1-proportional cost (l1, l2, linf):
    the larger root of the quartic [derived; Geng13, (3.7) differentiated]; otherwise the
    high-precision stationarity-polynomial search of the module docstring.  Returns a float in
    [0, 1) (0.0 when the minimum is the kink γ = 0 ≡ 1).

    >>> import math
    >>> math.isclose(optimal_gamma_nd("l1", 1, 1), 1 / (1 + math.exp(0.5)))     # d = 1: [Geng13, Thm 2.5]
    True
    >>> grid = np.linspace(0, 1, 4001)[:-1]                                  # d = 2: brute force
    >>> best = grid[np.argmin([staircase_nd_cost("l1", 1, 1, g, 2) for g in grid])]
    >>> bool(abs(optimal_gamma_nd("l1", 1, 2) - best) < 1e-3)
    True
    """
    eps = nx.check_epsilon(epsilon)
    d = check_dim(dim)
    nx.check_sensitivity(sensitivity)
    parsed = parse_nd_cost(cost)
    if parsed is None:
        raise nd_cost_error(cost)
    return _gamma_star(parsed[0], parsed[1], eps, d, cost)


def staircase_nd_optimal_cost(cost, epsilon, sensitivity, dim, *, norm="l1", weights=None) -> float:
    """min over γ of the d-D staircase cost, i.e. the cost at :func:`optimal_gamma_nd` (in every
    ``norm``: the cone factor of E L(X) does not depend on γ).

    For ``l1`` this is V* over all ε-DP noise for d <= 2 [GKOV15, Thm 1] and, by later
    proofs of the [GKOV15] conjecture ([KSW25]; [MDA26]), for every d.

    >>> import math
    >>> math.isclose(staircase_nd_optimal_cost("l1", 1, 1, 1), 1 / (2 * math.sinh(0.5)))
    True
    >>> grid = np.linspace(0, 1, 4001)
    >>> bool(0 <= min(staircase_nd_cost("l1", 1, 1, g, 2) for g in grid) - staircase_nd_optimal_cost("l1", 1, 1, 2) < 1e-7)
    True
    """
    eps = nx.check_epsilon(epsilon)
    delta = nx.check_sensitivity(sensitivity)
    d = check_dim(dim)
    ball = parse_norm(norm, weights, d)
    parsed = parse_nd_cost(cost)
    if parsed is None:
        raise nd_cost_error(cost)
    g = _gamma_star(parsed[0], parsed[1], eps, d, cost)
    return _stair_cost_ball(parsed[0], parsed[1], eps, delta, g, d, ball, cost)


# --------------------------------------------------------------------------------------------
# staircase sampler


def _shell_parts(k: np.ndarray, gamma: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(log P0(k), log P1(k)) with P0 = (k+γ)^d − k^d, P1 = (k+1)^d − (k+γ)^d as positive sums:
    P0 = Σ_{j>=1} C(d,j)γ^j k^{d−j}, P1 = Σ_{j>=1} C(d,j)(1 − γ^j) k^{d−j} (k >= 0 integers)."""
    g = np.array([gamma**j for j in range(d + 1)])
    one_m = np.array([-math.expm1(j * math.log(gamma)) if gamma > 0 else 1.0 for j in range(d + 1)])
    kk = np.asarray(k, dtype=float)
    pos = kk > 0
    inv = np.where(pos, 1.0 / np.where(pos, kk, 1.0), 0.0)
    s0 = np.zeros_like(kk)
    s1 = np.zeros_like(kk)
    for j in range(d, 0, -1):  # Horner in 1/k: Σ_j C(d,j) x_j k^{1−j}
        s0 = s0 * inv + math.comb(d, j) * g[j]
        s1 = s1 * inv + math.comb(d, j) * one_m[j]
    with np.errstate(divide="ignore"):
        logk = (d - 1) * np.log(np.where(pos, kk, 1.0))
        l0 = np.where(pos, logk + np.log(s0), math.log(g[d]) if g[d] > 0 else -np.inf)
        l1 = np.where(pos, logk + np.log(s1), math.log(one_m[d]) if one_m[d] > 0 else -np.inf)
    return l0, l1


def _shell_table(eps: float, gamma: float, d: int) -> np.ndarray | None:
    """Normalised cumulative masses of (k, β) in the order (0,0), (0,1), (1,0), … truncated where
    the tail is < 2^−60 of the total; None if more than MAX_TABLE_SHELLS shells are needed.

    Tail bound: Σ_{k>=K} b^k Q(k) <= b^K Q(K)/(1 − b((K+1)/K)^{d−1}), Q = P0 + b P1, since
    Q(k+1)/Q(k) <= ((k+1)/k)^{d−1}.
    """
    K = 64
    while K <= MAX_TABLE_SHELLS:
        k = np.arange(K + 1)
        l0, l1 = _shell_parts(k, gamma, d)
        lw = np.empty(2 * (K + 1))
        lw[0::2] = -eps * k + l0
        lw[1::2] = -eps * (k + 1.0) + l1
        top = float(np.max(lw))
        w = np.exp(lw - top)
        total = float(np.sum(w[:-2]))
        ratio_log = -eps + (d - 1) * math.log1p(1.0 / K)
        if ratio_log < 0.0:
            log_tail = float(np.logaddexp(lw[-2], lw[-1])) - top - math.log(-math.expm1(ratio_log))
            if log_tail - math.log(total) < -60.0 * math.log(2.0):
                cum = np.cumsum(w[:-2])
                return cum / cum[-1]
        K *= 2
    return None


def _shell_mixture(eps: float, gamma: float, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact shell-index law Pr(k) ∝ b^k Σ_{i<d} q_i k^i, q_i = C(d,i)(uγ^{d−i} + b), as a mixture
    of shifted negative binomials (Worpitzky: k^i = Σ_j A(i,j) C(k+j, i) and
    Σ_k C(k+j, i) b^k = b^{i−j}/u^{i+1}): component (i, j) has weight q_i A(i,j) b^{i−j} u^{d−1−i}
    and k = (i − j) + NB(i+1, u) (i = 0: k = NB(1, u), a geometric).  Returns
    (successes, shift, cumulative weights)."""
    b, u = nx.b_and_u(eps)
    n_succ, shift, weight = [], [], []
    for i in range(d):
        q = math.comb(d, i) * (u * gamma ** (d - i) + b)
        for j, a in enumerate(_eulerian(i) if i else (1,)):
            s = i - j if i else 0
            n_succ.append(i + 1)
            shift.append(s)
            weight.append(q * float(a) * b**s * u ** (d - 1 - i))
    w = np.array(weight)
    return np.array(n_succ), np.array(shift), np.cumsum(w) / w.sum()


def _shell_geometry(k: np.ndarray, beta: np.ndarray, gamma: float, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(hi, q) of shells (k, β) in units of Δ: [lo, hi) = [k, k+γ) or [k+γ, k+1), q = 1 − (lo/hi)^d."""
    lo = k + np.where(beta, gamma, 0.0)
    width = np.where(beta, 1.0 - gamma, gamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = -np.expm1(-d * np.log1p(width / lo))
    return lo + width, np.where(width > 0, q, 0.0)


class StaircaseSampler:
    """Radius sampler of the d-D staircase (the shell law of the module docstring)."""

    def __init__(self, eps: float, gamma: float, d: int) -> None:
        self.eps, self.gamma, self.d = eps, gamma, d
        self.cum = _shell_table(eps, gamma, d)
        self.mixture = None
        if self.cum is not None:
            idx = np.arange(self.cum.size)
            self.hi, self.q = _shell_geometry((idx >> 1).astype(float), (idx & 1).astype(bool), gamma, d)
        else:
            self.mixture = _shell_mixture(eps, gamma, d)

    def radius(self, n: int, rng) -> np.ndarray:
        """n draws of ‖X‖₁/Δ: shell (k, β) by inversion, then R = (lo^d + U(hi^d − lo^d))^{1/d},
        evaluated as hi (1 − V q)^{1/d} with V = 1 − U and q = 1 − (lo/hi)^d (no cancellation)."""
        u1 = rng.random(n)
        if self.mixture is None:
            idx = np.minimum(np.searchsorted(self.cum, u1, side="right"), self.cum.size - 1)
            hi, q = self.hi[idx], self.q[idx]
        else:
            n_succ, shift, cum = self.mixture
            comp = np.minimum(np.searchsorted(cum, u1, side="right"), cum.size - 1)
            u = -math.expm1(-self.eps)
            k = (shift[comp] + rng.negative_binomial(n_succ[comp], u)).astype(float)
            l0, l1 = _shell_parts(k, self.gamma, self.d)
            with np.errstate(over="ignore"):
                beta = rng.random(n) * (1.0 + np.exp(l0 - l1 + self.eps)) < 1.0  # P(β=1|k) = bP1/(P0 + bP1)
            hi, q = _shell_geometry(k, beta, self.gamma, self.d)
        v = 1.0 - rng.random(n)
        if self.d == 1:
            return hi * (1.0 - v * q)
        return hi * np.exp(np.log1p(-v * q) * (1.0 / self.d))


class StaircaseND(NDMechanism):
    r"""The d-D staircase in the norm K of the sensitivity ball [GKOV15, §II; Geng13, §3.2 for ℓ1;
    derived for the other norms].

    .. math:: f_\gamma(x) = a_K(\gamma)\, b^{\lfloor \|x\|_K/\Delta - \gamma\rfloor + 1},\quad
              a_K(\gamma) = \frac{1}{\mathrm{vol}(B_K)\,\Delta^d N_d(\gamma)},\quad b = e^{-\epsilon}

    (for ℓ1, vol(B_1) = 2^d/d! gives [GKOV15]'s a(γ) = d!/(2^dΔ^dN_d(γ))).

    Parameters
    ----------
    epsilon : float in (0, 700]
    sensitivity : float > 0
        Sensitivity Δ, measured in ``norm``.
    gamma : float in [0, 1]
        Step breakpoint as a fraction of Δ (γ = 0 and γ = 1 give the same law).
    dim : int in [1, 128]
    norm : str, default ``"l1"``
        ``l1``, ``l2``, ``linf`` or ``lp:P`` for any real P >= 1 (``lp:1``, ``lp:2``, ``lp:inf``
        are stored as l1, l2, linf).
    weights : sequence of ``dim`` numbers > 0, optional
        Weighted ℓp: ‖x‖ = (Σ_i w_i |x_i|^p)^{1/p} (l1, l2, lp:P only).

    Notes
    -----
    ε-DP for sensitivity Δ in K for every γ: |‖x + t‖_K − ‖x‖_K| <= ‖t‖_K <= Δ (triangle
    inequality) moves the level ⌊‖x‖_K/Δ − γ⌋ by at most one [GKOV15, §II for ℓ1].  For ℓ1 and
    the cost ‖x‖₁ optimal at γ* among all ε-DP noise for d <= 2 [GKOV15, Thm 1], for d > 2 by later
    proofs of the [GKOV15] conjecture.  d = 1 is the 1-D staircase [Geng13, (2.13)] for every
    unweighted norm (‖x‖_K = |x|); weighted, the 1-D staircase with sensitivity Δ w^{−1/p}.
    :meth:`moment` is E‖X‖_K^m; :meth:`expected_cost` gives the named costs where
    E‖Θ‖_L^m has an exact form (module docstring) and raises SpecError otherwise.

    >>> import math
    >>> mech = StaircaseND(epsilon=1, sensitivity=1, gamma=0.3, dim=2)
    >>> float(mech.pdf([0.1, 0.1])) == mech.normaliser                  # level 0 inside ‖x‖₁ < γΔ
    True
    >>> math.isclose(float(mech.pdf([0.5, 0.5])), mech.normaliser * math.exp(-1))
    True
    >>> mech.sample(3, rng=0).shape, mech.mean()
    ((3, 2), array([0., 0.]))
    >>> disc = StaircaseND(epsilon=1, sensitivity=1, gamma=0.3, dim=2, norm="l2")
    >>> math.isclose(disc.normaliser * math.pi, mech.normaliser * 2)  # vol(B_2) = π, vol(B_1) = 2
    True
    >>> disc.privacy().norm, disc.expected_cost("l2") == disc.moment(1)
    ('l2', True)
    """

    name = "staircase_nd"
    _param_names = ("gamma", "dim")
    _pow_help = "pow:M (‖x‖₁^M, integer M)"

    def __init__(self, *, epsilon, sensitivity, gamma, dim, norm="l1", weights=None) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self.gamma = nx.check_unit_interval(gamma, "gamma")
        self._init_dim(dim)
        self._ball = parse_norm(norm, weights, self.dim)
        self._norm = self._ball.text
        self._log_a = _log_normaliser_ball(self.epsilon, self.sensitivity, self.gamma, self.dim, self._ball)
        self._sampler = None

    @property
    def norm(self) -> str:
        """The sensitivity norm: ``l1``, ``l2``, ``linf`` or ``lp:P``."""
        return self._ball.text

    @property
    def weights(self) -> tuple[float, ...] | None:
        """The weights w_i of a weighted ℓp norm (None when unweighted)."""
        return self._ball.weights

    @property
    def parameters(self) -> dict:
        """``gamma``, ``dim``, and ``norm``/``weights`` when they differ from ℓ1/unweighted."""
        out = {"gamma": self.gamma, "dim": self.dim}
        if self._ball.text != "l1":
            out["norm"] = self._ball.text
        if self._ball.weights is not None:
            out["weights"] = self._ball.weights
        return out

    @classmethod
    def optimal(cls, cost, *, epsilon, sensitivity, dim, norm="l1", weights=None) -> "StaircaseND":
        """The staircase with γ = γ*(cost) (:func:`optimal_gamma_nd`).

        In every norm K, E L(X) = Δ^m E[R^m] E‖Θ‖_L^m with a γ-free factor, so γ* depends on the
        cost's order m only (l1, l2, linf: 1; l2sq: 2; pow:M: M) and is also optimal for ‖x‖_K^m.
        """
        parse_norm(norm, weights, check_dim(dim))
        g = optimal_gamma_nd(cost, epsilon, dim, sensitivity)
        return cls(epsilon=epsilon, sensitivity=sensitivity, dim=dim, gamma=g, norm=norm, weights=weights)

    @property
    def normaliser(self) -> float:
        return math.exp(self._log_a)

    def _level(self, r: np.ndarray) -> np.ndarray:
        return np.floor(r / self.sensitivity - self.gamma) + 1.0

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))

    def _logpdf_nd(self, x):
        return self._log_a - self.epsilon * self._level(ball_norm(x, self._ball))

    def _cost_nd(self, name, m, cost):
        return _stair_cost_ball(name, m, self.epsilon, self.sensitivity, self.gamma, self.dim, self._ball, cost)

    def var(self) -> np.ndarray:
        """Per-coordinate variance E X_j² = Δ² E[R²] EΘ'₁² a_j² (a_j = w_j^{−1/p}; closed form)."""
        if self._ball.weights is None or self.dim == 1:
            return super().var()
        mu2 = cone_moments(self._ball.p, self.dim)[1]
        a = self._ball.scale(self.dim)
        return _moment(2, self.epsilon, self.sensitivity, self.gamma, self.dim) * mu2 * a * a

    def moment(self, m) -> float:
        """E‖X‖_K^m in the mechanism's own norm K (integer m; the same radial series for every K)."""
        return staircase_nd_moment(m, self.epsilon, self.sensitivity, self.gamma, self.dim)

    def _sample(self, n, rng):
        # radius from the shell law, direction under the cone measure of the K sphere
        if self._sampler is None:
            self._sampler = StaircaseSampler(self.epsilon, self.gamma, self.dim)
        radius = self._sampler.radius(n, rng)
        if self._ball.plain_l1:
            return l1_directions_scaled(radius * self.sensitivity, self.dim, rng)
        return ball_directions_scaled(radius * self.sensitivity, self.dim, self._ball, rng)

    def _make_1d(self):
        from optmech.mechanisms.staircase import Staircase

        scale = float(self._ball.scale(1)[0]) if self.dim == 1 else 1.0
        return Staircase(epsilon=self.epsilon, sensitivity=self.sensitivity * scale, gamma=self.gamma)

    def privacy(self) -> Privacy:
        if self.dim == 1 and self._ball.weights is None:
            norm = "abs"
        else:
            norm = self._ball.label
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, norm, self._privacy_note())

    def _privacy_note(self) -> str:
        if self._ball.plain_l1:
            return ("staircase_nd: f(x) <= e^epsilon f(x+t) for ||t||_1 <= sensitivity (the level "
                    "floor(||x||_1/sensitivity - gamma) moves by at most one) [GKOV15, §II]")
        return (f"staircase_nd: f(x) <= e^epsilon f(x+t) for ||t||_K <= sensitivity, K = {self._ball.label} "
                "(the level floor(||x||_K/sensitivity - gamma) moves by at most one: triangle inequality) "
                "[derived; GKOV15, §II for l1]")
