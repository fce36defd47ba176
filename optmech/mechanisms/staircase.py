r"""Continuous staircase mechanism for 1-D pure ε-DP [Geng13, §2.5-2.7].

With :math:`b = e^{-\epsilon}` the staircase density is ([Geng13] eq. (2.13))

.. math::

    f_\gamma(x) = a(\gamma)\, b^{k}   \text{ for } |x| \in [k\Delta, (k+\gamma)\Delta), \qquad
    f_\gamma(x) = a(\gamma)\, b^{k+1} \text{ for } |x| \in [(k+\gamma)\Delta, (k+1)\Delta),

    a(\gamma) = \frac{1-b}{2\Delta(\gamma + b(1-\gamma))},

equivalently :math:`f_\gamma(x) = a(\gamma) b^{\lfloor |x|/\Delta - \gamma \rfloor + 1}` (checked for
γ ∈ [0, 1], including both ends).  It satisfies :math:`f(x) \le e^\epsilon f(x+d)` for
:math:`|d| \le \Delta`, hence ε-DP for sensitivity Δ, for every γ ∈ [0, 1].

Optimality [Geng13, Thm 2.4]: if L is symmetric, nondecreasing on x ≥ 0 (Property 2.1) and
:math:`\sup_{x\ge T} L(x+1)/L(x) < \infty` (Property 2.2), then
:math:`V^* = \inf_{\gamma\in[0,1]} \int L f_\gamma` over all output-independent ε-DP noise (the
reduction to output-independent noise, Thm 2.3, assumes a periodic, piecewise-constant family).
γ = 0 and γ = 1 give the same law (a phase on a circle).

Cost routes, best first:

* ``|x|``: [Geng13] App. A.3, :math:`V = \Delta(\tfrac{b}{1-b} + \tfrac12 \tfrac{b+(1-b)\gamma^2}{b+(1-b)\gamma})`;
  γ* = 1/(1+e^{ε/2}) and V* = Δ e^{ε/2}/(e^ε − 1) (Thm 2.5).
* ``x²``: [Geng13] (A.25); γ* from (A.28) in the cancellation-free form
  γ* = (b(1+2b)/2) / (x^{2/3} + x^{1/3} b + b²), x = b(1+b)/2 (algebraically identical to (A.28),
  whose radicand factors as b(1+b)(1−b)³); V* = Δ²(2^{-2/3} b^{2/3}(1+b)^{2/3} + b)/(1−b)² (Thm 2.7).
* ``|x|^m``, integer m: :math:`E|X|^m = \Delta^m N_{m+1}(\gamma)/((m+1) N_1(\gamma))` with
  :math:`N_n(\gamma)=\sum_{j=1}^{n}\binom{n}{j}c_{n-j}(b+(1-b)\gamma^j)` ([Geng13] App. A.5 with the
  denominator's missing brackets restored); γ* is the unique root in (0, 1) of the stationarity
  polynomial ([Geng13] (A.31), re-derived here; one sign change, so one positive root).
* anything else: :math:`V(\gamma) = a(\gamma)[(1-b)W(\gamma) + bW(1)]` with
  :math:`W(t) = \int_0^{t\Delta} M(o)\,do` and the periodised cost
  :math:`M(o) = \sum_k b^k (L(k\Delta+o) + L(-k\Delta-o))` (the period sum of the c_k series
  exchanged with the integral; see ``numerics.PeriodSum`` for the truncation, the Gregory tail
  used when ε ≲ 0.01 and the Chebyshev interpolation in the offset), by adaptive
  Gauss-Legendre; γ* by a grid of ~290 points (uniform plus geometric clusters at both ends,
  0 ≡ 1), bounded Brent around the best point, and a log-γ search below the grid (large ε).
  exact=False; measured agreement with the closed forms ~1e-15 relative for ε in [1e-6, 40]
  (the grid cannot see two minima closer than its spacing: unimodality is not proven).

Tested by: tests/test_mechanisms.py (pdf mass, DP ratio, closed forms vs numeric route, γ*).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Reference

__all__ = [
    "Staircase",
    "staircase_normaliser",
    "staircase_cost_abs",
    "staircase_cost_square",
    "staircase_cost_moment",
    "staircase_cost",
    "optimal_gamma",
    "gamma_heuristic",
    "staircase_optimal_cost_abs",
    "staircase_optimal_cost_square",
    "staircase_reference",
]


# --------------------------------------------------------------------------------------------
# closed forms


def _check(epsilon, sensitivity, gamma=None):
    eps = nx.check_epsilon(epsilon)
    delta = nx.check_sensitivity(sensitivity)
    if gamma is None:
        return eps, delta
    return eps, delta, nx.check_unit_interval(gamma, "gamma")


def staircase_normaliser(epsilon, sensitivity, gamma) -> float:
    """a(γ) = (1 − b)/(2Δ(γ + b(1 − γ))) [Geng13, (2.13)].

    >>> import math
    >>> a, b, g = staircase_normaliser(1, 1, 0.3), math.exp(-1), 0.3
    >>> math.isclose(2 * a * (g + b * (1 - g)) / (1 - b), 1.0)     # the density integrates to 1
    True
    """
    eps, delta, gamma = _check(epsilon, sensitivity, gamma)
    b, u = nx.b_and_u(eps)
    return u / (2.0 * delta * (b + u * gamma))


def staircase_cost_abs(epsilon, sensitivity, gamma) -> float:
    """E|X| of the staircase [Geng13, App. A.3]: Δ(b/(1−b) + ½(b + (1−b)γ²)/(b + (1−b)γ)).

    >>> import math
    >>> b = math.exp(-1)       # γ = 1: density (1 − b)/2 · b^k on k <= |x| < k + 1, E|X| = b/(1 − b) + 1/2
    >>> math.isclose(staircase_cost_abs(1, 1, 1.0), b / (1 - b) + 0.5)
    True
    """
    eps, delta, gamma = _check(epsilon, sensitivity, gamma)
    b, u = nx.b_and_u(eps)
    return delta * (b / u + 0.5 * (b + u * gamma * gamma) / (b + u * gamma))


def staircase_cost_square(epsilon, sensitivity, gamma) -> float:
    """E X² of the staircase [Geng13, (A.25)].

    >>> import math
    >>> b = math.exp(-1)       # γ = 1: E X² = Σ_k (1 − b) b^k (k² + k + 1/3)
    >>> math.isclose(staircase_cost_square(1, 1, 1.0), sum((1 - b) * b**k * (k * k + k + 1 / 3) for k in range(200)))
    True
    """
    eps, delta, gamma = _check(epsilon, sensitivity, gamma)
    b, u = nx.b_and_u(eps)
    d = b + u * gamma
    return delta**2 * ((b * b + b) / u**2 + (b + u * gamma**2) / d * (b / u) + (b + u * gamma**3) / (3.0 * d))


def _moment(m: int, eps: float, delta: float, gamma: float) -> float:
    b, u = nx.b_and_u(eps)
    c = nx.series_constants(b, u, m + 1)
    n = m + 1
    num = sum(math.comb(n, j) * c[n - j] * (b + u * gamma**j) for j in range(1, n + 1))
    den = c[0] * (b + u * gamma)
    return delta**m * num / (n * den)


def staircase_cost_moment(m: int, epsilon, sensitivity, gamma) -> float:
    """E|X|^m for an integer m >= 0 via the series constants c_k [derived].

    >>> import math
    >>> a, b, g = staircase_normaliser(1, 1, 0.3), math.exp(-1), 0.3
    >>> cube = lambda lo, hi: (hi**4 - lo**4) / 4       # ∫ x³ dx
    >>> direct = 2 * a * sum(b**k * cube(k, k + g) + b**(k + 1) * cube(k + g, k + 1) for k in range(200))
    >>> math.isclose(staircase_cost_moment(3, 1, 1, 0.3), direct, rel_tol=1e-12)
    True
    >>> staircase_cost_moment(0, 1, 1, 0.3)
    1.0
    """
    m = nx.check_int_range(m, "m", 0, 60)
    eps, delta, gamma = _check(epsilon, sensitivity, gamma)
    return float(_moment(m, eps, delta, gamma))


def staircase_optimal_cost_abs(epsilon, sensitivity) -> float:
    """V* = Δ e^{ε/2}/(e^ε − 1) = Δ/(2 sinh(ε/2)) for L = |x| [Geng13, Thm 2.5].

    >>> import math
    >>> v = staircase_optimal_cost_abs(1, 1)
    >>> math.isclose(v, math.exp(0.5) / (math.e - 1)), math.isclose(v, staircase_cost_abs(1, 1, 1 / (1 + math.exp(0.5))))
    (True, True)
    """
    eps, delta = _check(epsilon, sensitivity)
    return delta * 0.5 / math.sinh(eps / 2.0)


def staircase_optimal_cost_square(epsilon, sensitivity) -> float:
    """V* = Δ²(2^{-2/3} b^{2/3}(1+b)^{2/3} + b)/(1−b)² for L = x² [Geng13, Thm 2.7].

    >>> grid = np.linspace(0, 1, 20001)
    >>> brute = min(staircase_cost_square(1, 1, g) for g in grid)
    >>> 0 <= brute - staircase_optimal_cost_square(1, 1) < 1e-8
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    b, u = nx.b_and_u(eps)
    return delta**2 * (2.0 ** (-2.0 / 3.0) * (b * (1.0 + b)) ** (2.0 / 3.0) + b) / u**2


