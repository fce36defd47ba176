"""Property tests of the certificates over random instances of every problem builder.

For each generated instance optmech solves, and the test re-derives what the result claims in
exact rational arithmetic (``fractions.Fraction``), independently of the floating-point code:

* every lower bound issued (:func:`optmech.certify.dual_lower_bound`, recorded with
  :func:`optmech.certify.recording`) is re-derived by weak duality from the LP's data and the
  repaired multipliers: the multipliers have the signs the rows allow (so the dual is feasible;
  the reduced costs are its exact slacks) and the exact bound is at least the certified value;
* the reported lower bound is backed by one of those certificates, and lower <= upper;
* the repaired primal mechanism is exactly private: on ℤ or on cells of ℝ every pair of indices
  within the sensitivity satisfies w(k) <= e^ε·w(k') with a rational lower bound of e^ε (window
  plus two tail periods each side; beyond, the tails repeat the last period scaled by β); for
  (ε,δ) every hockey-stick divergence, summed exactly, is <= δ; on ℤ^d every listed pair.

Instances: random ε, δ, Δ; d <= 3; costs drawn from a small grammar that includes asymmetric,
non-monotone and truncated costs.  The default run draws a fixed, derandomised subset; set
``OPTMECH_PROPERTY_EXAMPLES=N`` (e.g. 1000) for the extended run, which is also marked ``slow``.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optmech
from optmech import certify
from optmech.spec import ApproxDP, Continuous, IntegerLattice, Problem, PureDP

EXTENDED = int(os.environ.get("OPTMECH_PROPERTY_EXAMPLES", "0"))


def _settings(default: int):
    n = EXTENDED or default
    return settings(max_examples=n, deadline=None, derandomize=not EXTENDED, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# -- instance grammar ------------------------------------------------------------------------------

coef = st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0])


def real(lo: float, hi: float):
    """A float in [lo, hi] with 3 decimals (so the spaces are large but the solves stay tame)."""
    return st.floats(lo, hi, allow_nan=False).map(lambda v: round(v, 3))


@st.composite
def costs_1d(draw) -> str:
    kind = draw(st.sampled_from(["abs", "square", "pow", "asym", "asym_mixed", "nonmonotone", "truncated", "shifted"]))
    a, b = draw(coef), draw(coef)
    if kind == "abs":
        return f"{a}*abs(x)"
    if kind == "square":
        return f"{a}*x**2"
    if kind == "pow":
        return f"abs(x)**{draw(st.sampled_from([0.5, 1.5, 3]))}"
    if kind == "asym":
        return f"where(x > 0, {a}*x, {b}*abs(x))"
    if kind == "asym_mixed":
        return f"where(x > 0, {a}*x**2, {b}*abs(x))"
    if kind == "nonmonotone":      # rises to 1 at |x| = 1, dips to 0.5 at |x| = 2, rises again
        return "min(abs(x), abs(abs(x) - 2) + 0.5)"
    if kind == "truncated":
        return f"min(abs(x), {draw(st.sampled_from([3, 5, 8]))})"
    return f"abs(x) + {a}*(abs(x) > 1)"   # a step: discontinuous, monotone


@st.composite
def pure_1d(draw) -> Problem:
    integer = draw(st.booleans())
    eps = draw(real(0.5, 3.0))
    sens = draw(st.integers(1, 3)) if integer else draw(st.sampled_from([0.5, 1.0, 2.0]))
    dom = IntegerLattice() if integer else Continuous(draw(st.sampled_from([None, 4, 8])))
    return Problem(privacy=PureDP(eps), cost=draw(costs_1d()), sensitivity=sens, domain=dom)


@st.composite
def approx_1d(draw) -> Problem:
    eps = draw(st.one_of(st.just(0.0), real(0.05, 1.5)))
    delta = draw(real(0.03, 0.3))
    cost = draw(st.sampled_from(["abs", "square", "where(x > 0, 2*x, abs(x))", "min(abs(x), abs(abs(x) - 2) + 0.5)"]))
    return Problem(privacy=ApproxDP(eps, delta), cost=cost, sensitivity=draw(st.integers(1, 3)), domain=IntegerLattice())


@st.composite
def nd(draw) -> Problem:
    d = draw(st.integers(2, 3))
    approx = draw(st.booleans())
    if approx:
        eps, delta = draw(real(0.2, 1.0)), draw(real(0.1, 0.3))
        cost = draw(st.sampled_from(["l1", "l2sq", "linf"]))
        return Problem(privacy=ApproxDP(eps, delta), cost=cost, sensitivity=1, domain=IntegerLattice(), dim=d)
    eps = draw(real(1.5, 3.0))
    weighted = "+".join(f"{w}*abs(x{i + 1})" for i, w in enumerate([1, 2, 1][:d]))
    asym = "where(x1 > 0, 2*x1, abs(x1))" + "".join(f" + abs(x{i + 1})" for i in range(1, d))
    cost = draw(st.sampled_from(["l1", "l2sq", "linf", weighted] + ([asym] if d == 2 else [])))
    if d == 2 and draw(st.booleans()):      # ℝ² in cells (the cell LPs; resolution 2)
        norm = draw(st.sampled_from(["l1", "linf"]))
        return Problem(privacy=PureDP(eps), cost=draw(st.sampled_from(["l1", "l2sq"])), sensitivity=1.0,
                       domain=Continuous(2), dim=2, norm=norm)
    sens = draw(st.integers(1, 2)) if d == 2 else 1
    return Problem(privacy=PureDP(eps), cost=cost, sensitivity=sens, domain=IntegerLattice(), dim=d)


# -- exact checks ----------------------------------------------------------------------------------

def exp_lower(x: float) -> Fraction:
    """A rational r <= e^x (math.exp is within 1 ulp; 2⁻⁵⁰ relative covers it)."""
    v = Fraction(math.exp(x))
    return v - v / 2**50


def check_lower_certificates(log: list, reported: float) -> None:
    assert log, "no certificate was issued"
    best = None
    for lp, y, cert in log:
        exact = certify.exact_dual_bound(lp, y)          # raises on a sign violation
        assert exact >= Fraction(cert.value), (float(exact), cert.value)
        best = exact if best is None else max(best, exact)
    assert Fraction(reported) <= best, (reported, float(best))


def _weights_exact(mech) -> tuple[int, list[Fraction]]:
    """The mechanism's weights on its window plus two tail periods each side, as exact rationals."""
    W = mech.grid.W
    beta = Fraction(mech.beta)
    win = [Fraction(float(v)) for v in mech.weights]
    left = [Fraction(float(v)) for v in mech.left_gen]
    right = [Fraction(float(v)) for v in mech.right_gen]
    out_left = []
    for m in (2, 1):
        out_left += [g * beta**m for g in left]      # k_lo − mW .. k_lo − (m−1)W − 1
    out_right = []
    for m in (1, 2):
        out_right += [g * beta**m for g in right]
    return mech.k_lo - 2 * W, out_left + win + out_right


