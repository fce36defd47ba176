"""The cost L(x) of added noise x = (x1, .., xd) ∈ ℝ^d: a name or a safe expression in x1..xd.

One home for the d-dimensional cost.  Named costs are ``l1`` (‖x‖₁), ``l2`` (‖x‖₂), ``l2sq``
(‖x‖₂²), ``linf`` (‖x‖∞), ``l1sq`` (‖x‖₁²) and ``linfsq`` (‖x‖∞²), with the aliases ``abs`` → l1 and ``square`` → l2sq (names are
case-insensitive).  Any other text is an expression in the variables ``x1``..``xd`` (bare ``x``
too when d = 1) with the syntax, whitelist and limits of :mod:`optmech.costs`, whose compiler
checks it (never ``eval``) and whose evaluators it reuses: the tree's node ``("var", i)`` reads
coordinate i, and the float and interval evaluators take a tuple of d coordinate arrays, so
every method below is vectorised over the points (loops run over the d coordinates only).

Rigour.  :meth:`CostND.enclose_points` and :meth:`CostND.enclose_box` bound both the exact real
value of L and its float64 evaluation :meth:`CostND.__call__`.  Named costs are in closed form
from min |x_i| and max |x_i| over the box: sums and squares are left exact where the float
operation is (TwoSum, Dekker's product) and widened otherwise, so at integer points with
|coordinates| < 2^26 l1, l2sq and linf are exact and l2 is the float square root widened by one
ulp each way, exactly as :func:`optmech.problems.approx.point_costs`.  Expressions use the
outward-rounded interval evaluator of :mod:`optmech.costs`; bounds may be infinite, never NaN.

Everything a caller needs about the cost lives on :class:`CostND`: values, enclosures at points
and over boxes (unbounded ones included), a lower bound outside a cube (for the mass a truncated
problem puts far away), a growth bound (for tail and integrability arguments), value checks, and
the symmetry checks (evenness, invariance under the signed permutations of the coordinates) that
let a builder share variables between the points of an orbit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce

import numpy as np

from optmech.costs import CAP, CONSTANTS, FUNCTIONS, VARIABLE_NAME, Cost, add_rounded, tree_enclosure, tree_growth, interval_square, mig_mag
from optmech.costs import parse_expr, evaluate_tree
from optmech.errors import CostError

__all__ = ["CostND", "CostNDLike", "NAMED_ND", "as_cost_nd", "parse_cost_nd", "norm_factor"]

#: The named d-dimensional costs, and the aliases accepted for them.
NAMED_ND = ("l1", "l2", "l2sq", "linf", "l1sq", "linfsq")
_ALIASES = {"abs": "l1", "square": "l2sq"}
_KINDS = NAMED_ND + ("expr",)
_INF = np.inf
#: (C, P, rate) of the named costs: ‖x‖₂, ‖x‖∞ <= ‖x‖₁ <= 1 + ‖x‖₁ and the squares <= (1 + ‖x‖₁)².
_GROWTH = {"l1": (1.0, 1.0, 0.0), "l2": (1.0, 1.0, 0.0), "linf": (1.0, 1.0, 0.0),
           "l2sq": (1.0, 2.0, 0.0), "l1sq": (1.0, 2.0, 0.0), "linfsq": (1.0, 2.0, 0.0)}
#: The named costs that are squares of a norm.
SQUARES = ("l2sq", "l1sq", "linfsq")
_IDENT = re.compile(r"[A-Za-z]\w*\Z")


# -- helpers -------------------------------------------------------------------------------------
def _points(pts, dim: int) -> np.ndarray:
    """``pts`` as a float64 array of shape (..., dim); integers must convert exactly (|v| <= 2^53)."""
    a = np.asarray(pts)
    if a.ndim == 0 or a.shape[-1] != dim:
        raise ValueError(f"points must have shape (..., {dim}), got {a.shape}")
    if a.dtype.kind in "iu":
        if a.size and not (np.all(a >= -(2**53)) and np.all(a <= 2**53)):
            raise ValueError("integer coordinates beyond 2^53 are not exact in float64")
    elif a.dtype.kind not in "bf":
        raise ValueError(f"points must be real numbers, got dtype {a.dtype}")
    return a.astype(np.float64, copy=False)


def _cols(a: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(a[..., i] for i in range(a.shape[-1]))


def _sum(los, his):
    """Lower and upper ends of the sequential sums of ``los`` and ``his`` (exact where they are)."""
    lo, hi = los[0], his[0]
    for a, b in zip(los[1:], his[1:]):
        lo, hi = add_rounded(lo, a, True), add_rounded(hi, b, False)
    return lo, hi


def _named_enclosure(kind: str, lo, hi):
    """Enclosure of a named cost over the box with coordinate intervals [lo_i, hi_i] (tuples)."""
    if kind in ("l1sq", "linfsq"):  # the norm's enclosure (nonnegative), squared outward
        return interval_square(_named_enclosure(kind[:-2], lo, hi))
    if kind in ("l1", "linf"):
        mm = [mig_mag(u, v) for u, v in zip(lo, hi)]
        mig, mag = [m[0] for m in mm], [m[1] for m in mm]
        return (reduce(np.maximum, mig), reduce(np.maximum, mag)) if kind == "linf" else _sum(mig, mag)
    sq = [interval_square((u, v)) for u, v in zip(lo, hi)]  # exact where the float square is
    lo, hi = _sum([q[0] for q in sq], [q[1] for q in sq])
    if kind == "l2sq":
        return lo, hi
    return np.nextafter(np.sqrt(lo), -_INF).clip(min=0.0), np.nextafter(np.sqrt(hi), _INF)  # l2


def _sq_down(r: float) -> float:
    """Largest float <= r² for finite r >= 0."""
    s = r * r
    if math.isinf(s):
        return float(np.finfo(np.float64).max)  # r² rounded to inf, so r² > the largest float
    return s if Fraction(s) <= Fraction(r) ** 2 else math.nextafter(s, -math.inf)


# -- the cost ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CostND:
    """A cost L: ℝ^d → [0, ∞] of the added noise; build it with :func:`parse_cost_nd`.

    Parameters
    ----------
    spec : str
        Normalised text: the name (``"l1"``, ``"l2"``, ``"l2sq"``, ``"linf"``) or the expression
        (whitespace collapsed); what a result's ``to_dict`` should record.
    dim : int
        The dimension d >= 1; points are arrays of shape (..., d).
    kind : {"l1", "l2", "l2sq", "linf", "l1sq", "linfsq", "expr"}
        The named cost, or ``"expr"`` for a checked expression in x1..xd.
    """

    spec: str
    dim: int
    kind: str
    _tree: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, (int, np.integer)) or self.dim < 1:
            raise CostError(f"a cost's dim must be a positive integer, got {self.dim!r}")
        object.__setattr__(self, "dim", int(self.dim))
        if self.kind not in _KINDS:
            raise CostError(f"unknown d-dimensional cost kind {self.kind!r} (allowed: {', '.join(_KINDS)})")
        if self.kind != "expr" and self.spec != self.kind:
            raise CostError(f"a named cost's spec must be its kind ({self.kind!r}), got {self.spec!r}")
        if self.kind == "expr" and self._tree is None:
            object.__setattr__(self, "_tree", parse_expr(self.spec, self.dim))

    def __str__(self) -> str:
        return self.spec

    @property
    def tree(self) -> tuple | None:
        """The expression's tree (the node shapes of :func:`optmech.costs.parse_expr`); None for a named cost."""
        return self._tree

    @property
    def is_named(self) -> bool:
        """Whether the cost is one of :data:`NAMED_ND` (closed forms, symmetric by construction)."""
        return self.kind != "expr"

    def __call__(self, pts) -> np.ndarray:
        """L at points of shape (..., d) in float64, shape (...) (NaN where L is undefined)."""
        a = _points(pts, self.dim)
        cols = _cols(a)
        with np.errstate(all="ignore"):
            if self.kind == "expr":
                return np.array(np.broadcast_to(evaluate_tree(self._tree, cols), a.shape[:-1]), dtype=np.float64)
            m = [np.abs(c) for c in cols]
            if self.kind in ("linf", "linfsq"):
                r = reduce(np.maximum, m)
                return r * r if self.kind == "linfsq" else r
            if self.kind == "l1sq":
                r = reduce(np.add, m)
                return r * r
            if self.kind != "l1":
                m = [c * c for c in m]
            s = reduce(np.add, m)  # sequentially, as the enclosures' sums
            return np.sqrt(s) if self.kind == "l2" else s

    def enclose_points(self, pts) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure (lo, hi) of L at points of shape (..., d), each of shape (...).

        Bounds both the exact value and the float value ``self(pts)``; never NaN (±inf where
        unknown).  Named costs reproduce :func:`optmech.problems.approx.point_costs`: exact l1,
        l2sq and linf at integer points with |coordinates| < 2^26, l2 widened one ulp each way.
        """
        a = _points(pts, self.dim)
        return self.enclose_box(a, a)

    def enclose_box(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure of L over the boxes [lo, hi] (arrays of shape (..., d), broadcast).

        Returns (Llo, Lhi) of shape (...), never NaN, with Llo <= L(x) <= Lhi for every real x in
        the box, for the exact value and for the float value ``self(x)``.  Bounds may be ±inf
        (x1 ∈ [5, ∞), x2 ∈ (−∞, ∞) is a box); a NaN bound reads as unbounded.

        Notes
        -----
        Named costs are in closed form from min and max of |x_i| over [lo_i, hi_i] (tight up to
        the rounding of sums and squares).  Expressions use :mod:`optmech.costs`' interval
        evaluator on the d coordinate intervals: loose where a variable occurs more than once
        (``x1*x1``), [−inf, inf] where the float value may be NaN somewhere in the box.
        """
        lo, hi = np.broadcast_arrays(_points(lo, self.dim), _points(hi, self.dim))
        with np.errstate(all="ignore"):
            lo, hi = np.where(np.isnan(lo), -_INF, lo), np.where(np.isnan(hi), _INF, hi)
            if self.kind == "expr":  # the interval evaluator wants lower ends <= CAP, upper >= −CAP
                rlo, rhi = tree_enclosure(self._tree, _cols(np.minimum(lo, CAP)), _cols(np.maximum(hi, -CAP)))
            else:
                rlo, rhi = _named_enclosure(self.kind, _cols(lo), _cols(hi))
        shape = lo.shape[:-1]
        return (np.array(np.broadcast_to(rlo, shape), dtype=np.float64),
                np.array(np.broadcast_to(rhi, shape), dtype=np.float64))

    def outside_cube_min(self, R: float) -> float:
        """A rigorous lower bound (>= 0) of L over {x ∈ ℝ^d : ‖x‖∞ > R}.

        Named costs: l1, l2, linf >= ‖x‖∞ >= R and the squares >= R² (rounded down), 0 for R < 0.
        Expressions: the least lower end of :meth:`enclose_box` over the 2d closed half-spaces
        x_i >= R and x_i <= −R (their union contains the set), each cut at 0 in the other d − 1
        coordinates when d <= 10 (2d·2^(d−1) boxes, so that signs in ``abs``, comparisons and
        ``where`` are decided), clipped at 0 since costs are nonnegative.  R = +inf (the empty set)
        gives +inf.
        """
        R = float(R)
        if math.isnan(R):
            raise ValueError("outside_cube_min needs a number R, got NaN")
        if R == _INF:
            return math.inf
        if self.kind != "expr":
            r = max(R, 0.0)
            return _sq_down(r) if self.kind in SQUARES else r
        d = self.dim
        n = 2 ** (d - 1) if d <= 10 else 1
        up = (np.arange(n)[:, None] >> np.arange(d - 1)) & 1 == 1  # sign patterns of the others
        lo, hi = np.full((2 * d, n, d), -_INF), np.full((2 * d, n, d), _INF)
        for i in range(d):
            others = [j for j in range(d) if j != i]
            if n > 1:
                lo[2 * i: 2 * i + 2][..., others] = np.where(up, 0.0, -_INF)
                hi[2 * i: 2 * i + 2][..., others] = np.where(up, _INF, 0.0)
            lo[2 * i, :, i], hi[2 * i + 1, :, i] = R, -R
        low, _ = self.enclose_box(lo, hi)
        return max(float(np.min(low)), 0.0)

    def growth(self) -> tuple[float, float, float] | None:
        """(C, P, rate) with L(x) <= C (1 + ‖x‖₁)^P e^{rate ‖x‖₁} for all x ∈ ℝ^d, or None if unproven.

        Named costs: l1, l2, linf → (1, 1, 0) and the squares l2sq, l1sq, linfsq → (1, 2, 0).  Expressions follow the rules
        of :meth:`optmech.costs.Cost.growth` with |x_i| <= ‖x‖₁ (a variable gives (1, 1, 0)); the
        region is the whole of ℝ^d, one unbounded box, so a node whose enclosure over ℝ^d is
        finite gives (max |f|, 0, 0), and a divisor, log argument or root argument must be bounded
        away from 0 (resp. nonnegative) over all of ℝ^d.
        """
        if self.kind != "expr":
            return _GROWTH[self.kind]
        wlo = tuple(np.array([-_INF]) for _ in range(self.dim))
        whi = tuple(np.array([_INF]) for _ in range(self.dim))
        with np.errstate(all="ignore"):
            res = tree_growth(self._tree, wlo, whi)
        return res if res is not None and all(math.isfinite(v) and v >= 0 for v in res) else None

    def check_rewards_spread(self, scale: float, *, integer: bool = False) -> None:
        """The d-D form of :meth:`optmech.costs.Cost.check_rewards_spread`: far points ±10^k·scale
        along every axis and the diagonal, against the cube [−2·scale, 2·scale]^d on a coarse grid.
        Only a far value strictly below the minimum near 0 is refused: a cost flat along some
        direction (|x1| in d = 2) keeps an optimum, since privacy binds every coordinate.  On ℤ^d
        (``integer``) only lattice points are looked at."""
        if self.kind != "expr":
            return
        d = self.dim
        dirs = np.vstack([np.eye(d), -np.eye(d), np.ones((1, d)), -np.ones((1, d))])
        far = (dirs[:, None, :] * (10.0 ** np.arange(3, 13))[None, :, None]).reshape(-1, d) * scale
        axis = np.linspace(-2.0, 2.0, 9 if d <= 3 else 5) * scale
        if integer:
            axis, far = np.unique(np.round(axis)), np.round(far)
        near = np.stack(np.meshgrid(*([axis] * d), indexing="ij"), axis=-1).reshape(-1, d)
        with np.errstate(all="ignore"):
            ln = self(near)
        if np.all(np.isfinite(ln)) and (ln < 0).any():  # a negative cost is reported with its minimum there
            i = int(np.argmin(ln))
            raise CostError(
                f"cost {self.spec!r} is negative: its minimum on the points checked near 0 is {float(ln[i]):.6g} at "
                f"x = ({', '.join(f'{float(v) + 0.0:g}' for v in near[i])}) (a cost must be finite and >= 0 at the "
                f"points of the grid {{{', '.join(f'{float(v) + 0.0:g}' for v in axis)}}}^{d} near 0)")
        ln = self.check_values(near, "the points near 0")     # NaN or infinite
        with np.errstate(all="ignore"):
            lf = self(far)
        ok = np.isfinite(lf)
        # strictly below: a cost flat along a direction (|x1| in d = 2) still has an optimum
        if ok.any() and float(lf[ok].min()) < float(ln.min()) * (1 - 1e-9):
            i = int(np.flatnonzero(ok)[np.argmin(lf[ok])])
            raise CostError(
                f"cost {self.spec!r} rewards large noise: L at {np.array2string(far[i], precision=3)} is "
                f"{float(lf[i]):.6g}, below its minimum {float(ln.min()):.6g} near 0, so spreading the noise wider always "
                "costs less and no optimum exists; use a cost that grows away from 0")

    def check_values(self, pts, where: str = "the grid") -> np.ndarray:
        """Return L(pts), or raise CostError at the first point where L is negative, NaN or infinite."""
        a = _points(pts, self.dim)
        y = self(a)
        bad = np.flatnonzero(~(np.isfinite(y) & (y >= 0)))
        if bad.size:
            xv = tuple(float(v) for v in a.reshape(-1, self.dim)[bad[0]])
            yv = float(y.ravel()[bad[0]])
            what = "NaN" if math.isnan(yv) else "infinite" if math.isinf(yv) else f"negative ({yv:.6g})"
            raise CostError(f"cost {self.spec!r} is {what} at x={xv!r} on {where}")
        return y

    def _same_at(self, a: np.ndarray, b: np.ndarray) -> bool:
        la, ha = self.enclose_points(a)
        lb, hb = self.enclose_points(b)
        return bool(np.array_equal(la, lb) and np.array_equal(ha, hb))

    def is_even(self, pts) -> bool:
        """Whether L(x) == L(−x) at the given points (enclosures exactly equal at x and −x).

        Named costs are even by construction (True without evaluating)."""
        if self.kind != "expr":
            return True
        a = _points(pts, self.dim)
        return self._same_at(a, -a)

    def is_invariant(self, pts) -> bool:
        """Whether L(g·x) == L(x) for the signed permutations g of the coordinates, at the points.

        Checked for the generators of the hyperoctahedral group (swap of coordinates 1 and 2, the
        cyclic shift, negation of coordinate 1) by exact equality of the point enclosures at x and
        g·x for every given x; so it is a statement about the points given (pass a set closed
        under the group, e.g. a symmetric box, to learn it on that set).  Named costs are
        invariant by construction (True without evaluating).
        """
        if self.kind != "expr":
            return True
        a = _points(pts, self.dim)
        flip = a.copy()
        flip[..., 0] = -flip[..., 0]
        gens = [flip]
        if self.dim >= 2:
            gens.append(a[..., [1, 0, *range(2, self.dim)]])
        if self.dim >= 3:
            gens.append(np.roll(a, 1, axis=-1))
        return all(self._same_at(a, g) for g in gens)


