"""Tests of optmech.costs_nd: parsing, safety, values, enclosures (points and boxes), growth,
the bound outside a cube, value checks and the symmetry checks of d-dimensional costs."""

from __future__ import annotations

import pickle
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from optmech.costs import evaluate_tree, parse_cost, parse_expr
from optmech.costs_nd import NAMED_ND, CostND, as_cost_nd, parse_cost_nd
from optmech.errors import CostError
from optmech.problems.approx import point_costs

# Constants are exact binary fractions, so the mpmath reference below is the exact real value.
EXPR2 = [
    "abs(x1) + abs(x2)",
    "x1**2 + x2**2",
    "sqrt(x1**2 + x2**2)",
    "max(abs(x1), abs(x2))",
    "abs(x1) + 2*abs(x2)",
    "where(x1 > 0, x1, 2*abs(x1)) + abs(x2)",
    "exp(abs(x1)/8) + log(1 + x2**2)",
    "(abs(x1) + abs(x2))**1.5",
    "x1*x2 + x1**2 + x2**2",
    "min(abs(x1 - x2), 3) + 0.5*abs(x1 + x2)",
    "x1/(1 + x2**2)",
    "sqrt(abs(x1*x2)) + pi*abs(x1) + e",
    "(x1 > 1) & (x2 <= 3) | ~(x1 + x2 > -2)",
    "x1**3 - 2*x2",
    "1/x1 + x2**-2",
]
EXPR3 = [
    "abs(x1) + abs(x2) + abs(x3)",
    "x1**2 + x2**2 + x3**2",
    "max(max(abs(x1), abs(x2)), abs(x3))",
    "where((x1 > 0) & (x2 < 1), x3**2, abs(x1*x2*x3))",
    "exp(-(x1**2 + x2**2 + x3**2)/4)",
    "log(abs(x1) + abs(x2 - x3))",
]
CASES = [(t, 2) for t in EXPR2] + [(t, 3) for t in EXPR3] + [(n, d) for n in NAMED_ND for d in (1, 2, 3, 5)]


def _mp_value(cost: CostND, x) -> mpmath.mpf | None:
    """The exact real value of the cost at the float point x (60 digits), None where undefined."""
    cols = [mpmath.mpf(float(v)) for v in x]
    if cost.kind != "expr":
        a = [abs(v) for v in cols]
        return {"l1": lambda: mpmath.fsum(a), "linf": lambda: max(a), "l2sq": lambda: mpmath.fsum(v * v for v in a),
                "l2": lambda: mpmath.sqrt(mpmath.fsum(v * v for v in a)), "l1sq": lambda: mpmath.fsum(a) ** 2,
                "linfsq": lambda: max(a) ** 2}[cost.kind]()
    env = {f"x{i + 1}": v for i, v in enumerate(cols)}
    env.update(abs=abs, sqrt=mpmath.sqrt, exp=mpmath.exp, log=mpmath.log, min=min, max=max, pi=mpmath.pi, e=mpmath.e,
               where=lambda c, a, b: a if c else b)
    text = cost.spec.replace("~(", "(not ").replace("&", " and ").replace("|", " or ")  # on Python bools
    try:
        v = eval(text, {"__builtins__": {}}, env)  # the test's own constant text
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    v = mpmath.mpmathify(v)
    if isinstance(v, mpmath.mpc) or mpmath.isnan(v):
        return None
    return v


def _random_points(rng, n, d):
    x = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, (n, d))
    x[rng.random((n, d)) < 0.15] = 0.0
    k = rng.random(n) < 0.3
    x[k] = np.round(x[k])
    return x


def _random_boxes(rng, n, d):
    a = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-3, 4, (n, d))
    w = np.abs(rng.standard_normal((n, d))) * 10.0 ** rng.integers(-6, 3, (n, d))
    w[rng.random((n, d)) < 0.1] = 0.0
    lo, hi = a, a + w
    lo[rng.random((n, d)) < 0.05] = -np.inf
    hi[rng.random((n, d)) < 0.05] = np.inf
    return lo, hi


