r"""Builders for pure ε-DP additive noise in d dimensions: the full lattice LP, the continuous
cell LPs and the ℓ1-layer (shell) LP.

Constraint: p(x) <= e^ε p(y) whenever ‖x − y‖ <= Δ (sensitivity ball of the ℓ1, ℓ∞ or ℓ2 norm)
[Geng13, §3.1 in lattice form].

Supports (what one LP variable stands for)
------------------------------------------
* **Lattice points** of ℤ^d (integer domain, integer Δ), or their orbits under signed permutations.
* **Cells** h(z + [−½, ½)^d), h = Δ/n, of the continuous domain with ``resolution`` n: the
  variable is the cell's mass, the sensitivity is n cells.  Cells are centred on the lattice, so
  signed permutations map cells onto cells and the orbit machinery applies unchanged.
  - *Lower side* (a relaxation): a shift hk with ‖k‖ <= n maps cells onto cells, so the cell
    masses of any ε-DP density satisfy the lattice rows with sensitivity n; priced at the cost's minimum
    over each cell [Geng13, App. A, Lemma A.6 in d-D] that is a first-order relaxation.  The variables are
    instead the masses of the noise's randomised rounding to the nodes, which satisfy the same rows, at
    second-order node prices: :func:`node_costs` for the named convex costs (:data:`SECOND_ORDER_COSTS`),
    :func:`expression_node_costs` for expressions (interval second-order jets where the cost is proven C² on
    a cube, the sub-box bound elsewhere); the upper side then prices cells at proven bounds of their means.
  - *Upper side* (a restriction): a density constant on cells is ε-DP iff the rows hold for every
    pair of cells that some shift in the ball connects: k with inf_{u ∈ (−1,1)^d} ‖k + u‖ < n.
    For ℓ1 that is Σ_i max(|k_i| − 1, 0) <= n − 1, i.e. the ℓ1 ball of radius n − 1 plus the unit
    cube {−1, 0, 1}^d (max ‖k‖₁ = n + d − 1, not n); for ℓ∞ it is ‖k‖∞ <= n; for ℓ2 the set
    ‖(|k| − 1)₊‖₂ < n is enumerated.  The objective prices a cell at a proven upper bound of the cost's
    mean over it (the lattice: at the point).
* **ℓ1 shells** (the layered LP, Test A): one density per shell, the lattice spheres
  S_k = {‖x‖₁ = k} with exact counts |S_k|, or the continuous shells kh <= ‖x‖₁ < (k+1)h with
  exact volumes (2h)^d((k+1)^d − k^d)/d!.  Two points within ℓ1 distance Δ lie in shells at most
  Δ (lattice) or n (continuous) apart, and every such pair of shells is connected by some pair of
  points, so the rows a_k <= e^ε a_j for |k − j| <= Δ (or n) are exact: the LP's optimum is the
  best layered mechanism, an upper bound on V* that contains the d-D staircases [Geng13, §3.2; GKOV15].

Truncation (a relaxation on the lower side).  Variables live on a domain C: the ℓ1 ball
‖x‖₁ <= R (lattice ℓ1 with a named cost: where the mass of an ℓ1-decaying law sits, d! times fewer
points than the cube), the cube [−R, R]^d (otherwise), or the shells k <= R.  The rows of every
pair inside C are kept, and one far-mass variable is priced at the cost's minimum outside C.  Any
ε-DP law maps to a feasible point of no larger cost, so the repaired dual is a certified lower
bound.  On the upper side the far variable is fixed at 0; that LP only proposes a mechanism, which
:mod:`optmech.families.pure_nd` extends to all of ℤ^d and audits.

Compact constraints.  The set of shifts a row must
cover is written as a Minkowski sum of small step sets, each containing 0 ("layers"): ℓ1 = Δ
layers of the unit steps {0, ±e_i}; ℓ∞ = Δ layers of {−1, 0, 1}^d; the continuous ℓ1 upper side
= n − 1 layers of ℓ1 unit steps and one of {−1, 0, 1}^d; shells: one layer {−Δ..Δ} (a chain).  Rows
m_0 = p, m_r(x) <= m_{r−1}(x + e) for e in layer r with x + e in C, and p(x) <= e^ε m_L(x).
Each step set is unconditional and down-closed, so a path of steps between two points of C can be
rearranged to move every coordinate monotonically and stay in C (a cube, an interval of shells;
for the ℓ1 ball with unit steps, move toward 0 first): the rows say exactly "every in-domain
pair", in O(#points · L · |steps|) nonzeros instead of O(#points · |ball|).  A single layer (ℓ2,
or Δ = 1) is written as direct pairwise rows.

Symmetry.  When the cost is checked to be invariant (named costs are; an expression is compared
at every point or cell of the domain; on cells an expression's orbit is priced at the least node price over
it, valid whatever the cost's symmetry, :func:`expression_node_costs`), the cost, the norm, the step sets and the domain are
invariant under signed permutations (order 2^d d!), so averaging an optimum over the group gives
an invariant optimum: one variable per orbit, represented by its sorted absolute values, with
objective and normalisation coefficients multiplied by the orbit size.
A cost that is only invariant under each coordinate's sign change (e.g. a weighted ℓ1 cost) uses
that subgroup (order 2^d; representatives are the absolute values).  Rows are generated for the
orbit representatives only.

Scaling.  Variables are q = p / σ with σ(x) = e^{−min(ε‖x‖₁/Δ, 6)} (Δ in lattice units), so the
recursion's coefficients σ(x + e)/σ(x) stay within e^{±ε}, O(1).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from optmech.errors import SpecError
from optmech.lp import LinearProgram, stack_rows

__all__ = ["PureNDLP", "build_pure_nd", "expression_node_costs", "NORMS", "orbit_points", "layer_steps", "Orbits", "Shells",
           "shell_sizes", "domain_outside_min", "sphere_sizes"]

NORMS = ("l1", "l2", "linf")
#: ℓ2 sensitivity on cells from this resolution on: only the shifts of the outer ring get rows at first
#: (:func:`ring_shifts`); the others wait for row generation (:meth:`PureNDLP.violated`).
RING_FROM = 4
#: Width of that ring, in cells.
RING_WIDTH = 0.5
#: The scaling saturates after this many e-folds: with 12, HiGHS's duals were cleanest but the
#: simplex took twice as long as with 6 on the d = 3, Δ = 4 case; both certify to ~1e-8.
SCALE_EFOLDS = 6.0
_W = 2.0**-50  # relative outward widening of rounded sums and products


# -- supports -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Orbits:
    """Orbit representatives of the cube [−R, R]^d or the ℓ1 ball (every point when not ``reduced``)."""

    reps: np.ndarray  # (n, d) int64: sorted absolute values (signed permutations), absolute values (signs)
    size: np.ndarray  # (n,) orbit sizes
    keys: np.ndarray  # (n,) sorted lookup keys
    R: int
    group: str  # "signed_permutations", "signs" (each coordinate's sign) or "none"
    shape: str = "cube"  # "cube" ‖x‖∞ <= R, or "ball" ‖x‖₁ <= R

    @property
    def reduced(self) -> bool:
        return self.group != "none"

    @property
    def l1(self) -> np.ndarray:
        return np.abs(self.reps).sum(axis=1).astype(float)

    def canonical(self, pts: np.ndarray) -> np.ndarray:
        """The orbit representative of each point."""
        if self.group == "signed_permutations":
            return np.sort(np.abs(pts), axis=-1)
        return np.abs(pts) if self.group == "signs" else pts

    def index(self, pts: np.ndarray) -> np.ndarray:
        """Orbit index of integer points (−1 outside the domain)."""
        pts = np.asarray(pts, dtype=np.int64)
        inside = np.all(np.abs(pts) <= self.R, axis=-1)
        if self.shape == "ball":
            inside &= np.abs(pts).sum(axis=-1) <= self.R
        k = _key(self.canonical(pts) + (self.R if self.group == "none" else 0), self.R)
        pos = np.searchsorted(self.keys, k)
        pos = np.minimum(pos, len(self.keys) - 1)
        return np.where(inside & (self.keys[pos] == k), pos, -1)

    def neighbours(self, steps: np.ndarray) -> np.ndarray:
        """(n, |steps|): the orbit of rep + step, −1 outside the domain."""
        return self.index(self.reps[:, None, :] + steps[None, :, :])


@dataclass(frozen=True)
class Shells:
    """ℓ1 shells k = 0..R: lattice spheres, or continuous shells of width h (sizes in units of h^d)."""

    R: int
    size: np.ndarray
    continuous: bool
    reduced: bool = False
    shape: str = "shells"

    @property
    def reps(self) -> np.ndarray:
        return np.arange(self.R + 1, dtype=np.int64)[:, None]

    @property
    def l1(self) -> np.ndarray:
        return np.arange(self.R + 1, dtype=float)

    def neighbours(self, steps: np.ndarray) -> np.ndarray:
        k = np.arange(self.R + 1)[:, None] + steps[None, :, 0]
        return np.where((k >= 0) & (k <= self.R), k, -1)


def _key(a: np.ndarray, R: int) -> np.ndarray:
    base = 2 * R + 1
    w = base ** np.arange(a.shape[-1] - 1, -1, -1, dtype=np.int64)
    return (a.astype(np.int64) * w).sum(axis=-1)


GROUPS = {True: "signed_permutations", False: "none", "signed_permutations": "signed_permutations",
          "signs": "signs", "none": "none"}


def orbit_points(d: int, R: int, reduced: bool | str = True, shape: str = "cube") -> Orbits:
    """Representatives and orbit sizes of the cube [−R, R]^d or the ℓ1 ball ‖x‖₁ <= R under the
    signed permutations (``reduced`` True), the sign changes of each coordinate (``"signs"``) or
    nothing (False)."""
    group = GROUPS[reduced]
    if group == "signs":
        axes = [np.arange(0, R + 1)] * d
        reps = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d).astype(np.int64)
        if shape == "ball":
            reps = reps[reps.sum(axis=1) <= R]
        size = 2.0 ** (reps > 0).sum(axis=1)
        keys = _key(reps, R)
    elif group == "signed_permutations":
        reps = np.array(list(itertools.combinations_with_replacement(range(R + 1), d)), dtype=np.int64)
        if shape == "ball":
            reps = reps[reps.sum(axis=1) <= R]
        nonzero = (reps > 0).sum(axis=1)
        mult = np.ones(len(reps))
        fact = np.array([math.factorial(int(x)) for x in range(d + 1)], dtype=float)
        for v in range(R + 1):
            mult *= fact[(reps == v).sum(axis=1)]
        size = 2.0**nonzero * math.factorial(d) / mult
        keys = _key(reps, R)
    else:
        axes = [np.arange(-R, R + 1)] * d
        reps = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d).astype(np.int64)
        if shape == "ball":
            reps = reps[np.abs(reps).sum(axis=1) <= R]
        size = np.ones(len(reps))
        keys = _key(reps + R, R)
    order = np.argsort(keys)
    return Orbits(reps[order], size[order], keys[order], R, group, shape)


def shell_sizes(k: np.ndarray, d: int, continuous: bool) -> np.ndarray:
    """|S_k| (lattice) or the volume of {k <= ‖x‖₁ < k+1} in units of h^d: 2^d((k+1)^d − k^d)/d!."""
    k = np.asarray(k)
    if not continuous:
        return sphere_sizes(k, d)
    kf = k.astype(float)
    j = np.arange(d)  # (k+1)^d − k^d = Σ_{j<d} C(d, j) k^j, no cancellation
    binom = np.array([math.comb(d, int(i)) for i in j], dtype=float)
    return (2.0**d / math.factorial(d)) * (binom * kf[..., None] ** j).sum(axis=-1)


# -- step sets ------------------------------------------------------------------------------------
def _unit(kind: str, d: int) -> np.ndarray:
    if kind == "l1":
        return np.vstack([np.zeros((1, d), dtype=np.int64), np.eye(d, dtype=np.int64), -np.eye(d, dtype=np.int64)])
    return np.array(list(itertools.product((-1, 0, 1), repeat=d)), dtype=np.int64)


def _l2_set(d: int, n: int, connected: bool) -> np.ndarray:
    """Shifts k with ‖k‖₂ <= n, or (``connected``) with ‖(|k| − 1)₊‖₂ < n (0 included)."""
    top = n + 1 if connected else n
    v = np.array(list(itertools.product(range(-top, top + 1), repeat=d)), dtype=np.int64)
    if connected:
        a = np.maximum(np.abs(v) - 1, 0)
        return v[(a * a).sum(axis=1) < n * n]
    return v[(v * v).sum(axis=1) <= n * n]


def layer_steps(norm: str, d: int, n: int, *, upper_cells: bool = False, shells: bool = False) -> list[np.ndarray]:
    """Step sets, one per layer, whose Minkowski sum is the set of shifts the rows cover.

    ``n`` is the sensitivity in lattice units (Δ, or the resolution on the continuous domain).
    ``upper_cells``: the cell pairs some shift of the ball connects (continuous upper side).
    ``shells``: shell indices, which a shift of ℓ1 length <= n moves by at most n.
    """
    if norm not in NORMS:
        raise SpecError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")
    n = int(n)
    if shells:  # one layer of direct pairs: the shells form a chain, O(R n) rows without auxiliaries
        return [np.arange(-n, n + 1, dtype=np.int64)[:, None]]
    if norm == "l2":
        return [_l2_set(d, n, upper_cells)]
    if norm == "linf":
        return [_unit("linf", d)] * n
    if upper_cells:
        return [_unit("l1", d)] * (n - 1) + [_unit("linf", d)]
    return [_unit("l1", d)] * n


def ring_applies(norm: str, n: int, cells: bool, layered: bool = False) -> bool:
    """Whether a cell LP keeps only the ring's rows at first (:func:`ring_shifts`): ℓ2 sensitivity on cells, not the
    shell LP, from :data:`RING_FROM` cells per Δ on (coarser, the ring misses whole directions: in ℝ³ at n = 2 it
    drops (1, 1, 0) and the bound fell from 3.425 to 3.367)."""
    return cells and norm == "l2" and not layered and int(n) >= RING_FROM


def ring_shifts(steps: np.ndarray, n: int, *, upper_cells: bool = False) -> np.ndarray:
    """The ℓ2 shifts (rows of ``steps``) whose rows the first LP keeps: the outer ring of the ball, ‖k‖₂ >= n −
    :data:`RING_WIDTH` (the connected set of the cells' upper side: ‖(|k| − 1)₊‖₂ >= n − 1 − RING_WIDTH); 0 never.

    Rows only: dropping the rows of any shift enlarges the relaxation's feasible set (its repaired dual stays a
    certified lower bound) and the restriction's solution is repaired and audited against every shift.  The ring
    holds the rows a near-optimal law makes tight (a density that falls off with the radius meets p(x) <= e^ε
    p(x + k) hardest at the longest shifts), so the rest are mostly slack: in ℝ² at ε = 1 the ring's 12 shifts of
    49 (n = 4) and 20 of 197 (n = 8) gave the whole LP's value to 1e-15 for ‖x‖₁, ‖x‖∞ and ‖x‖₂ + 0.1‖x‖₁ (measured),
    at a quarter of the rows."""
    k = np.asarray(steps, dtype=float)
    if upper_cells:
        k = np.maximum(np.abs(k) - 1.0, 0.0)
        floor = n - 1.0 - RING_WIDTH
    else:
        floor = n - RING_WIDTH
    r = np.sqrt((k * k).sum(axis=1))
    return (r >= floor) & np.any(np.asarray(steps) != 0, axis=1)


def reach(steps: list[np.ndarray]) -> int:
    """The largest ℓ1 length of one move (a sum of one step per layer)."""
    return int(sum(int(np.abs(s).sum(axis=1).max()) for s in steps))


# -- costs ----------------------------------------------------------------------------------------
def domain_outside_min(cost, R: int, d: int, shape: str, h: float | None = None) -> float:
    """A lower bound of the cost outside the domain of radius R (lattice units; cells of width h).

    cube: lattice points with ‖x‖∞ >= R + 1, or cells beyond ‖x‖∞ >= h(R + ½); ball / shells:
    ‖x‖₁ >= R + 1 (lattice) or >= h(R + 1) (continuous shells), cells_ball: ‖x‖₁ >= h(R + 1 − d/2)
    — named costs only.
    """
    from optmech.costs_nd import as_cost_nd

    c = as_cost_nd(cost, d)
    h = 1.0 if h is None else float(h)
    if shape in ("cube", "cells"):
        r = h * (R + 0.5) if shape == "cells" else float(R + 1)
        return max(0.0, float(c.outside_cube_min(r * (1 - 4 * _W))))
    if c.kind == "expr":  # ‖x‖₁ >= r1 implies ‖x‖∞ >= r1/d
        r1 = h * (R + 1 - (d / 2.0 if shape == "cells_ball" else 0.0))
        return max(0.0, float(c.outside_cube_min(r1 / d * (1 - 4 * _W) - 4 * _W)))
    # beyond the ℓ1 ball: lattice points and continuous shells have ‖x‖₁ >= (R + 1)h; cells z with
    # ‖z‖₁ >= R + 1 have ‖x‖₁ >= h(R + 1 − d/2)
    r1 = h * (R + 1 - (d / 2.0 if shape == "cells_ball" else 0.0)) * (1 - 4 * _W)
    r1 = max(r1, 0.0)  # ‖x‖₁ >= r1: ‖x‖₂ >= r1/√d, ‖x‖∞ >= r1/d
    return {"l1": r1, "l2": r1 / math.sqrt(d), "l2sq": r1 * r1 / d, "linf": r1 / d}[c.kind] * (1 - 4 * _W)


#: named convex costs whose cell LPs are priced to second order (:func:`node_costs`)
SECOND_ORDER_COSTS = ("l1", "l2", "l2sq", "linf")


def node_costs(c, z: np.ndarray, d: int, sensitivity: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""(lower, upper) prices of the cell LP's variables at second order, for a named convex cost
    (:data:`SECOND_ORDER_COSTS`) [derived]; z are the variables' nodes (cell centres), h = Δ/n.

    **Lower: the randomised rounding of the noise to the nodes h·ℤ^d** (each coordinate to a neighbouring
    node with the weights of linear interpolation, independently), the relaxation of
    :mod:`optmech.problems.approx_cells_nd`: it commutes with the shifts h·k, so for ε-DP noise X the law
    of the rounded Y satisfies p(y) <= e^ε p(y + k) for ‖k‖ <= n (post-processing) — the rows the cell
    masses satisfy.  E[L(hY) | X] is the multilinear interpolant of L on X's node cube Q, at most
    L(X) + e_Q (:func:`optmech.problems.approx_cells_nd.interpolation_errors`: 0 for ‖x‖₁, d·h²/4 for
    ‖x‖₂², min(h√d/2, h²·d/(8 r_Q)) for ‖x‖₂, 0 or min(1, k/4)·h for ‖x‖∞); Y is a corner of Q, so the node price
    L(hz) − max_{Q ∋ z} e_Q keeps E[price(Y)] <= E L(X).
    **Upper: the cube means** of :func:`optmech.problems.approx_cells_nd.cell_mean_upper_nd` (exact for ‖x‖₁
    and ‖x‖₂², Jensen for ‖x‖₂, the corner average for ‖x‖∞), what a density constant on the centred cells
    costs there.  Both are rounded outward."""
    from optmech.problems.approx_cells_nd import cell_mean_upper_nd, interpolation_errors

    kind = c.kind
    if kind not in SECOND_ORDER_COSTS:
        raise ValueError(f"node_costs is for the named convex costs {SECOND_ORDER_COSTS}, not {kind!r}")
    h = float(sensitivity) / n
    x = h * z
    lo_pt, _ = c.enclose_box(x - np.abs(x) * _W, x + np.abs(x) * _W)  # h is within half an ulp of Δ/n
    h_hi = float(np.nextafter(h, np.inf))
    k = z.astype(np.int64)
    err = np.zeros(len(z))
    for s in itertools.product((0, 1), repeat=d):  # the 2^d cubes with corner z: lowest corners z − s
        err = np.maximum(err, interpolation_errors(kind, k - np.asarray(s, dtype=np.int64), h_hi))
    # not clipped at 0: near the origin L(hz) − e may be negative, and clipping would break E[price(Y) | X] <= L(X)
    lo = np.where(err == 0, lo_pt, np.nextafter(lo_pt - err, -np.inf))
    return lo, cell_mean_upper_nd(kind, k, float(sensitivity), n)


