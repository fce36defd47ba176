r"""The d-dimensional Laplace laws for pure ε-DP on ℝ^d and ℤ^d, and their costs.

* :class:`LaplaceND` (``laplace_nd``): i.i.d. Laplace(Δ/ε) per coordinate [GKOV15, Def. 3], density
  ∝ e^{−ε‖x‖₁/Δ}, ε-DP for ℓ1 sensitivity Δ.
* :class:`DiscreteLaplaceND` (``discrete_laplace_nd``): product of discrete Laplace laws with
  λ = e^{−ε/Δ} on ℤ^d [GV13, (120)], ε-DP for integer ℓ1 sensitivity Δ.
* :class:`L2Laplace` (``l2_laplace``): density ∝ e^{−ε‖x‖₂/Δ} [KHP15,
  Thm 8, (14)], ε-DP for ℓ2 sensitivity Δ and (ε/Δ)-Lipschitz private w.r.t. ‖·‖₂.
* :class:`ProductLaplace` (``product_laplace``): independent Laplace(b_i) per coordinate, each axis its own
  scale, ε-DP for sensitivity Δ in a norm when Δ·‖(1/b_i)‖_* <= ε (the dual norm) [derived].

Costs (:data:`~optmech.mechanisms.base_nd.COSTS_ND`: l1, l2, l2sq, linf; ``pow:M`` = ‖x‖₁^M for
:class:`LaplaceND`, any M > 0) by :func:`laplace_nd_cost`, :func:`discrete_laplace_nd_cost` and
:func:`l2_laplace_cost` [derived; each is checked in tests/test_mechanisms_multidim.py]:

* i.i.d. Laplace(s): ‖X‖₁/s ~ Gamma(d), E‖X‖∞ = s H_d, E‖X‖₂ = s E‖G‖₂ (G i.i.d. Exp(1), by the
  E√S integral of :func:`~optmech.mechanisms.geometry.mean_sqrt_sum`).
* discrete Laplace: E‖X‖₂ by the same integral with the discrete φ(t) = E e^{−tK²}, 1 − φ from a
  positive series or Euler-Maclaurin (:func:`omphi_dlap`); E‖X‖∞ = Σ_n 1 − (1 − cλ^{n+1})^d
  (:func:`dlap_linf_mean`).
* ℓ2 Laplace: ‖X‖₂ ~ Gamma(d, Δ/ε) and X/‖X‖₂ uniform on the sphere, so ‖·‖₁ and ‖·‖∞ are
  E‖X‖₂ times the ℓ2-sphere factors of :mod:`~optmech.mechanisms.geometry`.

Tested by: tests/test_mechanisms_multidim.py.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base_nd import NDMechanism, check_dim, nd_cost_error, parse_nd_cost
from optmech.mechanisms.geometry import (
    exp_l2_mean,
    harmonic,
    log_sphere_l1_mean,
    mean_sqrt_sum,
    normal_linf_mean,
    omphi_exp,
)

__all__ = [
    "LaplaceND",
    "ProductLaplace",
    "DUAL_NORMS",
    "product_laplace_epsilon",
    "DiscreteLaplaceND",
    "L2Laplace",
    "laplace_nd_cost",
    "discrete_laplace_nd_cost",
    "l2_laplace_cost",
]

# --------------------------------------------------------------------------------------------
# discrete Laplace: 1 − φ(t) and E max


#: Largest number of series terms per quadrature node before Euler-Maclaurin is used.
_DLAP_TERMS = 4096


def omphi_dlap(t: np.ndarray, a: float) -> np.ndarray:
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
        integral = omphi_exp(te / (a * a)) / a
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


def dlap_linf_mean(a: float, d: int) -> float:
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
    parsed = parse_nd_cost(cost)
    if parsed is None:
        raise nd_cost_error(cost)
    return _laplace_cost(parsed[0], parsed[1], delta / eps, d)


def _laplace_cost(name: str, m, s: float, d: int) -> float:
    if name == "l1":
        return d * s
    if name == "l2sq":
        return 2.0 * d * s * s
    if name == "linf":
        return s * harmonic(d)
    if name == "l2":
        return s * exp_l2_mean(d)
    return math.exp(m * math.log(s) + math.lgamma(d + m) - math.lgamma(d))


def discrete_laplace_nd_cost(cost, epsilon, sensitivity, dim) -> float:
    """E L(X) for i.i.d. discrete Laplace coordinates, λ = e^{−ε/Δ} [GV13, (120)–(128)].

    l1 = 2dλ/(1−λ²) (122), l2sq = 2dλ/(1−λ)² (127), linf = Σ_n 1 − (1 − 2λ^{n+1}/(1+λ))^d,
    l2 by the E√S integral with the discrete φ (see :func:`omphi_dlap`).

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
    parsed = parse_nd_cost(cost)
    if parsed is None or parsed[0] == "pow":
        raise nd_cost_error(cost, extra="")
    return _dlap_cost(parsed[0], eps / delta, d)


