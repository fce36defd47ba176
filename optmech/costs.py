"""The cost L(x) of added noise x ∈ ℝ: ``abs``, ``square``, ``pow:P`` or a safe expression in x.

Named costs are |x|, x² and |x|^P (0 < P <= 64).  Any other text is an expression in ``x`` with
numexpr's syntax: numbers, ``x``, ``pi``, ``e``, ``+ - * / **``, unary ``-``/``+``, comparisons
``< <= > >= == !=`` (chains allowed), ``&``, ``|`` and ``~`` on comparison results, and the
functions ``abs sqrt exp log`` (one argument), ``min max`` (two) and ``where(cond, a, b)``.

The text is checked node by node against a whitelist of :mod:`ast` nodes and compiled into a
tuple tree; it is never handed to ``eval``/``exec``.  Two evaluators walk that tree: a float64
one (``Cost.__call__``) and an outward-rounded interval one (``Cost.enclose``) whose bounds hold
for the exact real value and for its float64 evaluation.  Booleans are the floats 0 and 1, so
``&``, ``|``, ``~`` are min, max, 1 − a, and a boolean interval is [0,0], [1,1] or [0,1].
Subexpressions free of ``x`` are folded at parse time into a value and an enclosure.

The same compiler serves d-dimensional costs (:mod:`optmech.costs_nd`): compiled for a dimension
d it accepts the variables ``x1``..``xd`` (node ``("var", i)``, i 0-based; bare ``x`` only when
d = 1) and the evaluators then take a tuple of d arrays, one per coordinate, for ``x`` (or for
the interval ends).  The 1-D :class:`Cost` also accepts ``x1`` as a synonym of ``x``.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, reduce

import numpy as np

from optmech.errors import CostError

__all__ = ["Cost", "CostLike", "as_cost", "parse_cost"]

#: Limits on expression text: characters, AST nesting depth, |constant exponent| and pow:P.
MAX_LENGTH = 2000
MAX_DEPTH = 50
MAX_EXPONENT = 64.0

_INF = np.inf
FUNCTIONS = {"abs": 1, "sqrt": 1, "exp": 1, "log": 1, "min": 2, "max": 2, "where": 3}
CONSTANTS = {"pi": math.pi, "e": math.e}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.BitAnd: "and", ast.BitOr: "or"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_ALLOWED = "allowed: numbers, x, pi, e, + - * / **, comparisons, & | ~, abs sqrt exp log min max where"
VARIABLE_NAME = re.compile(r"x([1-9][0-9]*)\Z")  # x1, x2, ... (x0 and x01 are not variables)

#: Relative outward widening.  ``_W1`` (>= 1 ulp after its own rounding) follows correctly rounded
#: operations (+ − × ÷ sqrt).  ``_WF`` (16 ulp) follows exp, log and pow, whose vectorised NumPy
#: versions (SVML on AVX-512) are only within 4 ulp; it covers the exact value at an end point and
#: the float value at any inner point.  ``_WX`` (8 ulp) is for enclosing exact values only.
#: ``_TINY`` covers subnormal results; ``CAP`` is the lower end of an overflowed result.
_W1, _WF, _WX, _TINY, CAP = 2.0**-50, 2.0**-48, 2.0**-49, 2.0**-1060, 2.0**1023


def _dn(v, c: float = _W1):
    """A lower bound of every value within relative c of v; +inf → CAP (v is never NaN here)."""
    r = np.abs(v)
    r *= c  # in place for arrays
    r += _TINY
    out = r if isinstance(r, np.ndarray) else None
    return np.fmin(np.subtract(v, r, out=out), CAP, out=out)


def _up(v, c: float = _W1):
    """An upper bound of every value within relative c of v; −inf → −CAP."""
    r = np.abs(v)
    r *= c
    r += _TINY
    out = r if isinstance(r, np.ndarray) else None
    return np.fmax(np.add(v, r, out=out), -CAP, out=out)


def add_rounded(a, b, lower: bool):
    """Lower or upper end of a + b, left unwidened when the float sum is exact (TwoSum)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)  # exact a + b − s; NaN on overflow
    return np.where(err >= 0, s, _dn(s)) if lower else np.where(err <= 0, s, _up(s))


def _fup(v: Fraction) -> float:
    """Smallest float >= the exact value v (inf when too large)."""
    try:
        f = float(v)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= v else math.nextafter(f, math.inf)


def _clean(lo, hi):
    """Replace NaN by −inf (lower end) and +inf (upper end)."""
    return np.where(np.isnan(lo), -_INF, lo), np.where(np.isnan(hi), _INF, hi)