CostNDLike = CostND | str


def parse_cost_nd(text: str, dim: int) -> CostND:
    """Parse a d-dimensional cost: ``l1``, ``l2``, ``l2sq``, ``linf``, ``l1sq``, ``linfsq`` (aliases ``abs`` → l1,
    ``square`` → l2sq; case-insensitive) or an expression in x1..x``dim`` (bare x when dim = 1).

    Raises
    ------
    CostError
        One line: an unknown name, a variable beyond the dimension (``x3`` with dim 2), bare
        ``x`` with dim > 1, a bad dim, or any construct the :mod:`optmech.costs` compiler rejects.
    """
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise CostError(f"a cost's dim must be a positive integer, got {dim!r}")
    dim = int(dim)
    if not isinstance(text, str):
        raise CostError(f"cost must be a string, got {type(text).__name__}")
    s = text.strip()
    key = _ALIASES.get(s.lower(), s.lower())
    if key in NAMED_ND:
        return CostND(key, dim, key)
    names = "x1 (or x)" if dim == 1 else f"x1..x{dim}"
    if key.startswith("pow:"):
        raise CostError(f"pow:P is a 1-D cost; in dim {dim} write an expression in {names} "
                        f"(e.g. abs(x1)**P + ...) or use l1, l2, l2sq, linf, l1sq, linfsq")
    if _IDENT.match(s) and not (s == "x" or VARIABLE_NAME.match(s) or s in CONSTANTS or s in FUNCTIONS):
        raise CostError(f"unknown cost {s!r} (named costs: l1, l2, l2sq, linf, l1sq, linfsq, abs, square; "
                        f"or an expression in {names})")
    return CostND(" ".join(s.split()), dim, "expr", parse_expr(text, dim))


