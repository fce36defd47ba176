r"""Problem builder for (ε, δ)-DP additive noise on ℤ^d with integer ℓ1 sensitivity Δ [GV13; Geng13, Ch. 4].

The constraint P(S) <= e^ε P(S + v) + δ for every set S and every shift 0 < ‖v‖₁ <= Δ is, for
additive noise, exactly the hockey-stick condition

.. math:: \sum_x \bigl(p(x) - e^{\varepsilon} p(x+v)\bigr)_+ \le \delta \quad\text{for every } v,

(the supremum over S is attained at S = {x : p(x) > e^ε p(x+v)}), which an LP states with
epigraph variables t_{v,x} >= p(x) − e^ε p(x+v), t >= 0, Σ_x t_{v,x} <= δ.  Every shift is kept
(not only ‖v‖₁ = Δ: keeping only v = Δ admits pmfs on a sub-lattice that are not private at all).

Truncation semantics (a relaxation, so the repaired dual is a certified lower bound on V*).
Variables p(x) live on the box B = [−N−Δ, N+Δ]^d; hockey-stick rows are kept for the inner points
x ∈ [−N, N]^d only (every x + v then lies in B); the points of the outer layer have no rows of
their own; one "far" variable holds the mass outside B and is priced at the minimum of the cost
outside B.  Any (ε, δ)-DP law on ℤ^d maps to a feasible point of no larger cost: its masses on B,
its mass outside B, and t_{v,x} = (p(x) − e^ε p(x+v))_+, whose sum over the inner points is at most
its full hockey-stick sum.  The LP's primal, restricted to B and audited exactly
(:mod:`optmech.audit`), gives the upper bound (see :mod:`optmech.families.approx`).

Edge rows (1-D, ``edge_rows=True``) [derived].  The outer layer also keeps its rows (v, x) whose
partner x + v lies in B, and each shift v gets one row

.. math:: \sum_{x \in E_v} p(x) - (e^{\varepsilon} - 1)\,\mathrm{far}_v \le T_v,
   \qquad T_v \ge 0 \text{ in } v\text{'s budget},

over the |v| points E_v of B whose partner lies beyond B on v's side, with far_v the mass beyond
B on that side (far/2 under the ±x reduction, where the law is even; at most far otherwise).  Still
a relaxation: for S = E_v ∪ O_v (O_v everything beyond B on v's side), S + v ⊂ O_v, so
P(S) − e^ε P(S + v) >= P(E_v) + P(O_v) − e^ε P(O_v), and the points of S, disjoint from those of
the other rows, contribute at least (that)_+ to v's hockey-stick sum.  It is much tighter: the
layer's mass is no longer free of rows, so the window need not be twice the optimum's support.

Symmetry (``symmetry="auto"``; ``"off"`` builds the unreduced LP).  Let G be a group of maps of ℤ^d
that fix 0, map the shift set S = {0 < ‖v‖₁ <= Δ}, the box B and the inner box I onto themselves
(hence commute with the outer layer and "outside B"), and leave the cost unchanged at every point
of B (the far price is unchanged too).  G acts on the LP's variables by (g·p)(x) = p(g⁻¹x),
(g·t)_{v,x} = t_{g⁻¹v, g⁻¹x}: the row (v, x) of g·(p, t) is the row (g⁻¹v, g⁻¹x) of (p, t), and the
budget of v is the budget of g⁻¹v re-indexed, so g maps the feasible set onto itself and keeps the
cost.  The average over G of an optimum is feasible (the set is convex) and optimal, and it is
G-invariant: p(gx) = p(x), t_{gv,gx} = t_{v,x}.  Restricted to invariant points:

* p has one column per G-orbit O of B (per-point mass, so ``point_var`` maps every point of its
  orbit to it); the objective and the normalisation weigh it by |O|;
* for v' = gv the rows and budget of v' are images of those of v: one shift per G-orbit of S is kept;
* for a kept v, x and s·x with s in Stab_G(v) have t_{v,sx} = t_{sv,sx} = t_{v,x} and identical rows
  (p(sx) = p(x), p(sx + v) = p(s(x + v)) = p(x + v)), and I is Stab(v)-invariant: one column
  t_{v,[x]} and one row per Stab(v)-orbit [x] ⊂ I, and the budget Σ_x t_{v,x} reads
  Σ_[x] |[x]|·t_{v,[x]} <= δ.

Conversely every feasible point of this reduced LP lifts to an invariant feasible point of the full
LP (p(x) = p_[x]; t_{gv,y} = t_{v,[g⁻¹y]}, well defined because g is fixed up to g·Stab(v)), of the
same cost.  So the reduced LP's optimum *equals* the full relaxation's (a relaxation of V*), and
the repaired dual of the reduced LP (:func:`optmech.certify.dual_lower_bound`, weak duality for
the reduced LP as stated, column bounds included) is a certified lower bound on V*.  Its column
bounds are implied by its rows, so they do not change its optimum: |O|·p_O <= Σ p + far = 1 gives
p_O <= 1/|O|, the budget gives t_{v,[x]} <= δ/|[x]| (both rounded up).  The objective
coefficient |O|·L_lo(rep) is rounded down (a lower cost only lowers the relaxation).

Two groups are used.  "orbits" (d > 1, the named costs, checked at every point of B): the
hyperoctahedral group of signed coordinate permutations (it preserves ‖·‖₁ and ‖·‖∞, hence S, B,
I and l1, l2, l2sq, linf).  Canonical forms: a point's orbit is its sorted |coordinates|; a
shift's orbit is its sorted |coordinates| (kept shifts are nonnegative and nondecreasing); for
such v, Stab(v) is the permutations inside each block of equal v_i, with sign flips only where
v_i = 0, so x's Stab(v)-canonical form sorts |x_i| on the zero block and x_i on each nonzero
block.  "even" (d = 1, or a 1-D cost that is only even: L(x) = L(−x) at every point of B, as for
``abs``/``square``/``pow``): G = {±1}, p(x) = p(−x), one of ±v, and every inner x keeps its row
(the stabiliser of v ≠ 0 is trivial).  With given point prices (``prices``, and a shift set that
the group maps onto itself, as the ℓ1 and ℓ2 balls), the reduction is read off the prices
themselves, compared exactly: "orbits" when they are equal on every orbit of B, else "even" when
equal at x and −x, else none.  Monotonicity is *not* assumed: the (ε, δ) optimum is not
monotone in |x| in general.

Outward rows (1-D, ±x reduction, ``outward_rows=True``) [derived].  Under the reduction the row (v, x),
v > 0, reads p(|x|) − e^ε p(|x + v|) <= t_{v,x}.  Where |x + v| < |x| (x < −v/2) it bounds how fast the
mass may *grow* outward, from |x + v| to |x|; the LP keeps only the rows with |x + v| >= |x|.  Dropping
rows only enlarges the feasible set, so the LP stays a relaxation and its repaired dual a certified lower
bound, whatever the cost; it keeps about half of the rows.  Whether the relaxation loses anything is not
claimed: its primal is audited at every shift like any other, and the family that uses it
(:class:`optmech.families.approx_real.ApproxRealFamily`, for costs proven even and nondecreasing in |x|: for
|(|x| − 1)| the relaxation uses the dropped rows) rebuilds the LP with every row when that audit exceeds the
budget.  For x² at ε = 5, δ = 1e-6 and 69 cells per sensitivity the two LPs' optima agree to
2e-8 of 0.0297 (HiGHS simplex, measured).

Columns: p (one per point, pair {x, −x} or orbit), far, t (one per kept shift and inner point, or
per stabiliser orbit of inner points).  Rows: the hockey-stick epigraph rows (3 nonzeros each),
one budget row per kept shift, and the normalisation Σ |O| p_O + far = 1.  All blocks are
assembled from index arrays (no per-row loops; one pass per kept shift orbit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.approx_cells import NodeCosts
from optmech.problems.lattice import enclose

__all__ = ["ApproxLP", "build_approx", "shift_vectors", "edge_points", "COSTS_ND", "point_costs", "outside_min"]

COSTS_ND = ("l1", "l2", "l2sq", "linf")
_DOWN, _UP = -np.inf, np.inf


# -- costs at lattice points ----------------------------------------------------------------------
def point_costs(cost, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous (lower, upper) enclosures of the cost at integer points ``pts`` of shape (M, d).

    1-D: a :class:`~optmech.costs.Cost` (its interval enclosure at the point).  d-D: a name in
    ``COSTS_ND``; l1, l2sq and linf are exact in float64 for |coordinates| < 2^26, l2 is the
    correctly-rounded-within-one-ulp sqrt widened by one ulp each way.
    """
    pts = np.asarray(pts)
    if not isinstance(cost, str):
        x = pts[:, 0].astype(float)
        return enclose(cost, x, x)
    a = np.abs(pts).astype(float)
    if cost == "l1":
        v = a.sum(axis=1)
        return v, v
    if cost == "linf":
        v = a.max(axis=1)
        return v, v
    s = (a * a).sum(axis=1)
    if cost == "l2sq":
        return s, s
    if cost == "l2":
        r = np.sqrt(s)
        return np.nextafter(r, _DOWN).clip(min=0.0), np.nextafter(r, _UP)
    raise SpecError(f"d-dimensional costs are {', '.join(COSTS_ND)}; got {cost!r}")