def _gamma_abs(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(eps / 2.0))  # [Geng13, Thm 2.5]; ε <= 700 so no overflow


def _gamma_square(eps: float) -> float:
    # (A.28) rewritten: γ* = (x^{1/3} − b)/(1 − b), x = b(1+b)/2, and x − b³ = b(1−b)(1+2b)/2.
    b = math.exp(-eps)
    x = b * (1.0 + b) / 2.0
    x13 = x ** (1.0 / 3.0)
    return (b * (1.0 + 2.0 * b) / 2.0) / (x13 * x13 + x13 * b + b * b)


def _stationarity_coefficients(m: int, eps: float) -> np.ndarray:
    """Coefficients (ascending) of the numerator of dV/dγ / (1-b) for L = |x|^m."""
    b, u = nx.b_and_u(eps)
    n = m + 1
    c = nx.series_constants(b, u, n)
    coef = np.zeros(n + 1)
    coef[0] = -b * sum(math.comb(n, i) * c[n - i] for i in range(2, n + 1))
    for i in range(1, n + 1):
        coef[i] = math.comb(n, i) * c[n - i] * (i - 1) * u
        if i + 1 <= n:
            coef[i] += math.comb(n, i + 1) * c[n - i - 1] * (i + 1) * b
    return coef


def gamma_moment(m: int, eps: float) -> float:
    if m == 1:
        return _gamma_abs(eps)
    if m == 2:
        return _gamma_square(eps)
    from scipy import optimize  # lazy: keeps `import optmech.mechanisms` cheap

    coef = _stationarity_coefficients(m, eps)
    poly = np.polynomial.Polynomial(coef / -coef[0])  # p(0) = -1: keeps values away from underflow at large ε
    # p(0) < 0 < p(1) and all coefficients but the constant are >= 0: a unique root in (0, 1).
    return float(optimize.brentq(poly, 0.0, 1.0, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=2000))