def _float_overflows(t: tuple, cols: tuple) -> np.ndarray:
    """Where some node of t overflows in float64 at the points: an infinite value from finite operands that is
    no real infinity (a division by a nonzero number, a power of a nonzero base, a sum, product or exp)."""
    flags = []

    def walk(u: tuple):
        kids = [walk(v) for v in u[1:] if isinstance(v, tuple) and u[0] != "const"]
        with np.errstate(all="ignore"):
            val = np.asarray(evaluate_tree(u, cols), dtype=float)
        if u[0] in ("add", "sub", "mul", "exp", "sq", "pow", "div"):
            finite = np.ones(np.shape(val), dtype=bool)
            for k in kids:
                finite &= np.isfinite(k)
            hit = np.isinf(val) & finite
            if u[0] in ("div", "pow"):  # x/0 and 0**−k are real infinities
                hit &= np.asarray(kids[1] if u[0] == "div" else kids[0]) != 0
            flags.append(hit)
        return val

    walk(t)
    out = np.zeros(np.shape(cols[0]), dtype=bool)
    for f in flags:
        out |= np.broadcast_to(f, out.shape)
    return out


def _points_inside(rng, lo, hi, k):
    """k points in each box, shape (k, n, d); the first two are the (finite-ised) corners."""
    u = rng.random((k,) + lo.shape)
    flo = np.where(np.isfinite(lo), lo, np.minimum(hi, 0) - 1e6 * rng.random(lo.shape) - 1)
    fhi = np.where(np.isfinite(hi), hi, np.maximum(lo, 0) + 1e6 * rng.random(lo.shape) + 1)
    t = flo + (fhi - flo) * u
    t[0], t[1] = flo, fhi
    return np.clip(t, lo, hi)


def _numpy_value(text, pts):
    env = {f"x{i + 1}": pts[:, i] for i in range(pts.shape[1])}
    env.update(abs=np.abs, sqrt=np.sqrt, exp=np.exp, log=np.log, pi=np.pi, e=np.e, where=np.where,
               min=np.minimum, max=np.maximum)
    with np.errstate(all="ignore"):
        return np.broadcast_to(np.asarray(eval(text, {"__builtins__": {}}, env), dtype=float), pts.shape[:1])


def _grid(d, r=3):
    axes = [np.arange(-r, r + 1)] * d
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)


# -- parsing ---------------------------------------------------------------------------------------
def test_named_costs_and_aliases():
    for text, kind in [("l1", "l1"), (" L2 ", "l2"), ("l2sq", "l2sq"), ("LINF", "linf"), ("abs", "l1"),
                       ("Square", "l2sq")]:
        c = parse_cost_nd(text, 3)
        assert (c.spec, c.dim, c.kind, str(c)) == (kind, 3, kind, kind) and c.is_named
    c = parse_cost_nd("  (abs(x1) +\n  abs(x2)) ", 2)
    assert (c.spec, c.kind, c.dim) == ("(abs(x1) + abs(x2))", "expr", 2) and not c.is_named
    assert parse_cost_nd("l1", 2) == CostND("l1", 2, "l1") != parse_cost_nd("l1", 3)


def test_dimension_checks():
    with pytest.raises(CostError) as info:
        parse_cost_nd("abs(x1) + abs(x3)", 2)
    assert str(info.value) == "cost expression uses x3 but the problem has dim 2 (variables x1..x2)"
    with pytest.raises(CostError, match="bare x .* dim 2 .*x1..x2"):
        parse_cost_nd("x**2", 2)
    with pytest.raises(CostError, match="uses x2 but the problem has dim 1"):
        parse_cost_nd("x1 + x2", 1)
    with pytest.raises(CostError, match="uses x2 but the problem has dim 1"):
        parse_cost("abs(x2)")
    for bad in (0, -1, 2.5, True, "2"):
        with pytest.raises(CostError, match="dim"):
            parse_cost_nd("l1", bad)
    with pytest.raises(CostError, match="dim"):
        CostND("l1", 0, "l1")
    with pytest.raises(CostError, match="kind"):
        CostND("l3", 2, "l3")
    with pytest.raises(CostError, match="spec"):
        CostND("l2", 2, "l1")


