"""Outward-rounded interval arithmetic on cost trees: rounding helpers, point and interval
evaluators, enclosures over boxes (with derivatives and breakpoint splitting).

Every enclosure holds for the exact real value; the natural one (operation by operation) also for
the float64 evaluation along the same operations, the tightened ones (a piece proven monotone,
enclosed at its ends) for the real value only (see ``Cost.enclose``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache, reduce

import numpy as np


INF = np.inf

#: Relative outward widening.  ``WIDEN_ROUNDED`` (>= 1 ulp after its own rounding) follows correctly rounded
#: operations (+ − × ÷ sqrt).  ``WIDEN_LIBM`` (16 ulp) follows exp, log and pow, whose vectorised NumPy
#: versions (SVML on AVX-512) are only within 4 ulp; it covers the exact value at an end point and
#: the float value at any inner point.  ``WIDEN_EXACT`` (8 ulp) is for enclosing exact values only.
#: ``TINY`` covers subnormal results; ``CAP`` is the lower end of an overflowed result.
WIDEN_ROUNDED, WIDEN_LIBM, WIDEN_EXACT, TINY, CAP = 2.0**-50, 2.0**-48, 2.0**-49, 2.0**-1060, 2.0**1023


def round_down(v, c: float = WIDEN_ROUNDED):
    """A lower bound of every value within relative c of v; +inf → CAP (v is never NaN here)."""
    r = np.abs(v)
    r *= c  # in place for arrays
    r += TINY
    out = r if isinstance(r, np.ndarray) else None
    return np.fmin(np.subtract(v, r, out=out), CAP, out=out)


def round_up(v, c: float = WIDEN_ROUNDED):
    """An upper bound of every value within relative c of v; −inf → −CAP."""
    r = np.abs(v)
    r *= c
    r += TINY
    out = r if isinstance(r, np.ndarray) else None
    return np.fmax(np.add(v, r, out=out), -CAP, out=out)


def add_rounded(a, b, lower: bool):
    """Lower or upper end of a + b, left unwidened when the float sum is exact (TwoSum).

    >>> lo, hi = add_rounded(np.array(0.1), np.array(0.2), True), add_rounded(np.array(0.1), np.array(0.2), False)
    >>> bool(lo < hi), float(hi) == 0.1 + 0.2              # the float sum is inexact: the ends straddle it
    (True, True)
    >>> float(add_rounded(np.array(1.0), np.array(2.0), True))  # exact sums stay unwidened
    3.0
    """
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)  # exact a + b − s; NaN on overflow
    return np.where(err >= 0, s, round_down(s)) if lower else np.where(err <= 0, s, round_up(s))


def fraction_up(v: Fraction) -> float:
    """Smallest float >= the exact value v (inf when too large)."""
    try:
        f = float(v)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= v else math.nextafter(f, math.inf)


def clean_interval(lo, hi):
    """Replace NaN by −inf (lower end) and +inf (upper end)."""
    return np.where(np.isnan(lo), -INF, lo), np.where(np.isnan(hi), INF, hi)


def mig_mag(lo, hi):
    """min and max of |t| over [lo, hi] (exact).

    >>> mig_mag(np.array([-1.0, 2.0]), np.array([3.0, 5.0]))      # min and max of |t|
    (array([0., 2.]), array([3., 5.]))
    """
    return np.maximum(np.maximum(lo, -hi), 0.0), np.maximum(-lo, hi)


def _exact_sq(a):
    """(a·a in float64, whether it is exact): Dekker's product with Veltkamp's split, whose error
    term is exact when nothing overflows or underflows (checked: 2^-900 <= a·a <= 2^1000)."""
    p = a * a
    c = a * 134217729.0  # 2^27 + 1
    h = c - (c - a)
    t = a - h
    err = ((h * h - p) + 2.0 * h * t) + t * t
    return p, (a == 0) | ((err == 0) & (p >= 2.0**-900) & (p <= 2.0**1000))


def interval_square(a):
    """t·t over [lo, hi]: monotone in |t| (exactly and in float), so [mig², mag²], left unwidened
    at an end where the float square is exact.

    >>> interval_square((np.array([-1.0]), np.array([3.0])))        # t² for t in [−1, 3]
    (array([0.]), array([9.]))
    """
    mig, mag = mig_mag(*a)
    (p, ep), (q, eq) = _exact_sq(mig), _exact_sq(mag)
    return np.where(ep, p, np.maximum(round_down(p), 0.0)), np.where(eq, q, round_up(q))


# -- point evaluation ----------------------------------------------------------------------------
def _b(f):
    return lambda a, b: np.where(f(a, b), 1.0, 0.0)


_POINT = {
    "neg": np.negative, "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": np.power, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
    "min": np.minimum, "max": np.maximum, "and": np.minimum, "or": np.maximum, "not": lambda a: 1.0 - a,
    "where": lambda c, a, b: np.where(c != 0, a, b), "lt": _b(np.less), "le": _b(np.less_equal),
    "gt": _b(np.greater), "ge": _b(np.greater_equal), "eq": _b(np.equal), "ne": _b(np.not_equal),
    "sq": lambda a: a * a,
}


def evaluate_tree(t: tuple, x):
    """Float value of node t; ``x`` is the array of x, or a tuple of arrays of x1..xd.

    >>> from optmech.costs import parse_expr
    >>> evaluate_tree(parse_expr("x*x + 1"), np.array([2.0, 3.0]))
    array([ 5., 10.])
    """
    if t[0] == "x":
        return x
    if t[0] == "var":
        return x[t[1]]
    if t[0] == "const":
        return t[1]
    return _POINT[t[0]](*(evaluate_tree(c, x) for c in t[1:]))


# -- interval evaluation: every end is NaN-free, lower ends <= CAP, upper ends >= −CAP ---------
def _corners(f, a, b):
    """Hull of f (× or ÷) over the corners.  A NaN corner (0·inf, inf/inf) is skipped: the other
    corners then reach 0 and the right infinity, which covers its limits; all NaN means 0."""
    if f is np.multiply and np.ndim(a[0]) == np.ndim(a[1]) == 0:
        a, b = b, a
    c0, c1 = b
    if np.ndim(c0) == np.ndim(c1) == 0 and (0 < c0 <= c1 < INF or -INF < c0 <= c1 < 0):
        s, t = (a[0], a[1]) if c0 > 0 else (a[1], a[0])  # by a finite constant of one sign
        if c0 == c1:  # 0·c and 0/c are exactly 0: left unwidened
            return np.where(s == 0, 0.0, round_down(f(s, c0))), np.where(t == 0, 0.0, round_up(f(t, c0)))
        return (np.where(s == 0, 0.0, round_down(np.minimum(f(s, c0), f(s, c1)))),
                np.where(t == 0, 0.0, round_up(np.maximum(f(t, c0), f(t, c1)))))
    pairs = [(u, v) for u in a for v in b]
    p = [f(u, v) for u, v in pairs]
    lo, hi = reduce(np.fmin, p), reduce(np.fmax, p)
    # a corner that is 0 as a float (exactly, as a limit at an infinite end, or by underflow) has
    # the exact sign of u·v or u/v: the sign of u times that of v; 0 is a valid lower end when
    # every such corner is >= 0, a valid upper end when every one is <= 0
    nonneg = reduce(np.logical_and, [(q != 0) | np.isnan(q) | ((u >= 0) & (v >= 0)) | ((u <= 0) & (v <= 0))
                                     for q, (u, v) in zip(p, pairs)])
    nonpos = reduce(np.logical_and, [(q != 0) | np.isnan(q) | ((u >= 0) & (v <= 0)) | ((u <= 0) & (v >= 0))
                                     for q, (u, v) in zip(p, pairs)])
    lo, hi = np.where(np.isnan(lo), 0.0, lo), np.where(np.isnan(hi), 0.0, hi)
    return np.where((lo == 0) & nonneg, 0.0, round_down(lo)), np.where((hi == 0) & nonpos, 0.0, round_up(hi))


def _i_div(a, b):
    lo, hi = _corners(np.true_divide, a, b)
    zero = (b[0] <= 0) & (b[1] >= 0)
    return np.where(zero, -INF, lo), np.where(zero, INF, hi)


def _i_pow(a, b, n):
    """a ** b; ``n`` is the exponent when it is an exact integer constant, else None."""
    lo, hi = a
    if n is not None:
        if n == 0:
            return 1.0, 1.0
        if n % 2 == 0:  # even: a function of |a|, tight
            mig, mag = mig_mag(lo, hi)
            p, q = (np.power(mig, n), np.power(mag, n)) if n > 0 else (np.power(mag, n), np.power(mig, n))
            return np.maximum(round_down(p, WIDEN_LIBM), 0.0), round_up(q, WIDEN_LIBM)
        p, q = (np.power(lo, n), np.power(hi, n)) if n > 0 else (np.power(hi, n), np.power(lo, n))  # odd
        if n < 0:
            zero = (lo <= 0) & (hi >= 0)
            p, q = np.where(zero, -INF, p), np.where(zero, INF, q)
        # an odd power keeps the sign of its base: a float 0 (exact or underflowed) is then a valid end
        return (np.where((p == 0) & (lo >= 0), 0.0, round_down(p, WIDEN_LIBM)), np.where((q == 0) & (hi <= 0), 0.0, round_up(q, WIDEN_LIBM)))
    # real power: NaN for a < 0; on a >= 0 monotone in each argument, so extremes at the corners
    p = [np.power(u, v) for u in (np.maximum(lo, 0.0), hi) for v in b]
    neg = lo < 0
    return (np.where(neg, -INF, np.maximum(round_down(reduce(np.minimum, p), WIDEN_LIBM), 0.0)),
            np.where(neg, INF, round_up(reduce(np.maximum, p), WIDEN_LIBM)))


def _i_mono(f, a, c, lo_floor=-INF):
    """Increasing f defined on [0, ∞) (sqrt, log): [−inf, inf] where a reaches below 0."""
    bad = a[0] < 0
    lo = np.maximum(round_down(f(np.maximum(a[0], 0.0)), c), lo_floor)
    return np.where(bad, -INF, lo), np.where(bad, INF, round_up(f(a[1]), c))


def _i_log(a):  # log(1) = +0 exactly (C99 Annex F), so the sign about 1 is known
    lo, hi = _i_mono(np.log, a, WIDEN_LIBM)
    return (np.where(a[0] >= 1, np.maximum(lo, 0.0), lo),
            np.where((a[1] <= 1) & (a[0] >= 0), np.minimum(hi, 0.0), hi))


def _i_exp(a):  # exp(0) = 1 exactly (C99 Annex F)
    lo, hi = np.maximum(round_down(np.exp(a[0]), WIDEN_LIBM), 0.0), round_up(np.exp(a[1]), WIDEN_LIBM)
    return np.where(a[0] >= 0, np.maximum(lo, 1.0), lo), np.where(a[1] <= 0, np.minimum(hi, 1.0), hi)


def _i_cmp(surely, never):
    """Comparison from 'surely true' and 'surely false' tests on the ends: [1,1], [0,0] or [0,1]."""
    return lambda a, b: (np.where(surely(a, b), 1.0, 0.0), np.where(never(a, b), 0.0, 1.0))


def _i_where(c, a, b):
    yes, no = (c[0] > 0) | (c[1] < 0), (c[0] == 0) & (c[1] == 0)
    return (np.where(yes, a[0], np.where(no, b[0], np.minimum(a[0], b[0]))),
            np.where(yes, a[1], np.where(no, b[1], np.maximum(a[1], b[1]))))


_LT, _LE = (lambda a, b: a[1] < b[0]), (lambda a, b: a[1] <= b[0])
_SAME = lambda a, b: (a[0] == a[1]) & (b[0] == b[1]) & (a[0] == b[0])  # noqa: E731
_APART = lambda a, b: (a[1] < b[0]) | (b[1] < a[0])  # noqa: E731
_MIN = lambda a, b: (np.minimum(a[0], b[0]), np.minimum(a[1], b[1]))  # noqa: E731
_MAX = lambda a, b: (np.maximum(a[0], b[0]), np.maximum(a[1], b[1]))  # noqa: E731
_INTERVAL = {
    "neg": lambda a: (-a[1], -a[0]), "not": lambda a: (1.0 - a[1], 1.0 - a[0]),
    "add": lambda a, b: (add_rounded(a[0], b[0], True), add_rounded(a[1], b[1], False)),
    "sub": lambda a, b: (add_rounded(a[0], -b[1], True), add_rounded(a[1], -b[0], False)),
    "mul": lambda a, b: _corners(np.multiply, a, b), "div": _i_div, "abs": lambda a: mig_mag(*a),
    "sqrt": lambda a: _i_mono(np.sqrt, a, WIDEN_ROUNDED, 0.0), "log": _i_log, "exp": _i_exp, "sq": interval_square,
    "min": _MIN, "max": _MAX, "and": _MIN, "or": _MAX, "where": _i_where,
    "lt": _i_cmp(_LT, lambda a, b: _LE(b, a)), "le": _i_cmp(_LE, lambda a, b: _LT(b, a)),
    "gt": _i_cmp(lambda a, b: _LT(b, a), _LE), "ge": _i_cmp(lambda a, b: _LE(b, a), _LT),
    "eq": _i_cmp(_SAME, _APART), "ne": _i_cmp(_APART, _SAME),
}


def exact_int(t: tuple) -> int | None:
    if t[0] == "const" and t[2] == t[3] == t[1] and float(t[1]).is_integer():
        return int(t[1])
    return None


def _any(f):
    """A flag array, or False when no element is set (so later steps can skip it)."""
    return bool(f) if isinstance(f, (bool, np.bool_)) else (f if f.any() else False)


def _o(*flags):
    r = False
    for f in flags:
        if f is not False:
            r = f if r is False else r | f
    return r


def _both(f, g):
    return False if f is False or g is False else _any(f & g)


def _zero(a):
    return _any((a[0] <= 0) & (a[1] >= 0))


def _enc(t: tuple, lo, hi):
    """(lo, hi, nan, inf): the ends bound every non-NaN float value; ``nan``/``inf`` flag where the
    float value may be NaN or ±inf (False when nowhere).  A comparison with a possibly NaN operand
    is left undecided, since NaN compares False; an overflow, 0·inf, inf − inf, inf/inf, 0/0 and
    a square root, log or real power of a negative number are tracked to decide that.  For the
    variables x1..xd, ``lo`` and ``hi`` are tuples of d arrays."""
    op = t[0]
    if op == "x":
        return lo, hi, False, False
    if op == "var":
        return lo[t[1]], hi[t[1]], False, False
    if op == "const":
        return t[2], t[3], math.isnan(t[1]), math.isinf(t[1])
    if op == "where":
        sets = condition_sets(t[1])
        if sets is not None:
            return _enc_restricted(t, sets, lo, hi)
    args = [_enc(c, lo, hi) for c in t[1:]]
    a = [g[:2] for g in args]
    n = exact_int(t[2]) if op == "pow" else None
    rlo, rhi = _i_pow(a[0], a[1], n) if op == "pow" else _INTERVAL[op](*a)
    nan, inf = _o(*(g[2] for g in args)), _o(*(g[3] for g in args))
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not"):
        if nan is not False:
            rlo, rhi = np.where(nan, 0.0, rlo), np.where(nan, 1.0, rhi)
        return rlo, rhi, False, False
    if op == "where":
        (c0, c1), (na, ia), (nb, ib) = a[0], args[1][2:], args[2][2:]
        yes, no = (c0 > 0) | (c1 < 0), (c0 == 0) & (c1 == 0)
        pick = [False if f is False and g is False else _any(np.where(yes, f, np.where(no, g, _o(f, g))))
                for f, g in ((na, nb), (ia, ib))]
        return rlo, rhi, pick[0], pick[1]
    if op == "pow" and n == 0:
        return rlo, rhi, False, False
    ia, ib = args[0][3], args[-1][3]
    if op in ("add", "sub"):  # only +inf + (−inf) is NaN; a float value ±inf lies at an infinite end
        both = _both(ia, ib)
        if both is not False:
            (al, ah), (bl, bh) = a[0], (a[1] if op == "add" else (-a[1][1], -a[1][0]))
            nan = _o(nan, _both(both, ((ah >= CAP) & (bl <= -CAP)) | ((al <= -CAP) & (bh >= CAP))))
    elif op == "mul":
        nan = _o(nan, _both(ia, ia is not False and _zero(a[1])), _both(ib, ib is not False and _zero(a[0])))
    elif op == "div":
        nan = _o(nan, _both(ia, ib), _both(_zero(a[1]), _zero(a[0])))
    elif op in ("sqrt", "log") or (op == "pow" and n is None):
        nan = _o(nan, _any(a[0][0] < 0))
    # ``inf`` marks a value that may be infinite as a real number (x/0, log 0, 0**−k), not a float
    # overflow: the enclosures are of the real function, whose values are finite wherever defined
    if op == "div":
        inf = _o(inf, _zero(a[1]))
    elif op == "pow" and n is not None and n < 0:
        inf = _o(inf, _zero(a[0]))
    elif op == "log":
        inf = _o(inf, _any(a[0][0] <= 0))
    return rlo, rhi, nan, inf


# -- monotonicity: an interval derivative (1-D) --------------------------------------------------
def nan_free(lo, hi):
    return np.where(np.isnan(lo), -INF, lo), np.where(np.isnan(hi), INF, hi)


def derivative_enclosure(t: tuple, lo, hi):
    """(value, derivative, smooth) of node t over x ∈ [lo, hi] (1-D trees only).

    ``value`` and ``derivative`` are interval pairs; ``smooth`` is False (or a flag array) where t
    may be discontinuous or undefined on the interval: an undecided comparison, a division by an
    interval holding 0, sqrt/log/real powers reaching below their domain.  Where t is continuous,
    ``derivative`` encloses every (one-sided, or for abs/min/max Clarke-generalised) derivative
    of t on the interval, so a derivative enclosure >= 0 proves t nondecreasing there (the mean
    value theorem for Lipschitz pieces; abs, min and max are Lipschitz, and sqrt, t**p (0 < p < 1)
    are continuous at 0, where their infinite derivative is kept as +inf).
    """
    op = t[0]
    zero = (0.0, 0.0)
    if op == "x":
        return (lo, hi), (1.0, 1.0), True
    if op == "const":
        return (t[2], t[3]), zero, True
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not"):
        v = tree_enclosure(t, lo, hi)
        decided = v[0] == v[1]
        return v, zero, decided
    if op == "where":
        c = tree_enclosure(t[1], lo, hi)
        yes, no = c[0] > 0, c[1] == 0
        va, da, sa = derivative_enclosure(t[2], lo, hi)
        vb, db, sb = derivative_enclosure(t[3], lo, hi)
        pick = lambda p, q: (np.where(yes, p[0], np.where(no, q[0], np.minimum(p[0], q[0]))),  # noqa: E731
                             np.where(yes, p[1], np.where(no, q[1], np.maximum(p[1], q[1]))))
        return pick(va, vb), pick(da, db), (yes | no) & np.where(yes, sa, np.where(no, sb, False))
    args = [derivative_enclosure(c, lo, hi) for c in t[1:]]
    (va, da, sa) = args[0]
    smooth = sa if len(args) == 1 else (sa & args[1][2])
    I = _INTERVAL
    if op == "neg":
        return I["neg"](va), I["neg"](da), smooth
    if op in ("add", "sub"):
        vb, db = args[1][0], args[1][1]
        return I[op](va, vb), I[op](da, db), smooth
    if op == "mul":
        vb, db = args[1][0], args[1][1]
        return I["mul"](va, vb), I["add"](I["mul"](da, vb), I["mul"](va, db)), smooth
    if op == "div":
        vb, db = args[1][0], args[1][1]
        q = I["div"](va, vb)
        ok = ~((vb[0] <= 0) & (vb[1] >= 0))
        return q, I["div"](I["sub"](da, I["mul"](q, db)), vb), smooth & ok
    if op == "sq":
        return interval_square(va), I["mul"](I["mul"]((2.0, 2.0), va), da), smooth
    if op == "abs":
        # |u| = u where u >= 0 on the whole interval (its derivative is then du, also at u = 0)
        sign = (np.where(va[0] >= 0, 1.0, -1.0), np.where(va[1] <= 0, -1.0, 1.0))
        return mig_mag(*va), I["mul"](sign, da), smooth
    if op in ("min", "max"):
        vb, db = args[1][0], args[1][1]
        first = (va[1] < vb[0]) if op == "min" else (va[0] > vb[1])
        second = (vb[1] < va[0]) if op == "min" else (vb[0] > va[1])
        d = (np.where(first, da[0], np.where(second, db[0], np.minimum(da[0], db[0]))),
             np.where(first, da[1], np.where(second, db[1], np.maximum(da[1], db[1]))))
        return I[op](va, vb), d, smooth
    if op == "exp":
        v = _i_exp(va)
        return v, I["mul"](v, da), smooth
    if op == "log":
        return _i_log(va), I["div"](da, va), smooth & (va[0] > 0)
    if op == "sqrt":
        v = I["sqrt"](va)
        inv = (0.5 / np.maximum(round_up(v[1]), 0.0), np.where(v[0] > 0, 0.5 / round_down(v[0]), INF))
        return v, I["mul"](nan_free(*inv), da), smooth & (va[0] >= 0)
    if op == "pow" and t[2][0] == "const":
        n = exact_int(t[2])
        v = _i_pow(va, args[1][0], n)
        if n is not None:
            if n == 0:
                return v, zero, smooth
            dv = _i_pow(va, (n - 1.0, n - 1.0), n - 1)
            ok = True if n > 0 else ~((va[0] <= 0) & (va[1] >= 0))
            return v, I["mul"](I["mul"]((float(n), float(n)), dv), da), smooth & ok
        kl, kh = t[2][2], t[2][3]
        if kl <= 0:
            return v, (-INF, INF), False
        with np.errstate(all="ignore"):
            base = (np.maximum(va[0], 0.0), va[1])
            c = [np.power(u, e) for u in base for e in (kl - 1.0, kh - 1.0)]
            dv = (np.maximum(round_down(reduce(np.minimum, c), WIDEN_LIBM), 0.0), round_up(reduce(np.maximum, c), WIDEN_LIBM))
            dv = nan_free(np.where(np.isnan(dv[0]), 0.0, dv[0]), dv[1])
        return v, I["mul"](I["mul"]((kl, kh), dv), da), smooth & (va[0] >= 0)
    return (-INF, INF), (-INF, INF), False


# -- second derivatives along one coordinate (d-D trees) ------------------------------------------
_LOGIC = ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not")


def second_derivative_enclosure(t: tuple, lo, hi, axis: int):
    """(value, first, second, smooth) of node t over the boxes [lo, hi] (tuples of d arrays, or arrays for a
    1-D tree), derivatives along coordinate ``axis``: an outward-rounded interval second-order jet.

    ``smooth`` is True (or a flag array) where t is proven to *equal a C² function on the whole closed
    box*: every ``abs`` argument, ``min``/``max`` comparison and ``where`` condition is decided on the
    box (|u| = u where u >= 0 on it, so a kink on the box's face is allowed), every divisor excludes 0,
    and sqrt, log and real powers have arguments > 0.  There, ``first`` and ``second`` enclose
    ∂t/∂x_axis and ∂²t/∂x_axis² at every point of the box (the chain rule in interval arithmetic:
    (ab)'' = a''b + 2a'b' + ab'', (a/b)'' = (a'' − 2q'b' − qb'')/b with q = a/b, exp(a)'' = exp(a)(a'' + a'²),
    log(a)'' = a''/a − (a'/a)², √a'' = (a'' − 2s'²)/(2s) with s = √a, (a^k)'' = k(k−1)a^(k−2)a'² + k a^(k−1) a'').
    Elsewhere nothing is claimed.  Used for the second-order cell prices of expression costs
    (:func:`optmech.problems.approx_cells_nd.expression_jet_errors`).

    >>> from optmech.costs import parse_expr
    >>> v, d1, d2, ok = second_derivative_enclosure(parse_expr("x1**2 + abs(x2)", 2),
    ...                                               (np.array([1.0]), np.array([0.0])), (np.array([2.0]), np.array([0.5])), 0)
    >>> float(d2[0][0]) <= 2.0 <= float(d2[1][0]), bool(ok[0] if np.ndim(ok) else ok)
    (True, True)
    """
    op = t[0]
    zero = (0.0, 0.0)
    I = _INTERVAL
    if op == "var":
        return (lo[t[1]], hi[t[1]]), ((1.0, 1.0) if t[1] == axis else zero), zero, True
    if op == "x":
        a, b = (lo[0], hi[0]) if isinstance(lo, tuple) else (lo, hi)
        return (a, b), (1.0, 1.0), zero, True
    if op == "const":
        return (t[2], t[3]), zero, zero, True
    if op in _LOGIC:  # a boolean: smooth (constant) where decided
        v = tree_enclosure(t, lo, hi)
        return v, zero, zero, v[0] == v[1]
    if op == "where":
        c = tree_enclosure(t[1], lo, hi)
        yes, no = c[0] > 0, c[1] == 0
        A = second_derivative_enclosure(t[2], lo, hi, axis)
        B = second_derivative_enclosure(t[3], lo, hi, axis)
        pick = lambda p, q: (np.where(yes, p[0], np.where(no, q[0], np.minimum(p[0], q[0]))),  # noqa: E731
                             np.where(yes, p[1], np.where(no, q[1], np.maximum(p[1], q[1]))))
        return (pick(A[0], B[0]), pick(A[1], B[1]), pick(A[2], B[2]),
                (yes | no) & np.where(yes, A[3], np.where(no, B[3], False)))
    args = [second_derivative_enclosure(c, lo, hi, axis) for c in t[1:]] if op != "pow" else \
        [second_derivative_enclosure(t[1], lo, hi, axis)]
    va, da, ca, sa = args[0]
    if op == "neg":
        return I["neg"](va), I["neg"](da), I["neg"](ca), sa
    if op in ("add", "sub"):
        vb, db, cb, sb = args[1]
        return I[op](va, vb), I[op](da, db), I[op](ca, cb), sa & sb
    if op == "mul":
        vb, db, cb, sb = args[1]
        second = I["add"](I["add"](I["mul"](ca, vb), I["mul"](va, cb)), I["mul"]((2.0, 2.0), I["mul"](da, db)))
        return I["mul"](va, vb), I["add"](I["mul"](da, vb), I["mul"](va, db)), second, sa & sb
    if op == "div":
        vb, db, cb, sb = args[1]
        ok = (vb[0] > 0) | (vb[1] < 0)
        q = _i_div(va, vb)
        q1 = _i_div(I["sub"](da, I["mul"](q, db)), vb)
        q2 = _i_div(I["sub"](I["sub"](ca, I["mul"]((2.0, 2.0), I["mul"](q1, db))), I["mul"](q, cb)), vb)
        return q, q1, q2, sa & sb & ok
    if op == "sq":
        return (interval_square(va), I["mul"]((2.0, 2.0), I["mul"](va, da)),
                I["mul"]((2.0, 2.0), I["add"](interval_square(da), I["mul"](va, ca))), sa)
    if op == "abs":  # |u| = ±u on the box where u keeps one sign on it (0 allowed)
        pos, neg = va[0] >= 0, va[1] <= 0
        flip = lambda p: (np.where(pos, p[0], -p[1]), np.where(pos, p[1], -p[0]))  # noqa: E731
        return mig_mag(*va), flip(da), flip(ca), sa & (pos | neg)
    if op in ("min", "max"):
        vb, db, cb, sb = args[1]
        first = (va[1] <= vb[0]) if op == "min" else (va[0] >= vb[1])
        second = (vb[1] <= va[0]) if op == "min" else (vb[0] >= va[1])
        pick = lambda p, q: (np.where(first, p[0], np.where(second, q[0], np.minimum(p[0], q[0]))),  # noqa: E731
                             np.where(first, p[1], np.where(second, q[1], np.maximum(p[1], q[1]))))
        return (I[op](va, vb), pick(da, db), pick(ca, cb),
                (first | second) & np.where(first, sa, np.where(second, sb, False)))
    if op == "exp":
        v = _i_exp(va)
        return v, I["mul"](v, da), I["mul"](v, I["add"](ca, interval_square(da))), sa
    if op == "log":
        r = _i_div(da, va)
        return _i_log(va), r, I["sub"](_i_div(ca, va), interval_square(r)), sa & (va[0] > 0)
    if op == "sqrt":
        v = I["sqrt"](va)
        ok = va[0] > 0
        two_s = I["mul"]((2.0, 2.0), v)
        s1 = _i_div(da, two_s)
        s2 = _i_div(I["sub"](ca, I["mul"]((2.0, 2.0), interval_square(s1))), two_s)
        return v, s1, s2, sa & ok
    if op == "pow" and t[2][0] == "const" and t[2][2] == t[2][3]:
        k = float(t[2][2])
        n = exact_int(t[2])
        if n == 0:
            return (1.0, 1.0), zero, zero, sa
        ok = True if (n is not None and n > 0) else ((va[0] > 0) | (va[1] < 0)) if n is not None else (va[0] > 0)
        # the exponents k − 1, k − 2 and k(k − 1) as outward intervals (exact for integers)
        e1 = I["sub"]((k, k), (1.0, 1.0)) if n is None else (float(n - 1), float(n - 1))
        e2 = I["sub"](e1, (1.0, 1.0)) if n is None else (float(n - 2), float(n - 2))
        p0 = _i_pow(va, (k, k), n)
        p1 = _i_pow(va, e1, None if n is None else n - 1)
        p2 = _i_pow(va, e2, None if n is None else n - 2)
        first = I["mul"]((k, k), I["mul"](p1, da))
        kk = I["mul"]((k, k), e1)
        second = I["add"](I["mul"](kk, I["mul"](p2, interval_square(da))), I["mul"]((k, k), I["mul"](p1, ca)))
        return p0, first, second, sa & ok
    return (-INF, INF), (-INF, INF), (-INF, INF), False


def _monotone_enclosure(t: tuple, lo, hi, nat_lo, nat_hi):
    """Tighten the natural enclosure [nat_lo, nat_hi] of a 1-D tree where it is provably monotone
    on [lo, hi]: nondecreasing gives [L(lo), L(hi)], nonincreasing [L(hi), L(lo)], with the
    point enclosures at finite ends and the natural ends at infinite ones.  Also returns where
    monotonicity was proven."""
    with np.errstate(all="ignore"):
        _, d, smooth = derivative_enclosure(t, lo, hi)
        dlo, dhi = nan_free(*np.broadcast_arrays(d[0], d[1], lo)[:2])
        smooth = np.broadcast_to(smooth, dlo.shape)
        up, down = smooth & (dlo >= 0), smooth & (dhi <= 0)
        if not (up.any() or down.any()):
            return nat_lo, nat_hi, up
        a_lo, a_hi = tree_enclosure(t, lo, lo)
        b_lo, b_hi = tree_enclosure(t, hi, hi)
        fin_lo, fin_hi = np.isfinite(lo), np.isfinite(hi)
        new_lo = np.where(up, np.where(fin_lo, a_lo, nat_lo), np.where(down, np.where(fin_hi, b_lo, nat_lo), nat_lo))
        new_hi = np.where(up, np.where(fin_hi, b_hi, nat_hi), np.where(down, np.where(fin_lo, a_hi, nat_hi), nat_hi))
        return np.maximum(nat_lo, new_lo), np.minimum(nat_hi, new_hi), up | down


#: at most this many cut points per interval (from the conditions of ``where``) are used
MAX_BREAKPOINTS = 32


def tight_enclosure(t: tuple, lo, hi):
    """The 1-D enclosure: [lo, hi] cut at the breakpoints of t's conditions (each piece then
    decides them, up to its closed ends, which the restricted ``where`` handles), each piece
    enclosed naturally and tightened where t is provably monotone on it, and the hull taken.
    Algebraically equal ways of writing a piecewise cost (indicator products, ``where``,
    ``min``/``max``) thus get enclosures of the same quality."""
    cuts = breakpoints(t)
    if len(cuts) > MAX_BREAKPOINTS:
        cuts = ()
    if cuts:
        c = np.asarray(cuts)
        edges = np.concatenate([lo[..., None], np.clip(c, lo[..., None], hi[..., None]), hi[..., None]], axis=-1)
        plo, phi = edges[..., :-1], edges[..., 1:]
    else:
        plo, phi = lo[..., None], hi[..., None]
    nlo, nhi = tree_enclosure(t, plo, phi)
    nlo, nhi, mono = _monotone_enclosure(t, plo, phi, nlo, nhi)
    # finite pieces not proven monotone (a kink of min/max/abs inside, an interior extremum):
    # cut at the multiples of a power of two (SUBDIVISIONS to 2·SUBDIVISIONS parts), so that a kink at
    # 0 or at a dyadic point becomes an end, and take the hull, which never loosens the enclosure
    mono = np.broadcast_to(np.asarray(mono, dtype=bool), plo.shape)
    rest = ~mono & np.isfinite(plo) & np.isfinite(phi) & (phi > plo) & (nhi > nlo)
    if rest.any():
        a, b = plo[rest], phi[rest]
        step = np.exp2(np.floor(np.log2((b - a) / SUBDIVISIONS)))  # a power of two: cuts on a dyadic grid
        grid = (np.ceil(a / step)[:, None] + np.arange(2 * SUBDIVISIONS + 1)) * step[:, None]
        e = np.concatenate([a[:, None], np.clip(grid, a[:, None], b[:, None]), b[:, None]], axis=1)
        slo, shi = tree_enclosure(t, e[:, :-1], e[:, 1:])
        slo, shi, _ = _monotone_enclosure(t, e[:, :-1], e[:, 1:], slo, shi)
        nlo, nhi = nlo.copy(), nhi.copy()
        nlo[rest] = np.maximum(nlo[rest], np.min(slo, axis=1))
        nhi[rest] = np.minimum(nhi[rest], np.max(shi, axis=1))
    return clean_interval(np.min(nlo, axis=-1), np.max(nhi, axis=-1))


#: a finite piece that is not provably monotone is cut into about this many parts (one level)
SUBDIVISIONS = 16


def _with_var(lo, var: int | None, value):
    """The variable ends ``lo`` with variable ``var`` (None: the 1-D x) replaced by ``value``."""
    if var is None:
        return value
    return tuple(value if i == var else v for i, v in enumerate(lo))


def _enc_restricted(t: tuple, sets: tuple, lo, hi):
    """``where(c, a, b)`` with each branch enclosed only where it is taken.

    ``sets`` = (var, T, F) from :func:`condition_sets`: closed unions of intervals of the variable
    that contain every point where the condition is true (T) or false (F).  Branch a is enclosed
    over [lo, hi] ∩ T, branch b over [lo, hi] ∩ F (each the hull of its pieces), and the result
    is the hull of the branches that meet [lo, hi]: so ``where(x >= 0, x, 3*abs(x))`` over
    [−1, 1] is [0, 3], not the hull [−1, 3] of both branches over all of [−1, 1].
    """
    var, parts_t, parts_f = sets
    xlo, xhi = (lo, hi) if var is None else (lo[var], hi[var])
    c0, c1, _, _ = _enc(t[1], lo, hi)  # the condition over all of [lo, hi]: it may decide (at a point, say)
    surely, never = (c0 > 0) | (c1 < 0), (c0 == 0) & (c1 == 0)
    out_lo = out_hi = None
    nan = inf = False
    for parts, sub, excluded in ((parts_t, t[2], never), (parts_f, t[3], surely)):
        rlo = rhi = None
        meet = False
        for plo, phi in parts:
            ilo, ihi = np.maximum(xlo, plo), np.minimum(xhi, phi)
            ok = ilo <= ihi
            rlo = ilo if rlo is None else np.where(ok & ~meet, ilo, np.where(ok, np.minimum(rlo, ilo), rlo))
            rhi = ihi if rhi is None else np.where(ok & ~meet, ihi, np.where(ok, np.maximum(rhi, ihi), rhi))
            meet = meet | ok
        if rlo is None:
            continue
        meet = meet & ~excluded
        if not np.any(meet):
            continue
        rlo, rhi = np.where(meet, rlo, xlo), np.where(meet, rhi, xlo)
        blo, bhi, bnan, binf = _enc(sub, _with_var(lo, var, rlo), _with_var(hi, var, rhi))
        big, small = np.inf, -np.inf
        blo, bhi = np.where(meet, blo, big), np.where(meet, bhi, small)
        out_lo = blo if out_lo is None else np.minimum(out_lo, blo)
        out_hi = bhi if out_hi is None else np.maximum(out_hi, bhi)
        nan = _o(nan, _both(bnan, meet) if bnan is not False else False)
        inf = _o(inf, _both(binf, meet) if binf is not False else False)
    if out_lo is None:  # cannot happen (T ∪ F is the whole line), but stay safe
        args = [_enc(c, lo, hi) for c in t[1:]]
        return (*_i_where(*(g[:2] for g in args)), True, True)
    return out_lo, out_hi, nan, inf


# -- where a condition holds: closed unions of intervals of one variable ------------------------
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_LINE = ((-INF, INF),)


def _parts(pairs) -> tuple:
    """Nonempty closed intervals (lo <= hi), as a tuple of float pairs."""
    return tuple((float(a), float(b)) for a, b in pairs if a <= b)


#: The smallest normal float, and a t below which the float exp(t) is subnormal or 0 (exp(−708) ≈ 3.3e-308).
_TINY_NORMAL, _SUBNORMAL_EXP_BELOW = 2.2250738585072014e-308, -708.0


def _preimage(g: tuple, parts: tuple):
    """(var, P): P ⊇ {t : g(t) ∈ ∪ parts} for a chain g of one variable (x, or x_var), or None.

    Chains are the variable under ± and × ÷ by constants, abs, squares and exact integer powers,
    and exp; their preimages are computed with outward rounding.  Anything else (two occurrences
    of the variable, sqrt, log, ...) gives None, and the caller falls back to both branches.
    """
    op = g[0]
    if op == "x":
        return None, parts
    if op == "var":
        return g[1], parts
    if op == "neg":
        return _preimage(g[1], _parts((-h, -l) for l, h in parts))
    if op in ("add", "sub", "mul", "div") and (g[1][0] == "const") != (g[2][0] == "const"):
        k, a, left = (g[1], g[2], True) if g[1][0] == "const" else (g[2], g[1], False)
        kl, kh = k[2], k[3]
        if op == "add" or (op == "sub" and not left):  # a + k, a − k
            s = 1.0 if op == "add" else -1.0
            lo_k, hi_k = (kl, kh) if s > 0 else (-kh, -kl)
            return _preimage(a, _parts((round_down(l - hi_k), round_up(h - lo_k)) for l, h in parts))
        if op == "sub":  # k − a = y  ⇔  a = k − y
            return _preimage(a, _parts((round_down(kl - h), round_up(kh - l)) for l, h in parts))
        if not (kl > 0 or kh < 0) or not (math.isfinite(kl) and math.isfinite(kh)):
            return None
        if op == "div" and left:  # k / a: not a chain we invert
            return None
        f = np.true_divide if op == "mul" else np.multiply  # y = a·k ⇔ a = y/k;  y = a/k ⇔ a = y·k
        out = []
        for l, h in parts:
            with np.errstate(all="ignore"):
                c = [f(u, v) for u in (l, h) for v in (kl, kh)]
            c = [0.0 if math.isnan(v) else v for v in c]
            out.append((round_down(min(c)), round_up(max(c))))
        return _preimage(a, _parts(out))
    if op in ("abs", "sq") or (op == "pow" and exact_int(g[2]) is not None and exact_int(g[2]) > 0):
        n = 1 if op == "abs" else 2 if op == "sq" else exact_int(g[2])
        out = []
        for l, h in parts:
            if n % 2 == 1 and op == "pow":  # odd power: a sign-preserving root
                out.append((_root(l, n, False), _root(h, n, True)))
                continue
            if h < 0:
                continue
            rl, rh = _root(max(l, 0.0), n, False), _root(h, n, True)
            out += [(-rh, -rl), (rl, rh)]
        return _preimage(g[1], _parts(out))
    if op == "exp":
        # the float exp underflows: to 0 below t ≈ −745.13, to subnormals (with lost relative precision)
        # below t ≈ −708.4; a part reaching down to 0 or into the subnormals takes those t as well
        out = []
        for l, h in parts:
            if h < 0:
                continue
            with np.errstate(all="ignore"):
                lo_t = round_down(np.log(l), WIDEN_LIBM) if l >= _TINY_NORMAL else -INF
                hi_t = round_up(np.log(h), WIDEN_LIBM) if h >= _TINY_NORMAL else _SUBNORMAL_EXP_BELOW
            out.append((lo_t, hi_t))
        return _preimage(g[1], _parts(out))
    return None


def _root(v: float, n: int, upper: bool) -> float:
    """An outward-rounded n-th root of v (sign kept for odd n): below the exact one unless ``upper``."""
    if n == 1 or not math.isfinite(v):
        return v
    r = math.copysign(abs(v) ** (1.0 / n), v)
    return float(round_up(r, WIDEN_LIBM) if upper else round_down(r, WIDEN_LIBM))


def _meet(p: tuple, q: tuple) -> tuple:
    return _parts((max(a, c), min(b, d)) for a, b in p for c, d in q)


@lru_cache(maxsize=512)
def condition_sets(c: tuple):
    """(var, T, F) with T ⊇ {c true} and F ⊇ {c false}, closed unions of intervals of one
    variable, for conditions built from comparisons of chains (see :func:`_preimage`) with
    constants by & | ~; None otherwise.  The closure keeps the sets valid at the boundary."""
    op = c[0]
    if op in _FLIP:
        left, right = c[1], c[2]
        if right[0] == "const" and left[0] != "const":
            g, k = left, right
        elif left[0] == "const" and right[0] != "const":
            g, k, op = right, left, _FLIP[op]
        else:
            return None
        kl, kh = k[2], k[3]
        if not (math.isfinite(kl) and math.isfinite(kh)):
            return None
        true, false = {
            "lt": (((-INF, kh),), ((kl, INF),)), "le": (((-INF, kh),), ((kl, INF),)),
            "gt": (((kl, INF),), ((-INF, kh),)), "ge": (((kl, INF),), ((-INF, kh),)),
            "eq": (((kl, kh),), _LINE), "ne": (_LINE, ((kl, kh),)),
        }[op]
        pt, pf = _preimage(g, true), _preimage(g, false)
        if pt is None or pf is None:
            return None
        return pt[0], pt[1], pf[1]
    if op == "not":
        inner = condition_sets(c[1])
        return None if inner is None else (inner[0], inner[2], inner[1])
    if op in ("and", "or"):
        a, b = condition_sets(c[1]), condition_sets(c[2])
        if a is None or b is None or a[0] != b[0]:
            return None
        if op == "and":
            return a[0], _meet(a[1], b[1]), a[2] + b[2]
        return a[0], a[1] + b[1], _meet(a[2], b[2])
    return None


@lru_cache(maxsize=512)
def breakpoints(t: tuple) -> tuple:
    """Finite ends of the condition sets of every ``where`` and comparison in t over the 1-D
    variable, and of ``min(a, b)``/``max(a, b)`` read as the condition a <= b, sorted: cutting an
    interval there decides each such condition (and which argument a min or max takes) on the open
    pieces.  Any cut is sound (the enclosure of a union is the union of the pieces' enclosures);
    these make equal costs written with min/max or with where get the same pieces."""
    out: set[float] = set()

    def walk(u: tuple) -> None:
        if u[0] in ("min", "max"):  # min(a, b) and max(a, b) switch where a − b changes sign: cut there too
            sets = condition_sets(("le", u[1], u[2]))
            if sets is not None and sets[0] is None:
                out.update(v for part in sets[1] + sets[2] for v in part if math.isfinite(v))
        if u[0] == "where" or u[0] in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not"):
            sets = condition_sets(u[1] if u[0] == "where" else u)
            if sets is not None and sets[0] is None:
                out.update(v for part in sets[1] + sets[2] for v in part if math.isfinite(v))
        for c in u[1:]:
            if isinstance(c, tuple):
                walk(c)

    walk(t)
    return tuple(sorted(out))


def tree_enclosure(t: tuple, lo, hi):
    """Ends of the node, [−inf, inf] where its float value may be NaN, broadcast to lo (to its
    first array when ``lo`` is a tuple of per-variable arrays).

    >>> from optmech.costs import parse_expr
    >>> tree_enclosure(parse_expr("x*x + 1"), np.array([1.0]), np.array([2.0]))
    (array([2.]), array([5.]))
    """
    rlo, rhi, nan, _ = _enc(t, lo, hi)
    if nan is not False:
        rlo, rhi = np.where(nan, -INF, rlo), np.where(nan, INF, rhi)
    return clean_interval(*np.broadcast_arrays(rlo, rhi, lo[0] if isinstance(lo, tuple) else lo)[:2])


