r"""Discrete staircase and geometric mechanisms for integer queries under pure ε-DP.

Discrete staircase [Geng13, (2.17), Thm 2.13]: for integer Δ ≥ 1,
1 ≤ r ≤ Δ and b = e^{-ε},

.. math::

    P_r(i) = a(r) \text{ for } 0 \le i < r, \quad b\,a(r) \text{ for } r \le i < \Delta, \quad
    P_r(i) = b^k P_r(i - k\Delta) \text{ on } [k\Delta, (k+1)\Delta), \quad P_r(-i) = P_r(i),

    a(r) = \frac{1-b}{2r + 2b(\Delta - r) - (1-b)}.

Theorem 2.13 (Δ ≥ 2) and Theorem 2.12 (Δ = 1, the geometric mechanism
:math:`P(i) = \frac{1-b}{1+b} b^{|i|}`, which is P_1): if L is symmetric and nondecreasing on
i ≥ 0 (Property 2.3), :math:`V^* = \min_{1 \le r \le \Delta} \sum_i L(i) P_r(i)` over all
output-independent ε-DP noise on ℤ (the reduction to output-independent noise, Thm 2.11,
assumes a periodic family).

Cost of P_r [derived]: with w_j = Σ_{k≥0} b^k (L(kΔ+j) + L(−kΔ−j)),

.. math:: V(r) = a(r)\,[(1-b) \sum_{j<r} w_j + b \sum_{j<\Delta} w_j - L(0)],

so all r are evaluated at once with one cumulative sum (O(Δ) after the w_j).  For
L = |x|^m (integer m ≥ 1) the w_j sums are closed: V(r) = 2 Σ_l C(m,l) Δ^l c_l A_{m−l}(r) with
A_q(r) = a(r)[(1−b) S_q(r) + b S_q(Δ)], S_q(n) = Σ_{j<n} j^q (exact=True).  Other costs use
a truncated period sum (exact=False, ratio-test tail estimate ≤ 1e-17 relative).

Tested by: tests/test_mechanisms.py (pmf mass, DP ratio on a window, cost vs brute force,
optimal_r vs brute force, Δ = 1 is geometric).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import ProblemTooLarge, SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Reference
from optmech.mechanisms.laplace import DiscreteLaplace, discrete_laplace_cost, discrete_laplace_reference

__all__ = [
    "DiscreteStaircase",
    "Geometric",
    "discrete_staircase_normaliser",
    "discrete_staircase_cost",
    "optimal_r",
    "discrete_staircase_reference",
    "geometric_cost",
    "geometric_reference",
]


def _check(epsilon, sensitivity):
    return nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True)


def _a(b: float, u: float, delta: int, r):
    r = np.asarray(r, dtype=float)
    return u / (2.0 * r + 2.0 * b * (delta - r) - u)


def discrete_staircase_normaliser(epsilon, sensitivity, r) -> float:
    """a(r) = (1 − b)/(2r + 2b(Δ − r) − (1 − b)) [Geng13, (2.17)].

    >>> import math
    >>> math.isclose(discrete_staircase_normaliser(1, 1, 1), math.tanh(0.5))   # Δ = 1: the geometric p(0)
    True
    >>> a, b = discrete_staircase_normaliser(1, 4, 2), math.exp(-1)             # mass 1 over ℤ
    >>> math.isclose(a * (2 * (2 + b * 2) / (1 - b) - 1), 1.0)
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    r = nx.check_int_range(r, "r", 1, delta)
    b, u = nx.b_and_u(eps)
    return float(_a(b, u, delta, r))