def test_one_dimensional_x_and_x1_agree():
    x = np.linspace(-4, 4, 33)
    a, b, c = parse_cost_nd("x**3 + abs(x)", 1), parse_cost_nd("x1**3 + abs(x1)", 1), parse_cost("x1**3 + abs(x)")
    np.testing.assert_array_equal(a(x[:, None]), b(x[:, None]))
    np.testing.assert_array_equal(a(x[:, None]), c(x))
    np.testing.assert_array_equal(c(x), parse_cost("x**3 + abs(x)")(x))
    assert np.array_equal(a.enclose_points(x[:, None])[1], c.enclose(x, x)[1])


@pytest.mark.parametrize(
    "text, why",
    [
        ("__import__('os')", "'_'"),
        ("x1.real", "attribute"),
        ("x2.__class__", "attribute"),
        ("().__class__.__bases__", "attribute"),
        ("(lambda y: y)(x1)", "lambda"),
        ("[x1 for x1 in range(3)]", "comprehension"),
        ("sum(x for x in [x1])", "unknown function 'sum'"),
        ("import os", "not a valid expression"),
        ("exec('x1')", "unknown function 'exec'"),
        ("getattr(x1, 'real')", "unknown function 'getattr'"),
        ("x1**1000", "exponent"),
        ("x2**(-100)", "exponent"),
        ("x1[0]", "subscript"),
        ("__builtins__", "'_'"),
        ("x1 if x2 > 0 else 0", "where"),
        ("(x1 := 2)", "assignment"),
        ("'l1'", "string"),
        ("x1 % x2", "Mod"),
        ("x1" + "+x2" * 60, "nesting"),
        ("x1 +", "not a valid expression"),
        ("", "empty"),
        ("1 - 2", "nonnegative"),
        ("y", "unknown cost 'y'"),
        ("l3", "unknown cost 'l3'"),
        ("x0 + x1", "unknown name 'x0'"),
        ("pow:2", "1-D"),
    ],
)
def test_rejected_expressions(text, why):
    with pytest.raises(CostError) as info:
        parse_cost_nd(text, 2)
    msg = str(info.value)
    assert "\n" not in msg and why in msg, msg


def test_as_cost_nd():
    c = parse_cost_nd("x1**2 + x2**2", 2)
    assert as_cost_nd(c, 2) is c and as_cost_nd("linf", 4) == parse_cost_nd("linf", 4)
    with pytest.raises(CostError, match="dim 2"):
        as_cost_nd(c, 3)
    with pytest.raises(CostError):
        as_cost_nd(2.0, 2)
    assert as_cost_nd(parse_cost("abs"), 1).kind == "l1" and as_cost_nd(parse_cost("square"), 1).kind == "l2sq"
    x = np.linspace(-3, 3, 13)
    for text in ("pow:1.5", "where(x > 0, x, 2*abs(x))"):
        np.testing.assert_allclose(as_cost_nd(parse_cost(text), 1)(x[:, None]), parse_cost(text)(x), rtol=1e-15)
    with pytest.raises(CostError, match="dim 2"):
        as_cost_nd(parse_cost("abs"), 2)


def test_cost_objects_are_values():
    c = parse_cost_nd("where(x1 > 0, x1, 2*abs(x1)) + abs(x2)", 2)
    d = pickle.loads(pickle.dumps(c))
    assert d == c and hash(d) == hash(c) and d(np.array([[-1.0, 2.0]]))[0] == 4.0
    assert len({parse_cost_nd("l1", 2), parse_cost_nd("abs", 2), parse_cost_nd("l1", 3)}) == 2


# -- values ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, d", [(t, 2) for t in EXPR2] + [(t, 3) for t in EXPR3])
def test_expressions_evaluate_like_numpy(text, d):
    pts = _random_points(np.random.default_rng(1), 300, d)
    got = parse_cost_nd(text, d)(pts)
    assert got.shape == (300,) and got.dtype == np.float64
    np.testing.assert_array_equal(got, _numpy_value(text.replace("~(", "1 - ("), pts))


