r"""Laplace and discrete Laplace baselines for 1-D pure ε-DP.

* **Laplace** [Geng13, §2.6.1; GKOV15, (13)]: density
  :math:`f(x) = \frac{1}{2s} e^{-|x|/s}` with scale :math:`s = \Delta/\epsilon`; ε-DP for
  sensitivity Δ.  :math:`E|X|^p = \Gamma(p+1) s^p` for every p > 0, so E|X| = Δ/ε and
  EX² = 2Δ²/ε².
* **Discrete Laplace** [GV13, Thm 10, (64), (231), (238)]: with
  :math:`\lambda = e^{-\epsilon/\Delta}`, :math:`p_k = \frac{1-\lambda}{1+\lambda}\lambda^{|k|}` on ℤ;
  (ε, 0)-DP for integer sensitivity Δ ([GV13] states it for (ε, δ), it holds with δ = 0).
  E|X| = 2λ/(1 − λ²), EX² = 2λ/(1 − λ)²; generally E|X|^m = 2 (1−λ)/(1+λ) c_m(λ).

Both are valid ε-DP mechanisms for *any* cost, hence upper bounds on V*; for symmetric
nondecreasing costs they are never better than the (discrete) staircase [Geng13, Thm 2.4/2.13].
Other costs use the periodised sum ``M(o) = Σ_k b^k (L(kΔ+o) + L(−kΔ−o))`` with b = e^{-ε}:
``E L(X) = (ε/2Δ) ∫_0^Δ e^{−εo/Δ} M(o) do`` (Laplace, adaptive Gauss-Legendre) and
``E L(X) = p_0 [Σ_{j<Δ} λ^j M(j) − L(0)]`` (discrete Laplace), truncated by a ratio-test tail
estimate; flagged exact=False.  1 − λ, 1 − λ² use expm1 (no cancellation for small ε/Δ).

Tested by: tests/test_mechanisms.py (closed forms vs quadrature / brute-force sums).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import ProblemTooLarge
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Reference

__all__ = [
    "Laplace",
    "DiscreteLaplace",
    "laplace_cost_abs",
    "laplace_cost_square",
    "laplace_cost",
    "laplace_reference",
    "discrete_laplace_cost_abs",
    "discrete_laplace_cost_square",
    "discrete_laplace_cost",
    "discrete_laplace_reference",
]


def _check(epsilon, sensitivity, integer=False):
    return nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=integer)


# --------------------------------------------------------------------------------------------
# continuous Laplace


def laplace_cost_abs(epsilon, sensitivity) -> float:
    """E|X| = Δ/ε [Geng13, §2.6.1].

    >>> laplace_cost_abs(1, 1), laplace_cost_abs(0.5, 2)
    (1.0, 4.0)
    """
    eps, delta = _check(epsilon, sensitivity)
    return delta / eps


def laplace_cost_square(epsilon, sensitivity) -> float:
    """E X² = 2Δ²/ε² [Geng13, §2.6.2].

    >>> laplace_cost_square(1, 1), laplace_cost_square(2, 1)
    (2.0, 0.5)
    """
    eps, delta = _check(epsilon, sensitivity)
    return 2.0 * (delta / eps) ** 2


def _laplace_detail(cost, eps: float, delta: float) -> tuple[float, bool, str]:
    p = nx.power_of(cost)
    scale = delta / eps
    if p is not None:
        return math.gamma(p + 1.0) * scale**p, True, "closed form Γ(p+1)(Δ/ε)^p"
    M = nx.PeriodSum(nx.symmetrised(cost), eps, delta, interpolate=True)

    def integrand(o):
        return np.exp(-eps * o / delta) * M(o)

    cells, err = nx.adaptive_gl(integrand, [0.0, delta])
    value = float(eps / (2.0 * delta) * cells.sum())
    rel = err / max(float(cells.sum()), 1e-300) + M.rel_tail
    return value, False, f"numeric: periodised cost over {M.describe()} + adaptive Gauss-Legendre (est. rel. error <= {max(rel, 1e-16):.1e})"


def laplace_cost(cost, epsilon, sensitivity) -> float:
    """E L(X) under Laplace noise of scale Δ/ε, any cost (``inf`` if it diverges).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> laplace_cost(parse_cost("pow:3"), 1, 1)      # E|X|^3 = Γ(4) = 6 for scale 1
    6.0
    >>> math.isclose(laplace_cost(parse_cost("max(x, 0)"), 1, 1), 0.5, rel_tol=1e-12)   # E max(X, 0) = s/2
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    try:
        return _laplace_detail(cost, eps, delta)[0]
    except nx.SeriesDiverged:
        return math.inf


def laplace_reference(cost, epsilon, sensitivity) -> Reference:
    """Laplace baseline as a :class:`Reference` named ``laplace`` (an upper bound on V*).

    >>> from optmech.costs import parse_cost
    >>> ref = laplace_reference(parse_cost("abs"), 1, 2)
    >>> ref.name, ref.value, ref.exact, ref.parameters
    ('laplace', 2.0, True, {'scale': 2.0})
    """
    eps, delta = _check(epsilon, sensitivity)
    params = {"scale": delta / eps}
    try:
        value, exact, note = _laplace_detail(cost, eps, delta)
    except nx.SeriesDiverged as exc:
        return Reference("laplace", math.inf, params, False, f"cost series diverges ({exc})")
    return Reference("laplace", value, params, exact, "upper bound (ε-DP baseline); " + note)