# --------------------------------------------------------------------------------------------
# numeric route for general costs


_GRID = np.unique(
    np.concatenate([np.linspace(0.0, 1.0, 201), np.geomspace(1e-13, 4e-3, 45), 1.0 - np.geomspace(1e-13, 4e-3, 45)])
)


class _Numeric:
    """V(γ) = a(γ)[(1−b)W(γ) + bW(1)] for any cost, from the periodised cost M."""

    def __init__(self, cost, eps: float, delta: float) -> None:
        self.eps, self.delta = eps, delta
        self.b, self.u = nx.b_and_u(eps)
        # jumps of the cost at |x| = c put jumps of M at the offsets c mod Δ: they become cell
        # edges of every integral (so each cell is smooth) and candidate γ of the minimisation
        # (V(γ) is smooth between them, with kinks there); no Chebyshev interpolation across them
        cuts = np.abs(np.asarray(getattr(cost, "breakpoints", lambda: ())(), dtype=float))
        offs = np.mod(cuts, delta) if cuts.size else cuts
        self.offsets = np.unique(offs[(offs > 0) & (offs < delta)])
        self.M = nx.PeriodSum(nx.symmetrised(cost), eps, delta, interpolate=self.offsets.size == 0)
        self.err = 0.0
        # a jump placed ~ulp(c) away from where it is moves the integral by at most that much of M's range
        self.loc_err = 0.0
        if self.offsets.size:
            probe = np.abs(self.M(np.linspace(0.0, delta, 257)))
            w_one = float(self.integrate([0.0, 1.0], track=False)[0])
            self.loc_err = self.offsets.size * 8.0 * np.finfo(float).eps * float(cuts.max() + delta) * float(probe.max()) / max(abs(w_one), 1e-300)

    def integrate(self, gammas, track: bool = True) -> np.ndarray:
        e = np.asarray(gammas, dtype=float) * self.delta
        inner = self.offsets[(self.offsets > e[0]) & (self.offsets < e[-1])]
        merged = np.unique(np.concatenate([e, inner]))
        cells, err = nx.adaptive_gl(self.M, merged)
        # back to the cells between the given γ (each is a union of merged cells)
        cells = np.add.reduceat(cells, np.searchsorted(merged, e[:-1])) if merged.size != e.size else cells
        if track:
            self.err = max(self.err, err / max(float(np.abs(cells).sum()), 1e-300))
        return cells

    def value(self, gamma, w_gamma, w_one):
        a = self.u / (2.0 * self.delta * (self.b + self.u * gamma))
        return a * (self.u * w_gamma + self.b * w_one)

    def cost(self, gamma: float) -> float:
        if gamma in (0.0, 1.0):
            w = self.integrate([0.0, 1.0])
            return float(self.value(gamma, w[0] if gamma == 1.0 else 0.0, w[0]))
        w = self.integrate([0.0, gamma, 1.0])
        return float(self.value(gamma, w[0], w.sum()))

    def minimise(self) -> tuple[float, float]:
        from scipy import optimize  # lazy: keeps `import optmech.mechanisms` cheap

        grid = np.unique(np.concatenate([_GRID, self.offsets / self.delta]))
        cells = self.integrate(grid)
        wcum = np.concatenate([[0.0], np.cumsum(cells)])
        w_one = wcum[-1]
        vg = self.value(grid, wcum, w_one)
        i = int(np.argmin(vg))
        best = (float(vg[i]), float(grid[i]))
        last = grid.size - 1
        # V is smooth between grid points (every kink of V(γ) is a grid point): search each side
        brackets = [(0, 1), (last - 1, last)] if i in (0, last) else [(i - 1, i), (i, i + 1)]
        for lo_i, hi_i in brackets:
            lo, hi = float(grid[lo_i]), float(grid[hi_i])

            def f(g, lo=lo, lo_i=lo_i):
                extra = self.integrate([lo, g], track=False)[0] if g > lo else 0.0
                return float(self.value(g, wcum[lo_i] + extra, w_one))

            res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-14 * (hi - lo)})
            if res.fun < best[0]:
                best = (float(res.fun), float(res.x))
            if lo_i == 0:  # γ* may be far below the grid (large ε): search log γ as well
                res = optimize.minimize_scalar(
                    lambda t, f=f: f(math.exp(t)), bounds=(math.log(1e-300), math.log(hi)), method="bounded", options={"xatol": 1e-10}
                )
                if res.fun < best[0]:
                    best = (float(res.fun), math.exp(float(res.x)))
        return best[1], best[0]

    def note(self, value: float) -> str:
        rel = self.err + self.M.rel_tail + self.loc_err
        cut = (f", cut at the cost's {self.offsets.size} jump offset(s) in the period" if self.offsets.size else "")
        return (
            f"numeric: periodised cost over {self.M.describe()} "
            f"+ adaptive Gauss-Legendre{cut} (est. rel. error <= {max(rel, 1e-16):.1e})"
        )