def test_named_values():
    pts = _random_points(np.random.default_rng(2), 200, 4)
    ref = {"l1": np.abs(pts).sum(1), "l2": np.linalg.norm(pts, axis=1), "l2sq": (pts**2).sum(1),
           "linf": np.abs(pts).max(1), "l1sq": np.abs(pts).sum(1) ** 2, "linfsq": np.abs(pts).max(1) ** 2}
    for name in NAMED_ND:
        np.testing.assert_allclose(parse_cost_nd(name, 4)(pts), ref[name], rtol=1e-14)
    assert parse_cost_nd("l2", 2)(np.array([3, 4])) == 5.0  # one point of shape (d,)
    with pytest.raises(ValueError, match="shape"):
        parse_cost_nd("l1", 3)(pts)


# -- enclosures at points --------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_named_point_enclosures_match_point_costs(d):
    rng = np.random.default_rng(d)
    pts = np.concatenate([_grid(d, 3), rng.integers(-(2**20), 2**20, (500, d))])
    for name in ("l1", "l2", "l2sq", "linf"):  # the costs point_costs knows
        lo, hi = parse_cost_nd(name, d).enclose_points(pts)
        want_lo, want_hi = point_costs(name, pts)
        assert np.array_equal(lo, want_lo) and np.array_equal(hi, want_hi), name
        if name != "l2":
            assert np.array_equal(lo, hi)


@pytest.mark.parametrize("text, d", CASES)
def test_point_enclosures_contain_float_and_exact_values(text, d):
    c = parse_cost_nd(text, d)
    rng = np.random.default_rng(sum(map(ord, text)) + d)
    pts = np.concatenate([_random_points(rng, 150, d), _grid(d, 2)[:100]])
    lo, hi = c.enclose_points(pts)
    y = c(pts)
    assert lo.shape == y.shape and not np.isnan(lo).any() and not np.isnan(hi).any() and np.all(lo <= hi)
    assert np.all(np.isnan(y) | ((lo <= y) & (y <= hi)))
    with mpmath.workdps(60):
        for i in range(len(pts)):
            v = _mp_value(c, pts[i])
            if v is not None:
                assert lo[i] <= v <= hi[i], (text, pts[i], lo[i], v, hi[i])


# -- enclosures over boxes -------------------------------------------------------------------------
@pytest.mark.parametrize("text, d", CASES)
def test_box_enclosures_are_sound(text, d):
    c = parse_cost_nd(text, d)
    rng = np.random.default_rng(sum(map(ord, text)) * 7 + d)
    blo, bhi = _random_boxes(rng, 1500, d)
    L, H = c.enclose_box(blo, bhi)
    assert L.shape == (1500,) and not np.isnan(L).any() and not np.isnan(H).any() and np.all(L <= H)
    t = _points_inside(rng, blo, bhi, 6)
    y = c(t)
    ok = np.isnan(y) | ((L <= y) & (y <= H))
    assert ok.all(), (t[~ok][:3], y[~ok][:3])
    with mpmath.workdps(60):
        for i in range(100):
            v = _mp_value(c, t[2, i])
            if v is not None:
                assert L[i] <= v <= H[i], (text, t[2, i], L[i], v, H[i])


def test_box_enclosures_with_unbounded_boxes():
    lo, hi = np.array([[5.0, -np.inf]]), np.array([[np.inf, np.inf]])
    want = {"l1": 5.0, "l2": 5.0, "linf": 5.0, "l2sq": 25.0, "l1sq": 25.0, "linfsq": 25.0}
    for name in NAMED_ND:
        L, H = parse_cost_nd(name, 2).enclose_box(lo, hi)
        assert want[name] * (1 - 1e-15) <= L[0] <= want[name] and H[0] == np.inf
    L, H = parse_cost_nd("x1**2 + x2**2", 2).enclose_box(lo, hi)
    assert 25.0 * (1 - 1e-13) <= L[0] <= 25.0 and H[0] == np.inf
    L, H = parse_cost_nd("x1**2 - x2**2", 2).enclose_box(lo, hi)
    assert L[0] == -np.inf and H[0] == np.inf
    L, H = parse_cost_nd("exp(-x1) + 1/(1 + x2**2)", 2).enclose_box(lo, hi)  # bounded on this box
    assert -1e-300 <= L[0] <= 0.0 and 1.0 + np.exp(-5.0) <= H[0] < 1.01
    L, H = parse_cost_nd("l1", 3).enclose_box(np.full(3, -np.inf), np.full(3, np.inf))  # (d,) broadcast
    assert L == 0.0 and H == np.inf
    L, H = parse_cost_nd("abs(x1)", 2).enclose_box(np.array([[np.nan, 0.0]]), np.array([[1.0, 0.0]]))
    assert L[0] == 0.0 and H[0] == np.inf  # NaN reads as unbounded