# --------------------------------------------------------------------------------------------
# discrete Laplace


def _lam(eps: float, delta: int) -> tuple[float, float]:
    """(λ, 1 − λ) with λ = e^{-ε/Δ}."""
    return math.exp(-eps / delta), -math.expm1(-eps / delta)


def discrete_laplace_cost_abs(epsilon, sensitivity) -> float:
    """E|X| = 2λ/(1 − λ²), λ = e^{-ε/Δ} [GV13, (231)].

    >>> import math
    >>> lam = math.exp(-1)
    >>> direct = sum(abs(k) * (1 - lam) / (1 + lam) * lam ** abs(k) for k in range(-80, 81))
    >>> math.isclose(discrete_laplace_cost_abs(1, 1), direct, rel_tol=1e-14)
    True
    """
    eps, delta = _check(epsilon, sensitivity, integer=True)
    lam, _ = _lam(eps, delta)
    return 2.0 * lam / -math.expm1(-2.0 * eps / delta)


def discrete_laplace_cost_square(epsilon, sensitivity) -> float:
    """E X² = 2λ/(1 − λ)², λ = e^{-ε/Δ} [GV13, (238)].

    >>> import math
    >>> lam = math.exp(-0.5)                         # ε = 1, Δ = 2
    >>> direct = sum(k * k * (1 - lam) / (1 + lam) * lam ** abs(k) for k in range(-200, 201))
    >>> math.isclose(discrete_laplace_cost_square(1, 2), direct, rel_tol=1e-13)
    True
    """
    eps, delta = _check(epsilon, sensitivity, integer=True)
    lam, one_minus = _lam(eps, delta)
    return 2.0 * lam / one_minus**2


def _discrete_laplace_detail(cost, eps: float, delta: int) -> tuple[float, bool, str]:
    lam, one_minus = _lam(eps, delta)
    p0 = math.tanh(eps / (2.0 * delta))  # (1 − λ)/(1 + λ)
    m = nx.integer_power_of(cost)
    if m is not None and m >= 1:
        if m == 1:
            return 2.0 * lam / -math.expm1(-2.0 * eps / delta), True, "closed form [GV13, (231)]"
        if m == 2:
            return 2.0 * lam / one_minus**2, True, "closed form [GV13, (238)]"
        c = nx.series_constants(lam, one_minus, m)
        return 2.0 * p0 * float(c[m]), True, "closed form 2(1−λ)/(1+λ)·Li_{-m}(λ) [derived]"
    M = nx.PeriodSum(nx.symmetrised(cost), eps, float(delta), interpolate=delta > 128)
    nx.check_lattice_cost(M, delta)
    j = np.arange(delta, dtype=float)
    w = M(j)
    total = float(np.sum(np.exp(-eps * j / delta) * w, dtype=np.longdouble))
    l0 = float(nx.evaluate(cost, np.zeros(1))[0])
    value = p0 * (total - l0)
    rel = M.rel_tail
    return value, False, f"numeric: lattice sum over {M.describe()} (tail est. rel. <= {max(rel, 1e-16):.1e})"


def discrete_laplace_cost(cost, epsilon, sensitivity) -> float:
    """E L(X) under discrete Laplace noise with λ = e^{-ε/Δ}, any cost (``inf`` if it diverges).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> lam = math.exp(-1)
    >>> direct = sum(min(abs(k), 2) * (1 - lam) / (1 + lam) * lam ** abs(k) for k in range(-80, 81))
    >>> math.isclose(discrete_laplace_cost(parse_cost("min(abs(x), 2)"), 1, 1), direct, rel_tol=1e-12)
    True
    """
    eps, delta = _check(epsilon, sensitivity, integer=True)
    try:
        return _discrete_laplace_detail(cost, eps, delta)[0]
    except nx.SeriesDiverged:
        return math.inf


def discrete_laplace_reference(cost, epsilon, sensitivity, *, name: str = "discrete_laplace") -> Reference:
    """Discrete-Laplace baseline as a :class:`Reference` (an upper bound on the lattice V*).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> ref = discrete_laplace_reference(parse_cost("abs"), 1, 1)
    >>> ref.name, ref.exact, math.isclose(ref.value, 2 * math.exp(-1) / (1 - math.exp(-2)))
    ('discrete_laplace', True, True)
    """
    eps, delta = _check(epsilon, sensitivity, integer=True)
    params = {"lambda": math.exp(-eps / delta)}
    try:
        value, exact, note = _discrete_laplace_detail(cost, eps, delta)
    except nx.SeriesDiverged as exc:
        return Reference(name, math.inf, params, False, f"cost series diverges ({exc})")
    except ProblemTooLarge as exc:
        return Reference(name, math.nan, params, False, f"not computed: {exc}")
    return Reference(name, value, params, exact, "upper bound (ε-DP baseline, [GV13] Thm 10); " + note)