def mig_mag(lo, hi):
    """min and max of |t| over [lo, hi] (exact)."""
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
    at an end where the float square is exact."""
    mig, mag = mig_mag(*a)
    (p, ep), (q, eq) = _exact_sq(mig), _exact_sq(mag)
    return np.where(ep, p, np.maximum(_dn(p), 0.0)), np.where(eq, q, _up(q))


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
    """Float value of node t; ``x`` is the array of x, or a tuple of arrays of x1..xd."""
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
    if np.ndim(c0) == np.ndim(c1) == 0 and (0 < c0 <= c1 < _INF or -_INF < c0 <= c1 < 0):
        s, t = (a[0], a[1]) if c0 > 0 else (a[1], a[0])  # by a finite constant of one sign
        if c0 == c1:  # 0·c and 0/c are exactly 0: left unwidened
            return np.where(s == 0, 0.0, _dn(f(s, c0))), np.where(t == 0, 0.0, _up(f(t, c0)))
        return (np.where(s == 0, 0.0, _dn(np.minimum(f(s, c0), f(s, c1)))),
                np.where(t == 0, 0.0, _up(np.maximum(f(t, c0), f(t, c1)))))
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
    return np.where((lo == 0) & nonneg, 0.0, _dn(lo)), np.where((hi == 0) & nonpos, 0.0, _up(hi))


def _i_div(a, b):
    lo, hi = _corners(np.true_divide, a, b)
    zero = (b[0] <= 0) & (b[1] >= 0)
    return np.where(zero, -_INF, lo), np.where(zero, _INF, hi)


def _i_pow(a, b, n):
    """a ** b; ``n`` is the exponent when it is an exact integer constant, else None."""
    lo, hi = a
    if n is not None:
        if n == 0:
            return 1.0, 1.0
        if n % 2 == 0:  # even: a function of |a|, tight
            mig, mag = mig_mag(lo, hi)
            p, q = (np.power(mig, n), np.power(mag, n)) if n > 0 else (np.power(mag, n), np.power(mig, n))
            return np.maximum(_dn(p, _WF), 0.0), _up(q, _WF)
        p, q = (np.power(lo, n), np.power(hi, n)) if n > 0 else (np.power(hi, n), np.power(lo, n))  # odd
        if n < 0:
            zero = (lo <= 0) & (hi >= 0)
            p, q = np.where(zero, -_INF, p), np.where(zero, _INF, q)
        # an odd power keeps the sign of its base: a float 0 (exact or underflowed) is then a valid end
        return (np.where((p == 0) & (lo >= 0), 0.0, _dn(p, _WF)), np.where((q == 0) & (hi <= 0), 0.0, _up(q, _WF)))
    # real power: NaN for a < 0; on a >= 0 monotone in each argument, so extremes at the corners
    p = [np.power(u, v) for u in (np.maximum(lo, 0.0), hi) for v in b]
    neg = lo < 0
    return (np.where(neg, -_INF, np.maximum(_dn(reduce(np.minimum, p), _WF), 0.0)),
            np.where(neg, _INF, _up(reduce(np.maximum, p), _WF)))


def _i_mono(f, a, c, lo_floor=-_INF):
    """Increasing f defined on [0, ∞) (sqrt, log): [−inf, inf] where a reaches below 0."""
    bad = a[0] < 0
    lo = np.maximum(_dn(f(np.maximum(a[0], 0.0)), c), lo_floor)
    return np.where(bad, -_INF, lo), np.where(bad, _INF, _up(f(a[1]), c))


def _i_log(a):  # log(1) = +0 exactly (C99 Annex F), so the sign about 1 is known
    lo, hi = _i_mono(np.log, a, _WF)
    return (np.where(a[0] >= 1, np.maximum(lo, 0.0), lo),
            np.where((a[1] <= 1) & (a[0] >= 0), np.minimum(hi, 0.0), hi))


def _i_exp(a):  # exp(0) = 1 exactly (C99 Annex F)
    lo, hi = np.maximum(_dn(np.exp(a[0]), _WF), 0.0), _up(np.exp(a[1]), _WF)
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
    "sqrt": lambda a: _i_mono(np.sqrt, a, _W1, 0.0), "log": _i_log, "exp": _i_exp, "sq": interval_square,
    "min": _MIN, "max": _MAX, "and": _MIN, "or": _MAX, "where": _i_where,
    "lt": _i_cmp(_LT, lambda a, b: _LE(b, a)), "le": _i_cmp(_LE, lambda a, b: _LT(b, a)),
    "gt": _i_cmp(lambda a, b: _LT(b, a), _LE), "ge": _i_cmp(lambda a, b: _LE(b, a), _LT),
    "eq": _i_cmp(_SAME, _APART), "ne": _i_cmp(_APART, _SAME),
}


def _exact_int(t: tuple) -> int | None:
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
        sets = _cond_sets(t[1])
        if sets is not None:
            return _enc_restricted(t, sets, lo, hi)
    args = [_enc(c, lo, hi) for c in t[1:]]
    a = [g[:2] for g in args]
    n = _exact_int(t[2]) if op == "pow" else None
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
def _nan_free(lo, hi):
    return np.where(np.isnan(lo), -_INF, lo), np.where(np.isnan(hi), _INF, hi)


def _dual(t: tuple, lo, hi):
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
        va, da, sa = _dual(t[2], lo, hi)
        vb, db, sb = _dual(t[3], lo, hi)
        pick = lambda p, q: (np.where(yes, p[0], np.where(no, q[0], np.minimum(p[0], q[0]))),  # noqa: E731
                             np.where(yes, p[1], np.where(no, q[1], np.maximum(p[1], q[1]))))
        return pick(va, vb), pick(da, db), (yes | no) & np.where(yes, sa, np.where(no, sb, False))
    args = [_dual(c, lo, hi) for c in t[1:]]
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
        inv = (0.5 / np.maximum(_up(v[1]), 0.0), np.where(v[0] > 0, 0.5 / _dn(v[0]), _INF))
        return v, I["mul"](_nan_free(*inv), da), smooth & (va[0] >= 0)
    if op == "pow" and t[2][0] == "const":
        n = _exact_int(t[2])
        v = _i_pow(va, args[1][0], n)
        if n is not None:
            if n == 0:
                return v, zero, smooth
            dv = _i_pow(va, (n - 1.0, n - 1.0), n - 1)
            ok = True if n > 0 else ~((va[0] <= 0) & (va[1] >= 0))
            return v, I["mul"](I["mul"]((float(n), float(n)), dv), da), smooth & ok
        kl, kh = t[2][2], t[2][3]
        if kl <= 0:
            return v, (-_INF, _INF), False
        with np.errstate(all="ignore"):
            base = (np.maximum(va[0], 0.0), va[1])
            c = [np.power(u, e) for u in base for e in (kl - 1.0, kh - 1.0)]
            dv = (np.maximum(_dn(reduce(np.minimum, c), _WF), 0.0), _up(reduce(np.maximum, c), _WF))
            dv = _nan_free(np.where(np.isnan(dv[0]), 0.0, dv[0]), dv[1])
        return v, I["mul"](I["mul"]((kl, kh), dv), da), smooth & (va[0] >= 0)
    return (-_INF, _INF), (-_INF, _INF), False


def _monotone_enclosure(t: tuple, lo, hi, nat_lo, nat_hi):
    """Tighten the natural enclosure [nat_lo, nat_hi] of a 1-D tree where it is provably monotone
    on [lo, hi]: nondecreasing gives [L(lo), L(hi)], nonincreasing [L(hi), L(lo)], with the
    point enclosures at finite ends and the natural ends at infinite ones.  Also returns where
    monotonicity was proven."""
    with np.errstate(all="ignore"):
        _, d, smooth = _dual(t, lo, hi)
        dlo, dhi = _nan_free(*np.broadcast_arrays(d[0], d[1], lo)[:2])
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


def _tight_enclosure(t: tuple, lo, hi):
    """The 1-D enclosure: [lo, hi] cut at the breakpoints of t's conditions (each piece then
    decides them, up to its closed ends, which the restricted ``where`` handles), each piece
    enclosed naturally and tightened where t is provably monotone on it, and the hull taken.
    Algebraically equal ways of writing a piecewise cost (indicator products, ``where``,
    ``min``/``max``) thus get enclosures of the same quality."""
    cuts = _breakpoints(t)
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
    return _clean(np.min(nlo, axis=-1), np.max(nhi, axis=-1))


#: a finite piece that is not provably monotone is cut into about this many parts (one level)
SUBDIVISIONS = 16


def _with_var(lo, var: int | None, value):
    """The variable ends ``lo`` with variable ``var`` (None: the 1-D x) replaced by ``value``."""
    if var is None:
        return value
    return tuple(value if i == var else v for i, v in enumerate(lo))


def _enc_restricted(t: tuple, sets: tuple, lo, hi):
    """``where(c, a, b)`` with each branch enclosed only where it is taken.

    ``sets`` = (var, T, F) from :func:`_cond_sets`: closed unions of intervals of the variable
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
_LINE = ((-_INF, _INF),)


def _parts(pairs) -> tuple:
    """Nonempty closed intervals (lo <= hi), as a tuple of float pairs."""
    return tuple((float(a), float(b)) for a, b in pairs if a <= b)


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
            return _preimage(a, _parts((_dn(l - hi_k), _up(h - lo_k)) for l, h in parts))
        if op == "sub":  # k − a = y  ⇔  a = k − y
            return _preimage(a, _parts((_dn(kl - h), _up(kh - l)) for l, h in parts))
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
            out.append((_dn(min(c)), _up(max(c))))
        return _preimage(a, _parts(out))
    if op in ("abs", "sq") or (op == "pow" and _exact_int(g[2]) is not None and _exact_int(g[2]) > 0):
        n = 1 if op == "abs" else 2 if op == "sq" else _exact_int(g[2])
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
        out = []
        for l, h in parts:
            if h <= 0:
                continue
            with np.errstate(all="ignore"):
                out.append((_dn(np.log(l), _WF) if l > 0 else -_INF, _up(np.log(h), _WF)))
        return _preimage(g[1], _parts(out))
    return None


def _root(v: float, n: int, upper: bool) -> float:
    """An outward-rounded n-th root of v (sign kept for odd n): below the exact one unless ``upper``."""
    if n == 1 or not math.isfinite(v):
        return v
    r = math.copysign(abs(v) ** (1.0 / n), v)
    return float(_up(r, _WF) if upper else _dn(r, _WF))


def _meet(p: tuple, q: tuple) -> tuple:
    return _parts((max(a, c), min(b, d)) for a, b in p for c, d in q)