def as_cost_nd(obj: CostNDLike | Cost, dim: int) -> CostND:
    """Return ``obj`` if it is a :class:`CostND` of dimension ``dim``, else parse it.

    A string goes through :func:`parse_cost_nd`; a 1-D :class:`~optmech.costs.Cost` is accepted
    when dim = 1 (abs → l1, square → l2sq, pow:P → ``abs(x)**P``, an expression as it is).
    """
    if isinstance(obj, CostND):
        if obj.dim != dim:
            raise CostError(f"cost {obj.spec!r} is for dim {obj.dim}, the problem has dim {dim}")
        return obj
    if isinstance(obj, str):
        return parse_cost_nd(obj, dim)
    if isinstance(obj, Cost):
        if dim != 1:
            raise CostError(f"the 1-D cost {obj.spec!r} cannot be used in dim {dim}")
        text = {"abs": "l1", "square": "l2sq"}.get(obj.kind, obj.spec)
        return parse_cost_nd(f"abs(x)**{obj.power!r}" if obj.kind == "pow" else text, 1)
    raise CostError(f"cost must be a CostND or a string, got {type(obj).__name__}")


def norm_factor(norm: str, d: int) -> float:
    """c with ‖v‖ >= ‖v‖₁/c (ℓ1: 1, ℓ2: √d, ℓ∞: d)."""
    return {"l1": 1.0, "l2": math.sqrt(d), "linf": float(d)}[norm]