def _detail(cost, eps: float, delta: float, gamma: float) -> tuple[float, bool, str]:
    m = nx.integer_power_of(cost)
    if m == 1:
        return staircase_cost_abs(eps, delta, gamma), True, "closed form [Geng13, App. A.3]"
    if m == 2:
        return staircase_cost_square(eps, delta, gamma), True, "closed form [Geng13, (A.25)]"
    if m is not None:
        return _moment(m, eps, delta, gamma), True, "closed form via c_k series constants [derived]"
    num = _Numeric(cost, eps, delta)
    value = num.cost(gamma)
    return value, False, num.note(value)


def staircase_cost(cost, epsilon, sensitivity, gamma) -> float:
    """Expected cost ``∫ L f_γ`` of the staircase mechanism, for any cost object.

    abs/square/integer pow use closed forms; other costs the numeric route of the module
    docstring (relative accuracy ~1e-13 for smooth costs; non-symmetric costs are allowed).
    Returns ``inf`` if the series diverges.

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> math.isclose(staircase_cost(parse_cost("abs"), 1, 1, 0.3), staircase_cost_abs(1, 1, 0.3))
    True
    >>> b = math.exp(-1)       # γ = 1 with the cost min(|x|, 1): E = (1 − b)/2 + b
    >>> math.isclose(staircase_cost(parse_cost("min(abs(x), 1)"), 1, 1, 1.0), (1 - b) / 2 + b, rel_tol=1e-10)
    True
    """
    eps, delta, gamma = _check(epsilon, sensitivity, gamma)
    try:
        return float(_detail(cost, eps, delta, gamma)[0])
    except nx.SeriesDiverged:
        return math.inf