def _moment_costs(m: int, eps: float, delta: int, r: np.ndarray) -> np.ndarray:
    """Σ_i |i|^m P_r(i) for integer m >= 1, vectorised over r (closed form)."""
    b, u = nx.b_and_u(eps)
    c = nx.series_constants(b, u, m)
    a = _a(b, u, delta, r)
    total = np.zeros(r.shape)
    r_and_delta = np.append(r, delta)
    for q in range(m + 1):  # q = m - l
        l = m - q
        s = nx.power_sums(q, r_and_delta)
        A_q = a * (u * s[:-1] + b * s[-1])
        total += math.comb(m, l) * float(delta) ** l * c[l] * A_q
    return 2.0 * total


class _Numeric:
    def __init__(self, cost, eps: float, delta: int) -> None:
        self.b, self.u = nx.b_and_u(eps)
        self.delta = delta
        self.M = nx.PeriodSum(nx.symmetrised(cost), eps, float(delta), interpolate=delta > 128)
        nx.check_lattice_cost(self.M, delta)
        w = self.M(np.arange(delta, dtype=float)).astype(np.longdouble)
        self.wcum = np.concatenate([[np.longdouble(0)], np.cumsum(w)])
        self.l0 = float(nx.evaluate(cost, np.zeros(1))[0])

    def costs(self, r: np.ndarray) -> np.ndarray:
        a = _a(self.b, self.u, self.delta, r)
        inner = self.u * self.wcum[r] + self.b * self.wcum[-1] - self.l0
        return a * inner.astype(float)

    def note(self) -> str:
        rel = self.M.rel_tail
        return f"numeric: lattice period sum over {self.M.describe()} (tail est. rel. <= {max(rel, 1e-16):.1e})"


def _costs(cost, eps: float, delta: int, r: np.ndarray) -> tuple[np.ndarray, bool, str]:
    m = nx.integer_power_of(cost)
    if m is not None and m >= 1:
        return _moment_costs(m, eps, delta, r), True, "closed form via c_k series constants [derived]"
    num = _Numeric(cost, eps, delta)
    return num.costs(r), False, num.note()