@lru_cache(maxsize=512)
def _cond_sets(c: tuple):
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
            "lt": (((-_INF, kh),), ((kl, _INF),)), "le": (((-_INF, kh),), ((kl, _INF),)),
            "gt": (((kl, _INF),), ((-_INF, kh),)), "ge": (((kl, _INF),), ((-_INF, kh),)),
            "eq": (((kl, kh),), _LINE), "ne": (_LINE, ((kl, kh),)),
        }[op]
        pt, pf = _preimage(g, true), _preimage(g, false)
        if pt is None or pf is None:
            return None
        return pt[0], pt[1], pf[1]
    if op == "not":
        inner = _cond_sets(c[1])
        return None if inner is None else (inner[0], inner[2], inner[1])
    if op in ("and", "or"):
        a, b = _cond_sets(c[1]), _cond_sets(c[2])
        if a is None or b is None or a[0] != b[0]:
            return None
        if op == "and":
            return a[0], _meet(a[1], b[1]), a[2] + b[2]
        return a[0], a[1] + b[1], _meet(a[2], b[2])
    return None


@lru_cache(maxsize=512)
def _breakpoints(t: tuple) -> tuple:
    """Finite ends of the condition sets of every ``where`` and comparison in t over the 1-D
    variable, sorted: cutting an interval there decides each such condition on the open pieces."""
    out: set[float] = set()

    def walk(u: tuple) -> None:
        if u[0] == "where" or u[0] in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not"):
            sets = _cond_sets(u[1] if u[0] == "where" else u)
            if sets is not None and sets[0] is None:
                out.update(v for part in sets[1] + sets[2] for v in part if math.isfinite(v))
        for c in u[1:]:
            if isinstance(c, tuple):
                walk(c)

    walk(t)
    return tuple(sorted(out))


def tree_enclosure(t: tuple, lo, hi):
    """Ends of the node, [−inf, inf] where its float value may be NaN, broadcast to lo (to its
    first array when ``lo`` is a tuple of per-variable arrays)."""
    rlo, rhi, nan, _ = _enc(t, lo, hi)
    if nan is not False:
        rlo, rhi = np.where(nan, -_INF, rlo), np.where(nan, _INF, rhi)
    return _clean(*np.broadcast_arrays(rlo, rhi, lo[0] if isinstance(lo, tuple) else lo)[:2])


# -- proofs on the whole domain: evenness and monotonicity in |x| -------------------------------
_EVEN, _ODD = 1, 2  # bit flags of :func:`parity`: f(σx) = f(x), f(σx) = −f(x)
_CMP = ("lt", "le", "gt", "ge", "eq", "ne")


def parity(t: tuple, flips: frozenset | None = None) -> int:
    """Which of ``_EVEN`` | ``_ODD`` node t is proven to be, by construction, under the sign flip σ
    of the 1-D x (``flips`` None) or of the variables x_i, i ∈ ``flips`` (d-D trees).

    Exact for real numbers, whatever the values: x and a flipped x_i are odd, constants and other
    variables even (0 both); ±, min, max, exp, log, sqrt and where keep a common parity of their
    arguments (min/max and the functions only evenness); × and ÷ multiply parities (odd·odd =
    even); abs and squares of an even or odd argument are even, and so is a**n for an even integer
    n (odd n keeps a's parity; a real exponent needs an even base); a comparison or a logical
    operation of even arguments is an even condition, and ``==``/``!=`` of odd ones too.
    """
    op = t[0]
    if op == "x":
        return _ODD if flips is None else _EVEN
    if op == "var":
        return _ODD if flips is not None and t[1] in flips else _EVEN
    if op == "const":
        return _EVEN | (_ODD if t[2] == t[3] == 0.0 else 0)
    p = [parity(c, flips) for c in t[1:]]
    if op == "neg":
        return p[0]
    if op in ("add", "sub"):
        return p[0] & p[1]
    if op in ("mul", "div"):
        e = bool((p[0] & p[1] & _EVEN) or (p[0] & p[1] & _ODD))
        o = bool((p[0] & _EVEN and p[1] & _ODD) or (p[0] & _ODD and p[1] & _EVEN))
        return (_EVEN if e else 0) | (_ODD if o else 0)
    if op in ("abs", "sq"):
        return _EVEN if p[0] else 0
    if op == "pow":
        if not p[1] & _EVEN:
            return 0
        if p[0] & _EVEN:
            return _EVEN
        n = _exact_int(t[2])
        if p[0] & _ODD and n is not None:
            return _EVEN if n % 2 == 0 else _ODD
        return 0
    if op in ("exp", "log", "sqrt", "min", "max", "and", "or", "not", "lt", "le", "gt", "ge"):
        return _EVEN if all(q & _EVEN for q in p) else 0
    if op in ("eq", "ne"):
        return _EVEN if (p[0] & p[1]) else 0
    if op == "where":
        if p[0] & _EVEN:
            return p[1] & p[2]
        # where(x > 0, a, b) (or >=, <, <=, against an exact 0): even when a(x) = b(−x) identically,
        # shown by equal canonical forms (at x = 0 both sides are the same point)
        c = t[1]
        if (flips is None and c[0] in ("gt", "ge", "lt", "le") and c[1] == ("x",) and c[2][0] == "const"
                and c[2][2] == c[2][3] == 0.0 and _canon(t[2]) == _canon(t[3], flip=True)):
            return _EVEN
        return 0
    return 0


def _canon(t: tuple, flip: bool = False) -> tuple:
    """A canonical form of t (of t(−x) when ``flip``), 1-D trees: signs pushed outward by exact
    identities (−(−a) = a, |−a| = |a|, (−a)² = a², (−a)^n = ±a^n for integer n, (−a)·b = −(a·b),
    a/(−b) = −(a/b), a − (−b) = a + b, (−a) + b = b − a) and the arguments of + sorted.  Equal
    canonical forms are equal functions; unequal ones prove nothing."""
    op = t[0]
    if op == "x":
        return ("neg", t) if flip else t
    if op in ("const", "var"):
        return t
    k = [_canon(c, flip) for c in t[1:]]

    def strip(u):
        return (u[1], True) if u[0] == "neg" else (u, False)

    if op == "neg":
        a, neg = strip(k[0])
        return a if neg else ("neg", a)
    if op in ("abs", "sq"):
        return (op, strip(k[0])[0])
    if op == "pow" and _exact_int(t[2]) is not None:
        a, neg = strip(k[0])
        r = ("pow", a, k[1])
        return ("neg", r) if neg and _exact_int(t[2]) % 2 else r
    if op in ("mul", "div"):
        (a, na), (b, nb) = strip(k[0]), strip(k[1])
        r = (op, *sorted((a, b), key=repr)) if op == "mul" else (op, a, b)
        return ("neg", r) if na != nb else r
    if op in ("add", "sub"):
        a, (b, nb) = k[0], strip(k[1])
        if op == "sub":
            nb = not nb
        if a[0] == "neg" and not nb:  # (−a) + b = b − a
            return ("sub", b, a[1])
        if nb:
            return ("sub", a, b)
        return ("add", *sorted((a, b), key=repr))
    return (op, *k)


def _decide(c: tuple, lo: float, hi: float) -> bool | None:
    """The value of condition c on the open interval (lo, hi) (at the point lo when lo == hi),
    when it is the same at every point there; None when undecided."""
    if lo < hi:
        sets = _cond_sets(c)
        if sets is not None and sets[0] is None:
            t = any(a < hi and b > lo for a, b in sets[1])
            f = any(a < hi and b > lo for a, b in sets[2])
            if t != f:
                return t
    with np.errstate(all="ignore"):
        clo, chi = tree_enclosure(c, np.float64(lo), np.float64(hi))
    if float(clo) > 0:
        return True
    if float(chi) == 0.0 and float(clo) == 0.0:
        return False
    return None


_ONE, _NIL = ("const", 1.0, 1.0, 1.0), ("const", 0.0, 0.0, 0.0)