def _optimum(cost, eps: float, delta: float) -> tuple[float, float, bool, str]:
    """(γ*, V*, exact, note)."""
    m = nx.integer_power_of(cost)
    if m == 1:
        return _gamma_abs(eps), staircase_optimal_cost_abs(eps, delta), True, "closed form [Geng13, Thm 2.5]"
    if m == 2:
        return (
            _gamma_square(eps),
            staircase_optimal_cost_square(eps, delta),
            True,
            "closed form [Geng13, Thm 2.7, (A.28) in cancellation-free form]",
        )
    if m is not None:
        g = gamma_moment(m, eps)
        return (
            g,
            _moment(m, eps, delta, g),
            False,
            "closed-form V(γ) via c_k [derived]; γ* = root of the stationarity polynomial ([Geng13] (A.31)), "
            "rel. accuracy ~1e-14",
        )
    num = _Numeric(cost, eps, delta)
    g, v = num.minimise()
    return g, v, False, num.note(v) + "; γ* by grid + bounded Brent"


def optimal_gamma(cost, epsilon, sensitivity) -> float:
    """γ* = argmin_{γ∈[0,1]} ∫ L f_γ ([Geng13] Thm 2.4; the optimum over all ε-DP noise only when the
    cost is symmetric and nondecreasing, otherwise just the best staircase).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> math.isclose(optimal_gamma(parse_cost("abs"), 1, 1), 1 / (1 + math.exp(0.5)))   # [Geng13, Thm 2.5]
    True
    >>> grid = np.linspace(0, 1, 2001)                 # brute force over γ for x²
    >>> best = grid[np.argmin([staircase_cost_square(1, 1, g) for g in grid])]
    >>> bool(abs(optimal_gamma(parse_cost("square"), 1, 1) - best) < 1e-3)
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    return _optimum(cost, eps, delta)[0]


def gamma_heuristic(epsilon) -> float:
    """γ̃ = b/2 = e^{−ε}/2, the cost-free heuristic of [Geng13, §2.7.2].

    Pr[|X| <= γ̃Δ] → 1/3 as ε → ∞; for the |x| cost E|X| → Δ/3 under γ̃ while V* → 0, so it is a
    poor choice there [derived].  Prefer :func:`optimal_gamma` for a known cost.

    >>> import math
    >>> gamma_heuristic(1) == math.exp(-1) / 2
    True
    """
    return math.exp(-nx.check_epsilon(epsilon)) / 2.0


def staircase_reference(cost, epsilon, sensitivity) -> Reference | None:
    """V* as a :class:`Reference` named ``staircase``; None unless the cost is symmetric and
    nondecreasing ([Geng13] Property 2.1, checked on linspace(0, 60Δ, 4001)).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> ref = staircase_reference(parse_cost("abs"), 1, 1)
    >>> ref.name, ref.exact, math.isclose(ref.value, 1 / (2 * math.sinh(0.5)))
    ('staircase', True, True)
    >>> staircase_reference(parse_cost("-abs(x)"), 1, 1) is None     # not symmetric nondecreasing
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    if not nx.is_symmetric_nondecreasing(cost, delta, "continuous"):
        return None
    params = {"gamma": math.nan, "gamma_heuristic": math.exp(-eps) / 2.0}
    try:
        g, v, exact, note = _optimum(cost, eps, delta)
    except nx.SeriesDiverged as exc:
        return Reference("staircase", math.inf, params, False, f"cost series diverges ({exc})")
    params["gamma"] = g
    return Reference("staircase", float(v), params, exact, "optimum V* [Geng13, Thm 2.4]; " + note)