# --------------------------------------------------------------------------------------------
# mechanisms


class Laplace(Mechanism):
    r"""Laplace noise with scale Δ/ε [Geng13, §2.6.1].

    .. math:: f(x) = \frac{\epsilon}{2\Delta} e^{-\epsilon |x|/\Delta}

    >>> import math
    >>> mech = Laplace(epsilon=1, sensitivity=2)
    >>> mech.scale, float(mech.pdf(0.0)), float(mech.cdf(0.0))     # pdf(0) = 1/(2s)
    (2.0, 0.25, 0.5)
    >>> mech.expected_cost("abs"), mech.var(), mech.entropy() == 1 + math.log(4)
    (2.0, 8.0, True)
    >>> mech.sample(4, rng=0).shape
    (4,)
    """

    name = "laplace"

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def _pdf(self, x):
        return np.exp(-np.abs(x) / self.scale) / (2.0 * self.scale)

    def _sf(self, x):
        tail = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        return rng.laplace(0.0, self.scale, size=n)

    def _logpdf(self, x):
        return -np.abs(x) / self.scale - math.log(2.0 * self.scale)

    def _ppf(self, q):
        # F^{-1}(q) = s ln(2q) below the median, −s ln(2(1 − q)) above it (+ 0.0: no −0.0 at q = 1/2)
        s = self.scale
        with np.errstate(divide="ignore"):
            return np.where(q < 0.5, s * np.log(2.0 * q), -s * np.log(2.0 * (1.0 - q))) + 0.0

    def _entropy(self):
        return 1.0 + math.log(2.0 * self.scale)  # h = 1 + ln(2s) nats

    def _expected_cost(self, cost):
        return laplace_cost(cost, self.epsilon, self.sensitivity)


class DiscreteLaplace(Mechanism):
    r"""Discrete Laplace noise on ℤ with λ = e^{-ε/Δ} [GV13, Thm 10, (64)].

    .. math:: p_k = \frac{1-\lambda}{1+\lambda}\lambda^{|k|}, \quad \lambda = e^{-\epsilon/\Delta}

    ε-DP for integer sensitivity Δ ≥ 1.

    >>> import math
    >>> mech = DiscreteLaplace(epsilon=1, sensitivity=2)
    >>> lam = math.exp(-0.5)
    >>> mech.lam == lam, math.isclose(float(mech.pmf(3)), (1 - lam) / (1 + lam) * lam**3)
    (True, True)
    >>> math.isclose(float(mech.pmf(np.arange(-200, 201)).sum()), 1.0)
    True
    >>> mech.sample(3, rng=0).dtype
    dtype('int64')
    """

    name = "discrete_laplace"
    lattice = True

    @property
    def lam(self) -> float:
        return math.exp(-self.epsilon / self.sensitivity)

    def _pmf(self, k):
        return math.tanh(self.epsilon / (2.0 * self.sensitivity)) * np.exp(-self.epsilon * np.abs(k) / self.sensitivity)

    def _sf(self, n):
        # P(X > n) = λ^{n+1}/(1+λ) for n >= 0; P(X > n) = 1 − P(X > −n−1) for n < 0
        lam = self.lam
        m = np.where(n >= 0, n, -n - 1.0)
        tail = np.exp(-self.epsilon * (m + 1.0) / self.sensitivity) / (1.0 + lam)
        return np.where(n >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        p = -math.expm1(-self.epsilon / self.sensitivity)
        return (rng.geometric(p, size=n) - rng.geometric(p, size=n)).astype(np.int64)

    def _exact_sampler(self):
        """Exact inversion of p_k ∝ λ^{|k|} with λ = e^{−ε/Δ} bracketed in integers (ε's float read
        exactly as a rational): a window |k| < L and geometric tails of period L
        (:func:`optmech.exact.laws.discrete_laplace`)."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import discrete_laplace

        law = discrete_laplace(Fraction(self.epsilon) / self.sensitivity)
        return ExactSampler(law.sample, dim=1, mechanism=repr(self),
                            privacy=self._exact_privacy("the law p_k = tanh(eps/(2 sensitivity)) e^(-eps|k|/sensitivity) "
                                                        "exactly, eps read as the exact rational value of its float"),
                            law="discrete Laplace, exact inversion with geometric tails")

    def _logpmf(self, k):
        a = self.epsilon / self.sensitivity
        return self._on_lattice(k, lambda i: math.log(math.tanh(a / 2.0)) - a * np.abs(i))

    def _entropy(self):
        # H = −E ln p_X = −ln((1−λ)/(1+λ)) + (ε/Δ) E|X|, E|X| = 2λ/(1 − λ²)
        a = self.epsilon / self.sensitivity
        return -math.log(math.tanh(a / 2.0)) + a * discrete_laplace_cost_abs(self.epsilon, self.sensitivity)

    def _expected_cost(self, cost):
        return discrete_laplace_cost(cost, self.epsilon, self.sensitivity)