def test_named_box_enclosure_is_tight():
    lo, hi = np.array([[-1.0, 2.0, -5.0]]), np.array([[3.0, 4.0, -2.0]])
    assert parse_cost_nd("l1", 3).enclose_box(lo, hi) == (4.0, 12.0)
    assert parse_cost_nd("linf", 3).enclose_box(lo, hi) == (2.0, 5.0)
    assert parse_cost_nd("l2sq", 3).enclose_box(lo, hi) == (8.0, 50.0)
    L, H = parse_cost_nd("l2", 3).enclose_box(lo, hi)
    assert np.nextafter(np.sqrt(8.0), 0) == L[0] and H[0] == np.nextafter(np.sqrt(50.0), 9)


_LEAVES = st.sampled_from(["x1", "x2", "x3", "x1", "0.1", "2", "3.5", "pi", "1e-3", "0", "-1"])
_UNARY = ["-({})", "abs({})", "sqrt({})", "exp({})", "log({})", "({})**2", "({})**3", "({})**-1", "({})**0.5"]
_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / {})", "min({}, {})", "max({}, {})", "({})**({})",
           "where({} > {}, x2, 1)", "(({} <= {}) | (x3 == 0))"]


def _extend(children):
    return st.one_of(
        st.tuples(st.sampled_from(_UNARY), children).map(lambda p: p[0].format(p[1])),
        st.tuples(st.sampled_from(_BINARY), children, children).map(lambda p: p[0].format(p[1], p[2])),
        st.tuples(children, children, children).map(lambda p: f"where({p[0]} < {p[1]}, {p[2]}, {p[0]})"),
    )


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.recursive(_LEAVES, _extend, max_leaves=8), seed=st.integers(0, 2**32 - 1))
def test_box_enclosure_is_sound_for_random_expressions(text, seed):
    try:
        c = parse_cost_nd(text, 3)
    except CostError:  # a constant expression that is negative, NaN or infinite
        assume(False)
    rng = np.random.default_rng(seed)
    blo, bhi = _random_boxes(rng, 300, 3)
    big = rng.random(300) < 0.2  # far out, where sums of overflowing terms happen
    blo[big] *= 1e200
    bhi[big] *= 1e200
    L, H = c.enclose_box(blo, bhi)
    assert not np.isnan(L).any() and not np.isnan(H).any() and np.all(L <= H)
    pts = _points_inside(rng, blo, bhi, 6)
    y = c(pts)
    # the enclosures are of the real function: where a float operation overflows (exp(x1)·exp(x2) = inf·0 = NaN
    # for very negative x1 and very positive x2, whose real product is positive) the float value may take the
    # other branch of a where (test_costs.py::test_enclosure_is_of_the_real_function_not_of_float_overflow)
    over = _float_overflows(parse_expr(text, 3), tuple(pts[..., i] for i in range(3)))
    assert np.all(np.isnan(y) | over | ((L <= y) & (y <= H))), text
    p = _points_inside(rng, blo, bhi, 3)[2]
    pl, ph = c.enclose_points(p)
    y = c(p)
    assert np.all(np.isnan(y) | ((pl <= y) & (y <= ph))), text


def test_enclosures_are_fast():
    c = parse_cost_nd("sqrt(abs(x1)) + 0.1*x2**2 + abs(x3)", 3)
    lo = np.random.default_rng(0).uniform(-100, 100, (300_000, 3))
    t0 = time.perf_counter()
    c.enclose_box(lo, lo + 1e-3)
    c.enclose_points(lo)
    parse_cost_nd("l2", 3).enclose_box(lo, lo + 1e-3)
    assert time.perf_counter() - t0 < 2.0


