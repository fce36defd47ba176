r"""Proofs that a d-D cost expression is at most a named cost almost everywhere on ℝ^d [derived].

If L(x) <= L_h(x) for almost every x ∈ ℝ^d, then E L(X) <= E L_h(X) for every noise X with a density,
so a law with an exact E L_h (the staircase in a norm, the Laplace laws: :mod:`optmech.mechanisms`) is a
certified upper end for V*(L) too.  :func:`dominating_named` proves L <= L_h for the named costs h
(``l1``, ``l2sq``, ``linf``, ``l2``) by three exact steps and one interval evaluation:

1. **Condition boxes.**  Every condition of L (of its ``where`` and comparisons; min/max read as
   a <= b where that is one) must be a condition on one variable whose true and false sets
   :func:`optmech.costs.interval.condition_sets` encloses (closed unions of intervals).  Their finite
   ends cut each axis into open intervals; on each open box (a product of them) each condition is
   constant, decided exactly as in :func:`optmech.costs.proofs` (an open interval meets a closed
   one [a, b] iff a < hi and b > lo).  The cuts' hyperplanes x_i = b are a null set: they are left out.
2. **Selection.**  On a box, every ``where`` is replaced by its branch and every comparison by 0 or 1:
   L equals that tree on the box.  A condition still undecided there (a threshold that is no float
   leaves a sliver between its rounded ends) gives both branches, each proven in turn.
3. **Cancellation.**  The tree and L_h (written as a tree: Σ|x_i|, Σx_i², max|x_i|, √Σx_i²) are
   flattened into sums of terms c·u (through ``add``, ``sub``, ``neg`` and products with an exactly known
   constant; c an exact rational), and the difference is rebuilt as Σ (a_u − b_u)·u over the distinct
   terms u, so that common terms cancel identically (an identity of real numbers).  This is what
   interval arithmetic alone cannot do on an unbounded box: |x1| + |x2| − (|x1| + |x2|) encloses to
   [−inf, inf] there, while its cancelled form is 0.
4. **Enclosure.**  The difference of what is left is enclosed on the box's closure (ends ±inf allowed)
   by :func:`optmech.costs.interval.tree_enclosure`, whose outward rounding may leave a tiny positive
   upper end where the exact difference is 0 (3 − 3): the box is proven with slack η when its upper
   end is η <= ``MAX_SLACK``.

Every box proven gives L <= L_h + η on the union of the open boxes, that is almost everywhere, with η
the largest slack: E L(X) <= E L_h(X) + η.  Anything
else (a condition on two variables, an undecided condition, too many boxes, a positive upper end)
proves nothing and returns None for that h.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from optmech.costs.interval import condition_sets, fraction_up, tree_enclosure

__all__ = ["MAX_BOXES", "MAX_BRANCHES", "MAX_SLACK", "condition_cuts", "dominating_named", "linear_terms", "named_tree",
           "proves_at_most"]

#: at most this many condition boxes are tried
MAX_BOXES = 4096
#: the largest slack η accepted in L <= L_h + η (the outward rounding of exact cancellations)
MAX_SLACK = 1e-9
#: at most this many branch combinations per box (undecided conditions are proven branch by branch)
MAX_BRANCHES = 64
_CMP = ("lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not")
_ONE, _NIL = ("const", 1.0, 1.0, 1.0), ("const", 0.0, 0.0, 0.0)


def named_tree(kind: str, d: int) -> tuple:
    """The named cost ``kind`` on ℝ^d as an expression tree (the node shapes of :func:`optmech.costs.parse_expr`)."""
    xs = [("var", i) for i in range(d)]
    if kind in ("l1", "linf"):
        terms = [("abs", x) for x in xs]
    elif kind in ("l2", "l2sq"):
        terms = [("sq", x) for x in xs]
    else:
        raise ValueError(f"no tree for the named cost {kind!r}")
    op = "max" if kind == "linf" else "add"
    t = terms[0]
    for u in terms[1:]:
        t = (op, t, u)
    return ("sqrt", t) if kind == "l2" else t


def _conditions(t: tuple, out: list) -> bool:
    """Collect the conditions of t (where, comparisons, min/max as a <= b); False if one is not on one variable."""
    op = t[0]
    if op in ("x", "var", "const"):
        return True
    if op == "where" or op in _CMP or op in ("min", "max"):
        c = t[1] if op == "where" else (("le", t[1], t[2]) if op in ("min", "max") else t)
        sets = condition_sets(c)
        if sets is not None and sets[0] is not None:
            out.append(sets)
        elif op not in ("min", "max"):  # min and max need no cut: interval arithmetic encloses them as they are
            return False
        if op not in ("where", "min", "max"):
            return True
    return all(_conditions(u, out) for u in t[1:] if isinstance(u, tuple))


def _decide(c: tuple, box: list) -> bool | None:
    """The value of condition c on the open box (None when it changes there)."""
    sets = condition_sets(c)
    if sets is None or sets[0] is None:
        return None
    lo, hi = box[sets[0]]
    meets_t = any(a < hi and b > lo for a, b in sets[1])
    meets_f = any(a < hi and b > lo for a, b in sets[2])
    return meets_t if meets_t != meets_f else None


def _select(t: tuple, box: list) -> list[tuple]:
    """The trees L may equal on the open box: every decided ``where`` (comparison, min/max) replaced by its
    branch (0 or 1, the argument taken); an undecided one by each of its branches in turn (the value at
    any point is one of them).  At most ``MAX_BRANCHES`` trees (then the list is cut to [] : no proof)."""
    op = t[0]
    if op in ("x", "var", "const"):
        return [t]
    if op == "where":
        d = _decide(t[1], box)
        picks = [t[2]] if d is True else [t[3]] if d is False else [t[2], t[3]]
        return _cap([u for p in picks for u in _select(p, box)])
    if op in _CMP:
        d = _decide(t, box)
        return [_ONE] if d is True else [_NIL] if d is False else [_ONE, _NIL]
    if op in ("min", "max"):
        d = _decide(("le", t[1], t[2]), box)  # a <= b on the whole box: min is a, max is b
        if d is not None:
            return _select(t[1] if (d == (op == "min")) else t[2], box)
    kids = [_select(u, box) for u in t[1:]]
    if any(not k for k in kids):
        return []
    return _cap([(op, *combo) for combo in itertools.islice(itertools.product(*kids), MAX_BRANCHES + 1)])


def _cap(trees: list) -> list:
    return trees if len(trees) <= MAX_BRANCHES else []


def _terms(t: tuple, coef: Fraction, out: list) -> None:
    """t as a sum of terms c·u: (c, u) pairs, c an exact rational (through +, −, negation and products
    with an exactly known constant)."""
    op = t[0]
    if op == "add":
        _terms(t[1], coef, out)
        _terms(t[2], coef, out)
    elif op == "sub":
        _terms(t[1], coef, out)
        _terms(t[2], -coef, out)
    elif op == "neg":
        _terms(t[1], -coef, out)
    elif op == "mul" and (_exact(t[1]) is not None or _exact(t[2]) is not None):
        k, u = (t[1], t[2]) if _exact(t[1]) is not None else (t[2], t[1])
        _terms(u, coef * _exact(k), out)
    elif op == "const" and _exact(t) is not None:
        out.append((coef * _exact(t), _ONE))
    else:
        out.append((coef, t))


def linear_terms(t: tuple) -> list[tuple[Fraction, Fraction, tuple]]:
    """t as a sum Σ c·u with each coefficient c enclosed by rationals [c_lo, c_hi] (through +, −, negation and
    products with a constant, whose enclosure is exact as rationals; a constant term has u =
    ("const", 1.0, 1.0, 1.0)); equal terms merged: (c_lo, c_hi, u) triples.

    >>> from optmech.costs import parse_expr
    >>> [(float(a), float(b), u[0]) for a, b, u in linear_terms(parse_expr("abs(x1) + 2*abs(x2) - 0.5*abs(x1) + 1", 2))]
    [(0.5, 0.5, 'abs'), (2.0, 2.0, 'abs'), (1.0, 1.0, 'const')]
    """
    out: list = []

    def walk(u: tuple, lo: Fraction, hi: Fraction) -> None:
        op = u[0]
        if op in ("add", "sub"):
            walk(u[1], lo, hi)
            walk(u[2], *((lo, hi) if op == "add" else (-hi, -lo)))
        elif op == "neg":
            walk(u[1], -hi, -lo)
        elif op == "mul" and (u[1][0] == "const" or u[2][0] == "const"):
            k, v = (u[1], u[2]) if u[1][0] == "const" else (u[2], u[1])
            if not (math.isfinite(k[2]) and math.isfinite(k[3])):
                out.append((lo, hi, u))
                return
            p = [a * b for a in (lo, hi) for b in (Fraction(k[2]), Fraction(k[3]))]
            walk(v, min(p), max(p))
        elif op == "const" and math.isfinite(u[2]) and math.isfinite(u[3]):
            p = [a * b for a in (lo, hi) for b in (Fraction(u[2]), Fraction(u[3]))]
            out.append((min(p), max(p), _ONE))
        else:
            out.append((lo, hi, u))

    walk(t, Fraction(1), Fraction(1))
    merged: dict = {}
    for lo, hi, u in out:
        a, b = merged.get(u, (Fraction(0), Fraction(0)))
        merged[u] = (a + lo, b + hi)
    return [(a, b, u) for u, (a, b) in merged.items() if (a, b) != (0, 0)]


def _exact(t: tuple) -> Fraction | None:
    """The value of a constant node known exactly (its enclosure a single float), else None."""
    if t[0] == "const" and t[2] == t[3] and math.isfinite(t[2]):
        return Fraction(t[2])
    return None


def _const(c: Fraction) -> tuple:
    """A constant node enclosing the rational c (rounded outward)."""
    return ("const", float(c), -fraction_up(-c), fraction_up(c))


def _cancelled_difference(f: tuple, g: tuple) -> tuple:
    """f − g as Σ (a_u − b_u)·u over the distinct terms u of both sums (module docstring, step 3): like
    terms are collected with exact rational coefficients, so common terms cancel identically."""
    tf, tg = [], []
    _terms(f, Fraction(1), tf)
    _terms(g, Fraction(-1), tg)
    coef: dict = {}
    for c, u in tf + tg:
        coef[u] = coef.get(u, Fraction(0)) + c
    out = None
    for u, c in coef.items():
        if c == 0:
            continue
        term = _const(c) if u == _ONE else (u if c == 1 else ("mul", _const(c), u))
        out = term if out is None else ("add", out, term)
    return _NIL if out is None else out


def _cuts(conds: list, d: int) -> list[list[float]]:
    ends: list[set] = [set() for _ in range(d)]
    for var, T, F in conds:
        ends[var].update(v for a, b in T + F for v in (a, b) if math.isfinite(v))
    return [sorted(e) for e in ends]


def condition_cuts(tree: tuple, d: int) -> dict[int, list[float]]:
    """{axis: the finite thresholds of the tree's one-variable conditions on it} (step 1 of the module docstring;
    conditions on several variables are skipped here)."""
    conds: list = []
    _conditions(tree, conds)
    cuts = _cuts(conds, d)
    return {i: c for i, c in enumerate(cuts) if c}


def proves_at_most(tree: tuple, d: int, kind: str) -> float | None:
    """η >= 0 with L(x) <= L_kind(x) + η proven for almost every x ∈ ℝ^d (module docstring), or None.

    η is the largest positive upper end of the boxes' enclosures, at most ``MAX_SLACK``: the outward
    rounding of an exact 0 (3 − 3 encloses to [−4e-16·3, 3e-15]) proves L <= L_kind + η, not L <= L_kind."""
    conds: list = []
    if not _conditions(tree, conds):
        return None
    cuts = _cuts(conds, d)
    pieces = [list(zip([-math.inf] + c, c + [math.inf])) for c in cuts]
    if math.prod(len(p) for p in pieces) > MAX_BOXES:
        return None
    g = named_tree(kind, d)
    eta = 0.0
    for box in itertools.product(*pieces):
        box = list(box)
        trees = _select(tree, box)
        if not trees:
            return None
        lo = tuple(np.array([a]) for a, _ in box)
        hi = tuple(np.array([b]) for _, b in box)
        for sel in trees:
            diff = _cancelled_difference(sel, g)
            if diff == _NIL:
                continue
            with np.errstate(all="ignore"):
                _, up = tree_enclosure(diff, lo, hi)
            up = float(np.max(up))
            if not up <= MAX_SLACK:
                return None
            eta = max(eta, up)
    return eta


def dominating_named(tree: tuple, d: int, kinds=("l1", "l2sq", "linf", "l2")) -> dict[str, float]:
    """{h: η} for the named costs h among ``kinds`` with L <= L_h + η proven almost everywhere on ℝ^d.

    >>> from optmech.costs import parse_expr
    >>> sorted(dominating_named(parse_expr("where(abs(x1) < 5, abs(x1) + abs(x2), 0.5 + abs(x2))", 2), 2))
    ['l1']
    >>> sorted(dominating_named(parse_expr("0.5*abs(x1) + min(abs(x2), 3)", 2), 2))
    ['l1']
    >>> dominating_named(parse_expr("abs(x1) + 2*abs(x2)", 2), 2)
    {}
    """
    out = {}
    for k in kinds:
        eta = proves_at_most(tree, d, k)
        if eta is not None:
            out[k] = eta
    return out