def _select(t: tuple, lo: float, hi: float, forced: dict | None = None) -> tuple | None:
    """t with every ``where`` and comparison replaced by what it is on (lo, hi) (the point lo
    when lo == hi; a condition in ``forced`` by the value given there), or None when one is
    undecided there."""
    op = t[0]
    if op in ("x", "var", "const"):
        return t
    if op == "where":
        d = forced[t[1]] if forced and t[1] in forced else _decide(t[1], lo, hi)
        return None if d is None else _select(t[2] if d else t[3], lo, hi, forced)
    if op in _CMP or op in ("and", "or", "not"):
        d = forced[t] if forced and t in forced else _decide(t, lo, hi)
        return None if d is None else (_ONE if d else _NIL)
    kids = [_select(c, lo, hi, forced) for c in t[1:]]
    return None if any(k is None for k in kids) else (op, *kids)


def _undecided(t: tuple, lo: float, hi: float, out: set) -> None:
    """Collect the conditions of t (of ``where`` and bare comparisons) undecided on (lo, hi)."""
    op = t[0]
    if op in ("x", "var", "const"):
        return
    if op == "where" or op in _CMP or op in ("and", "or", "not"):
        c = t[1] if op == "where" else t
        if _decide(c, lo, hi) is None:
            out.add(c)
            if op != "where":
                return
    for u in t[1:]:
        if isinstance(u, tuple):
            _undecided(u, lo, hi, out)


def _split_piece(t: tuple, a: float, b: float) -> tuple[tuple, tuple] | None:
    """(g_below, g_above) on a piece (a, b), 0 <= a, where one condition ``x`` or ``abs(x)``
    compared with a constant is undecided (its threshold lies inside, e.g. a decimal such as 0.76
    that is no float): on (a, b) the condition switches once, from its value below the threshold
    (g_below) to its value above (g_above).  None when the piece is not of that form."""
    if a < 0:
        return None
    conds: set = set()
    _undecided(t, a, b, conds)
    if len(conds) != 1:
        return None
    (c,) = conds
    if not (c[0] in ("lt", "le", "gt", "ge") and c[1] in (("x",), ("abs", ("x",))) and c[2][0] == "const"):
        return None
    below = c[0] in ("lt", "le")  # its value for x below the threshold
    g_lo, g_hi = _select(t, a, b, {c: below}), _select(t, a, b, {c: not below})
    return None if g_lo is None or g_hi is None else (g_lo, g_hi)


def _point_enclosure(t: tuple, x: float) -> tuple[float, float]:
    with np.errstate(all="ignore"):
        lo, hi = tree_enclosure(t, np.float64(x), np.float64(x))
    return float(lo), float(hi)


#: pieces an interval is cut into, and bisection rounds, when proving a piece monotone
MONOTONE_PIECES, MONOTONE_ROUNDS, MONOTONE_MAX = 64, 24, 1 << 15


def _nondecreasing_on(g: tuple, a: float, b: float) -> bool:
    """Whether the where-free tree g is proven continuous and nondecreasing on [a, b] (b may be
    inf): an interval derivative >= 0 on every piece of a cover of [a, b] (pieces that fail are
    bisected a few rounds; the last piece of an unbounded interval must succeed as it is)."""
    if math.isfinite(b):
        e = np.linspace(a, b, MONOTONE_PIECES + 1)
    else:
        top = max(abs(a), 1.0)
        e = np.unique(np.concatenate([[a], a + np.geomspace(1e-9 * top, 1e300, 8 * MONOTONE_PIECES)]))
        e = np.append(e[e < 1e300], _INF) if a < 1e300 else np.array([a, _INF])
    lo, hi = e[:-1], e[1:]
    for _ in range(MONOTONE_ROUNDS):
        with np.errstate(all="ignore"):
            _, d, smooth = _dual(g, lo, hi)
            dlo = np.broadcast_to(_nan_free(*np.broadcast_arrays(d[0], d[1], lo)[:2])[0], lo.shape)
        ok = np.broadcast_to(np.asarray(smooth, dtype=bool), lo.shape) & (dlo >= 0)
        if ok.all():
            return True
        lo, hi = lo[~ok], hi[~ok]
        if not np.isfinite(hi).all() or lo.size * 2 > MONOTONE_MAX:
            return False
        mid = np.where(lo > 0, np.sqrt(lo) * np.sqrt(hi), 0.5 * lo + 0.5 * hi)
        mid = np.where((mid > lo) & (mid < hi), mid, 0.5 * lo + 0.5 * hi)
        if not ((mid > lo) & (mid < hi)).all():
            return False
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
    return False


def _nondecreasing_from(t: tuple, start: float) -> bool:
    """Whether the 1-D tree t is proven nondecreasing on [start, ∞): cut at the breakpoints of its
    conditions, each open piece's expression (its ``where`` decided) continuous and nondecreasing
    on the closed piece, and at each cut c the jumps upward: g_left(c) <= L(c) <= g_right(c)."""
    cuts = [c for c in _breakpoints(t) if c > start]
    if len(cuts) > MAX_BREAKPOINTS:
        return False
    ends = [start, *cuts, _INF]
    prev = prev_split = None
    for a, b in zip(ends[:-1], ends[1:]):
        g = g_right = _select(t, a, b)
        split = None
        if g is None:  # a threshold inside the piece: both sides nondecreasing, and every switch upward
            split = _split_piece(t, a, b)
            if split is None:
                return False
            g, g_right = split
            hi_below = float(np.max(tree_enclosure(g, np.float64(a), np.float64(b))[1]))
            lo_above = float(np.min(tree_enclosure(g_right, np.float64(a), np.float64(b))[0]))
            if not (hi_below <= lo_above and _nondecreasing_on(g_right, a, b)):
                return False
        if not _nondecreasing_on(g, a, b):
            return False
        if prev is not None:
            at = _select(t, a, a)
            at_split = None if at is not None else _split_piece(t, a, a)  # L(a) is one of the pair
            ats = [at] if at is not None else list(at_split or [])
            if not ats:
                return False
            for at in ats:
                # next to a split piece with the same pair the order is proven there: L(a) = g_below(a)
                # means the threshold is on a's far side, where only g_below is taken, and g_below <= g_above
                if at_split is None or at_split != prev_split:
                    if at != prev and not _point_enclosure(prev, a)[1] <= _point_enclosure(at, a)[0]:
                        return False
                if at_split is None or at_split != split:
                    if at != g and not _point_enclosure(at, a)[1] <= _point_enclosure(g, a)[0]:
                        return False
        prev, prev_split = g_right, split
    return True


@lru_cache(maxsize=256)
def proves_symmetric_nondecreasing(t: tuple, integer: bool) -> bool:
    """Whether L(x) = L(−x) for every x and L is nondecreasing in |x| on the domain (ℤ when
    ``integer``, else ℝ), proven for the 1-D tree t: evenness by :func:`parity`, monotonicity by
    :func:`_nondecreasing_from` on [0, ∞); on ℤ, failing that, on [K, ∞) for K = 1, 2, 4, ...,
    4096 with L(k) <= L(k+1) proven by point enclosures for the integers k < K."""
    if not parity(t) & _EVEN:
        return False
    if _nondecreasing_from(t, 0.0):
        return True
    if not integer:
        return False
    k = np.arange(0.0, 4097.0)
    with np.errstate(all="ignore"):
        lo, hi = tree_enclosure(t, k, k)
    steps = np.flatnonzero(~(hi[:-1] <= lo[1:]))  # k with L(k) <= L(k+1) not proven
    K = 1
    while K <= 4096:
        if (steps.size == 0 or steps[0] >= K) and _nondecreasing_from(t, float(K)):
            return True
        K *= 2
    return False