# --------------------------------------------------------------------------------------------
# mechanism


class Staircase(Mechanism):
    r"""Continuous staircase noise for pure ε-DP with sensitivity Δ [Geng13, (2.13)].

    .. math:: f(x) = a(\gamma) b^{\lfloor |x|/\Delta - \gamma\rfloor + 1},\quad
              a(\gamma) = \frac{1-b}{2\Delta(\gamma + b(1-\gamma))},\quad b = e^{-\epsilon}

    Parameters
    ----------
    epsilon : float in (0, 700]
    sensitivity : float > 0
    gamma : float in [0, 1]
        Breakpoint of each step, as a fraction of Δ (γ = 0 and γ = 1 give the same law).

    Notes
    -----
    ε-DP for every γ (f(x) ≤ e^ε f(x + d), |d| ≤ Δ); optimal for symmetric nondecreasing costs
    at γ = γ* ([Geng13] Thm 2.4).  ``sample`` is Algorithm 1 of [GKOV15] §II (floating point).

    >>> import math
    >>> mech = Staircase(epsilon=1, sensitivity=1, gamma=0.5)
    >>> b = math.exp(-1)
    >>> math.isclose(float(mech.pdf(0.75)) / float(mech.pdf(0.25)), b)     # one step down past γΔ
    True
    >>> float(mech.cdf(0.0)), mech.median(), mech.support()
    (0.5, 0.0, (-inf, inf))
    >>> opt = Staircase.optimal("abs", epsilon=1, sensitivity=1)
    >>> math.isclose(opt.expected_cost("abs"), 1 / (2 * math.sinh(0.5)))
    True
    """

    name = "staircase"
    _param_names = ("gamma",)

    def __init__(self, *, epsilon, sensitivity, gamma) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self.gamma = nx.check_unit_interval(gamma, "gamma")
        self._b, self._u = nx.b_and_u(self.epsilon)
        self._a = self._u / (2.0 * self.sensitivity * (self._b + self._u * self.gamma))

    @classmethod
    def optimal(cls, cost, *, epsilon, sensitivity) -> Staircase:
        """The staircase with γ = γ*(cost) (a spec string or a cost object)."""
        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        return cls(epsilon=epsilon, sensitivity=sensitivity, gamma=optimal_gamma(cost, epsilon, sensitivity))

    @classmethod
    def heuristic(cls, *, epsilon, sensitivity) -> Staircase:
        """The staircase with the heuristic γ̃ = e^{−ε}/2 [Geng13, §2.7.2]."""
        return cls(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma_heuristic(epsilon))

    def _split(self, x):
        y = np.abs(x) / self.sensitivity
        k = np.floor(y)
        return k, y - k

    def _pdf(self, x):
        k, t = self._split(x)
        return self._a * np.exp(-self.epsilon * k) * np.where(t < self.gamma, 1.0, self._b)

    def _sf(self, x):
        # P(|X| > x) = b^{k+1} + 2aΔ b^k [(γ − t)^+ + b(1 − max(t, γ))]: positive terms only.
        k, t = self._split(x)
        bk = np.exp(-self.epsilon * k)
        rem = np.maximum(self.gamma - t, 0.0) + self._b * (1.0 - np.maximum(t, self.gamma))
        tail = 0.5 * (bk * self._b + 2.0 * self._a * self.sensitivity * bk * rem)
        return np.where(x >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        # Algorithm 1 [GKOV15, §II; Geng13, §2.5]: X = S·(G + B-step offset)·Δ with
        # G ~ Geom(1 − b) on {0, 1, ...} drawn as ⌊E/ε⌋, E ~ Exp(1) (P(G >= i) = e^{−εi});
        # within the step, U·γ w.p. γ/(γ + (1−γ)b) (B = 0), else γ + U·(1 − γ) (B = 1).
        g = self.gamma
        x = rng.standard_exponential(n)
        x /= self.epsilon
        np.floor(x, out=x)
        u = rng.random(n)
        high = rng.random(n) >= g / (g + (1.0 - g) * self._b)
        u *= np.where(high, 1.0 - g, g)
        u += np.where(high, g, 0.0)
        x += u
        x *= np.where(rng.random(n) < 0.5, -self.sensitivity, self.sensitivity)
        return x

    def _expected_cost(self, cost):
        return staircase_cost(cost, self.epsilon, self.sensitivity, self.gamma)

    def _ppf(self, q):
        # Invert the tail s = P(|X| > x) = 2 min(q, 1 − q) piece by piece: P(|X| > kΔ) = b^k, and
        # within period k, r = s/b^k = b + 2aΔ[(γ − t)^+ + b(1 − max(t, γ))] is linear in t.
        s = 2.0 * np.minimum(q, 1.0 - q)
        eps, b, two_a = self.epsilon, self._b, 2.0 * self._a * self.sensitivity
        k = np.floor(np.log(s) / -eps)
        r = s * np.exp(eps * k)
        k = np.where(r > 1.0, k - 1.0, np.where(r <= b, k + 1.0, k))  # rounding at period ends
        r = np.clip(s * np.exp(eps * k), b, 1.0)
        g = self.gamma
        r_gamma = b + two_a * b * (1.0 - g)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(r >= r_gamma, g - ((r - b) / two_a - b * (1.0 - g)), 1.0 - (r - b) / (two_a * b))
        x = (k + np.clip(t, 0.0, 1.0)) * self.sensitivity
        return np.where(q < 0.5, -x, x) + 0.0

    def _logpdf(self, x):
        k, t = self._split(x)
        return math.log(self._a) - self.epsilon * (k + (t >= self.gamma))

    def _entropy(self):
        # −ln f(x) = −ln a + ε·level(x), level = k on [kΔ, (k+γ)Δ), k + 1 on [(k+γ)Δ, (k+1)Δ);
        # E level = 2 Σ_k [aγΔ b^k k + a(1−γ)Δ b^{k+1}(k+1)] = 2aΔ b/(1 − b)²
        a, b, u = self._a, self._b, self._u
        return -math.log(a) + self.epsilon * 2.0 * a * self.sensitivity * b / (u * u)


def best_staircase_reference(cost, epsilon, sensitivity) -> Reference:
    """The staircase [Geng13, (2.13)] with the best γ for ``cost``: V* (named ``staircase``,
    :func:`~optmech.mechanisms.staircase.staircase_reference`) when the cost is proven symmetric
    and nondecreasing, else the cheapest staircase, an ε-DP upper bound (numeric).

    >>> from optmech.costs import parse_cost
    >>> ref = best_staircase_reference(parse_cost("where(x > 0, x, 2*abs(x))"), 1, 1)
    >>> ref.name, ref.exact, ref.note.startswith("upper bound")
    ('staircase', False, True)
    """
    eps, delta = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity)
    ref = staircase_reference(cost, eps, delta)
    if ref is not None:
        return ref
    params: dict[str, Any] = {"gamma": math.nan, "gamma_heuristic": math.exp(-eps) / 2.0}
    try:
        g = optimal_gamma(cost, eps, delta)
    except nx.SeriesDiverged as exc:
        return Reference("staircase", math.inf, params, False, f"cost series diverges ({exc})")
    params["gamma"] = g
    return Reference("staircase", staircase_cost(cost, eps, delta, g), params, False,
                     "upper bound: the best staircase [Geng13, (2.13)] over gamma, epsilon-DP; the cost is not proven "
                     "symmetric and nondecreasing, so it is not known to be V*; numeric (periodised cost + adaptive "
                     "Gauss-Legendre, gamma by grid + bounded Brent)")