def _as_integers(values: list[Fraction]) -> list[int]:
    """Dyadic rationals (floats and their products) scaled by one common power of two: exact integers."""
    den = max(v.denominator for v in values)
    assert den & (den - 1) == 0, "not dyadic"
    return [v.numerator * (den // v.denominator) for v in values]


def _window_min(a: list[int], W: int) -> list[int]:
    """min(a[j] for |j − i| <= W), for every i (monotone deque, O(n), exact integers)."""
    from collections import deque

    n, out, q = len(a), [0] * len(a), deque()
    for j in range(n + W):
        if j < n:
            while q and a[q[-1]] >= a[j]:
                q.pop()
            q.append(j)
        i = j - W
        if i >= 0:
            while q[0] < i - W:
                q.popleft()
            out[i] = a[q[0]]
    return out


def check_pure_private(mech, epsilon: float) -> None:
    """w(k) <= e^ε·w(k') for every |k − k'| <= W: exact, on the window and two tail periods."""
    W = mech.grid.W
    _, w = _weights_exact(mech)
    E = exp_lower(epsilon)
    a = _as_integers(w)
    lo = _window_min(a, W)
    for i, (ai, mi) in enumerate(zip(a, lo)):
        assert ai * E.denominator <= E.numerator * mi, (i, float(w[i]))


def check_approx_private(mech, epsilon: float, delta: float) -> None:
    """Σ_k max(0, P(k) − e^ε P(k + s)) <= δ for every shift 1 <= |s| <= Δ, exact (finite support)."""
    assert mech.beta == 0.0                     # the (ε,δ) mechanisms have finite support
    w = [Fraction(float(v)) for v in mech.weights]
    total = sum(w)
    E = exp_lower(epsilon) if epsilon > 0 else Fraction(1)
    n, D = len(w), mech.grid.W
    for s in list(range(1, D + 1)) + list(range(-D, 0)):
        hs = sum(max(Fraction(0), w[k] - E * (w[k + s] if 0 <= k + s < n else 0)) for k in range(n))
        assert hs / total <= Fraction(delta), (s, float(hs / total), delta)


def _nd_points(mech: dict) -> dict[tuple, Fraction]:
    """Every point of a ``lattice_pmf_nd`` with its mass, the orbits expanded."""
    import itertools

    d = mech["dim"]
    sym = mech["symmetry"]
    out: dict[tuple, Fraction] = {}
    for rep, m in zip(mech["representatives"], mech["mass"]):
        orbit = {tuple(rep)}
        if sym != "none":
            perms = itertools.permutations(range(d)) if sym == "signed permutations" else [tuple(range(d))]
            orbit = set()
            for perm in perms:
                base = [rep[p] for p in perm]
                for signs in itertools.product((1, -1), repeat=d):
                    orbit.add(tuple(s * v for s, v in zip(signs, base)))
        for x in orbit:
            out[x] = Fraction(m)
    return out


def check_nd_private(mech: dict, epsilon: float, delta: float, sensitivity: int) -> None:
    import itertools

    d = mech["dim"]
    pts = _nd_points(mech)
    E = exp_lower(epsilon) if epsilon > 0 else Fraction(1)
    shifts = [s for s in itertools.product(range(-sensitivity, sensitivity + 1), repeat=d)
              if 0 < sum(map(abs, s)) <= sensitivity]
    if delta == 0:      # every listed pair (the tails beyond the listed points are bounded by the rule)
        for x, px in pts.items():
            for s in shifts:
                y = tuple(a + b for a, b in zip(x, s))
                if y in pts:
                    assert px <= E * pts[y], (x, y)
        return
    total = sum(pts.values())
    for s in shifts:                         # finite support: the hockey stick is an exact finite sum
        hs = sum(max(Fraction(0), px - E * pts.get(tuple(a + b for a, b in zip(x, s)), Fraction(0)))
                 for x, px in pts.items())
        assert hs / total <= Fraction(delta), (s, float(hs / total))


#: Seconds per solve: a refinement loop stopped early still returns a certified (wider) bracket.
TIME_LIMIT = 5.0


def _solve(problem: Problem):
    """Solve with a time limit; a solve stopped by it claims nothing, and the case is discarded."""
    from hypothesis import reject

    from optmech.errors import SolveFailed

    with certify.recording() as log:
        try:
            r = optmech.solve(problem, time_limit=TIME_LIMIT)
        except SolveFailed as exc:
            assert "time_limit" in str(exc), exc
            reject()
    return r, log


def _check_result(r, log) -> None:
    assert r.certified, r.message
    assert r.lower_bound <= r.upper_bound
    check_lower_certificates(log, r.lower_bound)


# -- the properties ----------------------------------------------------------------------------------

@_settings(12)
@given(pure_1d())
def test_pure_1d_certificates_hold_exactly(problem):
    r, log = _solve(problem)
    _check_result(r, log)
    check_pure_private(r.mechanism.law, problem.privacy.epsilon)


@_settings(10)
@given(approx_1d())
def test_approx_1d_certificates_hold_exactly(problem):
    r, log = _solve(problem)
    _check_result(r, log)
    check_approx_private(r.mechanism.law, problem.privacy.epsilon, problem.privacy.delta)


@_settings(6)
@given(nd())
def test_nd_certificates_hold_exactly(problem):
    r, log = _solve(problem)
    _check_result(r, log)
    delta = getattr(problem.privacy, "delta", 0.0)
    nd = r.mechanism_dict()
    if nd and nd["kind"] == "lattice_pmf_nd":
        check_nd_private(nd, problem.privacy.epsilon, delta, int(problem.sensitivity))


@_settings(4)
@given(st.sampled_from(["poisson:3:0:10", "uniform:0:6", "gaussian:0:3:-8:8", "poisson:1.5:0:6"]), real(0.5, 3.0),
       st.integers(1, 3), st.one_of(st.just(0.0), real(0.05, 0.2)))
def test_wasserstein_certificates_hold_exactly(inp, eps, m, delta):
    from optmech.inputs import parse_input_spec
    from optmech.drive import solve_wasserstein

    with certify.recording() as log:
        r = solve_wasserstein(parse_input_spec(inp), eps, m, delta=delta)
    _check_result(r, log)
    if delta == 0:
        check_pure_private(r.mechanism.law, eps)
    else:
        check_approx_private(r.mechanism.law, eps, delta)


@_settings(3)
@given(real(0.3, 3.0), st.sampled_from(["square", "abs", "where(x > 0, x**2, abs(x))"]),
       st.sampled_from(["integer", "continuous"]))
def test_lipschitz_certificates_hold_exactly(eps, cost, domain):
    from optmech.drive import solve_lipschitz

    with certify.recording() as log:
        r = solve_lipschitz(eps, cost, domain=domain, resolution=20 if domain == "continuous" else None)
    _check_result(r, log)
    check_lipschitz_private(r.mechanism_dict(), eps)


def check_lipschitz_private(mech: dict, epsilon: float) -> None:
    """ε-Lipschitz: adjacent knots (log-linear in between, or lattice points) differ by at most
    e^{ε·spacing} either way, exactly; the exponential tails decay at a rate <= ε."""
    assert Fraction(mech["tail_rate"]) <= Fraction(epsilon)
    x = [Fraction(v) for v in mech["knots"]]
    v = [Fraction(w) for w in mech["values"]]
    assert all(w > 0 for w in v)
    for i in range(len(v) - 1):
        h = x[i + 1] - x[i]
        assert h > 0
        e = Fraction(math.exp(epsilon * float(h)))
        e -= e / 2**48                     # below e^{ε·h}: covers exp's and the product's rounding
        assert v[i] <= e * v[i + 1] and v[i + 1] <= e * v[i], (i, float(v[i]), float(v[i + 1]))


# -- the checkers reject what they must ---------------------------------------------------------------

def test_lipschitz_check_rejects_a_steep_pmf():
    with pytest.raises(AssertionError):
        check_lipschitz_private({"tail_rate": 1.0, "knots": [0.0, 1.0], "values": [1.0, math.exp(1.0) * 1.001]}, 1.0)
    check_lipschitz_private({"tail_rate": 1.0, "knots": [0.0, 1.0], "values": [1.0, math.exp(1.0) * 0.999]}, 1.0)


def test_exact_checks_reject_broken_certificates_and_pmfs():
    r, log = _solve(Problem(privacy=PureDP(1.0), cost="abs", sensitivity=2, domain=IntegerLattice()))
    lp, y, cert = log[-1]
    # a multiplier with the wrong sign on a one-sided row is refused
    one_sided = np.flatnonzero(~np.isfinite(lp.row_lower))
    if one_sided.size:
        bad = y.copy()
        bad[one_sided[0]] = 1.0
        with pytest.raises(ValueError, match="wrong sign"):
            certify.exact_dual_bound(lp, bad)
    # a claimed value above what the multipliers prove fails the comparison
    assert certify.exact_dual_bound(lp, y) < Fraction(cert.value) + Fraction(1, 10**6)
    assert not certify.exact_dual_bound(lp, y) >= Fraction(cert.value * (1 + 1e-6) + 1e-6)
    # a pmf with one weight raised to 1.02·e^ε times its neighbour's is refused
    import dataclasses

    mech = r.mechanism.law
    w = mech.weights.copy()
    mid = len(w) // 2
    w[mid] = w[mid + 1] * math.exp(1.0) * 1.02
    with pytest.raises(AssertionError):
        check_pure_private(dataclasses.replace(mech, weights=w), 1.0)
    check_pure_private(mech, 1.0)
    # a finite pmf whose hockey stick exceeds δ is refused
    a = dataclasses.replace(mech, weights=np.array([1.0, 0.0, 0.0, 1.0]), beta=0.0)
    with pytest.raises(AssertionError):
        check_approx_private(a, 1.0, 0.1)


@pytest.mark.slow
@pytest.mark.skipif(not EXTENDED, reason="set OPTMECH_PROPERTY_EXAMPLES=N for the extended run")
def test_extended_run_is_configured():
    assert EXTENDED >= 1