def _dlap_cost(name: str, a: float, d: int) -> float:
    lam = math.exp(-a)
    if name == "l1":
        return 2.0 * d * lam / -math.expm1(-2.0 * a)
    if name == "l2sq":
        return 2.0 * d * lam / math.expm1(-a) ** 2
    if name == "linf":
        return dlap_linf_mean(a, d)
    return _dlap_l2_mean(a, d)


@functools.lru_cache(maxsize=128)
def _dlap_l2_mean(a: float, d: int) -> float:
    lam = math.exp(-a)
    sigma = math.sqrt(2.0 * lam) / -math.expm1(-a)
    return mean_sqrt_sum(lambda t: omphi_dlap(t, a), d, sigma)


def l2_laplace_cost(cost, epsilon, dim, sensitivity=1.0) -> float:
    """E L(X) for the density ∝ e^{−ε‖x‖₂/Δ} [KHP15, Thm 8]: ‖X‖₂ ~ Gamma(d, Δ/ε).

    l2 = dΔ/ε, l2sq = d(d+1)Δ²/ε² ([KHP15]: n(n+1)/ε² at Δ = 1), l1 = E‖X‖₂ · dΓ(d/2)/(√πΓ((d+1)/2)),
    linf = E‖X‖₂ E‖Z‖∞/E‖Z‖₂ (Z standard normal, E‖Z‖₂ = √2Γ((d+1)/2)/Γ(d/2)).

    >>> l2_laplace_cost("l2", 1, 2), l2_laplace_cost("l2sq", 1, 2)     # ‖X‖₂ ~ Gamma(2, 1): d, d(d + 1)
    (2.0, 6.0)
    """
    eps, delta, d = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity), check_dim(dim)
    parsed = parse_nd_cost(cost)
    if parsed is None or parsed[0] == "pow":
        raise nd_cost_error(cost, extra="")
    return _l2lap_cost(parsed[0], delta / eps, d)


def _l2lap_cost(name: str, s: float, d: int) -> float:
    r2 = d * s
    if name == "l2":
        return r2
    if name == "l2sq":
        return d * (d + 1.0) * s * s
    if name == "l1":
        return r2 * math.exp(log_sphere_l1_mean(d))
    z2 = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))
    return r2 * normal_linf_mean(d) / z2


class ScaledByEpsilon(NDMechanism):
    """The Laplace-type laws in d dimensions: scale Δ/ε, density exp(log-density)."""

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))


class LaplaceND(ScaledByEpsilon):
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
            raise nd_cost_error(cost, extra="")
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


class L2Laplace(ScaledByEpsilon):
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

    def _logpdf_nd(self, x):
        return self._log_c - np.sqrt((x * x).sum(axis=-1)) / self.scale

    def _entropy(self):
        return -self._log_c + self.dim  # −E ln f = −ln c + E‖X‖₂/s, ‖X‖₂ ~ Gamma(d, s)

    def _cost_nd(self, name, m, cost):
        if name == "pow":
            raise nd_cost_error(cost, extra="")
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


# --------------------------------------------------------------------------------------------
# independent Laplace laws with their own scales

#: the dual of each sensitivity norm, for the privacy of :class:`ProductLaplace`
DUAL_NORMS = {"l1": "linf", "l2": "l2", "linf": "l1"}