def expression_node_costs(c, support: Orbits, sensitivity: float, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    r"""(lower, upper, far) prices of the cell LP's orbits on the cube [−R, R]^d for an expression cost, at
    second order where the cost is proven C² on the cells [derived].

    **Lower**: the randomised rounding to the nodes (as :func:`node_costs`), each node priced at L(hz) less
    the largest interpolation error over the 2^d cubes around it
    (:func:`optmech.problems.approx_cells_nd.node_prices`: the smaller of the second-order bound
    (1/8)·Σ_i w_i² sup (∂_ii L)₊ from interval jets and the sub-box bound), the nodes with ‖z‖∞ = R and the far
    mass at c_far = inf L over ‖x‖∞ >= R·h (every cube with a corner outside the box lies there).  An orbit is
    priced at the *least* price of its nodes: the law of the rounded noise averaged over the group (the norm is
    invariant, and rounding commutes with signed permutations) is feasible, and its cost at these prices is at
    most that of the unaveraged law — whatever the cost's own symmetry.
    **Upper**: the largest cube-mean bound over the orbit
    (:func:`optmech.problems.approx_cells_nd.cell_mean_upper_nd`: on m^d sub-boxes the smaller of the
    enclosure's upper end and L(mid) + Σ_i w_i² sup (∂_ii L)₊ / 24), what a density constant on the orbit's
    cells costs at most."""
    from optmech.problems.approx_cells_nd import box_points, cell_mean_upper_nd, node_prices

    d, R = support.reps.shape[1], support.R
    price, far = node_prices(c, d, n, R, float(sensitivity))
    pts = box_points(d, R)
    idx = support.index(pts)
    lo = np.full(len(support.reps), np.inf)
    np.minimum.at(lo, idx, price)
    hi = np.full(len(support.reps), -np.inf)
    np.maximum.at(hi, idx, cell_mean_upper_nd(c, pts, float(sensitivity), n))
    return lo, hi, far


def _support_costs(cost, support, d: int, cells: bool, sensitivity: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) cost of each variable's points: at the point, over the cell of width h = Δ/n (second order
    for the named convex costs, :func:`node_costs`), or the shell average."""
    from optmech.costs_nd import as_cost_nd

    c = as_cost_nd(cost, d)
    h = float(sensitivity) / n if cells else 1.0
    if isinstance(support, Shells):
        return _shell_costs(c, support, d, h)
    if not cells:
        lo, hi = c.enclose_points(support.reps.astype(float))
        return np.maximum(lo, 0.0), hi
    z = support.reps.astype(float)
    if c.kind in SECOND_ORDER_COSTS:
        return node_costs(c, z, d, sensitivity, n)
    blo, bhi = h * (z - 0.5), h * (z + 0.5)
    blo = blo - np.abs(blo) * _W  # the float h is within half an ulp of Δ/n: widen the cells outward
    bhi = bhi + np.abs(bhi) * _W
    lo, hi = c.enclose_box(blo, bhi)
    return np.maximum(lo, 0.0), hi


def _shell_costs(c, sh: Shells, d: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Average cost over each shell: exact sums of point costs (lattice), closed forms (continuous)."""
    k = np.arange(sh.R + 1, dtype=float)
    if sh.continuous:
        # ‖x‖₁ has density ∝ r^{d−1} on the shell, and ‖x‖₂² = (2/(d+1))‖x‖₁² on average over an ℓ1 sphere
        def moment(m: int) -> np.ndarray:
            j = np.arange(d + m)
            b = np.array([math.comb(d + m, int(i)) for i in j], dtype=float)
            num = (b * k[:, None] ** j).sum(axis=1)  # (k+1)^{d+m} − k^{d+m}
            return d / (d + m) * num / shell_sizes(k.astype(np.int64), d, True) * (2.0**d / math.factorial(d))

        if c.kind == "l1":
            v = h * moment(1)
        elif c.kind == "l2sq":
            v = h * h * 2.0 / (d + 1) * moment(2)
        elif c.kind in ("l2", "linf"):
            # a density constant on ℓ1 shells is X = R·Θ, R independent of Θ = (|Θ_i|) ~ Dirichlet(1, ..., 1) with
            # random signs (the cone measure of the ℓ1 sphere), so E‖X‖_L on a shell = E[‖X‖₁ | shell]·E‖Θ‖_L.
            # linf: E max_i Θ_i = H_d/d (uniform spacings), exact.  l2: E Θ_1² = 2/(d(d+1)), so
            # 1/√d <= E‖Θ‖₂ <= √(E‖Θ‖₂²) = √(2/(d+1)) (the norm inequality; Jensen): an upper price within
            # 0.6 % in d = 2 (E‖Θ‖₂ = 0.8116 there, 0.8165 the bound)
            r1 = h * moment(1)
            if c.kind == "linf":
                f = math.fsum(1.0 / i for i in range(1, d + 1)) / d
                return r1 * f * (1 - 256 * _W), r1 * f * (1 + 256 * _W)
            return r1 / math.sqrt(d) * (1 - 256 * _W), r1 * math.sqrt(2.0 / (d + 1)) * (1 + 256 * _W)
        else:
            raise SpecError("the layered (shell) LP on the continuous domain supports the costs l1, l2, l2sq and linf")
        return v * (1 - 64 * _W), v * (1 + 64 * _W)
    if c.kind == "l1":
        return k.copy(), k.copy()
    orb = orbit_points(d, sh.R, reduced=c.kind != "expr", shape="ball")
    lo, hi = c.enclose_points(orb.reps.astype(float))
    shell = np.abs(orb.reps).sum(axis=1)
    slo = np.bincount(shell, weights=orb.size * np.maximum(lo, 0.0), minlength=sh.R + 1)
    shi = np.bincount(shell, weights=orb.size * hi, minlength=sh.R + 1)
    cnt = np.bincount(shell, minlength=sh.R + 1).astype(float) + 1.0
    slack = cnt * 4 * _W  # sums of nonnegative terms: relative error below (terms) × u
    return slo / sh.size * (1 - slack), shi / sh.size * (1 + slack)