def outside_min(cost, R: int, d: int) -> float:
    """A lower bound of the cost outside the box [−R, R]^d (at points with ‖x‖∞ >= R + 1)."""
    if not isinstance(cost, str):
        from optmech.problems.lattice import Grid1D

        g = Grid1D.integer(1)
        return min(g.outside_min(cost, R + 1, +1), g.outside_min(cost, -R - 1, -1))
    r = float(R + 1)
    return r * r if cost == "l2sq" else r  # every named cost is >= ‖x‖∞ (>= ‖x‖∞² for l2sq)


def is_even(cost, pts: np.ndarray) -> bool:
    """L(x) == L(−x) at every point (as floats, and their enclosures agree)."""
    if isinstance(cost, str):
        return True
    if cost.kind != "expr":
        return True
    lo1, hi1 = point_costs(cost, pts)
    lo2, hi2 = point_costs(cost, -pts)
    return bool(np.array_equal(lo1, lo2) and np.array_equal(hi1, hi2))


def shift_vectors(d: int, sensitivity: int, *, half: bool) -> np.ndarray:
    """Integer vectors v with 0 < ‖v‖₁ <= Δ, shape (K, d); ``half`` keeps one of each ±v
    (the lexicographically positive one)."""
    D = int(sensitivity)
    if d == 1:
        v = np.arange(-D, D + 1)
        v = v[v != 0][:, None]
    else:
        axes = [np.arange(-D, D + 1)] * d
        grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
        norm = np.abs(grid).sum(axis=1)
        v = grid[(norm > 0) & (norm <= D)]
    if half:
        first = v[np.arange(len(v)), np.argmax(v != 0, axis=1)]
        v = v[first > 0]
    return v.astype(np.int64)