# -- parsing -------------------------------------------------------------------------------------
_NODE_NAMES = {
    ast.Subscript: "subscripts ('[...]')", ast.Lambda: "lambda", ast.JoinedStr: "f-strings",
    ast.ListComp: "comprehensions", ast.SetComp: "comprehensions", ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions", ast.BoolOp: "'and'/'or' (use & and |)",
    ast.IfExp: "'a if c else b' (use where(c, a, b))", ast.NamedExpr: "assignment expressions",
    ast.Starred: "starred arguments", ast.List: "lists", ast.Tuple: "tuples", ast.Set: "sets", ast.Dict: "dicts",
}


def _describe(n: ast.AST) -> str:
    if isinstance(n, ast.Attribute):
        return f"attribute access ('.{n.attr}')"
    if isinstance(n, ast.Constant):
        kind = {str: "string", bytes: "bytes", complex: "complex"}.get(type(n.value), type(n.value).__name__)
        return f"{kind} constants ({n.value!r:.30})"
    return _NODE_NAMES.get(type(n), f"{type(n).__name__} nodes")


class _Compiler:
    """Checks an :mod:`ast` tree against the whitelist and compiles it into tuples.

    ``dim`` None is the 1-D cost (``x`` and ``x1`` give the node ``("x",)``); an integer d >= 1
    gives ``("var", i)`` for x(i+1), i < d, and bare ``x`` only when d = 1; there ``a**2`` becomes
    ``("sq", a)``, evaluated as a·a and enclosed exactly where the float square is exact (so sums of
    squares at lattice points are exact, whatever the order of their terms).
    """

    def __init__(self, text: str, dim: int | None = None):
        self.text, self.dim = text, dim
        self.names = "x" if dim is None else "x1 (or x)" if dim == 1 else f"x1..x{dim}"
        self.allowed = _ALLOWED if dim is None else _ALLOWED.replace(" x,", f" {self.names},")

    def err(self, why: str) -> CostError:
        return CostError(f"invalid cost expression {' '.join(self.text.split())[:80]!r}: {why}")

    def compile(self, n: ast.AST, depth: int) -> tuple[tuple, bool, bool]:
        """Return (tree, is_boolean, mentions_x)."""
        if depth > MAX_DEPTH:
            raise self.err(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(n, ast.Constant) and isinstance(n.value, (bool, int, float)):
            return self.number(n), isinstance(n.value, bool), False
        if isinstance(n, ast.Name):
            return self.name(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Invert)):
            a, boolean, has_x = self.compile(n.operand, depth + 1)
            if isinstance(n.op, ast.UAdd):
                return a, boolean, has_x
            if isinstance(n.op, ast.Invert) and not boolean:
                raise self.err("'~' needs a comparison result")
            return self.fold(("not" if isinstance(n.op, ast.Invert) else "neg", a)), boolean, has_x
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            raise self.err("'not' is not allowed (use ~)")
        if isinstance(n, ast.BinOp):
            op = _BINOPS.get(type(n.op))
            if op is None:
                raise self.err(f"operator {type(n.op).__name__}: not allowed; {self.allowed}")
            (a, ba, xa), (b, bb, xb) = self.compile(n.left, depth + 1), self.compile(n.right, depth + 1)
            if op in ("and", "or") and not (ba and bb):
                raise self.err(f"'{'&' if op == 'and' else '|'}' needs comparison results on both sides")
            if op == "pow" and not xb and not abs(b[1]) <= MAX_EXPONENT:
                raise self.err(f"constant exponent {b[1]:g} exceeds {MAX_EXPONENT:g} in absolute value")
            if op == "pow" and b == ("const", 2.0, 2.0, 2.0):
                return self.fold(("sq", a)), False, xa  # a*a, exact where it is (see interval_square)
            if op == "mul" and ba != bb:  # an indicator product a*(cond) is where(cond, a, 0)
                cond, val = (a, b) if ba else (b, a)
                return self.fold(("where", cond, val, ("const", 0.0, 0.0, 0.0))), False, xa or xb
            return self.fold((op, a, b)), op in ("and", "or"), xa or xb
        if isinstance(n, ast.Compare):
            ops = [_CMPOPS.get(type(o)) for o in n.ops]
            if None in ops:
                raise self.err("only the comparisons < <= > >= == != are allowed")
            terms = [self.compile(c, depth + 1) for c in [n.left, *n.comparators]]
            parts = [self.fold((op, terms[i][0], terms[i + 1][0])) for i, op in enumerate(ops)]
            return reduce(lambda p, q: self.fold(("and", p, q)), parts), True, any(t[2] for t in terms)
        if isinstance(n, ast.Call):
            return self.call(n, depth)
        raise self.err(f"{_describe(n)}: not allowed; {self.allowed}")

    def name(self, name: str) -> tuple[tuple, bool, bool]:
        if name.startswith("_"):
            raise self.err(f"names starting with '_' are not allowed ({name!r})")
        m = VARIABLE_NAME.match(name)
        if name == "x" or m:
            return self.variable(int(m.group(1)) if m else 0), False, True
        if name in CONSTANTS:
            v = CONSTANTS[name]
            return ("const", v, float(_dn(v)), float(_up(v))), False, False
        if name in FUNCTIONS:
            raise self.err(f"function {name!r} must be called")
        raise self.err(f"unknown name {name!r} (allowed names: {self.names}, pi, e)")

    def variable(self, k: int) -> tuple:
        """Node of x (k = 0) or of xk."""
        d = 1 if self.dim is None else self.dim
        if k == 0 and d > 1:
            raise CostError(f"cost expression uses bare x but the problem has dim {d} (write x1..x{d})")
        if k > d:
            have = "variable x or x1" if d == 1 else f"variables x1..x{d}"
            raise CostError(f"cost expression uses x{k} but the problem has dim {d} ({have})")
        return ("x",) if self.dim is None else ("var", max(k, 1) - 1)

    def call(self, n: ast.Call, depth: int) -> tuple[tuple, bool, bool]:
        if not isinstance(n.func, ast.Name):
            raise self.err(f"{_describe(n.func)}: not allowed; {self.allowed}")
        name = n.func.id
        if name.startswith("_"):
            raise self.err(f"names starting with '_' are not allowed ({name!r})")
        if name not in FUNCTIONS:
            raise self.err(f"unknown function {name!r} (allowed: {', '.join(FUNCTIONS)})")
        if n.keywords:
            raise self.err(f"keyword arguments to {name}() are not allowed")
        if any(isinstance(a, ast.Starred) for a in n.args):
            raise self.err("starred arguments are not allowed")
        if len(n.args) != FUNCTIONS[name]:
            raise self.err(f"{name}() takes {FUNCTIONS[name]} argument(s), got {len(n.args)}")
        args = [self.compile(a, depth + 1) for a in n.args]
        if name == "where" and not args[0][1]:
            raise self.err("where(cond, a, b) needs a comparison as cond")
        return self.fold((name, *(a[0] for a in args))), False, any(a[2] for a in args)

    def number(self, n: ast.Constant) -> tuple:
        """A literal as ("const", value, lo, hi); lo < hi unless the literal is exactly a float."""
        v, text = n.value, ast.get_source_segment(self.text, n) or ""
        try:
            f = float(v)
        except OverflowError:
            raise self.err(f"number {text[:20]}... is too large") from None
        if not math.isfinite(f):
            raise self.err(f"number {text} is not finite")
        try:
            exact = int(f) == v if isinstance(v, int) else Fraction(text.replace("_", "")) == Fraction(f)
        except (ValueError, ZeroDivisionError):
            exact = False
        return ("const", f, f, f) if exact else ("const", f, float(_dn(f)), float(_up(f)))

    @staticmethod
    def fold(t: tuple) -> tuple:
        """Replace an operation on constants by a constant with value and enclosure."""
        if any(c[0] != "const" for c in t[1:]):
            return t
        with np.errstate(all="ignore"):
            lo, hi = tree_enclosure(t, 0.0, 0.0)
            return ("const", float(evaluate_tree(t, 0.0)), float(lo), float(hi))