# -- the LP ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PureNDLP:
    """A built d-D pure-DP LP and what is needed to read its solution back."""

    lp: LinearProgram
    support: Orbits | Shells
    sigma: np.ndarray  # scale of each variable: p = sigma * q
    dim: int
    sensitivity: int  # in lattice units (Δ, or the resolution n)
    norm: str
    tables: list  # per layer: (n, |steps|) neighbour indices, −1 outside the domain
    steps: list  # per layer: the step set
    cost_lo: np.ndarray  # cost of each variable's points (real units): lower / upper enclosure
    cost_hi: np.ndarray
    h: float = 1.0  # cell width (1 on the lattice)
    cells: bool = False
    side: str = "lower"
    variant: str = "lattice_nd"
    #: the pairs (i, j) of the rows p_i <= e^ε p_j not (yet) in the LP (:func:`ring_shifts`), or None
    pending: tuple[np.ndarray, np.ndarray] | None = None
    epsilon: float = 0.0

    @property
    def orbits(self) -> Orbits | Shells:
        return self.support

    @property
    def generated(self) -> bool:
        """Whether the LP keeps only some shifts' rows (the ring of :func:`ring_shifts` and rows added since)."""
        return self.pending is not None

    def violated(self, x: np.ndarray, tolerance: float = 1e-7) -> np.ndarray:
        """Indices into :attr:`pending` of the rows that ``x`` violates by more than ``tolerance`` times its largest
        scaled mass, most violated first (empty when none is pending)."""
        if self.pending is None or self.pending[0].size == 0:
            return np.zeros(0, dtype=np.int64)
        i, j = self.pending
        q = np.asarray(x, dtype=float)[self.lp.col_blocks["p"]]
        excess = q[i] - math.exp(self.epsilon) * (self.sigma[j] / self.sigma[i]) * q[j]
        bad = np.flatnonzero(excess > tolerance * max(float(np.max(np.abs(q), initial=0.0)), 1e-300))
        return bad[np.argsort(-excess[bad], kind="stable")]

    def with_rows(self, which: np.ndarray) -> "PureNDLP":
        """This LP with the pending rows ``which`` added (block ``ratio_generated``) and no longer pending."""
        import scipy.sparse as sp  # lazy, as in _assemble

        i, j = self.pending
        which = np.asarray(which, dtype=np.int64)
        lp = self.lp
        rows = _pair_rows(i[which], j[which], self.sigma, math.exp(self.epsilon), lp.cols)
        A = sp.csc_array(sp.vstack([sp.csr_array(lp.A), rows], format="csc"))
        blocks = dict(lp.row_blocks)  # the generated rows are the last block
        first = blocks["ratio_generated"].start if "ratio_generated" in blocks else lp.rows
        blocks["ratio_generated"] = slice(first, A.shape[0])
        keep = np.ones(i.size, dtype=bool)
        keep[which] = False
        lp = dataclasses.replace(lp, A=A, row_lower=np.concatenate([lp.row_lower, np.full(which.size, -np.inf)]),
                                 row_upper=np.concatenate([lp.row_upper, np.zeros(which.size)]), row_blocks=blocks)
        return dataclasses.replace(self, lp=lp, pending=(i[keep], j[keep]))

    @property
    def layers(self) -> int:
        return len(self.tables)

    def masses(self, x: np.ndarray) -> np.ndarray:
        """p per variable (orbit representative, cell or shell point), clipped at 0."""
        q = np.asarray(x, dtype=float)[self.lp.col_blocks["p"]]
        return np.maximum(q, 0.0) * self.sigma

    def far_mass(self, x: np.ndarray) -> float:
        return float(max(0.0, x[self.lp.col_blocks["far"].start]))

    def cube(self, x: np.ndarray) -> np.ndarray:
        """p on the whole cube [−R, R]^d (shape (2R+1,)*d); point/cell supports only."""
        R, d = self.support.R, self.dim
        axes = [np.arange(-R, R + 1)] * d
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
        idx = self.support.index(pts)
        return np.where(idx >= 0, self.masses(x)[idx], 0.0).reshape((2 * R + 1,) * d)