def edge_points(shifts: np.ndarray, n: int) -> np.ndarray:
    """1-D edge rows: for each shift s (in order), the 0-based indices of the |s| points of a window of
    n points whose partner x + s leaves it (the last s for s > 0, the first |s| for s < 0), concatenated."""
    return np.concatenate([np.arange(n - s, n) if s > 0 else np.arange(0, -s) for s in np.asarray(shifts).ravel()])


# -- the LP ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ApproxLP:
    """A built (ε, δ) LP and what is needed to read its solution back.

    Attributes
    ----------
    lp : LinearProgram
    dim, sensitivity, N, R : int
        Dimension, Δ, inner half-width N and box half-width R = N + Δ.
    even : bool
        Whether p(x) = p(−x) shares one variable (true for both reductions).
    shifts : ndarray (K, d)
        The shifts with hockey-stick rows (one per orbit of the reduction's group; with
        ``symmetry == "orbits"`` nonnegative and nondecreasing).
    point_var : ndarray (M,)
        Column of each box point (flat, C order over [−R, R]^d); all points of an orbit share it,
        and its value is the mass of *each* of them.
    variant : str
        ``"hockey_stick"`` (no reduction or ±x), ``"hockey_stick_orbits"`` (signed permutations).
    symmetry : {"none", "even", "orbits"}
        The reduction used (module docstring).
    half_offset : bool
        1-D: the points are the cells k = −R−1..R of :class:`~optmech.problems.approx_cells.AlignedCells`
        (the box has 2R + 2 points).
    """

    lp: LinearProgram
    dim: int
    sensitivity: int
    N: int
    R: int
    even: bool
    shifts: np.ndarray
    point_var: np.ndarray
    variant: str = "hockey_stick"
    symmetry: str = "none"
    half_offset: bool = False

    @property
    def box_shape(self) -> tuple[int, ...]:
        return (2 * self.R + 1 + int(self.half_offset),) * self.dim

    @property
    def orbit_sizes(self) -> np.ndarray:
        """Number of box points sharing each p column (their sum is the box size)."""
        return np.bincount(self.point_var, minlength=self.lp.col_blocks["p"].stop)

    def box_masses(self, x: np.ndarray) -> np.ndarray:
        """p on the box (array of ``box_shape``), negatives clipped, from LP primal values."""
        p = np.maximum(np.asarray(x, dtype=float)[self.point_var], 0.0)
        return p.reshape(self.box_shape)

    def far_mass(self, x: np.ndarray) -> float:
        return float(max(0.0, x[self.lp.col_blocks["far"].start]))

    def layer_mass(self, x: np.ndarray) -> float:
        """Mass the relaxation put on the outer layer (points without rows of their own)."""
        p = self.box_masses(x)
        h = int(self.half_offset)  # half-offset cells: the inner cells −N−1..N sit at 0-based R−N .. R+N+1
        inner = tuple(slice(self.R - self.N, self.R + self.N + 1 + h) for _ in range(self.dim))
        return float(p.sum() - p[inner].sum())