def parse_expr(text: str, dim: int | None = None) -> tuple:
    """Compile an expression in x (``dim`` None: the 1-D cost) or in x1..x``dim`` into a tree."""
    comp = _Compiler(text, dim)
    if len(text) > MAX_LENGTH:
        raise comp.err(f"longer than {MAX_LENGTH} characters")
    if not text.strip():
        if dim is not None:
            raise CostError(f"cost is empty (use l1, l2, l2sq, linf or an expression in {comp.names})")
        raise CostError("cost is empty (use abs, square, pow:P or an expression in x)")
    try:
        root = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise comp.err(f"not a valid expression ({getattr(exc, 'msg', None) or type(exc).__name__})") from None
    tree, _, has_x = comp.compile(root.body, 1)
    if not has_x and not (0.0 <= tree[1] < _INF):
        raise comp.err(f"a constant cost must be finite and nonnegative, got {tree[1]:g}")
    return tree


def _pow_enc(u, ql, qh):
    """Enclosure of u**q for u >= 0 and q in [ql, qh] (exact values)."""
    p1, p2 = np.power(u, ql), np.power(u, qh)
    return np.maximum(_dn(np.minimum(p1, p2), _WX), 0.0), _up(np.maximum(p1, p2), _WX)


def _pow_diff(u, v, ql, qh):
    """Enclosure of v**q − u**q for 0 <= u <= v and q in [ql, qh], q >= 1, without cancellation.

    For v − u <= u/q (so v <= 2u and v − u is exact by Sterbenz's lemma) it uses
    u^q·expm1(q·log1p((v − u)/u)) with q·log1p(·) <= 1; otherwise (v/u)^q >= 2 and the direct
    difference loses at most a factor 3 in relative accuracy.
    """
    ul, uh = _pow_enc(u, ql, qh)
    vl, vh = _pow_enc(v, ql, qh)
    r = (v - u) / u
    yl, yh = _dn(_dn(np.log1p(_dn(r)), _WX) * ql), _up(_up(np.log1p(_up(r)), _WX) * qh)
    el, eh = np.maximum(_dn(np.expm1(yl), _WX), 0.0), _up(np.expm1(yh), _WX)
    near = (u > 0) & (v - u <= u / qh)
    lo, hi = _clean(np.where(near, _dn(el * ul), _dn(vl - uh)), np.where(near, _up(eh * uh), _up(vh - ul)))
    same = u == v
    return np.where(same, 0.0, np.maximum(lo, 0.0)), np.where(same, 0.0, hi)


