r"""Multi-dimensional additive noise for pure ε-DP on ℝ^d and ℤ^d.

Four families, each a :class:`~optmech.mechanisms.base.Mechanism` with an instance attribute
``dim`` = d (1 <= d <= 64).  Points are arrays whose last axis has length d; ``sample`` returns
arrays of shape ``(*size, d)``; ``mean()``/``var()`` are per-coordinate arrays of length d.

* :class:`StaircaseND` (``staircase_nd``): the ℓ1 staircase [GKOV15, §II;
  Geng13, §3.2], ε-DP for ℓ1 sensitivity Δ (and, with ``norm=``, the staircase in the ball of
  ℓ2, ℓ∞, ℓp or weighted ℓp: see "Staircases in other norms" below),

  .. math::

      f_\gamma(x) = a(\gamma)\, b^{\lfloor \|x\|_1/\Delta - \gamma\rfloor + 1}, \qquad
      a(\gamma) = \frac{d!}{2^d\Delta^d N_d(\gamma)}, \qquad b = e^{-\epsilon},

  with :math:`c_k = \sum_{i\ge0} i^k b^i` and
  :math:`N_m(\gamma) = \sum_{j=1}^m \binom{m}{j} c_{m-j}(b + (1-b)\gamma^j)` ([GKOV15] §II).
* :class:`LaplaceND` (``laplace_nd``): i.i.d. Laplace(Δ/ε) per coordinate [GKOV15, Def. 3], density
  ∝ e^{−ε‖x‖₁/Δ}, ε-DP for ℓ1 sensitivity Δ.
* :class:`DiscreteLaplaceND` (``discrete_laplace_nd``): product of discrete Laplace laws with
  λ = e^{−ε/Δ} on ℤ^d [GV13, (120)], ε-DP for integer ℓ1 sensitivity Δ.
* :class:`L2Laplace` (``l2_laplace``): density ∝ e^{−ε‖x‖₂/Δ} [KHP15,
  Thm 8, (14)], ε-DP for ℓ2 sensitivity Δ and (ε/Δ)-Lipschitz private w.r.t. ‖·‖₂.

Costs (:data:`COSTS_ND`): ``l1`` = ‖x‖₁, ``l2`` = ‖x‖₂, ``l2sq`` = ‖x‖₂², ``linf`` = ‖x‖∞, and
``pow:M`` = ‖x‖₁^M (staircase: integer M; Laplace: any M > 0).  For d = 1 any 1-D cost is
passed on to the equivalent 1-D mechanism.

Derivations used here [derived; each is checked in tests/test_mechanisms_multidim.py]:

* **Positive form of N_m.**  Σ_k b^k (k+1)^m = c_m/b gives
  :math:`N_m(\gamma) = (1-b)\sum_{j=0}^{m}\binom{m}{j}\gamma^j c_{m-j} = (1-b)^{-m}\tilde N_m(\gamma)`
  with :math:`\tilde N_m(\gamma) = \sum_j \binom{m}{j}((1-b)\gamma)^j \hat c_{m-j}` and
  :math:`\hat c_k = (1-b)^{k+1}c_k = b\sum_j A(k,j)b^j` (Eulerian numbers, ĉ_0 = 1): every term
  is positive and bounded by k!, so nothing overflows or cancels for any ε in (0, 700].
* **Moments**: E‖X‖₁^m = Δ^m (d/(d+m)) N_{d+m}(γ)/N_d(γ).  The
  direction Θ = X/‖X‖₁ is uniform (cone measure) on the ℓ1 sphere and independent of ‖X‖₁, so
  E‖X‖₂² = (2/(d+1)) E‖X‖₁², E‖X‖∞ = E‖X‖₁ H_d/d (mean largest of d uniform spacings), and
  E‖X‖₂ = E‖X‖₁ E‖G‖₂/d for G i.i.d. Exp(1) (‖G‖₁ ~ Gamma(d) is independent of G/‖G‖₁).
* **E√S** for S = Σ_i Y_i² with Y_i i.i.d.: E√S = (1/(2√π))∫₀^∞(1 − φ(t)^d) t^{−3/2} dt,
  φ(t) = E e^{−tY²}, computed as (σ/√π)∫₀¹ (1 − φ((w/σ)²)^d)/v² dv with w = v/(1 − v) (smooth
  and bounded at both ends) by adaptive Gauss-Legendre, 1 − φ^d = −expm1(d log1p(−(1 − φ))) and
  1 − φ from cancellation-free formulas (continued fraction of erfc for Exp(1); positive series
  or Euler-Maclaurin for the discrete Laplace law).
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
* **Polar factorisation.**  For a norm ball, x = rθ (r = ‖x‖_K, θ ∈ ∂B_K) has
  dx = d vol(B_K) r^{d−1} dr dμ_K(θ), μ_K the cone measure (μ_K(A) = vol{sθ : s ∈ [0, 1], θ ∈ A}
  / vol(B_K)).  A density h(‖x‖_K) therefore makes R = ‖X‖_K and Θ = X/‖X‖_K independent, Θ ~ μ_K
  and R ∝ h(r) r^{d−1}: the radial law of the ℓ1 staircase for every K, so the shell sampler,
  N_d and the moments E‖X‖_K^m = Δ^m (d/(d+m)) N_{d+m}/N_d are unchanged, and
  a_K = 1/(vol(B_K) Δ^d N_d(γ)) (ℓ1: vol = 2^d/d! gives a(γ) above).  Uniform V in B_K
  (h = 1{r <= 1}) gives V/‖V‖_K ~ μ_K.
* **Volumes.**  ℓ1 2^d/d!, ℓ2 π^{d/2}/Γ(d/2+1), ℓ∞ 2^d, ℓp (2Γ(1+1/p))^d/Γ(1+d/p); weighted:
  B_w = D^{−1}B_p with D = diag(w_i^{1/p}), so vol = vol(B_p)/Π w_i^{1/p}.
* **Directions** (Θ = V/‖V‖_K): ℓ1 as above; ℓ2 Z/‖Z‖₂ (Z standard normal); ℓ∞ the cube
  U ⊙ S/max|U_i| (U_i uniform, S_i random signs); ℓp G/‖G‖_p with G_i i.i.d. of density
  ∝ e^{−|t|^p} (Barthe-Guédon-Mendelson-Naor: G/(‖G‖_p^p + W)^{1/p} is uniform in B_p, and its
  direction is G/‖G‖_p, so W is not needed), |G_i| = Y_i^{1/p} U_i with Y_i ~ Gamma(1+1/p), U_i
  uniform (Y U^{1/α} ~ Gamma(α) for α = 1/p; |G_i|^p ~ Gamma(1/p)), normalised in logs;
  weighted: a ⊙ Θ_p with a_i = w_i^{−1/p} (the linear image of μ_p under D^{−1}).
* **Costs in other norms.**  E‖X‖_L^m = Δ^m E[R^m] E_{μ_K}‖Θ‖_L^m (homogeneity, independence).
  With Θ' the unweighted ℓp cone vector, ‖G‖_p^p ~ Gamma(d/p) and E|G₁|^s = Γ((s+1)/p)/Γ(1/p):
  E|Θ'₁| = Γ(2/p)Γ(d/p)/(Γ(1/p)Γ((d+1)/p)), EΘ'₁² = Γ(3/p)Γ(d/p)/(Γ(1/p)Γ((d+2)/p)),
  E|Θ'₁Θ'₂| = (Γ(2/p)/Γ(1/p))²Γ(d/p)/Γ((d+2)/p) (ℓ1: 1/d, 2/(d(d+1)), 1/(d(d+1)), the signed
  Dirichlet(1, …, 1); ℓ2: EΘ'₁² = 1/d, E‖Θ'‖₁ = dΓ(d/2)/(√πΓ((d+1)/2))); ℓ∞ (one coordinate ±1,
  the others uniform on [−1, 1]): (d+1)/(2d), (d+2)/(3d), (d+2)/(4d), i.e. E‖Θ‖₁ = 1 + (d−1)/2,
  E‖Θ‖₂² = 1 + (d−1)/3.  Then E‖Θ‖₁ = E|Θ'₁|Σa_i, E‖Θ‖₂² = EΘ'₁²Σa_i²,
  E‖Θ‖₁² = EΘ'₁²Σa_i² + E|Θ'₁Θ'₂|((Σa_i)² − Σa_i²) (costs l1, l2sq, pow:1, pow:2); the own norm
  has factor 1 (l2 for ℓ2, linf for ℓ∞); ℓ2 with linf: E‖Z‖∞/E‖Z‖₂ (the :class:`L2Laplace`
  quadrature); unweighted ℓ1 keeps every route above.  Other (K, L, m) raise SpecError.
* **Optimal γ.**  The cone factor does not depend on γ, so γ* = argmin E[R^m] is
  :func:`optimal_gamma_nd` for every K (m = 1 for l1, l2, linf; 2 for l2sq; M for pow:M).
* **d = 1.**  Every unweighted norm is |x| (same normaliser, pdf, samples and costs as ℓ1);
  weighted, ‖x‖ = w^{1/p}|x|: the 1-D staircase with sensitivity Δ w^{−1/p}.

Tested by: tests/test_mechanisms_multidim.py.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Privacy

__all__ = [
    "COSTS_ND",
    "StaircaseND",
    "LaplaceND",
    "DiscreteLaplaceND",
    "L2Laplace",
    "staircase_nd_normaliser",
    "staircase_nd_moment",
    "staircase_nd_cost",
    "optimal_gamma_nd",
    "staircase_nd_optimal_cost",
    "laplace_nd_cost",
    "discrete_laplace_nd_cost",
    "l2_laplace_cost",
]

#: The d-dimensional cost names: ‖x‖₁, ‖x‖₂, ‖x‖₂², ‖x‖∞ (plus ``pow:M`` = ‖x‖₁^M where supported).
COSTS_ND = ("l1", "l2", "l2sq", "linf")

#: Largest dimension accepted.
MAX_DIM = 64

#: Largest staircase moment order (E‖X‖₁^M).
MAX_MOMENT = 60

#: Largest number of shells in the sampler's inverse-CDF table (beyond it: the exact mixture).
MAX_TABLE_SHELLS = 1 << 19


# --------------------------------------------------------------------------------------------
# validation and cost names


def check_dim(dim) -> int:
    return nx.check_int_range(dim, "dim", 1, MAX_DIM)


def _parse_cost(cost) -> tuple[str, float | None] | None:
    """('l1' | 'l2' | 'l2sq' | 'linf', None) or ('pow', M); None if not a d-D cost name."""
    if not isinstance(cost, str):
        return None
    s = cost.strip().lower()
    if s in COSTS_ND:
        return s, None
    if s.startswith("pow:"):
        try:
            m = float(s[4:])
        except ValueError:
            raise SpecError(f"cost {cost!r}: the power in pow:M must be a number") from None
        if not (math.isfinite(m) and m >= 0.0):
            raise SpecError(f"cost {cost!r}: the power in pow:M must be finite and >= 0")
        return "pow", m
    return None


def _cost_error(cost, extra: str = "pow:M") -> SpecError:
    names = ", ".join(COSTS_ND) + (f", {extra}" if extra else "")
    return SpecError(f"unknown d-dimensional cost {cost!r}; known: {names}")


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
    return math.exp(_log_normaliser_ball(eps, delta, gamma, d, _parse_norm(norm, weights, d)))


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


# --------------------------------------------------------------------------------------------
# E sqrt(sum of squares) and E max (direction factors)


def _omphi_exp(t: np.ndarray) -> np.ndarray:
    """1 − φ(t), φ(t) = E e^{−tE²} = √π z erfcx(z), z = 1/(2√t), E ~ Exp(1).

    z >= 2: Laplace's continued fraction √π erfcx(z) = 1/(z + T₁), T_n = (n/2)/(z + T_{n+1}), so
    1 − φ = T₁/(z + T₁) without cancellation (60 levels: < 3e-16 relative for z >= 2).
    z < 2: 1 − √π z erfcx(z) directly (φ <= 0.9, error < 2e-15 relative).
    """
    from scipy.special import erfcx

    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        z = 0.5 / np.sqrt(t)
    big = z >= 2.0
    zb = np.where(big, z, 2.0)
    tn = np.zeros_like(zb)
    for n in range(60, 0, -1):
        tn = (0.5 * n) / (zb + tn)
    cf = tn / (zb + tn)
    zs = np.where(big, 0.0, z)
    direct = 1.0 - math.sqrt(math.pi) * zs * erfcx(zs)
    return np.where(big, cf, direct)


def _mean_sqrt_sum(omphi, d: int, sigma: float) -> float:
    """E√(Y₁² + … + Y_d²) for i.i.d. Y_i with 1 − E e^{−tY²} = ``omphi(t)`` and scale σ (E Y² = σ²).

    E√S = (1/(2√π))∫₀^∞ (1 − φ(t)^d) t^{−3/2} dt; with t = (w/σ)², w = v/(1−v) this is
    (σ/√π)∫₀¹ (1 − φ^d)/v² dv, a bounded smooth integrand (→ d E Y²/σ² at v = 0).
    """

    def f(v):
        w = v / (1.0 - v)
        q = omphi((w / sigma) ** 2)
        return -np.expm1(d * np.log1p(-q)) / (v * v)

    edges = np.array([0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0])
    cells, _ = nx.adaptive_gl(f, edges, rtol=1e-14)
    return sigma / math.sqrt(math.pi) * float(math.fsum(cells))


@functools.lru_cache(maxsize=None)
def _exp_l2_mean(d: int) -> float:
    """E‖G‖₂ for G ∈ ℝ^d with i.i.d. Exp(1) coordinates (= E‖L‖₂ for i.i.d. Laplace(1))."""
    return _mean_sqrt_sum(_omphi_exp, d, math.sqrt(2.0))


@functools.lru_cache(maxsize=None)
def _normal_linf_mean(d: int) -> float:
    """E‖Z‖∞ = ∫₀^∞ 1 − (2Φ(t) − 1)^d dt for Z standard normal in ℝ^d."""
    from scipy.special import erfc

    def f(t):
        return -np.expm1(d * np.log1p(-erfc(t / math.sqrt(2.0))))

    cells, _ = nx.adaptive_gl(f, np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 9.0, 14.0, 40.0]), rtol=1e-14)
    return float(math.fsum(cells))


def _harmonic(d: int) -> float:
    return math.fsum(1.0 / k for k in range(1, d + 1))


def _log_sphere_l1_mean(d: int) -> float:
    """log E|Θ₁|·d for Θ uniform on the ℓ2 sphere: E‖Θ‖₁ = d Γ(d/2)/(√π Γ((d+1)/2))."""
    return math.log(d) + math.lgamma(d / 2.0) - 0.5 * math.log(math.pi) - math.lgamma((d + 1) / 2.0)


# --------------------------------------------------------------------------------------------
# discrete Laplace: 1 − φ(t) and E max


#: Largest number of series terms per quadrature node before Euler-Maclaurin is used.
_DLAP_TERMS = 4096


def _omphi_dlap(t: np.ndarray, a: float) -> np.ndarray:
    """1 − E e^{−tK²} for K discrete Laplace with λ = e^{−a}: 2p₀ Σ_{k>=1} λ^k (1 − e^{−tk²}).

    Per node the cheaper exact form is used: the positive sum over k <= K_λ = ⌈41.5/a⌉ (λ^k < 1e-18
    beyond), or (1 − p₀) − 2p₀ Σ_k λ^k e^{−tk²} over k <= ⌈√(42/t)⌉ when that is 4× shorter (then
    the subtracted sum is < 0.8 of 1 − p₀).  When both need more than 4096 terms (a < 0.01 and
    t < 4e-5) the positive sum Σ_{k>=0} g(k), g(x) = e^{−ax}(1 − e^{−tx²}), is taken by
    Euler-Maclaurin: ∫₀^∞ g = (1/a)(1 − √π z erfcx(z)), z = a/(2√t), g(0) = g'(0) = 0,
    g'''(0) = −6at, g⁽⁵⁾(0) = 60at² − 20a³t; the next term is O((a + √t)^7 / 10^6).
    """
    t = np.asarray(t, dtype=float)
    flat = t.ravel()
    out = np.empty(flat.size)
    lam = math.exp(-a)
    p0 = math.tanh(a / 2.0)
    one_minus_p0 = 2.0 * lam / (1.0 + lam)
    k_lam = int(math.ceil(41.5 / a)) + 1
    with np.errstate(divide="ignore", over="ignore"):
        k_t = np.ceil(np.sqrt(42.0 / flat)) + 1.0
    use_pos = k_lam <= 4.0 * k_t
    cost = np.where(use_pos, float(k_lam), k_t)
    em = cost > _DLAP_TERMS
    if np.any(em):
        te = flat[em]
        integral = _omphi_exp(te / (a * a)) / a
        corr = -a * te / 120.0 + (20.0 * a**3 * te - 60.0 * a * te * te) / 30240.0
        out[em] = 2.0 * p0 * (integral + corr)
    # direct sums, bucketed by length
    direct = np.flatnonzero(~em)
    if direct.size:
        lengths = np.minimum(cost[direct], _DLAP_TERMS).astype(np.int64)
        order = np.argsort(lengths, kind="stable")
        direct, lengths = direct[order], lengths[order]
        start = 0
        while start < direct.size:
            top = int(lengths[start])
            cap = max(16, 1 << int(math.ceil(math.log2(max(top, 1)))))
            stop = int(np.searchsorted(lengths, cap, side="right"))
            idx = direct[start:stop]
            k = np.arange(1.0, cap + 1.0)
            lk = np.exp(-a * k)
            tk = flat[idx][:, None] * (k * k)[None, :]
            pos = use_pos[idx]
            s_pos = (lk[None, :] * -np.expm1(-tk)).sum(axis=1)
            s_neg = (lk[None, :] * np.exp(-tk)).sum(axis=1)
            out[idx] = np.where(pos, 2.0 * p0 * s_pos, one_minus_p0 - 2.0 * p0 * s_neg)
            start = stop
    return out.reshape(t.shape)


def _dlap_linf_mean(a: float, d: int) -> float:
    """E‖K‖∞ = Σ_{n>=0} 1 − (1 − cλ^{n+1})^d, c = 2/(1+λ), λ = e^{−a} (P(|K| > n) = cλ^{n+1}).

    Terms are <= d c λ^{n+1}: summed directly up to n = ⌈41.5/a⌉ (tail < 1e-18 relative); beyond
    2e6 terms (a < 2e-5) by Euler-Maclaurin, Σ f(n) = ∫₀^∞ f + f(0)/2 − f'(0)/12 + O(a³d³/720), with
    ∫₀^∞ f = (1/a) Σ_{k<d} (1 − (1 − Y)^{k+1})/(k+1), Y = cλ, and f'(0) = −a d Y (1 − Y)^{d−1}.
    """
    lam = math.exp(-a)
    c = 2.0 / (1.0 + lam)
    n_terms = int(math.ceil(41.5 / a)) + 2
    if n_terms <= 2_000_000:
        total = 0.0
        for s in range(0, n_terms, 1 << 18):
            n = np.arange(s, min(n_terms, s + (1 << 18)), dtype=float)
            total += float(np.sum(-np.expm1(d * np.log1p(-c * np.exp(-a * (n + 1.0))))))
        return total
    y = c * lam
    log1my = math.log1p(-y)
    integral = math.fsum(-math.expm1((k + 1) * log1my) / (k + 1) for k in range(d)) / a
    f0 = -math.expm1(d * log1my)
    fp0 = -a * d * y * math.exp((d - 1) * log1my)
    return integral + f0 / 2.0 - fp0 / 12.0


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
        return r1 * _harmonic(d) / d
    return r1 * _exp_l2_mean(d) / d  # l2


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
    ball = _parse_norm(norm, weights, d)
    parsed = _parse_cost(cost)
    if parsed is None:
        raise _cost_error(cost)
    return _stair_cost_ball(parsed[0], parsed[1], eps, delta, gamma, d, ball, cost)


# --------------------------------------------------------------------------------------------
# optimal gamma


def _gamma_quartic(eps: float) -> float | None:
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


def _mp_digits(eps: float, d: int, m: int) -> int:
    """Working digits for the γ* search.  For small ε the relative spread of V over the circle is
    about 3e-3 (ε/2π)^d (measured for d = 8..64; Bernoulli-polynomial limit), and the stationarity
    polynomial cancels about as many digits; :func:`_gamma_mp` checks the spread it sees and
    raises the precision if this estimate was short."""
    return 50 + int(math.ceil((d + m + 2) * max(0.0, math.log10(2.0 * math.pi / eps))))


@functools.lru_cache(maxsize=256)
def _gamma_mp(eps: float, d: int, m: int) -> float:
    """argmin over the γ-circle of E‖X‖₁^m, by the roots of the stationarity polynomial (mpmath),
    at a precision of at least 25 digits beyond the relative spread of V over the grid."""
    dps = _mp_digits(eps, d, m)
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
        g = _gamma_quartic(eps)
        if g is not None:
            return g
    return _gamma_mp(eps, d, order)


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
    parsed = _parse_cost(cost)
    if parsed is None:
        raise _cost_error(cost)
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
    ball = _parse_norm(norm, weights, d)
    parsed = _parse_cost(cost)
    if parsed is None:
        raise _cost_error(cost)
    g = _gamma_star(parsed[0], parsed[1], eps, d, cost)
    return _stair_cost_ball(parsed[0], parsed[1], eps, delta, g, d, ball, cost)


# --------------------------------------------------------------------------------------------
# Laplace-type costs


def laplace_nd_cost(cost, epsilon, sensitivity, dim) -> float:
    """E L(X) for i.i.d. Laplace(s) coordinates, s = Δ/ε [GKOV15, Def. 3].

    l1 = d s, l2sq = 2 d s², linf = s H_d, l2 = s E‖G‖₂ (G i.i.d. Exp(1)), pow:M = s^M Γ(d+M)/Γ(d)
    (‖X‖₁/s ~ Gamma(d)).

    >>> laplace_nd_cost("l1", 1, 1, 2), laplace_nd_cost("l2sq", 1, 1, 2)
    (2.0, 4.0)
    >>> laplace_nd_cost("linf", 1, 1, 2)     # E max of two Exp(1) = 1 + 1/2
    1.5
    """
    eps, delta, d = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity), check_dim(dim)
    parsed = _parse_cost(cost)
    if parsed is None:
        raise _cost_error(cost)
    return _laplace_cost(parsed[0], parsed[1], delta / eps, d)


def _laplace_cost(name: str, m, s: float, d: int) -> float:
    if name == "l1":
        return d * s
    if name == "l2sq":
        return 2.0 * d * s * s
    if name == "linf":
        return s * _harmonic(d)
    if name == "l2":
        return s * _exp_l2_mean(d)
    return math.exp(m * math.log(s) + math.lgamma(d + m) - math.lgamma(d))


def discrete_laplace_nd_cost(cost, epsilon, sensitivity, dim) -> float:
    """E L(X) for i.i.d. discrete Laplace coordinates, λ = e^{−ε/Δ} [GV13, (120)–(128)].

    l1 = 2dλ/(1−λ²) (122), l2sq = 2dλ/(1−λ)² (127), linf = Σ_n 1 − (1 − 2λ^{n+1}/(1+λ))^d,
    l2 by the E√S integral with the discrete φ (see :func:`_omphi_dlap`).

    >>> import math
    >>> lam = math.exp(-1)
    >>> k = np.arange(-60, 61)
    >>> p = (1 - lam) / (1 + lam) * lam ** np.abs(k)                       # one coordinate
    >>> direct = float(np.sum(np.maximum.outer(np.abs(k), np.abs(k)) * np.outer(p, p)))
    >>> math.isclose(discrete_laplace_nd_cost("linf", 1, 1, 2), direct)
    True
    >>> math.isclose(discrete_laplace_nd_cost("l1", 1, 1, 2), 2 * 2 * lam / (1 - lam * lam))
    True
    """
    eps, delta, d = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim)
    parsed = _parse_cost(cost)
    if parsed is None or parsed[0] == "pow":
        raise _cost_error(cost, extra="")
    return _dlap_cost(parsed[0], eps / delta, d)


def _dlap_cost(name: str, a: float, d: int) -> float:
    lam = math.exp(-a)
    if name == "l1":
        return 2.0 * d * lam / -math.expm1(-2.0 * a)
    if name == "l2sq":
        return 2.0 * d * lam / math.expm1(-a) ** 2
    if name == "linf":
        return _dlap_linf_mean(a, d)
    return _dlap_l2_mean(a, d)


@functools.lru_cache(maxsize=128)
def _dlap_l2_mean(a: float, d: int) -> float:
    lam = math.exp(-a)
    sigma = math.sqrt(2.0 * lam) / -math.expm1(-a)
    return _mean_sqrt_sum(lambda t: _omphi_dlap(t, a), d, sigma)


def l2_laplace_cost(cost, epsilon, dim, sensitivity=1.0) -> float:
    """E L(X) for the density ∝ e^{−ε‖x‖₂/Δ} [KHP15, Thm 8]: ‖X‖₂ ~ Gamma(d, Δ/ε).

    l2 = dΔ/ε, l2sq = d(d+1)Δ²/ε² ([KHP15]: n(n+1)/ε² at Δ = 1), l1 = E‖X‖₂ · dΓ(d/2)/(√πΓ((d+1)/2)),
    linf = E‖X‖₂ E‖Z‖∞/E‖Z‖₂ (Z standard normal, E‖Z‖₂ = √2Γ((d+1)/2)/Γ(d/2)).

    >>> l2_laplace_cost("l2", 1, 2), l2_laplace_cost("l2sq", 1, 2)     # ‖X‖₂ ~ Gamma(2, 1): d, d(d + 1)
    (2.0, 6.0)
    """
    eps, delta, d = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity), check_dim(dim)
    parsed = _parse_cost(cost)
    if parsed is None or parsed[0] == "pow":
        raise _cost_error(cost, extra="")
    return _l2lap_cost(parsed[0], delta / eps, d)


def _l2lap_cost(name: str, s: float, d: int) -> float:
    r2 = d * s
    if name == "l2":
        return r2
    if name == "l2sq":
        return d * (d + 1.0) * s * s
    if name == "l1":
        return r2 * math.exp(_log_sphere_l1_mean(d))
    z2 = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))
    return r2 * _normal_linf_mean(d) / z2


# --------------------------------------------------------------------------------------------
# sensitivity norms of the staircase


def _p_text(p: float) -> str:
    s = repr(float(p))
    return s[:-2] if s.endswith(".0") else s


@dataclass(frozen=True)
class _Ball:
    """The sensitivity norm K of :class:`StaircaseND`: ``text`` (canonical name: l1, l2, linf or
    lp:P), ``p`` in [1, inf] and ``weights`` (None or d positive floats: ‖x‖ = (Σ w_i|x_i|^p)^{1/p})."""

    text: str
    p: float
    weights: tuple[float, ...] | None

    @property
    def plain_l1(self) -> bool:
        return self.text == "l1" and self.weights is None

    @property
    def label(self) -> str:
        if self.weights is None:
            return self.text
        return f"{self.text}, weights ({', '.join(_p_text(w) for w in self.weights)})"

    def scale(self, d: int) -> np.ndarray:
        """a_i = w_i^{−1/p} (ones when unweighted): Θ_K = a ⊙ Θ_p, ‖x‖_K = ‖x / a‖_p."""
        if self.weights is None:
            return np.ones(d)
        return np.asarray(self.weights) ** (-1.0 / self.p)


def _parse_norm(norm, weights, d: int) -> _Ball:
    """Validate ``norm`` (l1, l2, linf, lp:P with P >= 1) and ``weights`` (None or d numbers > 0)."""
    known = "l1, l2, linf, lp:P (P >= 1, e.g. lp:3)"
    if not isinstance(norm, str):
        raise SpecError(f"norm must be a string ({known}), got {norm!r}")
    s = norm.strip().lower()
    fixed = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
    if s in fixed:
        p = fixed[s]
    elif s.startswith("lp:"):
        try:
            p = float(s[3:])
        except ValueError:
            raise SpecError(f"norm {norm!r}: P in lp:P must be a number >= 1 (e.g. lp:3)") from None
        if math.isnan(p) or p < 1.0:
            raise SpecError(f"norm {norm!r}: lp:P needs P >= 1 (for P < 1, (sum |x_i|^P)^(1/P) is not a norm)")
        s = {1.0: "l1", 2.0: "l2", math.inf: "linf"}.get(p, f"lp:{_p_text(p)}")
    else:
        raise SpecError(f"unknown norm {norm!r}; known: {known}")
    if weights is None:
        return _Ball(s, p, None)
    if p == math.inf:
        raise SpecError("weights are for l1, l2 and lp:P (||x|| = (sum_i w_i |x_i|^P)^(1/P)); linf takes none")
    if isinstance(weights, (str, bytes, dict)) or not hasattr(weights, "__len__"):
        raise SpecError(f"weights must be a list of dim = {d} numbers > 0, got {weights!r}")
    vals = list(weights)
    if len(vals) != d:
        raise SpecError(f"weights must be a list of dim = {d} numbers > 0, got {len(vals)} of them")
    out = []
    for v in vals:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise SpecError(f"weights must be numbers > 0, got {v!r}")
        if not (math.isfinite(float(v)) and float(v) > 0.0):
            raise SpecError(f"weights must be finite and > 0, got {v!r}")
        out.append(float(v))
    return _Ball(s, p, tuple(out))


def _log_ball_volume(ball: _Ball, d: int) -> float:
    """log vol(B_K): ℓ1 2^d/d!, ℓ2 π^{d/2}/Γ(d/2+1), ℓ∞ 2^d, ℓp (2Γ(1+1/p))^d/Γ(1+d/p); a weighted
    ball is the image of B_p under diag(w_i^{−1/p}), so its volume is vol(B_p)/Π w_i^{1/p}."""
    p = ball.p
    if p == 1.0:
        v = d * math.log(2.0) - math.lgamma(d + 1.0)
    elif p == 2.0:
        v = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
    elif p == math.inf:
        v = d * math.log(2.0)
    else:
        v = d * (math.log(2.0) + math.lgamma(1.0 + 1.0 / p)) - math.lgamma(1.0 + d / p)
    if ball.weights is not None:
        v -= math.fsum(math.log(w) for w in ball.weights) / p
    return v


def _log_normaliser_ball(eps: float, delta: float, gamma: float, d: int, ball: _Ball) -> float:
    """log a_K = log a_{ℓ1} + log vol(B_1) − log vol(B_K): a_K vol(B_K) Δ^d N_d(γ) = 1."""
    la = _log_normaliser(eps, delta, gamma, d)
    if ball.plain_l1 or (d == 1 and ball.weights is None):
        return la
    return la + (d * math.log(2.0) - math.lgamma(d + 1.0)) - _log_ball_volume(ball, d)


def _cone_moments(p: float, d: int) -> tuple[float, float, float]:
    """(E|Θ₁|, EΘ₁², E|Θ₁Θ₂|) for Θ under the cone measure of the unweighted ℓp sphere [derived].

    Finite p: G with i.i.d. coordinates of density ∝ e^{−|t|^p} has density ∝ e^{−‖g‖_p^p}, so
    G = ‖G‖_p Θ with Θ ⊥ ‖G‖_p, ‖G‖_p^p ~ Gamma(d/p), E‖G‖_p^s = Γ((d+s)/p)/Γ(d/p) and
    E|G₁|^s = Γ((s+1)/p)/Γ(1/p): E|Θ₁| = Γ(2/p)Γ(d/p)/(Γ(1/p)Γ((d+1)/p)),
    EΘ₁² = Γ(3/p)Γ(d/p)/(Γ(1/p)Γ((d+2)/p)), E|Θ₁Θ₂| = (Γ(2/p)/Γ(1/p))² Γ(d/p)/Γ((d+2)/p).
    p = ∞: one coordinate ±1 (uniformly chosen), the others uniform on [−1, 1]:
    ((d+1)/(2d), (d+2)/(3d), (d+2)/(4d)).
    """
    if p == math.inf:
        return (d + 1.0) / (2.0 * d), (d + 2.0) / (3.0 * d), (d + 2.0) / (4.0 * d)
    lg = math.lgamma
    q = 1.0 / p
    base = lg(d * q) - lg(q)
    mu1 = math.exp(base + lg(2.0 * q) - lg((d + 1.0) * q))
    mu2 = math.exp(base + lg(3.0 * q) - lg((d + 2.0) * q))
    mu11 = math.exp(base + 2.0 * lg(2.0 * q) - lg(q) - lg((d + 2.0) * q))
    return mu1, mu2, mu11


def _cone_factor(ball: _Ball, target: str, m: int, d: int) -> float | None:
    """E‖Θ‖_L^m under the cone measure of ∂B_K (L = ``target`` in l1, l2, linf); None when there
    is no exact route.  With a_i = w_i^{−1/p} and exchangeable Θ' (unweighted cone):
    E‖Θ‖₁ = E|Θ'₁| Σa_i, E‖Θ‖₂² = EΘ'₁² Σa_i², E‖Θ‖₁² = EΘ'₁² Σa_i² + E|Θ'₁Θ'₂|((Σa_i)² − Σa_i²)."""
    if m == 0 or (ball.weights is None and target == ball.text):
        return 1.0
    a = ball.scale(d)
    s1, s2 = math.fsum(a), math.fsum(a * a)
    mu1, mu2, mu11 = _cone_moments(ball.p, d)
    if target == "l1" and m == 1:
        return mu1 * s1
    if target == "l2" and m == 2:
        return mu2 * s2
    if target == "l1" and m == 2:
        return mu2 * s2 + mu11 * (s1 * s1 - s2)
    if ball.weights is None and m == 1 and ball.p == 1.0:  # existing ℓ1 routes (module docstring)
        return _exp_l2_mean(d) / d if target == "l2" else _harmonic(d) / d
    if ball.weights is None and m == 1 and ball.p == 2.0 and target == "linf":  # E‖Z‖∞/E‖Z‖₂
        z2 = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))
        return _normal_linf_mean(d) / z2
    return None


def _cost_order(name: str, m) -> tuple[str, int]:
    """(L, m) of a parsed cost: l1/l2/linf are ‖·‖_L^1, l2sq is ‖·‖₂², pow:M is ‖·‖₁^M."""
    if name == "l2sq":
        return "l2", 2
    if name == "pow":
        return "l1", int(m)
    return name, 1


def _stair_cost_ball(name: str, m, eps: float, delta: float, gamma: float, d: int, ball: _Ball, cost) -> float:
    """E L(X) = Δ^m E[R^m] E‖Θ‖_L^m (R ⊥ Θ) for the staircase in the norm ``ball``."""
    if ball.plain_l1:
        return _stair_cost(name, m, eps, delta, gamma, d, cost)
    if d == 1:  # ‖x‖_K = |x|/a₁: the 1-D staircase with sensitivity a₁Δ
        return _stair_cost(name, m, eps, delta * float(ball.scale(1)[0]), gamma, 1, cost)
    if name == "pow":
        _integer_power(cost, m)
    target, order = _cost_order(name, m)
    factor = _cone_factor(ball, target, order, d)
    if factor is None:
        exact = [c for c in COSTS_ND if _cone_factor(ball, *_cost_order(c, None), d) is not None]
        raise SpecError(f"cost {cost!r}: no exact E L(X) for the staircase in the {ball.label} norm in {d}-D "
                        f"(exact here: {', '.join(exact)}, moment(m) = E||X||^m in its own norm)")
    return _moment(order, eps, delta, gamma, d) * factor


def _ball_norm(x: np.ndarray, ball: _Ball) -> np.ndarray:
    """‖x‖_K along the last axis (scaled by the largest |x_i| w_i^{1/p}, so no overflow/underflow)."""
    z = np.abs(x)
    if ball.plain_l1:
        return z.sum(axis=-1)
    d = x.shape[-1]
    if ball.weights is not None:
        z = z / ball.scale(d)
    if d == 1:
        return z[..., 0]
    if ball.p == 1.0:
        return z.sum(axis=-1)
    top = z.max(axis=-1)
    if ball.p == math.inf:
        return top
    safe = np.where(top > 0.0, top, 1.0)[..., None]
    y = z / safe
    if ball.p == 2.0:
        return top * np.sqrt((y * y).sum(axis=-1))
    with np.errstate(under="ignore"):
        return top * (y**ball.p).sum(axis=-1) ** (1.0 / ball.p)


def _ball_directions_scaled(scale: np.ndarray, d: int, ball: _Ball, rng) -> np.ndarray:
    """scale[i] · Θ_i with Θ_i i.i.d. under the cone measure of ∂B_K, i.e. Θ = V/‖V‖_K for V
    uniform in B_K [derived: module docstring].  Returns an (n, d) array."""
    if ball.p == 1.0 or d == 1:
        x = _l1_directions_scaled(scale, d, rng)
    else:
        n = scale.size
        if ball.p == 2.0:  # Gaussian direction
            x = rng.standard_normal((n, d))
            x *= (scale / _ball_norm(x, _Ball("l2", 2.0, None)))[:, None]
        elif ball.p == math.inf:  # uniform in the cube [−1, 1]^d
            x = rng.random((n, d))
            x *= (scale / x.max(axis=1))[:, None]
            x *= 2.0 * rng.integers(0, 2, size=(n, d)) - 1.0
        else:  # |G_i| = Y^{1/p} U_i, Y ~ Gamma(1 + 1/p), U uniform: |G_i|^p ~ Gamma(1/p)
            p = ball.p
            logg = np.log(rng.standard_gamma(1.0 + 1.0 / p, size=(n, d))) / p + np.log1p(-rng.random((n, d)))
            with np.errstate(under="ignore"):
                y = np.exp(logg - logg.max(axis=1, keepdims=True))
                norm = (y**p).sum(axis=1) ** (1.0 / p)
            x = y * (scale / norm)[:, None]
            x *= 2.0 * rng.integers(0, 2, size=(n, d)) - 1.0
    if ball.weights is not None:
        x *= ball.scale(d)
    return x


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


class _StaircaseSampler:
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


_SIGN = np.uint64(1 << 63)


def _l1_directions_scaled(scale: np.ndarray, d: int, rng) -> np.ndarray:
    """scale[i] · G_i/‖G_i‖₁ with G_ij = ±Exp(1) i.i.d. (Laplace(1)): G/‖G‖₁ is uniform (cone
    measure) on the ℓ1 sphere and independent of ‖G‖₁.  Returns an (n, d) array.

    Drawn coordinate-major ((d, n): contiguous reductions); one uint64 per sample supplies the d
    sign bits, applied by flipping the IEEE sign bit.
    """
    n = scale.size
    g = rng.standard_exponential((d, n))
    g *= scale / g.sum(axis=0)
    raw = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    shifts = np.arange(63, 63 - d, -1, dtype=np.uint64)
    g.view(np.uint64)[...] ^= (raw[None, :] << shifts[:, None]) & _SIGN
    return np.ascontiguousarray(g.T)


# --------------------------------------------------------------------------------------------
# mechanisms


class NDMechanism(Mechanism):
    """Shared machinery of the d-dimensional mechanisms (not registered: no ``name``)."""

    _norm = "l1"

    def _init_dim(self, dim) -> None:
        self.dim = check_dim(dim)
        self._cached_1d = None

    # points ---------------------------------------------------------------------------------
    def _points(self, x) -> np.ndarray:
        """Points of shape (..., d); for d = 1 a bare array of numbers is taken elementwise."""
        x = np.asarray(x, dtype=float)
        if self.dim == 1 and (x.ndim == 0 or x.shape[-1] != 1):
            return x[..., None]
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise SpecError(f"points must have a last axis of length dim = {self.dim}, got shape {x.shape}")
        return x

    @staticmethod
    def _out(y: np.ndarray):
        return y[()] if np.ndim(y) == 0 else y

    def pdf(self, x):
        """Density at points ``x`` (last axis of length ``dim``; for d = 1 also bare numbers)."""
        if self.lattice:
            raise TypeError(f"{type(self).__name__} is a lattice mechanism: use pmf(k)")
        return self._out(self._pdf_nd(self._points(x)))

    def pmf(self, k):
        """Mass at integer points ``k`` (last axis of length ``dim``); 0 off the lattice."""
        if not self.lattice:
            raise TypeError(f"{type(self).__name__} is a continuous mechanism: use pdf(x)")
        k = self._points(k)
        integral = np.all(np.floor(k) == k, axis=-1)
        y = np.where(integral, self._pmf_nd(np.where(integral[..., None], k, 0.0)), 0.0)
        return self._out(y)

    def cdf(self, x):
        if self.dim > 1:
            raise TypeError(f"cdf is defined for dim = 1 only ({type(self).__name__} has dim = {self.dim})")
        return super().cdf(x)

    def sf(self, x):
        if self.dim > 1:
            raise TypeError(f"sf is defined for dim = 1 only ({type(self).__name__} has dim = {self.dim})")
        return super().sf(x)

    def _logpdf(self, x):
        return self._logpdf_nd(self._points(x))

    def _logpmf(self, k):
        k = self._points(k)
        integral = np.all(np.floor(k) == k, axis=-1)
        return np.where(integral, self._logpmf_nd(np.where(integral[..., None], k, 0.0)), -np.inf)

    def _logpdf_nd(self, x):
        with np.errstate(divide="ignore"):
            return np.log(self._pdf_nd(x))

    def _logpmf_nd(self, k):
        with np.errstate(divide="ignore"):
            return np.log(self._pmf_nd(k))

    def _ppf(self, q):
        return self._one_d()._ppf(q)

    def _entropy(self):
        if self.dim == 1:
            return self._one_d().entropy()
        return super()._entropy()

    def _sf(self, x):
        return self._one_d()._sf(x)

    def _one_d(self) -> Mechanism:
        if self._cached_1d is None:
            self._cached_1d = self._make_1d()
        return self._cached_1d

    # moments and costs ----------------------------------------------------------------------
    def mean(self) -> np.ndarray:
        """E X = 0 (per coordinate, length ``dim``)."""
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        """Per-coordinate variance E X_j² (length ``dim``, closed form)."""
        return np.full(self.dim, self.expected_cost("l2sq") / self.dim)

    def std(self) -> np.ndarray:
        return np.sqrt(self.var())

    def expected_cost(self, cost) -> float:
        """E L(X) for ``cost`` in COSTS_ND (``l1``, ``l2``, ``l2sq``, ``linf``) or ``pow:M``
        where supported; for d = 1 any 1-D cost is passed to the equivalent 1-D mechanism."""
        parsed = _parse_cost(cost)
        if self.dim == 1 and (parsed is None or parsed[0] == "pow"):  # ‖x‖₁^M = |x|^M
            return self._one_d().expected_cost(cost)
        if parsed is None:
            raise _cost_error(cost, extra=self._pow_help)
        return float(self._cost_nd(parsed[0], parsed[1], cost))

    _pow_help = ""

    def privacy(self) -> Privacy:
        norm = "abs" if self.dim == 1 else self._norm
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, norm, self._privacy_note())

    # supplied by subclasses -------------------------------------------------------------------
    def _pdf_nd(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _pmf_nd(self, k):  # pragma: no cover - abstract
        raise NotImplementedError

    def _cost_nd(self, name, m, cost):  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_1d(self) -> Mechanism:  # pragma: no cover - abstract
        raise NotImplementedError

    def _privacy_note(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


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
    dim : int in [1, 64]
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
        self._ball = _parse_norm(norm, weights, self.dim)
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
        _parse_norm(norm, weights, check_dim(dim))
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
        return self._log_a - self.epsilon * self._level(_ball_norm(x, self._ball))

    def _cost_nd(self, name, m, cost):
        return _stair_cost_ball(name, m, self.epsilon, self.sensitivity, self.gamma, self.dim, self._ball, cost)

    def var(self) -> np.ndarray:
        """Per-coordinate variance E X_j² = Δ² E[R²] EΘ'₁² a_j² (a_j = w_j^{−1/p}; closed form)."""
        if self._ball.weights is None or self.dim == 1:
            return super().var()
        mu2 = _cone_moments(self._ball.p, self.dim)[1]
        a = self._ball.scale(self.dim)
        return _moment(2, self.epsilon, self.sensitivity, self.gamma, self.dim) * mu2 * a * a

    def moment(self, m) -> float:
        """E‖X‖_K^m in the mechanism's own norm K (integer m; the same radial series for every K)."""
        return staircase_nd_moment(m, self.epsilon, self.sensitivity, self.gamma, self.dim)

    def _sample(self, n, rng):
        # radius from the shell law, direction under the cone measure of the K sphere
        if self._sampler is None:
            self._sampler = _StaircaseSampler(self.epsilon, self.gamma, self.dim)
        radius = self._sampler.radius(n, rng)
        if self._ball.plain_l1:
            return _l1_directions_scaled(radius * self.sensitivity, self.dim, rng)
        return _ball_directions_scaled(radius * self.sensitivity, self.dim, self._ball, rng)

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


class LaplaceND(NDMechanism):
    r"""i.i.d. Laplace(Δ/ε) noise per coordinate [GKOV15, Def. 3].

    .. math:: f(x) = \left(\frac{\epsilon}{2\Delta}\right)^d e^{-\epsilon\|x\|_1/\Delta}

    ε-DP for ℓ1 sensitivity Δ.  Costs: E‖X‖₁ = dΔ/ε, E‖X‖₂² = 2dΔ²/ε², E‖X‖∞ = (Δ/ε)H_d,
    E‖X‖₂ = (Δ/ε)E‖G‖₂ (G i.i.d. Exp(1)), E‖X‖₁^M = (Δ/ε)^M Γ(d+M)/Γ(d).

    >>> mech = LaplaceND(epsilon=1, sensitivity=1, dim=2)
    >>> float(mech.pdf([0.0, 0.0])), mech.var(), mech.expected_cost("l1")
    (0.25, array([2., 2.]), 2.0)
    >>> mech(np.zeros((4, 2)), rng=0).shape
    (4, 2)
    """

    name = "laplace_nd"
    _param_names = ("dim",)
    _pow_help = "pow:M (‖x‖₁^M)"

    def __init__(self, *, epsilon, sensitivity, dim) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self._init_dim(dim)

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))

    def _logpdf_nd(self, x):
        s = self.scale
        return -self.dim * math.log(2.0 * s) - np.abs(x).sum(axis=-1) / s

    def _entropy(self):
        return self.dim * (1.0 + math.log(2.0 * self.scale))  # d i.i.d. Laplace(s)

    def _cost_nd(self, name, m, cost):
        return _laplace_cost(name, m, self.scale, self.dim)

    def _sample(self, n, rng):
        return rng.laplace(0.0, self.scale, size=(n, self.dim))

    def _make_1d(self):
        from optmech.mechanisms.laplace import Laplace

        return Laplace(epsilon=self.epsilon, sensitivity=self.sensitivity)

    def _privacy_note(self) -> str:
        return "laplace_nd: density ratio e^{epsilon(||x+t||_1 - ||x||_1)/sensitivity} <= e^epsilon for ||t||_1 <= sensitivity"


class DiscreteLaplaceND(NDMechanism):
    r"""Product of discrete Laplace laws on ℤ^d, λ = e^{−ε/Δ} [GV13, (120)].

    .. math:: P(k) = \left(\frac{1-\lambda}{1+\lambda}\right)^d \lambda^{\|k\|_1}

    ε-DP for integer ℓ1 sensitivity Δ.  E‖X‖₁ = 2dλ/(1−λ²) (122), E‖X‖₂² = 2dλ/(1−λ)² (127).
    Sampler: difference of two geometric variables per coordinate.

    >>> import math
    >>> mech = DiscreteLaplaceND(epsilon=1, sensitivity=1, dim=2)
    >>> c, lam = math.tanh(0.5), math.exp(-1)
    >>> math.isclose(float(mech.pmf([1, -1])), c * c * lam * lam), float(mech.pmf([0.5, 0]))
    (True, 0.0)
    """

    name = "discrete_laplace_nd"
    lattice = True
    _param_names = ("dim",)

    def __init__(self, *, epsilon, sensitivity, dim) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self._init_dim(dim)

    @property
    def lam(self) -> float:
        return math.exp(-self.epsilon / self.sensitivity)

    def _pmf_nd(self, k):
        return np.exp(self._logpmf_nd(k))

    def _logpmf_nd(self, k):
        a = self.epsilon / self.sensitivity
        return self.dim * math.log(math.tanh(a / 2.0)) - a * np.abs(k).sum(axis=-1)

    def _entropy(self):
        return self.dim * self._one_d().entropy()  # d i.i.d. discrete Laplace coordinates

    def _cost_nd(self, name, m, cost):
        if name == "pow":
            raise _cost_error(cost, extra="")
        return _dlap_cost(name, self.epsilon / self.sensitivity, self.dim)

    def _sample(self, n, rng):
        p = -math.expm1(-self.epsilon / self.sensitivity)
        shape = (n, self.dim)
        return (rng.geometric(p, size=shape) - rng.geometric(p, size=shape)).astype(np.int64)

    def _exact_sampler(self):
        """d independent exact discrete Laplace coordinates (:func:`optmech.exact.laws.discrete_laplace`)."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import discrete_laplace

        law = discrete_laplace(Fraction(self.epsilon) / self.sensitivity)
        return ExactSampler(lambda n, src: law.sample(n * self.dim, src).reshape(n, self.dim), dim=self.dim,
                            mechanism=repr(self),
                            privacy=self._exact_privacy("the product law of d discrete Laplace coordinates exactly, eps "
                                                        "read as the exact rational value of its float"),
                            law="product of exact discrete Laplace coordinates")

    def _make_1d(self):
        from optmech.mechanisms.laplace import DiscreteLaplace

        return DiscreteLaplace(epsilon=self.epsilon, sensitivity=self.sensitivity)

    def _privacy_note(self) -> str:
        return "discrete_laplace_nd: pmf ratio lambda^{-||t||_1} <= e^epsilon for integer ||t||_1 <= sensitivity [GV13, (120)]"


class L2Laplace(NDMechanism):
    r"""ℓ2 Laplace noise on ℝ^d [KHP15, Thm 8, (14)].

    .. math:: f(x) = \frac{\Gamma(d/2)\,\epsilon^d}{2\pi^{d/2}\Gamma(d)\Delta^d} e^{-\epsilon\|x\|_2/\Delta}

    ‖X‖₂ ~ Gamma(d, Δ/ε) and X/‖X‖₂ uniform on the sphere.  ε-DP for ℓ2 sensitivity Δ (triangle
    inequality) and (ε/Δ)-Lipschitz private w.r.t. ‖·‖₂ [KHP15, Prop. 4]; for Δ = 1 it minimises
    E‖X‖₂² = d(d+1)/ε² among ε-Lipschitz private additive noise [KHP15, Thm 8].  d = 1: Laplace.

    >>> import math
    >>> mech = L2Laplace(epsilon=1, dim=2)
    >>> math.isclose(float(mech.pdf([0.0, 0.0])), 1 / (2 * math.pi))     # Γ(1) ε² / (2π Γ(2))
    True
    >>> math.isclose(mech.entropy(), math.log(2 * math.pi) + 2)          # −ln f(0) + E‖X‖₂/s
    True
    """

    name = "l2_laplace"
    _param_names = ("dim",)
    _norm = "l2"

    def __init__(self, *, epsilon, dim, sensitivity=1.0) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self._init_dim(dim)
        d = self.dim
        self._log_c = (math.lgamma(d / 2.0) + d * math.log(self.epsilon / self.sensitivity)
                       - math.log(2.0) - d / 2.0 * math.log(math.pi) - math.lgamma(d))

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))

    def _logpdf_nd(self, x):
        return self._log_c - np.sqrt((x * x).sum(axis=-1)) / self.scale

    def _entropy(self):
        return -self._log_c + self.dim  # −E ln f = −ln c + E‖X‖₂/s, ‖X‖₂ ~ Gamma(d, s)

    def _cost_nd(self, name, m, cost):
        if name == "pow":
            raise _cost_error(cost, extra="")
        return _l2lap_cost(name, self.scale, self.dim)

    def _sample(self, n, rng):
        z = rng.standard_normal((n, self.dim))
        r = rng.standard_gamma(float(self.dim), size=n) * self.scale
        z *= (r / np.sqrt((z * z).sum(axis=1)))[:, None]
        return z

    def _make_1d(self):
        from optmech.mechanisms.laplace import Laplace

        return Laplace(epsilon=self.epsilon, sensitivity=self.sensitivity)

    def _privacy_note(self) -> str:
        return ("l2_laplace: density ratio e^{epsilon(||x+t||_2 - ||x||_2)/sensitivity} <= e^epsilon for "
                "||t||_2 <= sensitivity; also (epsilon/sensitivity)-Lipschitz private w.r.t. ||.||_2 [KHP15, Prop. 4, Thm 8]")