def build_pure_nd(cost, epsilon: float, sensitivity: int, R: int, *, dim: int, norm: str = "l1",
                  reduced: bool = True, shape: str | None = None, scale_efolds: float = SCALE_EFOLDS,
                  resolution: int | None = None, side: str = "lower", layered: bool = False,
                  monotone: bool = False, ring: bool = False) -> PureNDLP:
    """The LP of the module docstring on the domain of radius R (in lattice units).

    Parameters
    ----------
    cost : str or CostND
        A named cost (l1, l2, l2sq, linf) or an expression cost of :mod:`optmech.costs_nd`.
    sensitivity : int
        Δ on the integer domain; on the continuous domain (``resolution`` n given) the real Δ,
        with cells of width h = Δ/n.
    reduced : bool or {"signs"}
        One variable per signed-permutation orbit (True) or per orbit of the coordinates' sign
        changes ("signs"); the caller checks that the cost is invariant.
    shape : {"ball", "cube"} or None
        Point domain (default: the ℓ1 ball for ℓ1 with a named cost on the lattice, else the cube).
    side : {"lower", "upper"}
        Relaxation (on cells: second-order node prices, :func:`node_costs` and :func:`expression_node_costs`)
        with a far-mass variable, or the restriction priced at proven bounds of the cube means with every
        connected cell pair (continuous) and no far mass.
    layered : bool
        The ℓ1-shell LP (ℓ1 sensitivity only).
    monotone : bool
        Shells on the upper side only: restrict to nonincreasing densities, a_{k+1} <= a_k, so that
        the window rows reduce to a_k <= e^ε a_{k+n} (2 nonzeros per shell).  A restriction: it
        proposes a mechanism for the audit and gives no lower bound.
    ring : bool
        ℓ2 sensitivity on cells with n >= :data:`RING_FROM`: rows for the shifts of :func:`ring_shifts` only, the
        other pairs kept in :attr:`PureNDLP.pending` for row generation (``tables`` and ``steps`` stay the whole
        ball's: the upper side's repair and audit cover every shift).
    """
    from optmech.costs_nd import as_cost_nd

    d = int(dim)
    c_nd = as_cost_nd(cost, d)
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be 'lower' or 'upper', got {side!r}")
    cells = resolution is not None
    n_lat = int(resolution) if cells else int(sensitivity)
    h = float(sensitivity) / n_lat if cells else 1.0
    if layered:
        if norm != "l1":
            raise SpecError(f"the layered (shell) LP is for l1 sensitivity, not {norm}")
        support = Shells(R, shell_sizes(np.arange(R + 1), d, cells), cells)
        steps = layer_steps(norm, d, n_lat, shells=True)
        far_shape = "shells"
    else:
        if shape is None:
            shape = "ball" if norm == "l1" and c_nd.kind != "expr" and (not cells or side == "lower") else "cube"
        support = orbit_points(d, R, reduced, shape)
        steps = layer_steps(norm, d, n_lat, upper_cells=cells and side == "upper")
        far_shape = ("cells" if shape == "cube" else "cells_ball") if cells else shape
    cache: dict[int, np.ndarray] = {}
    tables = [cache.setdefault(id(s), support.neighbours(s)) for s in steps]
    far_nodes = None
    if cells and not layered and c_nd.kind == "expr" and support.shape == "cube":
        lo, hi, far_nodes = expression_node_costs(c_nd, support, float(sensitivity), n_lat)
    else:
        lo, hi = _support_costs(c_nd, support, d, cells, float(sensitivity), n_lat)
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise SpecError(f"the cost {c_nd.spec!r} is not finite on the whole domain")
    if side == "lower":
        c_obj, far_cost = lo, domain_outside_min(c_nd, R, d, far_shape, h if cells else None)
        if cells and c_nd.kind in SECOND_ORDER_COSTS:  # far nodes: their points' minimum less the largest e
            e_far = {"l1": 0.0, "l2sq": d * h * h / 4.0, "linf": h, "l2": h * math.sqrt(d) / 2.0}[c_nd.kind]
            far_cost = max(0.0, float(np.nextafter(far_cost - e_far * (1.0 + 1e-12), -np.inf)))
        elif far_nodes is not None:  # the node prices' far price (expression_node_costs)
            far_cost = max(0.0, far_nodes)
    else:
        c_obj, far_cost = hi, 0.0
    if monotone and not (layered and side == "upper"):
        raise ValueError("monotone applies to the layered LP's upper side only")
    row_mask = None
    if ring and ring_applies(norm, n_lat, cells, layered):
        row_mask = ring_shifts(steps[0], n_lat, upper_cells=side == "upper")
    lp, sigma, pending = _assemble(support.size, support.l1, c_obj, far_cost, side == "lower",
                                   [_monotone_chain(R, n_lat)] if monotone else tables, epsilon, epsilon / n_lat,
                                   scale_efolds, monotone=monotone, per_size=layered, row_mask=row_mask)
    variant = ("shells_nd" if layered else "cells_nd" if cells else "lattice_nd") + (
        {"signed_permutations": "_orbits", "signs": "_sign_orbits"}.get(getattr(support, "group", "none"), ""))
    return PureNDLP(lp, support, sigma, d, n_lat, norm, tables, steps, lo, hi, h, cells, side, variant, pending,
                    float(epsilon))