# -- the cost ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    """A cost L: ℝ → [0, ∞] of the added noise; build it with :func:`parse_cost`.

    Parameters
    ----------
    spec : str
        Normalised text: ``"abs"``, ``"square"``, ``"pow:P"`` or the expression (whitespace collapsed).
    kind : {"abs", "square", "pow", "expr"}
        Named costs are |x|^power; ``"expr"`` is a checked expression in x.
    power : float or None
        P for the named costs (1 for abs, 2 for square), None for expressions.
    """

    spec: str
    kind: str
    power: float | None = None
    _tree: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("abs", "square", "pow", "expr"):
            raise CostError(f"unknown cost kind {self.kind!r} (allowed: abs, square, pow, expr)")
        if self.kind in ("abs", "square"):
            object.__setattr__(self, "power", 1.0 if self.kind == "abs" else 2.0)
        elif self.kind == "pow" and not (isinstance(self.power, (int, float)) and 0 < self.power <= MAX_EXPONENT):
            raise CostError(f"pow:P needs 0 < P <= {MAX_EXPONENT:g}, got {self.power!r}")
        elif self.kind == "expr" and self._tree is None:
            object.__setattr__(self, "_tree", parse_expr(self.spec))

    def __str__(self) -> str:
        return self.spec

    def __call__(self, x) -> np.ndarray:
        """L(x) in float64, elementwise, with the shape of ``x`` (NaN where L is undefined)."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            if self.kind == "abs":
                return np.abs(x)
            if self.kind == "square":
                return x * x
            if self.kind == "pow":
                return np.abs(x) ** self.power
            return np.array(np.broadcast_to(evaluate_tree(self._tree, x), x.shape), dtype=np.float64)

    def enclose(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure of L over each interval [lo, hi] (broadcast; ends may be ±inf).

        Returns (Llo, Lhi), never NaN, with Llo <= L(t) <= Lhi for every real t in [lo, hi]:
        for the exact real value of L(t), and for its float64 evaluation ``self(t)`` wherever that
        does not overflow (``exp(x)*0`` is 0 for every real x, although its float value at
        x = 800 is NaN).

        Notes
        -----
        Interval arithmetic with outward rounding (``_W1``/``_WF`` above), made as tight as the
        function allows in three ways: an indicator product ``a*(cond)`` is compiled as
        ``where(cond, a, 0)``; [lo, hi] is cut at the breakpoints of every condition that compares
        a chain of x (x under ±, × ÷ by constants, abs, integer powers, exp) with a constant, and
        each branch of ``where`` is enclosed only over the part of the piece where it is taken;
        and on a piece where an interval derivative proves L monotone the enclosure is the
        enclosure of L at the piece's ends.  Named costs and even
        integer powers go through |t| and are tight ([−1, 2]**2 = [0, 4]); other dependencies
        (``x*x``, ``x - x``) are loose.  Division by an interval containing 0 and sqrt, log or a
        real power of an interval reaching below 0 give [−inf, inf]; a comparison gives [0, 0],
        [1, 1] or [0, 1], and [0, 1] when an operand may be NaN; ``where`` takes the hull of both
        branches when undecided.  Where the float value may be NaN anywhere in the interval the
        result is [−inf, inf].  A NaN end of [lo, hi] is read as unbounded.
        """
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
        with np.errstate(all="ignore"):
            lo = np.where(np.isnan(lo), -_INF, np.minimum(lo, CAP))
            hi = np.where(np.isnan(hi), _INF, np.maximum(hi, -CAP))
            if self.kind == "expr":
                return _tight_enclosure(self._tree, lo, hi)
            rlo, rhi = mig_mag(lo, hi)
            if self.kind != "abs":
                c = _W1 if self.kind == "square" else _WF
                rlo, rhi = np.maximum(_dn(np.power(rlo, self.power), c), 0.0), _up(np.power(rhi, self.power), c)
            return rlo, rhi

    def integral(self, a, b, *, pieces: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure (lo, hi) of ∫_a^b L(t) dt for finite a <= b (broadcast arrays).

        Named costs use the antiderivative sign(t)|t|^{P+1}/(P+1) on the parts of [a, b] left and
        right of 0 (they add), evaluated without cancellation (``_pow_diff``): relative width
        ~1e-14.  Expressions split [a, b] into ``pieces`` equal parts and sum width × enclosure
        with outward rounding, which is O(width) loose.
        """
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        if np.any(a > b):
            raise ValueError("integral(a, b) needs a <= b")
        with np.errstate(all="ignore"):
            if self.kind != "expr":
                q = self.power + 1.0
                ql, qh = (q, q) if Fraction(self.power) + 1 == Fraction(q) else (_dn(q), _up(q))
                pl, ph = _pow_diff(np.maximum(a, 0.0), np.maximum(b, 0.0), ql, qh)
                nl, nh = _pow_diff(np.maximum(-b, 0.0), np.maximum(-a, 0.0), ql, qh)
                lo, hi = np.maximum(_dn(add_rounded(pl, nl, True) / qh), 0.0), _up(add_rounded(ph, nh, False) / ql)
                return _clean(np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64))
            if int(pieces) < 1:
                raise ValueError(f"pieces must be >= 1, got {pieces}")
            a_, b_ = a[..., None], b[..., None]
            t = np.clip(a_ + (b_ - a_) * (np.arange(pieces + 1) / pieces), a_, b_)  # nondecreasing
            t[..., 0], t[..., -1] = a, b
            lo, hi = self.enclose(t[..., :-1], t[..., 1:])
            w = t[..., 1:] - t[..., :-1]
            wl, wh = np.maximum(_dn(w), 0.0), _up(w)
            plo = np.where(w == 0, 0.0, _dn(np.where(lo >= 0, wl * lo, wh * lo)))
            phi = np.where(w == 0, 0.0, _up(np.where(hi >= 0, wh * hi, wl * hi)))
            plo, phi = _clean(plo, phi)
            slo, shi = np.zeros(a.shape), np.zeros(a.shape)
            for k in range(pieces):
                slo, shi = _clean(add_rounded(slo, plo[..., k], True), add_rounded(shi, phi[..., k], False))
            return slo, shi

    def growth(self, x0: float) -> tuple[float, float, float] | None:
        """(C, P, R) with L(t) <= C (1+|t|)^P e^{R|t|} for all |t| >= x0, or None if unproven.

        Notes
        -----
        Named costs give (1, P, 0).  Expressions bound |f| on Ω = {|t| >= x0} recursively, C
        rounded up.  At every node an enclosure of f over Ω (cut into ~1000 geometric pieces per
        side) that is finite gives (max |f|, 0, 0).  Otherwise: constant c → (|c|, 0, 0);
        x → (1, 1, 0); a ± b → (Ca + Cb, max P, max R); a·b → (Ca·Cb, Pa + Pb, Ra + Rb);
        a/b → (Ca/m, Pa, Ra) with m = inf_Ω |b| > 0; −a, abs(a) → as a; sqrt(a) with a >= 0 on Ω
        → (√Ca, Pa/2, Ra/2); a**k, constant k > 0 (a >= 0 on Ω unless k is an integer) →
        (Ca^k, k·Pa, k·Ra); k < 0 → (m^k, 0, 0) with m = inf_Ω |a| > 0; exp(a) with Ra = 0 and
        Pa <= 1 → (e^Ca, 0, Ca), as a <= Ca(1+|t|); log(a) with a >= l > 0 on Ω → (K, 0, 0) if
        Pa = Ra = 0, else (K + Pa + Ra, 1, 0), K = |log l| + |log Ca| (log(1+|t|), |t| <= 1+|t|);
        where, min, max → the componentwise max over their value arguments.  Anything else
        (a non-constant exponent, exp of a faster than linear argument, ...) gives None.
        """
        x0 = float(x0)
        if math.isnan(x0):
            return None
        if self.kind != "expr":
            return (1.0, float(self.power), 0.0)
        g = np.concatenate([[0.0], np.geomspace(1e-3, 1e300, 1000)]) + max(x0, 0.0)
        right_hi = np.append(g[1:], _INF)  # pieces [g_i, g_i+1] and [g_last, inf), then mirrored
        lo, hi = np.concatenate([g, -right_hi]), np.concatenate([right_hi, -g])
        with np.errstate(all="ignore"):
            res = tree_growth(self._tree, lo, hi)
        return res if res is not None and all(math.isfinite(v) and v >= 0 for v in res) else None

    def check_rewards_spread(self, scale: float, *, integer: bool = False) -> None:
        """Raise CostError when the cost is smaller far from 0 than anywhere near it.

        Then spreading the noise ever wider lowers the expected cost toward that far value, so
        no optimal noise exists and every LP window would be beaten by a wider one.  Far points
        are ±10^k·scale (k = 3..12); "near" is [−2·scale, 2·scale], sampled on 801 points on ℝ
        and at every integer of it on ℤ (``integer``: only the domain the problem lives on is
        looked at, so x**2 + x, nonnegative on ℤ but not on ℝ, passes there).
        A far value equal to the minimum near 0 also has no optimum (the infimum is only approached);
        a constant cost passes (every noise is optimal).
        """
        if integer:
            r = max(1, int(round(2.0 * scale)))
            near = np.arange(-r, r + 1, dtype=np.float64)
        else:
            near = np.linspace(-2.0, 2.0, 801) * scale
        far = np.outer([1.0, -1.0], 10.0 ** np.arange(3, 13)).ravel() * scale
        if integer:
            far = np.round(far)
        ln = self.check_values(near, "the points near 0")     # a negative cost is reported as such
        with np.errstate(all="ignore"):
            lf = self(far)
        ok_far = lf[np.isfinite(lf)]
        flat = float(ln.max()) <= float(ln.min()) * (1 + 1e-12)      # a constant cost: every noise is optimal
        if ok_far.size and not flat and float(ok_far.min()) <= float(ln.min()) * (1 + 1e-9):
            x = float(far[np.isfinite(lf)][np.argmin(ok_far)])
            raise CostError(
                f"cost {self.spec!r} rewards large noise: L({x:.3g}) = {float(ok_far.min()):.6g} is not above its minimum "
                f"{float(ln.min()):.6g} near 0, so spreading the noise wider never costs more and no optimum exists; use a cost that "
                "grows away from 0")

    def check_values(self, x, where: str = "the grid") -> np.ndarray:
        """Return L(x), or raise CostError at the first x where L is negative, NaN or infinite."""
        x = np.asarray(x, dtype=np.float64)
        y = self(x)
        bad = np.flatnonzero(~(np.isfinite(y) & (y >= 0)))
        if bad.size:
            xv, yv = float(x.ravel()[bad[0]]), float(y.ravel()[bad[0]])
            what = "NaN" if math.isnan(yv) else "infinite" if math.isinf(yv) else f"negative ({yv:.6g})"
            raise CostError(f"cost {self.spec!r} is {what} at x={xv!r} on {where}")
        return y

    def domain_minimum(self, *, integer: bool) -> float:
        """A proven lower bound of L over the whole domain, ℤ (``integer``) or ℝ, and +0.0 or
        more when L is proven nonnegative there; named costs give 0.0.

        Interval arithmetic (:meth:`enclose`) over pieces that cover the domain: on ℤ every
        integer with |k| <= 4096 exactly, then integer ranges growing geometrically to ±∞; on ℝ
        geometric pieces around 0 out to ±∞, where pieces with a negative lower end are
        bisected (a few rounds) so that a touching zero at a dyadic point, (x-1)**2 written
        x**2 - 2*x + 1, is still proven nonnegative.  The value may be below the true minimum
        (never above it); the certificates use it where they need a floor for the cost on
        parts of the domain they do not enumerate.
        """
        return _domain_minimum(self, bool(integer))

    def is_symmetric_nondecreasing(self, *, integer: bool = False) -> bool:
        """Whether L(x) = L(−x) for every x and L is nondecreasing in |x|, **proven** on the whole
        domain (ℤ when ``integer``, else ℝ) — never merely sampled.

        Named costs are both by construction.  Expressions: evenness by construction
        (:func:`parity`: x only under abs, even powers, or as an odd factor of an odd factor, ...),
        monotonicity on [0, ∞) by an interval derivative >= 0 on a cover of each stretch between
        the breakpoints of the ``where`` conditions (out to +∞) and upward jumps at those
        breakpoints; on ℤ also L(k) <= L(k+1) at the first integers with monotonicity beyond.
        False means "not proven" (the caller then uses no reduction that needs it): a cost can be
        symmetric and nondecreasing without a proof being found, e.g. ``abs(x)/(1+abs(x))``
        (interval dependency) or a step at a decimal that is not a float (``abs(x) > 0.76``).
        """
        if self.kind != "expr":
            return True
        return proves_symmetric_nondecreasing(self._tree, bool(integer))

    def breakpoints(self) -> tuple[float, ...]:
        """Where the cost may jump: the finite ends of the condition sets of its ``where`` and
        comparisons (outward-rounded, so a jump at a decimal lies between two listed floats),
        sorted; () for named costs and for conditions that are not chains of x (then unknown)."""
        return () if self.kind != "expr" else _breakpoints(self._tree)

    def is_even(self) -> bool:
        """Whether L(x) = L(−x) for every real x, proven by construction (:func:`parity`); named
        costs are even."""
        return self.kind != "expr" or bool(parity(self._tree) & _EVEN)