def product_laplace_epsilon(scales, sensitivity, norm: str) -> Fraction:
    """Δ·‖(1/b_i)‖_* as an exact rational, ‖·‖_* the dual of the sensitivity's ``norm`` (l1 ↔ linf, l2 ↔ l2);
    for l2 its square (Δ²·Σ 1/b_i²), which the caller compares with ε².

    >>> float(product_laplace_epsilon((2.0, 4.0), 1.0, "linf"))   # 1/2 + 1/4
    0.75
    """
    inv = [1 / Fraction(b) for b in scales]
    D = Fraction(sensitivity)
    if norm == "l1":
        return D * max(inv)
    if norm == "linf":
        return D * sum(inv)
    if norm == "l2":
        return D * D * sum(v * v for v in inv)
    raise SpecError(f"product_laplace: norm must be one of l1, l2, linf, got {norm!r}")


class ProductLaplace(NDMechanism):
    r"""Independent Laplace(b_i) noise, each coordinate with its own scale [derived].

    .. math:: f(x) = \prod_{i=1}^d \frac{1}{2 b_i} e^{-|x_i|/b_i}

    ε-DP for sensitivity Δ in the norm ``norm`` (l1, l2 or linf) when Δ·‖(1/b_i)‖_* <= ε, ‖·‖_* the dual norm:
    at a shift t the log density ratio is Σ_i (|x_i + t_i| − |x_i|)/b_i <= Σ_i |t_i|/b_i <= ‖t‖·‖(1/b_i)‖_*
    (Hölder).  The condition is checked in exact rationals on construction.  With ℓ1 sensitivity the budget is
    max_i 1/b_i, so any axis may spread at no cost to the others: a cost that stops growing along an axis is
    cheapest for such laws (:mod:`optmech.families.pure_nd_product`).  Costs: E‖X‖₁ = Σ b_i, E‖X‖₂² = 2 Σ b_i².

    >>> m = ProductLaplace(epsilon=1, sensitivity=1, scales=(1000.0, 1.0), norm="l1")
    >>> m.expected_cost("l1"), [float(v) for v in m.var()]
    (1001.0, [2000000.0, 2.0])
    >>> m(np.zeros((3, 2)), rng=0).shape
    (3, 2)
    """

    name = "product_laplace"
    _param_names = ("scales", "norm")

    def __init__(self, *, epsilon, sensitivity, scales, norm="l1") -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        try:
            b = tuple(float(v) for v in scales)
        except (TypeError, ValueError):
            raise SpecError(f"product_laplace: scales must be a list of positive numbers, got {scales!r}") from None
        if not b or not all(math.isfinite(v) and v > 0 for v in b):
            raise SpecError(f"product_laplace: scales must be positive and finite, got {list(scales)!r}")
        need = product_laplace_epsilon(b, self.sensitivity, norm)  # refuses a norm outside DUAL_NORMS
        self.scales, self.norm, self._norm = b, str(norm), str(norm)
        self._init_dim(len(b))
        eps = Fraction(self.epsilon)
        if need > (eps * eps if norm == "l2" else eps):
            raise SpecError(f"product_laplace: scales {list(b)} are not epsilon-DP at epsilon={self.epsilon:g} for "
                            f"sensitivity {self.sensitivity:g} in {norm} (sensitivity * ||1/b||_{DUAL_NORMS[norm]} "
                            "must be <= epsilon)")

    def _logpdf_nd(self, x):
        b = np.asarray(self.scales)
        return -float(np.sum(np.log(2.0 * b))) - np.sum(np.abs(x) / b, axis=-1)

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))

    def _entropy(self):
        return float(sum(1.0 + math.log(2.0 * v) for v in self.scales))

    def var(self) -> np.ndarray:
        """E X_i² = 2 b_i² per coordinate."""
        return 2.0 * np.asarray(self.scales) ** 2

    def _cost_nd(self, name, m, cost):
        if name == "l1":
            return math.fsum(self.scales)
        if name == "l2sq":
            return math.fsum(2.0 * v * v for v in self.scales)
        raise SpecError(f"product_laplace has closed forms for l1 and l2sq only, not {cost!r}")

    def _sample(self, n, rng):
        return rng.laplace(0.0, 1.0, size=(n, self.dim)) * np.asarray(self.scales)

    def _make_1d(self):
        from optmech.mechanisms.laplace import Laplace

        return Laplace(epsilon=self.sensitivity / self.scales[0], sensitivity=self.sensitivity)

    def _privacy_note(self) -> str:
        return (f"product_laplace: log density ratio <= sum_i |t_i|/b_i <= ||t||_{self.norm} * "
                f"||1/b||_{DUAL_NORMS[self.norm]} <= epsilon/sensitivity * ||t|| (Hoelder), checked exactly")