def _monotone_chain(R: int, n: int) -> np.ndarray:
    """(R+1, 2) pairs for the monotone shell LP: column 0 = k + 1 (a_{k+1} <= a_k), column 1 =
    min(k + n, R) (a_k <= e^ε a_{k+n}, or e^ε a_R at the end); −1 where absent."""
    k = np.arange(R + 1)
    return np.stack([np.where(k < R, k + 1, -1), np.where(k < R, np.minimum(k + n, R), -1)], axis=1)


def _assemble(size: np.ndarray, l1: np.ndarray, c_obj: np.ndarray, far_cost: float, far_free: bool,
              tables: list[np.ndarray], epsilon: float, rate: float, efolds: float,
              monotone: bool = False, per_size: bool = False,
              row_mask: np.ndarray | None = None) -> tuple[LinearProgram, np.ndarray, tuple | None]:
    """Columns p (scaled), the recursion's auxiliaries m_1..m_L (L > 1), far; rows as in the docstring; with
    ``row_mask`` (one layer) only the pairs of the steps it marks get rows, and the others come back as pending
    (i, j) pairs (else None).

    A column is the density times 1/σ with σ = exp(−min(rate·‖x‖₁, efolds)); with ``per_size``
    (ℓ1 shells, whose sizes grow like k^{d−1}) σ is also divided by the shell's size, so that the
    normalisation row's coefficients size·σ stay O(1) instead of spanning ~k^{d−1} (d = 5: 1e10,
    which HiGHS declared infeasible).
    """
    import scipy.sparse as sp  # lazy: scipy's first import costs the command line about 0.2 s

    n = len(size)
    L = len(tables)
    pending = None
    sigma = np.exp(-np.minimum(rate * l1, efolds))
    if per_size:
        sigma = sigma / size
    recursive = L > 1
    n_aux = L * n if recursive else 0
    col_far = n + n_aux
    n_cols = col_far + 1
    e = math.exp(epsilon)

    def pcol(layer: int, idx: np.ndarray) -> np.ndarray:  # layer 0 = p, r >= 1 = m_r
        return idx if layer == 0 else n + (layer - 1) * n + idx

    blocks = []
    if recursive:
        r_idx, c_idx, vals = [], [], []
        start = 0
        for layer, nb in enumerate(tables, start=1):
            i, s = np.nonzero(nb >= 0)
            j = nb[i, s]
            rows = start + np.arange(len(i))
            start += len(i)
            r_idx += [rows, rows]
            c_idx += [pcol(layer, i), pcol(layer - 1, j)]
            vals += [np.ones(len(i)), -sigma[j] / sigma[i]]
        rec = sp.coo_array((np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))), shape=(start, n_cols))
        fin = sp.coo_array((np.concatenate([np.ones(n), np.full(n, -e)]),
                            (np.concatenate([np.arange(n)] * 2), np.concatenate([np.arange(n), pcol(L, np.arange(n))]))),
                           shape=(n, n_cols))
        blocks += [("recursion", rec, -np.inf, 0.0), ("ratio", fin, -np.inf, 0.0)]
    else:
        nb = tables[0]
        i, s = np.nonzero(nb >= 0)
        j = nb[i, s]
        keep = i != j
        i, j, s = i[keep], j[keep], s[keep]
        if row_mask is not None:
            now = row_mask[s]
            pending = (i[~now], j[~now])
            i, j, s = i[now], j[now], s[now]
        factor = np.where(s == 0, 1.0, e) if monotone else e  # monotone: a_{k+1} <= a_k, a_k <= e^ε a_{k+n}
        if monotone:
            i, j = np.where(s == 0, j, i), np.where(s == 0, i, j)
        blocks.append(("ratio", _pair_rows(i, j, sigma, factor, n_cols), -np.inf, 0.0))
    norm_row = sp.coo_array((np.append(size * sigma, 1.0), (np.zeros(n + 1, dtype=np.int64), np.append(np.arange(n), col_far))),
                            shape=(1, n_cols))
    A, rl, ru, row_blocks = stack_rows([("normalisation", norm_row, 1.0, 1.0)] + blocks, n_cols)
    c = np.zeros(n_cols)
    c[:n] = size * c_obj * sigma
    c[col_far] = far_cost
    qmax = 1.0 / (size * sigma)  # p <= 1 / size; an auxiliary m_r(x) can be taken <= p(x)
    col_upper = np.concatenate([qmax, np.tile(qmax, L) if recursive else [], [1.0 if far_free else 0.0]])
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n_cols), col_upper=col_upper,
        row_blocks=row_blocks,
        col_blocks={"p": slice(0, n), "aux": slice(n, n + n_aux), "far": slice(col_far, col_far + 1)},
        meta={"normalisation_row": row_blocks["normalisation"].start, "epsilon": epsilon},
    )
    return lp, sigma, pending


def _pair_rows(i: np.ndarray, j: np.ndarray, sigma: np.ndarray, factor, n_cols: int):
    """The rows q_i − factor (σ_j/σ_i) q_j <= 0 of the pairs (i, j) (factor e^ε, or 1 for a monotone row)."""
    import scipy.sparse as sp

    rows = np.arange(i.size)
    return sp.csr_array((np.concatenate([np.ones(i.size), -factor * sigma[j] / sigma[i]]),
                         (np.concatenate([rows, rows]), np.concatenate([i, j]))), shape=(i.size, n_cols))


def sphere_sizes(k: np.ndarray, d: int) -> np.ndarray:
    """|S_k| = #{x ∈ ℤ^d : ‖x‖₁ = k} as floats (exact up to 2^53)."""
    from scipy import special  # lazy, as scipy.sparse in _assemble: the mechanisms import this module

    k = np.asarray(k, dtype=np.int64)
    out = np.zeros(k.shape)
    for j in range(1, d + 1):
        out += 2.0**j * special.comb(d, j) * special.comb(k - 1, j - 1)
    return np.where(k == 0, 1.0, out)