@lru_cache(maxsize=256)
def _domain_minimum(cost: "Cost", integer: bool) -> float:
    if cost.kind != "expr":
        return 0.0
    g = np.geomspace(1e-300, 1e300, 2400)
    with np.errstate(all="ignore"):
        if integer:
            k = np.arange(-4096.0, 4097.0)
            lo_pts, _ = cost.enclose(k, k)
            e = np.unique(np.ceil(np.concatenate([[4097.0], g[g > 4097.0]])))
            a, b = e, np.append(e[1:] - 1.0, np.inf)   # [e_i, e_{i+1} − 1], [e_last, ∞)
            a, b = np.concatenate([a, -b]), np.concatenate([b, -a])
            lo, _ = cost.enclose(a, b)
            return float(min(np.min(lo_pts), np.min(lo)))
        a = np.concatenate([[0.0], g])
        b = np.append(g, np.inf)
        a, b = np.concatenate([a, -b]), np.concatenate([b, -a])
        lo, _ = cost.enclose(a, b)
        for _ in range(48):  # bisect the pieces that are not yet proven nonnegative
            bad = lo < 0
            if not bad.any() or bad.sum() > 4096:
                break
            a_bad, b_bad = a[bad], b[bad]
            fin = np.isfinite(a_bad) & np.isfinite(b_bad)
            mid = np.where(fin, 0.5 * a_bad + 0.5 * b_bad, np.where(np.isfinite(a_bad), 2 * np.abs(a_bad) + 1, -2 * np.abs(b_bad) - 1))
            a = np.concatenate([a[~bad], a_bad, mid])
            b = np.concatenate([b[~bad], mid, b_bad])
            lo, _ = cost.enclose(a, b)
        return float(np.min(lo))


def tree_growth(t: tuple, wlo, whi) -> tuple[float, float, float] | None:
    """Growth rule of :meth:`Cost.growth` for node t over the pieces [wlo, whi] of Ω (tuples of
    per-variable arrays for x1..xd, where |t| reads ‖x‖₁)."""
    op = t[0]
    if op == "const":
        return (max(abs(t[2]), abs(t[3])), 0.0, 0.0)
    if op in ("x", "var"):  # |x_i| <= ‖x‖₁ <= 1 + ‖x‖₁ in d dimensions
        return (1.0, 1.0, 0.0)

    def rng(c):  # (inf f, inf |f|, sup |f|) of node c over Ω
        clo, chi = tree_enclosure(c, wlo, whi)
        mig, mag = mig_mag(clo, chi)
        return float(np.min(clo)), float(np.min(mig)), float(np.max(mag))

    mag = rng(t)[2]
    if math.isfinite(mag):
        return (mag, 0.0, 0.0)
    if op in ("add", "sub", "mul", "min", "max", "where"):
        sub = [tree_growth(c, wlo, whi) for c in t[1 if op != "where" else 2:]]
        if None in sub or not all(map(math.isfinite, sub[0] + sub[1])):
            return None
        (ca, pa, ra), (cb, pb, rb) = sub
        F = Fraction
        if op == "mul":
            return (_fup(F(ca) * F(cb)), _fup(F(pa) + F(pb)), _fup(F(ra) + F(rb)))
        return (_fup(F(ca) + F(cb)) if op in ("add", "sub") else max(ca, cb), max(pa, pb), max(ra, rb))
    base = tree_growth(t[1], wlo, whi)
    if op == "sq":
        if base is None or not all(map(math.isfinite, base)):
            return None
        return (_fup(Fraction(base[0]) ** 2), _fup(Fraction(base[1]) * 2), _fup(Fraction(base[2]) * 2))
    if op == "pow":
        return _grow_pow(t, base, *rng(t[1])[:2])
    if base is None or op in ("neg", "abs"):
        return base
    ca, pa, ra = base
    if op == "div":
        m = rng(t[2])[1]
        return (float(_up(ca / m)), pa, ra) if m > 0 else None
    if op == "sqrt":
        return (float(_up(math.sqrt(ca))), pa / 2, ra / 2) if rng(t[1])[0] >= 0 else None
    if op == "exp":
        return (float(_up(np.exp(ca), _WF)), 0.0, ca) if ra == 0 and pa <= 1 else None
    if op == "log":
        low = rng(t[1])[0]
        if not (low > 0 and ca > 0):
            return None
        k = float(_up(_up(abs(math.log(low)), _WF) + _up(abs(math.log(ca)), _WF)))
        return (k, 0.0, 0.0) if pa == 0 and ra == 0 else (float(_up(k + pa + ra)), 1.0, 0.0)
    return None


def _grow_pow(t: tuple, base, low: float, mig: float) -> tuple[float, float, float] | None:
    """Growth of a**k for a constant k in [kl, kh]; ``low``, ``mig`` are inf a and inf |a| on Ω."""
    if t[2][0] != "const" or (_exact_int(t[2]) is None and low < 0):
        return None
    kl, kh, n = t[2][2], t[2][3], _exact_int(t[2])
    if kl > 0 and base is not None and all(map(math.isfinite, base)):
        ca, pa, ra = base
        c = _fup(Fraction(ca) ** n) if n is not None else float(_up(max(np.power(ca, kl), np.power(ca, kh)), _WF))
        return (c, _fup(Fraction(pa) * Fraction(kh)), _fup(Fraction(ra) * Fraction(kh)))
    if kh < 0 and mig > 0:
        return (float(_up(max(np.power(mig, kl), np.power(mig, kh)), _WF)), 0.0, 0.0)
    return None


CostLike = Cost | str


def parse_cost(text: str) -> Cost:
    """Parse ``abs``, ``square``, ``pow:P`` (0 < P <= 64) or an expression in x (or ``x1``, the same).

    Raises
    ------
    CostError
        One line naming the offending construct or value.
    """
    if not isinstance(text, str):
        raise CostError(f"cost must be a string, got {type(text).__name__}")
    s = text.strip()
    key = s.lower()
    if key in ("abs", "square"):
        return Cost(key, key, 1.0 if key == "abs" else 2.0)
    if key.startswith("pow:"):
        try:
            p = float(key[4:])
        except ValueError:
            raise CostError(f"pow:P needs a number P, got {s[4:]!r}") from None
        if not (0.0 < p <= MAX_EXPONENT):
            raise CostError(f"pow:P needs 0 < P <= {MAX_EXPONENT:g}, got {s[4:].strip()!r}")
        return Cost(f"pow:{int(p) if p.is_integer() else repr(p)}", "pow", p)
    return Cost(" ".join(s.split()), "expr", None, parse_expr(text))


def as_cost(obj: CostLike) -> Cost:
    """Return ``obj`` if it is a :class:`Cost`, else :func:`parse_cost` of the string."""
    if isinstance(obj, Cost):
        return obj
    if isinstance(obj, str):
        return parse_cost(obj)
    raise CostError(f"cost must be a Cost or a string, got {type(obj).__name__}")