def _orbit_shifts(d: int, D: int) -> np.ndarray:
    """One shift per signed-permutation orbit of {0 < ‖v‖₁ <= Δ}: nonnegative, nondecreasing."""
    if d == 1:
        return np.arange(1, D + 1, dtype=np.int64)[:, None]
    v = np.stack(np.meshgrid(*[np.arange(D + 1)] * d, indexing="ij"), axis=-1).reshape(-1, d)
    s = v.sum(axis=1)
    keep = (s > 0) & (s <= D) & np.all(np.diff(v, axis=1) >= 0, axis=1)
    return v[keep].astype(np.int64)


def _stab_blocks(v: np.ndarray) -> list[tuple[np.ndarray, bool]]:
    """The blocks of equal entries of a nonnegative shift v: (coordinates, is the zero block)."""
    return [(np.flatnonzero(v == a), a == 0) for a in np.unique(v)]


def _stab_canonical(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """x's canonical form under Stab(v) (v nonnegative): |x| sorted on the zero block of v, x
    sorted on each block of equal nonzero entries."""
    y = x.copy()
    for idx, zero in _stab_blocks(v):
        b = np.abs(x[:, idx]) if zero else x[:, idx]
        if len(idx) > 1:
            b = np.sort(b, axis=1)
        y[:, idx] = b
    return y


def _orbit_invariant(cost, coords: np.ndarray) -> bool:
    """The cost's enclosures agree at each box point and its canonical (sorted |.|) image."""
    if not isinstance(cost, str):
        return False
    lo1, hi1 = point_costs(cost, coords)
    lo2, hi2 = point_costs(cost, np.sort(np.abs(coords), axis=1))
    return bool(np.array_equal(lo1, lo2) and np.array_equal(hi1, hi2))


def _round_up(a: np.ndarray) -> np.ndarray:
    return np.nextafter(a, np.inf)


def build_approx(
    cost, epsilon: float, delta: float, sensitivity: int, N: int, *, dim: int = 1, symmetry: str = "auto",
    nodes: NodeCosts | None = None, keep_shifts=None, shift_set=None, prices=None, edge_rows: bool = False,
    nonnegative: bool = False, outward_rows: bool = False,
) -> ApproxLP:
    """The relaxation LP of module docstring on the inner box [−N, N]^d (layer Δ, far mass).

    Parameters
    ----------
    cost : Cost (1-D) or a name in ``COSTS_ND`` (d-D)
    epsilon : float >= 0
    delta : float in (0, 1)
    sensitivity : int >= 1 (ℓ1 in d-D)
    N : int >= 0
    dim : int >= 1
    symmetry : {"auto", "off", "even"}
        ``"auto"``: signed-permutation orbits in d > 1 (named costs), ±x for an even cost
        otherwise; ``"off"``: the unreduced LP; ``"even"``: at most the ±x reduction (for
        comparisons).
    nodes : NodeCosts or AlignedCells, optional
        1-D only: price point k at ``nodes.lower(k)`` (the box's end points at
        ``nodes.boundary_lower(R)``) and the far mass at ``nodes.beyond(R)`` instead of the cost at
        the integers: with :class:`~optmech.problems.approx_cells.NodeCosts`, the relaxation of
        (ε, δ)-DP on ℝ of :mod:`optmech.problems.approx_cells`; with
        :class:`~optmech.problems.approx_cells.AlignedCells` (``half_offset`` true) the points are
        the cells [kh, (k+1)h), k = −R−1..R (an even number of them, k and −1−k paired by the ±x
        reduction), for the candidate LP of the upper bound.
    edge_rows : bool
        1-D: also keep the rows of the outer-layer points x whose partner x + v lies in the box,
        and one edge row per shift for the points whose partner leaves it (module docstring).
        Still a relaxation, and a much tighter one: without them the layer's mass is free of
        rows, and the relaxation uses it unless N is about twice the optimum's support.
    outward_rows : bool
        1-D, under the ±x reduction, without ``edge_rows`` and half-offset cells: keep only the rows (v, x)
        with |x + v| >= |x| (x >= −v/2 for the kept v > 0), the ones that bound how fast the mass falls
        outward (module docstring, "Outward rows").  Still a relaxation.
    nonnegative : bool
        1-D, without the ±x reduction: noise supported on ℕ.  The masses of the box points x < 0 get the
        column bound p(x) <= 0.  The LP stays a relaxation of the problem on ℕ: every law on ℕ is a law
        on ℤ with p(x) = 0 for x < 0, which maps to a feasible point of the LP above (the far mass and
        the edge rows count mass beyond the box on the right only, and at most that on the left).
    """
    d, D, N = int(dim), int(sensitivity), int(N)
    R = N + D
    side = 2 * R + 1
    M = side**d
    if shift_set is not None and np.abs(np.asarray(shift_set)).max(initial=0) > D:
        raise SpecError("every shift's coordinates must be at most the sensitivity (the box's margin)")
    half = bool(getattr(nodes, "half_offset", False))
    if half:  # cells k = −R−1..R: M even; the inner cells −N−1..N keep rows, k + v stays in the box
        if d != 1:
            raise SpecError("half-offset cells apply to the 1-D problem only")
        side = M = 2 * R + 2
        coords = np.arange(-R - 1, R + 1, dtype=np.int64)[:, None]
    else:
        coords = _box(d, R)
    strides = side ** np.arange(d - 1, -1, -1)
    if nodes is not None:
        if d != 1:
            raise SpecError("node prices apply to the 1-D problem only")
        if symmetry not in ("auto", "off", "even"):
            raise SpecError(f"symmetry must be 'auto', 'off' or 'even', got {symmetry!r}")
        mode = "even" if symmetry != "off" and nodes.even(coords[:, 0]) else "none"  # L̂(k) = L̂(mirror of k)
        c_lo = nodes.lower(coords[:, 0])
        c_lo[0], c_lo[-1] = nodes.boundary_lower(R)
        if not np.all(np.isfinite(c_lo)):
            raise SpecError("the cost cannot be bounded between the nodes of the window (an enclosure is infinite)")
    elif prices is not None:
        c_lo = np.asarray(prices[0], dtype=float).copy()
        if c_lo.shape != (M,) or not np.all(np.isfinite(c_lo)):
            raise SpecError("the point prices must be finite, one per box point")
        mode = _price_mode(c_lo, coords, d, symmetry, strides, R)
    else:
        mode = _mode(cost, coords, d, symmetry)
        # objective: cost lower bounds (checked before anything is summed)
        if not isinstance(cost, str):
            cost.check_values(coords[:, 0].astype(float))  # one-line SpecError if negative, NaN or infinite
        c_lo, _ = point_costs(cost, coords)
        if not np.all(np.isfinite(c_lo)):
            raise SpecError("the cost must be finite at every lattice point of the window")
        c_lo = np.maximum(c_lo, 0.0)  # costs are nonnegative (checked above): the enclosure's sign slack is moot

    # point -> column
    flat = np.arange(M)
    if mode == "orbits":
        canon = (np.sort(np.abs(coords), axis=1) + R) @ strides
        _, point_var = np.unique(canon, return_inverse=True)
        point_var = point_var.reshape(-1)
    elif mode == "even":  # pairs {x, -x} share a column (the negation reverses the C-order flat index;
        point_var = np.minimum(flat, M - 1 - flat)  # with half-offset cells, k and −1−k)
    else:
        point_var = flat
    n_p = int(point_var.max()) + 1 if mode == "orbits" else ((M + 1) // 2 if mode == "even" else M)
    orbit = np.bincount(point_var, minlength=n_p).astype(float)
    col_far = n_p
    col_t0 = n_p + 1

    # hockey-stick rows: p(x) − e^ε p(x+v) − t_{v,[x]} <= 0 for one x per row class and kept v;
    # ``xs`` are the flat box indices of the row representatives, ``ws`` their class sizes
    if half:
        inner = np.flatnonzero((coords[:, 0] >= -N - 1) & (coords[:, 0] <= N))
    else:
        inner = np.flatnonzero(np.all(np.abs(coords) <= N, axis=1))
    if outward_rows and (d != 1 or mode != "even" or half or edge_rows):
        raise SpecError("outward_rows applies to the 1-D LP under the ±x reduction only, without edge rows")
    if mode == "orbits":
        if keep_shifts is not None or edge_rows:
            raise SpecError("keep_shifts and edge_rows do not apply to the signed-permutation reduction")
        if shift_set is None:
            shifts = _orbit_shifts(d, D)
        else:
            reps = np.unique(np.sort(np.abs(np.asarray(shift_set, dtype=np.int64).reshape(-1, d)), axis=1), axis=0)
            shifts = reps[np.any(reps != 0, axis=1)]
        x_in = coords[inner]
        xs, ws = [], []
        for v in shifts:
            key = (_stab_canonical(x_in, v) + R) @ strides
            rep, w = np.unique(key, return_counts=True)
            xs.append(rep)
            ws.append(w.astype(float))
    else:
        if shift_set is None:
            shifts = shift_vectors(d, D, half=mode == "even")
        else:
            shifts = np.asarray(shift_set, dtype=np.int64).reshape(-1, d)
            shifts = shifts[np.any(shifts != 0, axis=1)]
            if mode == "even":
                first = shifts[np.arange(len(shifts)), np.argmax(shifts != 0, axis=1)]
                shifts = shifts[first > 0]
        if keep_shifts is not None:
            def positive(v: np.ndarray) -> np.ndarray:  # the lexicographically positive one of ±v
                first = v[np.arange(len(v)), np.argmax(v != 0, axis=1)]
                return np.where((first < 0)[:, None], -v, v)

            want = positive(np.asarray(keep_shifts, dtype=np.int64).reshape(-1, d))
            keep = (positive(shifts)[:, None, :] == want[None, :, :]).all(axis=2).any(axis=1)
            if not keep.any():
                raise SpecError("keep_shifts keeps no shift of the sensitivity ball")
            shifts = shifts[keep]
        if edge_rows and d != 1:
            raise SpecError("edge_rows applies to the 1-D problem only")
        if edge_rows:  # every box point whose partner is in the box (module docstring: still a relaxation)
            lo_c, hi_c = coords.min(axis=0), coords.max(axis=0)
            xs = [np.flatnonzero(np.all((coords + v >= lo_c) & (coords + v <= hi_c), axis=1)) for v in shifts]
        elif outward_rows:
            xs = [inner[2 * coords[inner, 0] + abs(int(v[0])) >= 0] for v in shifts]  # |x + v| >= |x|
        else:
            xs = [inner] * len(shifts)
        ws = [np.ones(len(a)) for a in xs]
    K = len(shifts)
    n_t = np.array([len(a) for a in xs], dtype=np.int64)
    T = int(n_t.sum())
    n_edge = K if edge_rows else 0
    n_cols = col_t0 + T + n_edge

    c = np.zeros(n_cols)
    if mode == "orbits":
        # the cost is the same at every point of an orbit (checked): |O|·L_lo(rep), rounded down
        lo_min = np.full(n_p, np.inf)
        np.minimum.at(lo_min, point_var, c_lo)
        c[:n_p] = np.maximum(np.nextafter(lo_min * orbit, -np.inf), 0.0)
    else:
        np.add.at(c, point_var, c_lo)
    if nodes is not None:
        c[col_far] = nodes.beyond(R)
    elif prices is not None:
        c[col_far] = float(prices[1])
    else:
        c[col_far] = max(0.0, outside_min(cost, R, d))

    e = math.exp(epsilon)
    step = shifts @ strides  # flat offset of each shift
    x_all = np.concatenate(xs)
    y_all = x_all + np.repeat(step, n_t)
    rows = np.arange(T)
    t_cols = col_t0 + rows
    r = np.concatenate([rows] * 3)
    cc = np.concatenate([point_var[x_all], point_var[y_all], t_cols])
    vals = np.concatenate([np.ones(T), np.full(T, -e), np.full(T, -1.0)])
    hs = sp.coo_array((vals, (r, cc)), shape=(T, n_cols))  # duplicates (x+v in x's orbit) are summed
    w_all = np.concatenate(ws)
    budget = sp.coo_array((np.append(w_all, np.ones(n_edge)),
                           (np.append(np.repeat(np.arange(K), n_t), np.arange(n_edge)),
                            np.append(t_cols, col_t0 + T + np.arange(n_edge)))), shape=(K, n_cols))
    norm = sp.coo_array(
        (np.append(orbit, 1.0), (np.zeros(n_p + 1, dtype=np.int64), np.append(np.arange(n_p), col_far))),
        shape=(1, n_cols),
    )
    blocks = [("normalisation", norm, 1.0, 1.0), ("hockey_stick", hs, -np.inf, 0.0)]
    if edge_rows:  # Σ_{x ∈ E_v} p(x) − (e^ε − 1)·far_side <= T_v (module docstring), one row per shift
        s1 = shifts[:, 0]
        e_pts = edge_points(s1, M)
        e_rows = np.repeat(np.arange(K), np.abs(s1))
        far_coef = (e - 1.0) / 2.0 if mode == "even" else e - 1.0  # far_side = far/2 for an even law, <= far else
        edge = sp.coo_array((np.concatenate([np.ones(len(e_pts)), np.full(K, -far_coef), np.full(K, -1.0)]),
                             (np.concatenate([e_rows, np.arange(K), np.arange(K)]),
                              np.concatenate([point_var[e_pts], np.full(K, col_far), col_t0 + T + np.arange(K)]))),
                            shape=(K, n_cols))
        blocks.append(("edge", edge, -np.inf, 0.0))
    A, rl, ru, row_blocks = stack_rows(blocks + [("budget", budget, -np.inf, delta)], n_cols)
    # implied by the rows (module docstring): |O| p_O <= 1, |[x]| t <= δ; rounded up
    col_upper = np.concatenate([_round_up(1.0 / orbit), [1.0], _round_up(delta / w_all), np.full(n_edge, delta)])
    if nonnegative:
        if d != 1 or mode != "none":
            raise SpecError("noise on N (nonnegative) is built in 1-D without the ±x reduction (symmetry='off')")
        col_upper[:n_p][coords[:, 0] < 0] = 0.0
    lp = LinearProgram(
        c=c,
        A=A,
        row_lower=rl,
        row_upper=ru,
        col_lower=np.zeros(n_cols),
        col_upper=col_upper,
        row_blocks=row_blocks,
        col_blocks={"p": slice(0, n_p), "far": slice(col_far, col_far + 1), "t": slice(col_t0, n_cols)},
        meta={"normalisation_row": row_blocks["normalisation"].start, "epsilon": epsilon, "delta": delta,
              "exp_epsilon": e, "symmetry": mode, "t_per_shift": n_t.tolist()},
    )
    variant = "hockey_stick_orbits" if mode == "orbits" else "hockey_stick"
    return ApproxLP(lp, d, D, N, R, mode != "none", shifts, point_var, variant, mode, half)


def _box(d: int, R: int) -> np.ndarray:
    """The points of [−R, R]^d, shape ((2R+1)^d, d), in C order."""
    side = 2 * R + 1
    return np.stack(np.unravel_index(np.arange(side**d), (side,) * d), axis=-1) - R


def _mode(cost, coords: np.ndarray, d: int, symmetry: str) -> str:
    """The reduction :func:`build_approx` uses: ``"orbits"``, ``"even"`` or ``"none"``."""
    if symmetry not in ("auto", "off", "even"):
        raise SpecError(f"symmetry must be 'auto', 'off' or 'even', got {symmetry!r}")
    if symmetry != "off":
        if symmetry == "auto" and d > 1 and _orbit_invariant(cost, coords):
            return "orbits"
        if is_even(cost, coords):
            return "even"
    return "none"


def _price_mode(prices: np.ndarray, coords: np.ndarray, d: int, symmetry: str, strides: np.ndarray, R: int) -> str:
    """The reduction for given point prices: ``"orbits"`` (d > 1, ``"auto"``) when the prices are equal
    at every point and its canonical image (sorted |coordinates|), else ``"even"`` when equal at x and
    −x, else ``"none"`` (exact comparisons: the reduction rests on the prices the LP uses)."""
    if symmetry not in ("auto", "off", "even"):
        raise SpecError(f"symmetry must be 'auto', 'off' or 'even', got {symmetry!r}")
    if symmetry == "off":
        return "none"
    if d > 1 and symmetry == "auto":
        canon = (np.sort(np.abs(coords), axis=1) + R) @ strides
        if np.array_equal(prices, prices[canon]):
            return "orbits"
    return "even" if np.array_equal(prices, prices[::-1]) else "none"


def approx_mode(cost, sensitivity: int, N: int, *, dim: int = 1, symmetry: str = "auto") -> str:
    """The reduction :func:`build_approx` will use on the half-width N (without building the LP):
    ``"orbits"`` (its variant ``hockey_stick_orbits``), ``"even"`` or ``"none"`` (``hockey_stick``)."""
    return _mode(cost, _box(int(dim), int(N) + int(sensitivity)), int(dim), symmetry)


def _multisets(n: int, k: int) -> int:
    """Number of multisets of size k from n values."""
    return math.comb(n + k - 1, k)


def estimate_size(dim: int, sensitivity: int, N: int, even: bool = True, *, orbits: bool | None = None) -> tuple[int, int]:
    """(columns, nonzeros) of :func:`build_approx` without building it.

    ``even`` as with ``symmetry="auto"`` (False: ``"off"``); ``orbits`` (default: ``even`` and
    d > 1) counts the signed-permutation reduction exactly (multisets of sorted coordinates).
    """
    d, D, N = int(dim), int(sensitivity), int(N)
    R = N + D
    if orbits is None:
        orbits = bool(even) and d > 1
    if orbits:
        n_p = _multisets(R + 1, d)  # sorted |x_i| in [0, R]
        if (D + 1) ** d > 10**6:  # too many shift orbits to list: D of them at least, each with >= n_in/|G| rows
            T = D * -(-(2 * N + 1) ** d // (2**d * math.factorial(d)))
        else:
            T = 0
            for v in _orbit_shifts(d, D):
                m = 1
                for idx, zero in _stab_blocks(v):
                    m *= _multisets(N + 1 if zero else 2 * N + 1, len(idx))
                T += m
        return n_p + 1 + T, 4 * T + n_p + 1
    K = len(shift_vectors(dim, D, half=even)) if D ** dim < 10**6 else (2 * D + 1) ** dim
    n_in = (2 * N + 1) ** dim
    M = (2 * (N + D) + 1) ** dim
    return M + 1 + K * n_in, 4 * K * n_in + M + 1