def discrete_staircase_cost(cost, epsilon, sensitivity, r) -> float:
    """Σ_i L(i) P_r(i) for any cost (exact for |x|^m, integer m; ``inf`` if it diverges).

    Raises ProblemTooLarge when a non-smooth cost on a huge lattice would need more than
    3e8 cost evaluations.

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> b = math.exp(-1)
    >>> math.isclose(discrete_staircase_cost(parse_cost("abs"), 1, 1, 1), 2 * b / (1 - b * b))
    True
    >>> mech = DiscreteStaircase(epsilon=1, sensitivity=4, r=2)            # against a direct sum of its pmf
    >>> k = np.arange(-400, 401)
    >>> math.isclose(discrete_staircase_cost(parse_cost("abs"), 1, 4, 2), float(np.sum(np.abs(k) * mech.pmf(k))))
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    r = nx.check_int_range(r, "r", 1, delta)
    try:
        return float(_costs(cost, eps, delta, np.array([r]))[0][0])
    except nx.SeriesDiverged:
        return math.inf


def _optimum(cost, eps: float, delta: int) -> tuple[int, float, bool, str]:
    rs = np.arange(1, delta + 1)
    values, exact, note = _costs(cost, eps, delta, rs)
    i = int(np.argmin(values))
    return int(rs[i]), float(values[i]), exact, note


def optimal_r(cost, epsilon, sensitivity) -> tuple[int, float]:
    """(r*, V(r*)) minimising Σ_i L(i) P_r(i) over r = 1..Δ (smallest r on ties).

    O(Δ) for |x|^m costs, O(Δ·K) cost evaluations otherwise (K = periods kept).

    >>> from optmech.costs import parse_cost
    >>> cost = parse_cost("abs")
    >>> costs = {r: discrete_staircase_cost(cost, 1, 4, r) for r in range(1, 5)}
    >>> r, v = optimal_r(cost, 1, 4)
    >>> r == min(costs, key=costs.get), v == costs[r]
    (True, True)
    """
    eps, delta = _check(epsilon, sensitivity)
    try:
        r, v, _, _ = _optimum(cost, eps, delta)
    except nx.SeriesDiverged:
        return 1, math.inf
    return r, v


def discrete_staircase_reference(cost, epsilon, sensitivity) -> Reference | None:
    """V* on ℤ as a :class:`Reference` named ``discrete_staircase`` with parameters {"r": r*};
    None unless the cost is symmetric and nondecreasing ([Geng13] Property 2.3).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> ref = discrete_staircase_reference(parse_cost("abs"), 1, 1)
    >>> ref.name, ref.parameters, math.isclose(ref.value, 2 * math.exp(-1) / (1 - math.exp(-2)))
    ('discrete_staircase', {'r': 1}, True)
    """
    eps, delta = _check(epsilon, sensitivity)
    if not nx.is_symmetric_nondecreasing(cost, delta, "integer"):
        return None
    try:
        r, v, exact, note = _optimum(cost, eps, delta)
    except nx.SeriesDiverged as exc:
        return Reference("discrete_staircase", math.inf, {"r": 1}, False, f"cost series diverges ({exc})")
    except ProblemTooLarge as exc:
        return Reference("discrete_staircase", math.nan, {"r": 0}, False, f"not computed: {exc}")
    thm = "Thm 2.12" if delta == 1 else "Thm 2.13"
    return Reference("discrete_staircase", v, {"r": r}, exact, f"optimum V* [Geng13, {thm}]; " + note)


# --------------------------------------------------------------------------------------------
# geometric = discrete staircase with Δ = 1 = discrete Laplace with λ = e^{-ε}


def _check_geometric(sensitivity) -> None:
    if isinstance(sensitivity, bool) or sensitivity != 1:
        raise SpecError(
            f"the geometric mechanism with parameter e^-epsilon is epsilon-DP only for sensitivity 1, got {sensitivity!r}; "
            "use the discrete Laplace (lambda = e^-epsilon/sensitivity) or the discrete staircase"
        )


def geometric_cost(cost, epsilon, sensitivity=1) -> float:
    """E L(X) for the two-sided geometric P(i) = ((1−b)/(1+b)) b^{|i|} [Geng13, Thm 2.12].

    Only defined for sensitivity 1 (SpecError otherwise).

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> b = math.exp(-1)
    >>> math.isclose(geometric_cost(parse_cost("square"), 1), 2 * b / (1 - b) ** 2)
    True
    """
    _check_geometric(sensitivity)
    return discrete_laplace_cost(cost, epsilon, 1)


def geometric_reference(cost, epsilon, sensitivity=1) -> Reference | None:
    """The geometric mechanism as a :class:`Reference` named ``geometric``: V* for Δ = 1 and a
    symmetric nondecreasing cost [Geng13, Thm 2.12]; None otherwise.

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> ref = geometric_reference(parse_cost("abs"), 1)
    >>> ref.name, math.isclose(ref.value, 2 * math.exp(-1) / (1 - math.exp(-2)))
    ('geometric', True)
    >>> geometric_reference(parse_cost("abs"), 1, 2) is None        # Δ = 2: not the optimum
    True
    """
    eps, delta = _check(epsilon, sensitivity)
    if delta != 1 or not nx.is_symmetric_nondecreasing(cost, delta, "integer"):
        return None
    ref = discrete_laplace_reference(cost, eps, 1, name="geometric")
    note = "optimum V* for Δ = 1 [Geng13, Thm 2.12]; " + ref.note.split("; ", 1)[-1]
    return Reference("geometric", ref.value, ref.parameters, ref.exact, note)


# --------------------------------------------------------------------------------------------
# mechanisms


class DiscreteStaircase(Mechanism):
    r"""Discrete staircase noise on ℤ for integer sensitivity Δ [Geng13, (2.17)].

    .. math:: P_r(kΔ + j) = a(r) b^k \,(j < r), \quad a(r) b^{k+1} \,(r \le j < Δ),\quad
              P_r(-i) = P_r(i)

    Parameters
    ----------
    epsilon : float in (0, 700]
    sensitivity : int >= 1
    r : int in [1, Δ]
        Number of points at the high level in each period (the central flat block has 2r − 1
        points).

    Notes
    -----
    ε-DP for every r: P(i) ≤ e^ε P(i + s) for |s| ≤ Δ.  Optimal at r = r* for symmetric
    nondecreasing costs [Geng13, Thm 2.13].  ``sample`` is a derived sampler
    (Y = GΔ + J with a sign and one rejection at 0; floating point).

    >>> import math
    >>> mech = DiscreteStaircase(epsilon=1, sensitivity=4, r=2)
    >>> p = mech.pmf(np.arange(0, 5))           # r = 2 high points, Δ − r = 2 points one step lower
    >>> bool(np.allclose(p[2:4] / p[0], math.exp(-1))), math.isclose(p[4] / p[0], math.exp(-1))
    (True, True)
    >>> math.isclose(float(mech.pmf(np.arange(-300, 301)).sum()), 1.0)
    True
    >>> from optmech.costs import parse_cost
    >>> DiscreteStaircase.optimal("abs", epsilon=1, sensitivity=4).r == optimal_r(parse_cost("abs"), 1, 4)[0]
    True
    """

    name = "discrete_staircase"
    lattice = True
    _param_names = ("r",)

    def __init__(self, *, epsilon, sensitivity, r) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self.r = nx.check_int_range(r, "r", 1, self.sensitivity)
        self._b, self._u = nx.b_and_u(self.epsilon)
        self._a = float(_a(self._b, self._u, self.sensitivity, self.r))

    @classmethod
    def optimal(cls, cost, *, epsilon, sensitivity) -> DiscreteStaircase:
        """The discrete staircase with r = r*(cost) (a spec string or a cost object)."""
        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        return cls(epsilon=epsilon, sensitivity=sensitivity, r=optimal_r(cost, epsilon, sensitivity)[0])

    def _split(self, i):
        n = np.abs(i)
        k = np.floor(n / self.sensitivity)
        return k, n - k * self.sensitivity

    def _pmf(self, i):
        k, j = self._split(i)
        return self._a * np.exp(-self.epsilon * k) * np.where(j < self.r, 1.0, self._b)

    def _sf(self, n):
        # For n = kΔ + j >= 0: P(X > n) = b^{k+1} m/(1-b) + a b^k [(r-j-1)^+ + b(Δ - max(j+1, r))],
        # m = a(r + b(Δ - r)) the one-sided mass of [0, Δ).  For n < 0: 1 - P(X > -n-1).
        nn = np.where(n >= 0, n, -n - 1.0)
        k, j = self._split(nn)
        bk = np.exp(-self.epsilon * k)
        delta, r, a, b = self.sensitivity, self.r, self._a, self._b
        period_mass = a * (r + b * (delta - r))
        rest = np.maximum(r - j - 1.0, 0.0) + b * (delta - np.maximum(j + 1.0, r))
        tail = bk * b * period_mass / self._u + a * bk * rest
        return np.where(n >= 0, tail, 1.0 - tail)

    def _sample(self, n, rng):
        delta, r, b = self.sensitivity, self.r, self._b
        p_low = r / (r + b * (delta - r))
        out = np.empty(0, dtype=np.int64)
        while out.size < n:
            m = int((n - out.size) * 1.1) + 16
            g = rng.geometric(self._u, size=m) - 1
            low = rng.random(m) < p_low
            j = np.where(low, np.floor(rng.random(m) * r), r + np.floor(rng.random(m) * (delta - r))).astype(np.int64)
            y = g * delta + j
            s = np.where(rng.random(m) < 0.5, -1, 1)
            keep = ~((s < 0) & (y == 0))
            out = np.concatenate([out, (s * y)[keep]])
        return out[:n]

    def _expected_cost(self, cost):
        return discrete_staircase_cost(cost, self.epsilon, self.sensitivity, self.r)

    def _exact_sampler(self):
        """Exact inversion of P_r with b = e^{−ε} bracketed in integers (ε's float read exactly):
        a window of whole periods and geometric tails of period Δ
        (:func:`optmech.exact.laws.discrete_staircase`)."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import discrete_staircase

        law = discrete_staircase(Fraction(self.epsilon), self.sensitivity, self.r)
        return ExactSampler(law.sample, dim=1, mechanism=repr(self),
                            privacy=self._exact_privacy("the law P_r [Geng13, (2.17)] exactly, eps read as the exact "
                                                        "rational value of its float"),
                            law="discrete staircase, exact inversion with geometric tails")

    def _logpmf(self, k):
        def log_mass(i):
            q, j = self._split(i)
            return math.log(self._a) - self.epsilon * (q + (j >= self.r))

        return self._on_lattice(k, log_mass)

    def _entropy(self):
        # −ln P(i) = −ln a + ε·level(i), level = k + [j >= r] for |i| = kΔ + j; summing the level
        # over one side, Σ_k [r a b^k k + (Δ − r) a b^{k+1} (k + 1)] = aΔ b/(1 − b)², and level(0) = 0
        a, b, u = self._a, self._b, self._u
        return -math.log(a) + self.epsilon * 2.0 * a * self.sensitivity * b / (u * u)


class Geometric(DiscreteLaplace):
    r"""Two-sided geometric noise P(i) = ((1−b)/(1+b)) b^{|i|}, b = e^{-ε} [Geng13, Thm 2.12].

    ε-DP for sensitivity 1 only (``sensitivity`` defaults to 1; anything else is a SpecError).
    Identical to ``DiscreteStaircase(r=1, sensitivity=1)`` and ``DiscreteLaplace(sensitivity=1)``.

    >>> import math
    >>> g = Geometric(epsilon=1)
    >>> b = math.exp(-1)
    >>> math.isclose(float(g.pmf(2)), (1 - b) / (1 + b) * b**2), g.sensitivity
    (True, 1)
    >>> Geometric(epsilon=1, sensitivity=2)
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: the geometric mechanism with parameter e^-epsilon is epsilon-DP only for sensitivity 1, got 2; ...
    """

    name = "geometric"

    def __init__(self, *, epsilon, sensitivity=1) -> None:
        _check_geometric(sensitivity)
        super().__init__(epsilon=epsilon, sensitivity=1)


def best_discrete_staircase_reference(cost, epsilon, sensitivity) -> Reference:
    """The discrete staircase P_r [Geng13, (2.17)] with the best r for ``cost``: V* when the cost is
    proven symmetric and nondecreasing (:func:`~optmech.mechanisms.discrete_staircase.discrete_staircase_reference`),
    else the cheapest P_r, an ε-DP upper bound (numeric).

    >>> from optmech.costs import parse_cost
    >>> ref = best_discrete_staircase_reference(parse_cost("where(x > 0, x, 2*abs(x))"), 1, 3)
    >>> ref.name, ref.parameters["r"] in (1, 2, 3), ref.note.startswith("upper bound")
    ('discrete_staircase', True, True)
    """
    eps, delta = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True)
    ref = discrete_staircase_reference(cost, eps, delta)
    if ref is not None:
        return ref
    try:
        r, v = optimal_r(cost, eps, delta)
    except ProblemTooLarge as exc:
        return Reference("discrete_staircase", math.nan, {"r": 0}, False, f"not computed: {exc}")
    return Reference("discrete_staircase", v, {"r": r}, False,
                     "upper bound: min over r of the discrete staircase P_r costs [Geng13, (2.17)], each epsilon-DP; "
                     "the cost is not proven symmetric and nondecreasing, so it is not known to be V*; numeric "
                     "(lattice period sums)")