# -- the bound outside a cube ----------------------------------------------------------------------
@pytest.mark.parametrize("text, d, want", [
    ("l1", 2, "R"), ("l2", 3, "R"), ("linf", 4, "R"), ("l2sq", 2, "R2"), ("abs(x1) + abs(x2)", 2, "R"),
    ("x1**2 + x2**2 + x3**2", 3, "R2"), ("max(abs(x1), abs(x2))", 2, "R"), ("sqrt(x1**2 + x2**2)", 2, "R"),
    ("abs(x1) + 2*abs(x2)", 2, "R"), ("where(x1 > 0, x1, 2*abs(x1)) + abs(x2)", 2, "R"),
    ("min(abs(x1), 3) + min(abs(x2), 3)", 2, None), ("abs(x1 - x2) + 1", 2, None),
    ("where(x2 > 0, x1**2, abs(x1)) + abs(x3)", 3, None), ("abs(x1) + abs(x2) + abs(x3) + abs(x4)", 4, "R"),
])
@pytest.mark.parametrize("R", [0.0, 1.0, 2.5, 7.0, 1e4])
def test_outside_cube_min_is_a_lower_bound(text, d, want, R):
    c = parse_cost_nd(text, d)
    m = c.outside_cube_min(R)
    assert m >= 0.0
    rng = np.random.default_rng(int(R) + d)
    x = rng.standard_normal((4000, d)) * 10.0 ** rng.integers(-2, 4, (4000, d))
    i, s = rng.integers(0, d, 4000), rng.choice([-1.0, 1.0], 4000)
    u = 10.0 ** rng.uniform(-12, 3, 4000)
    x[np.arange(4000), i] = s * (R + u)
    x[:50] = 0.0
    x[np.arange(50), i[:50]] = s[:50] * np.nextafter(R, np.inf)  # just outside, the rest zero
    assert np.all(np.max(np.abs(x), axis=1) > R)
    y = c(x)
    assert np.all(np.isnan(y) | (y >= m)), (text, R, m, y.min())
    if want is not None:  # tight: the infimum is R (or R²) at x = R e_1
        target = R if want == "R" else R * R
        assert target * (1 - 1e-12) <= m <= target


def test_outside_cube_min_edges():
    assert parse_cost_nd("l1", 2).outside_cube_min(-3.0) == 0.0
    assert parse_cost_nd("abs(x1) + abs(x2)", 2).outside_cube_min(-3.0) == 0.0
    m = parse_cost_nd("l2sq", 2).outside_cube_min(0.1)  # 0.1·0.1 rounds up in float64
    assert Fraction(m) <= Fraction(0.1) ** 2 and m == np.nextafter(0.1 * 0.1, 0)
    assert parse_cost_nd("l2sq", 2).outside_cube_min(1e200) == np.finfo(float).max
    assert parse_cost_nd("x1**2", 2).outside_cube_min(3.0) == 0.0  # x2 alone may be large: x1 = 0 there
    with pytest.raises(ValueError):
        parse_cost_nd("l1", 2).outside_cube_min(float("nan"))


# -- growth ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, d", [
    ("l1", 3), ("l2", 2), ("linf", 4), ("l2sq", 2), ("abs(x1) + abs(x2)", 2), ("x1**2 + x2**2", 2),
    ("sqrt(x1**2 + x2**2)", 2), ("exp(abs(x1)/10)*x2**2", 2), ("log(1 + x1**2 + x2**2)**2.5", 2),
    ("1/(1 + x1**2 + x2**2)", 2), ("x1/(1 + abs(x2))", 2), ("min(abs(x1), 3) + abs(x2)", 2),
    ("where(x1 > 0, x1, 2*abs(x1)) + abs(x2)", 2), ("x1**3*exp(abs(x2)) + abs(x3)", 3), ("x**2", 1),
])
def test_growth_bound_holds(text, d):
    c = parse_cost_nd(text, d)
    g = c.growth()
    assert g is not None
    C, P, R = g
    assert C >= 0 and P >= 0 and R >= 0
    rng = np.random.default_rng(3)
    direc = rng.standard_normal((3000, d))
    direc /= np.abs(direc).sum(axis=1, keepdims=True)
    r = np.concatenate([np.linspace(0, 30, 1000), np.geomspace(1e-3, 300, 2000)])
    x = direc * r[:, None]
    y = c(x)
    n1 = np.abs(x).sum(axis=1)
    with np.errstate(over="ignore"):
        assert np.all(np.abs(y) <= C * (1 + n1) ** P * np.exp(R * n1)), text


