"""Proofs about a cost on the whole domain: evenness by construction (:func:`parity`) and
monotonicity in |x| (:func:`proves_symmetric_nondecreasing`), from interval derivatives over a cover
of [0, ∞) cut at the breakpoints.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from optmech.costs.interval import (INF, MAX_BREAKPOINTS, breakpoints, condition_sets, derivative_enclosure, exact_int,
                                    nan_free, tree_enclosure)


# -- proofs on the whole domain: evenness and monotonicity in |x| -------------------------------
EVEN, ODD = 1, 2  # bit flags of :func:`parity`: f(σx) = f(x), f(σx) = −f(x)
_CMP = ("lt", "le", "gt", "ge", "eq", "ne")


def parity(t: tuple, flips: frozenset | None = None) -> int:
    """Which of ``EVEN`` | ``ODD`` node t is proven to be, by construction, under the sign flip σ
    of the 1-D x (``flips`` None) or of the variables x_i, i ∈ ``flips`` (d-D trees).

    Exact for real numbers, whatever the values: x and a flipped x_i are odd, constants and other
    variables even (0 both); ±, min, max, exp, log, sqrt and where keep a common parity of their
    arguments (min/max and the functions only evenness); × and ÷ multiply parities (odd·odd =
    even); abs and squares of an even or odd argument are even, and so is a**n for an even integer
    n (odd n keeps a's parity; a real exponent needs an even base); a comparison or a logical
    operation of even arguments is an even condition, and ``==``/``!=`` of odd ones too.

    >>> from optmech.costs import parse_expr
    >>> parity(parse_expr("abs(x) + x**2")) == EVEN, parity(parse_expr("x**3")) == ODD
    (True, True)
    >>> parity(parse_expr("x + 1"))               # neither
    0
    """
    op = t[0]
    if op == "x":
        return ODD if flips is None else EVEN
    if op == "var":
        return ODD if flips is not None and t[1] in flips else EVEN
    if op == "const":
        return EVEN | (ODD if t[2] == t[3] == 0.0 else 0)
    p = [parity(c, flips) for c in t[1:]]
    if op == "neg":
        return p[0]
    if op in ("add", "sub"):
        return p[0] & p[1]
    if op in ("mul", "div"):
        e = bool((p[0] & p[1] & EVEN) or (p[0] & p[1] & ODD))
        o = bool((p[0] & EVEN and p[1] & ODD) or (p[0] & ODD and p[1] & EVEN))
        return (EVEN if e else 0) | (ODD if o else 0)
    if op in ("abs", "sq"):
        return EVEN if p[0] else 0
    if op == "pow":
        if not p[1] & EVEN:
            return 0
        if p[0] & EVEN:
            return EVEN
        n = exact_int(t[2])
        if p[0] & ODD and n is not None:
            return EVEN if n % 2 == 0 else ODD
        return 0
    if op in ("exp", "log", "sqrt", "min", "max", "and", "or", "not", "lt", "le", "gt", "ge"):
        return EVEN if all(q & EVEN for q in p) else 0
    if op in ("eq", "ne"):
        return EVEN if (p[0] & p[1]) else 0
    if op == "where":
        if p[0] & EVEN:
            return p[1] & p[2]
        # where(x > 0, a, b) (or >=, <, <=, against an exact 0): even when a(x) = b(−x) identically,
        # shown by equal canonical forms (at x = 0 both sides are the same point)
        c = t[1]
        if (flips is None and c[0] in ("gt", "ge", "lt", "le") and c[1] == ("x",) and c[2][0] == "const"
                and c[2][2] == c[2][3] == 0.0 and _canon(t[2]) == _canon(t[3], flip=True)):
            return EVEN
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
    if op == "pow" and exact_int(t[2]) is not None:
        a, neg = strip(k[0])
        r = ("pow", a, k[1])
        return ("neg", r) if neg and exact_int(t[2]) % 2 else r
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
        sets = condition_sets(c)
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
        e = np.append(e[e < 1e300], INF) if a < 1e300 else np.array([a, INF])
    lo, hi = e[:-1], e[1:]
    for _ in range(MONOTONE_ROUNDS):
        with np.errstate(all="ignore"):
            _, d, smooth = derivative_enclosure(g, lo, hi)
            dlo = np.broadcast_to(nan_free(*np.broadcast_arrays(d[0], d[1], lo)[:2])[0], lo.shape)
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
    cuts = [c for c in breakpoints(t) if c > start]
    if len(cuts) > MAX_BREAKPOINTS:
        return False
    ends = [start, *cuts, INF]
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
    4096 with L(k) <= L(k+1) proven by point enclosures for the integers k < K.

    >>> from optmech.costs import parse_expr
    >>> proves_symmetric_nondecreasing(parse_expr("min(abs(x), 2)"), integer=False)
    True
    >>> proves_symmetric_nondecreasing(parse_expr("-abs(x)"), integer=True)
    False
    """
    if not parity(t) & EVEN:
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