def test_growth_values():
    assert parse_cost_nd("l1", 2).growth() == (1.0, 1.0, 0.0)
    assert parse_cost_nd("l2sq", 3).growth() == (1.0, 2.0, 0.0)
    assert parse_cost_nd("abs(x1) + abs(x2)", 2).growth() == (2.0, 1.0, 0.0)
    assert parse_cost_nd("min(abs(x1), 3) + min(abs(x2), 1)", 2).growth() == (4.0, 0.0, 0.0)
    assert parse_cost_nd("exp(abs(x1)/10)", 2).growth()[2] == pytest.approx(0.1)


@pytest.mark.parametrize("text", ["exp(x1**2)", "sqrt(x1)", "x2**1.5", "1/x1", "exp(exp(abs(x2)))", "x1**x2",
                                  "log(abs(x1))", "1/(abs(x1) + abs(x2))"])
def test_growth_unproven_is_none(text):
    assert parse_cost_nd(text, 2).growth() is None


# -- value checks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, what", [("x1 - 1 + abs(x2)", "negative"), ("log(abs(x1)) + x2**2", "infinite"),
                                        ("sqrt(x1) + x2", "NaN")])
def test_check_values_raises(text, what):
    pts = _grid(2, 2).astype(float)
    with pytest.raises(CostError, match=rf"{what}.* at x=\(-?[0-9.]+, -?[0-9.]+\) on the grid") as info:
        parse_cost_nd(text, 2).check_values(pts)
    assert "\n" not in str(info.value)


def test_check_values_returns_values():
    pts = _grid(3, 2)
    y = parse_cost_nd("x1**2 + x2**2 + x3**2", 3).check_values(pts, where="the cells")
    np.testing.assert_array_equal(y, (pts**2).sum(1))
    with pytest.raises(CostError, match="infinite .* on the box"):
        parse_cost_nd("l1", 2).check_values(np.array([[0.0, np.inf]]), where="the box")


# -- symmetry --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, d, invariant, even", [
    ("abs(x1) + abs(x2)", 2, True, True),
    ("x1**2 + x2**2", 2, True, True),
    ("max(abs(x1), abs(x2))", 2, True, True),
    ("sqrt(x1**2 + x2**2)", 2, True, True),
    ("abs(x1) + abs(x2) + abs(x3)", 3, True, True),
    ("x1**2 + x2**2 + x3**2", 3, True, True),
    ("abs(x1) + 2*abs(x2)", 2, False, True),
    ("where(x1 > 0, x1, 2*abs(x1)) + abs(x2)", 2, False, False),
    ("abs(x1) + abs(x2) + 2*abs(x3)", 3, False, True),  # only the cyclic shift detects it
    ("abs(x1 - x2)", 2, False, True),
    ("x1*x2 + x1**2 + x2**2", 2, False, True),
    ("where(x2 > 0, 1, 2) + abs(x1)", 2, False, False),
    ("x**2", 1, True, True),
    ("where(x > 0, x, 2*abs(x))", 1, False, False),
])
def test_invariance_and_evenness(text, d, invariant, even):
    c = parse_cost_nd(text, d)
    g = _grid(d, 3)
    assert c.is_invariant(g) is invariant and c.is_even(g) is even
    assert c.is_invariant(g.astype(float) / 4) is invariant


def test_named_costs_are_symmetric_without_evaluation():
    for name in NAMED_ND:
        c = parse_cost_nd(name, 3)
        assert c.is_invariant(np.zeros((0, 3))) and c.is_even(np.zeros((0, 3)))
