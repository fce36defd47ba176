r"""(ε, δ)-DP on ℝ^d as lattice LPs: node prices for the lower bound, cube cells for the upper bound.

The problem: minimise E L(X) over laws of X on ℝ^d such that H_t(X) <= δ for every real shift t
with ‖t‖_p <= Δ (p = 1 or 2, the sensitivity's norm), H_t the hockey-stick divergence of
:mod:`optmech.problems.approx_cells`.  Fix n (cells per Δ), h = Δ/n, the nodes h·k (k ∈ ℤ^d) and the
cubes C_k = h·(k + [−½, ½)^d).  Both bounds are integer (ε, δ) LPs on a box of ℤ^d
(:func:`optmech.problems.approx.build_approx`), with different shift sets and prices.

**Upper bound (restriction).**  Let q be a pmf on ℤ^d and X have density q_k/h^d on C_k.  For a real
shift t = h·(m + φ), m ∈ ℤ^d, φ ∈ [0, 1)^d, the shifted grid cuts each cube into 2^d boxes; the box of
S ⊆ {1..d} has volume Π_{i∈S} φ_i Π_{i∉S} (1 − φ_i)·h^d and meets the shifted cube of k − m − e_S, so

    H_t(X) = Σ_S w_S(φ)·H_{m+e_S}(q),   w_S >= 0,  Σ_S w_S = 1                      (1)

(multilinear interpolation of the lattice divergences between the corners of the unit cube of
t/h).  Hence H_t(X) <= max over the corners v = m + e_S, and every such corner has
|v_i| <= |t_i|/h + 1, i.e. ‖(|v| − 1)_+‖_p <= ‖t‖_p/h <= n.  So X is (ε, δ)-DP on ℝ^d when the lattice
audit passes on :func:`audit_shifts` (a superset of the corners needed; outward rounding), and
E L(X) = Σ q_k·mean_{C_k} L, bounded above by :func:`cell_mean_upper_nd`.

**Lower bound (relaxation).**  Let X be (ε, δ)-DP and Y its coordinatewise randomised rounding to
the nodes (independently in each coordinate, to k_i or k_i + 1 with the weights of linear
interpolation).  Rounding X + h·v gives Y + v, so for the lattice shifts ‖v‖_p <= n (real shifts
of norm <= Δ, :func:`ball_shifts`) the law of Y is (ε, δ)-DP on the lattice (post-processing).
E[L(h·Y) | X] is the multilinear interpolant of L on the cube Q of X; it exceeds L(X) by at most
e_Q, a proven bound (:func:`interpolation_errors`):

* ``l1``: 0 (separable, |x_i| is linear between nodes and 0 is a node);
* ``l2sq``: Σ_i θ_i(1 − θ_i)h² <= d·h²/4;
* ``l2``: E‖V‖ − ‖x‖ <= min(√(E‖V − x‖²), E‖V − x‖²/(2 r_Q)) <= min(h√d/2, d·h²/(8 r_Q)), r_Q the
  smallest norm on Q (Taylor with the Hessian's norm 1/‖ξ‖ <= 1/r_Q on Q, E[V − x] = 0);
* ``linf`` (used by the pure ε-DP cell LPs, :mod:`optmech.problems.pure_nd`): min(1, k/4)·h where k >= 2
  coordinates share the largest a_i = min_Q |x_i|/h, else 0.  No coordinate changes sign on Q, so in the
  coordinates u_i = |x_i|/h ∈ [a_i, a_i + 1] the interpolant is E max_i (a_i + B_i) with independent
  B_i ~ Bernoulli(θ_i) and L = max_i (a_i + θ_i) =: M.  E max_i (a_i + B_i) <= M + Σ_i E(a_i + B_i − M)_+
  = M + Σ_i θ_i (a_i + 1 − M)_+, and a_i + 1 − M <= 1 − θ_i, positive only when a_i equals the largest a_j
  (the a_i are integers and M >= max_j a_j): the error is at most Σ over those k coordinates of
  θ_i(1 − θ_i) <= k/4 (0 when k = 1: L is linear on Q), and at most 1 (1-Lipschitz in ℓ∞, corners within 1).

The node price L̂(k) = L(hk) − max of e_Q over the 2^d cubes with corner k therefore satisfies
E[L̂(Y) | X] <= L(X).  On the box [−R, R]^d the nodes with ‖k‖∞ = R and the far mass outside are
priced at c_far = inf over ‖x‖∞ >= R·h of L (a cube with a corner outside the box lies there), so
the bound holds there too.  The LP's optimum is <= V*(ℝ^d), certified through its duals.

**Expressions** (a :class:`~optmech.costs_nd.CostND` in x1..xd, proven nonnegative on ℝ^d by the
caller).  The node price is L̂(k) = L_lo(hk) − max e_Q over the 2^d cubes around k, as above, with
e_Q from the interval enclosures on m^d sub-boxes of Q (:func:`expression_interpolation_errors`):
a bound of order (h/m)·(the cost's variation), exact nowhere but valid for any expression.  c_far is the
enclosure's lower bound of L over ‖x‖∞ > R·h (slightly less, so the boundary is included), and the
cube mean is bounded above by the mean of the enclosure's upper ends over m^d equal sub-boxes
(:data:`EXPR_SUBDIVISIONS`).  The boxes are widened outward by the rounding of h.
"""

from __future__ import annotations

import math

import numpy as np

from optmech.costs.interval import round_down, round_up
from optmech.errors import SpecError

__all__ = ["COSTS", "EXPR_SUBDIVISIONS", "NORMS", "expression_interpolation_errors", "expression_jet_errors",
           "curvature_sums", "cube_corners", "largest_around", "ball_shifts", "audit_shifts", "node_prices", "cell_mean_upper_nd", "cell_prices",
           "interpolation_errors", "box_points"]

COSTS = ("l1", "l2", "l2sq")
#: Sub-boxes per axis for an expression's cube means (upper bounds): error O(h/m) instead of O(h).
EXPR_SUBDIVISIONS = {2: 4, 3: 2}
NORMS = ("l1", "l2")


def _norm_p(a: np.ndarray, norm: str) -> np.ndarray:
    """‖a‖₁ or ‖a‖₂² (exact in integers) along the last axis."""
    return np.abs(a).sum(axis=-1) if norm == "l1" else (a.astype(np.int64) ** 2).sum(axis=-1)


def _within(a: np.ndarray, n: int, norm: str) -> np.ndarray:
    return _norm_p(a, norm) <= (n if norm == "l1" else n * n)


def _grid(d: int, r: int) -> np.ndarray:
    axes = [np.arange(-r, r + 1, dtype=np.int64)] * d
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)


def ball_shifts(d: int, n: int, norm: str) -> np.ndarray:
    """Lattice shifts 0 < ‖v‖_p <= n (the real shifts of norm <= Δ that move whole cells).

    >>> len(ball_shifts(2, 2, "l2")), len(ball_shifts(2, 2, "l1"))
    (12, 12)
    """
    v = _grid(d, n)
    return v[_within(v, n, norm) & np.any(v != 0, axis=1)]


def audit_shifts(d: int, n: int, norm: str) -> np.ndarray:
    """Lattice shifts v ≠ 0 with ‖(|v| − 1)_+‖_p <= n: the corners of every unit cube that meets the
    ball of radius n (equation (1)), the audit of every real shift of a cube-constant density.

    >>> len(audit_shifts(1, 3, "l2"))      # 1-D: |v| <= n + 1
    8
    """
    v = _grid(d, n + 1)
    return v[_within(np.maximum(np.abs(v) - 1, 0), n, norm) & np.any(v != 0, axis=1)]


def box_points(d: int, R: int) -> np.ndarray:
    """The points of [−R, R]^d in C order, shape ((2R+1)^d, d)."""
    side = 2 * R + 1
    return np.stack(np.unravel_index(np.arange(side**d), (side,) * d), axis=-1) - R


def cube_corners(d: int, R: int) -> np.ndarray:
    """The lowest corners [−R−1, R]^d (C order) of the unit cubes that have a corner in [−R, R]^d."""
    side = 2 * R + 2
    return np.stack(np.unravel_index(np.arange(side**d), (side,) * d), axis=-1) - (R + 1)


def largest_around(per_cube: np.ndarray, d: int, R: int) -> np.ndarray:
    """For each point k of [−R, R]^d (C order), the largest value over the 2^d cubes with corner k, from
    values on :func:`cube_corners` (each cube's value computed once)."""
    arr = np.asarray(per_cube).reshape((2 * R + 2,) * d)
    out = np.full((2 * R + 1,) * d, -np.inf)
    for s in np.ndindex(*(2,) * d):  # the cube with lowest corner k − s sits at index k − s + R + 1
        out = np.maximum(out, arr[tuple(slice(1 - b, 2 * R + 2 - b) for b in s)])
    return out.reshape(-1)


def _h(sensitivity: float, n: int) -> tuple[float, float]:
    h = float(sensitivity) / float(n)
    return float(round_down(np.float64(h))), float(round_up(np.float64(h)))


def _is_expr(cost) -> bool:
    """A :class:`~optmech.costs_nd.CostND` expression (named costs travel as their names)."""
    return not isinstance(cost, str) and getattr(cost, "kind", None) == "expr"


def _check(cost, d: int) -> None:
    if not (_is_expr(cost) or cost in COSTS):
        raise SpecError(f"(epsilon, delta)-DP on R^d supports the costs {', '.join(COSTS)} and expressions in "
                        f"x1..xd; got {cost!r}")
    if _is_expr(cost) and cost.dim != d:
        raise SpecError(f"the cost is an expression in {cost.dim} variables, the problem has d = {d}")
    if d < 2:
        raise SpecError("the d-dimensional cells need d >= 2")


def _cube_boxes(lower: np.ndarray, upper: np.ndarray, h_lo: float, h_hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Boxes containing h·[lower, upper] (node units, exact floats) for every h in [h_lo, h_hi], rounded
    outward (0 stays exact)."""
    b, a = lower.astype(float), upper.astype(float)
    lo = round_down(np.minimum(b * h_lo, b * h_hi))
    hi = round_up(np.maximum(a * h_lo, a * h_hi))
    return np.where(b == 0, 0.0, lo), np.where(a == 0, 0.0, hi)


def _cost_at(cost: str, k: np.ndarray, h_lo: float, h_hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Enclosure [lo, hi] of L(h·k) for integer points k (rows)."""
    if cost == "l1":
        s = np.abs(k).sum(axis=1).astype(float)
        lo, hi = round_down(s * h_lo), round_up(s * h_hi)
    else:
        s = (k.astype(np.int64) ** 2).sum(axis=1).astype(float)  # exact below 2^53
        if cost == "l2sq":
            lo, hi = round_down(s * (h_lo * h_lo)), round_up(s * (h_hi * h_hi))
        else:
            r = np.sqrt(s)
            lo, hi = round_down(round_down(r) * h_lo), round_up(round_up(r) * h_hi)
    return np.where(s == 0, 0.0, lo), np.where(s == 0, 0.0, hi)  # the origin costs exactly 0


def interpolation_errors(cost: str, lower_corners: np.ndarray, h_hi: float) -> np.ndarray:
    """Proven bounds e_Q >= sup over the cube Q of (multilinear interpolant of L − L), for the cubes
    with lowest corner ``lower_corners`` (in node units), module docstring."""
    d = lower_corners.shape[1]
    if cost == "l1":
        return np.zeros(len(lower_corners))
    if cost == "linf":  # in node units |x_i| spans [mig_i, mag_i] on Q (c_i >= 0 or c_i + 1 <= 0: no sign change)
        c = lower_corners.astype(float)
        mig = np.where(c >= 0, c, -(c + 1.0))
        k = (mig == mig.max(axis=1, keepdims=True)).sum(axis=1)
        return np.where(k >= 2, round_up(np.minimum(1.0, k / 4.0) * float(h_hi)), 0.0)
    hh = float(round_up(h_hi * h_hi))
    if cost == "l2sq":
        return np.full(len(lower_corners), float(round_up(d * hh / 4.0)))
    # l2: the nearest point of Q = h·(c + [0, 1]^d) to the origin has coordinates clip(0, c_i, c_i + 1)
    c = lower_corners.astype(float)
    near = np.clip(0.0, c, c + 1.0)
    r_units = np.sqrt((near * near).sum(axis=1))
    h_lo = float(round_down(np.float64(h_hi)))
    r_lo = round_down(round_down(r_units) * h_lo)  # r_Q, rounded down
    first = float(round_up(h_hi * math.sqrt(d) / 2.0, 2.0**-48))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        safe = np.where(r_lo > 0, r_lo, 1.0)
        second = np.where(r_lo > 0, round_up(d * hh / round_down(8.0 * safe)), np.inf)
    return np.minimum(first, second)


def expression_interpolation_errors(cost, lower_corners: np.ndarray, h_lo: float, h_hi: float) -> np.ndarray:
    """Proven bounds e_Q >= sup over Q of (multilinear interpolant of L − L) for an expression, on the
    cubes Q = h·(c + [0, 1]^d) with lowest corners c (node units).

    Q is cut into m^d equal sub-boxes B (:data:`EXPR_SUBDIVISIONS`).  The interpolant is multilinear,
    so on B it is at most its largest value at B's corners, a combination of the node values with
    nonnegative dyadic weights (bounded with the nodes' upper enclosures, rounded up); L is at least
    the enclosure's lower end over B.  e_Q is the largest difference over the sub-boxes.

    >>> from optmech.costs_nd import parse_cost_nd
    >>> e = expression_interpolation_errors(parse_cost_nd("abs(x1) + abs(x2)", 2), np.array([[0, 0], [-1, 0]]), 0.5, 0.5)
    >>> bool(np.all(e >= 0)) and bool(np.all(e <= 0.5 / 4 * 2 + 1e-12))   # linear on Q: only the sub-boxes' spread
    True
    """
    d = lower_corners.shape[1]
    m = EXPR_SUBDIVISIONS.get(d, 1)
    c = lower_corners.astype(np.int64)
    bits = list(np.ndindex(*(2,) * d))
    node_hi = {}
    for b in bits:  # upper enclosures of L at the 2^d corners of each cube
        k = c + np.array(b, dtype=np.int64)
        node_hi[b] = cost.enclose_box(*_cube_boxes(k, k, h_lo, h_hi))[1]
    e = np.zeros(len(c))
    for j in np.ndindex(*(m,) * d):
        cf = c.astype(float)
        lo_b, _ = cost.enclose_box(*_cube_boxes(cf + np.array(j) / m, cf + (np.array(j) + 1.0) / m, h_lo, h_hi))
        top = np.full(len(c), -np.inf)
        for corner in bits:  # the sub-box's corners t = (j + corner)/m in [0, 1]^d
            t = (np.array(j) + np.array(corner)) / m
            val = np.zeros(len(c))
            for b in bits:  # multilinear weights Π t_i^{b_i} (1 − t_i)^{1 − b_i}: exact dyadic, >= 0
                w = float(np.prod(np.where(np.array(b) == 1, t, 1.0 - t)))
                if w > 0:
                    val = round_up(val + round_up(w * node_hi[b]))
            top = np.maximum(top, val)
        e = np.maximum(e, round_up(top - lo_b))
    e = np.where(np.isnan(e), np.inf, np.maximum(e, 0.0))
    return np.minimum(e, expression_jet_errors(cost, c, h_lo, h_hi))


def curvature_sums(cost, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Σ_i w_i²·sup_B (∂²L/∂x_i²)₊ over each box B = [lo, hi] (rows; w_i its widths), rounded up; +inf where
    the expression is not proven to equal a C² function on the closed box
    (:func:`optmech.costs.interval.second_derivative_enclosure`).  Only the diagonal of the Hessian enters
    the multilinear interpolation error and the box mean (:func:`expression_jet_errors`)."""
    from optmech.costs.interval import nan_free, second_derivative_enclosure

    n, d = lo.shape
    total = np.zeros(n)
    cols_lo, cols_hi = tuple(lo[:, i] for i in range(d)), tuple(hi[:, i] for i in range(d))
    with np.errstate(all="ignore"):
        for i in range(d):
            _, _, second, smooth = second_derivative_enclosure(cost.tree, cols_lo, cols_hi, i)
            top = np.broadcast_to(nan_free(*np.broadcast_arrays(second[0], second[1]))[1], (n,))
            ok = np.broadcast_to(np.asarray(smooth, dtype=bool), (n,)) & np.isfinite(top)
            w = round_up(hi[:, i] - lo[:, i])
            term = np.where(ok, round_up(round_up(w * w) * np.maximum(top, 0.0)), np.inf)
            total = np.where(np.isfinite(term), round_up(total + term), np.inf)
    return np.where(np.isnan(total), np.inf, total)


def expression_jet_errors(cost, lower_corners: np.ndarray, h_lo: float, h_hi: float) -> np.ndarray:
    r"""Second-order bounds e_Q >= sup over Q of (multilinear interpolant of L − L) for an expression on the
    cubes Q = h·(c + [0, 1]^d), +inf where L is not proven C² on the closed cube [derived].

    The interpolant is I = I_1 ∘ … ∘ I_d (linear interpolation along each coordinate), so
    I L − L = Σ_i I_1…I_{i−1}(I_i L − L).  Along coordinate i, the linear interpolant of a C² function on
    an edge of length w exceeds it by ½ ∂_ii L(ξ)·(x − a)(b − x) <= (w²/8)·sup_Q (∂_ii L)₊, at every point of
    Q; the operators I_j are positive and keep constants, so e_Q = (1/8)·Σ_i w_i² sup_Q (∂_ii L)₊
    (:func:`curvature_sums`).  It is 0 where L is affine along each axis on Q — |x1| + 2|x2| with the
    kinks on the nodes' planes — and O(h²) for smooth costs, against the sub-box bound's O(h/m)."""
    c = lower_corners.astype(float)
    lo, hi = _cube_boxes(c, c + 1.0, h_lo, h_hi)
    return round_up(curvature_sums(cost, lo, hi) / 8.0)


def _symmetrised(cost, price: np.ndarray, pts: np.ndarray, R: int, h: float, upper: bool = False) -> np.ndarray:
    """Prices made exactly invariant where the cost is: the least (``upper``: the largest) price over each
    signed-permutation orbit when the cost's enclosures are invariant at the box's points, over ±x
    when they are even, else unchanged (a lower price is always a valid lower one, a larger one a
    valid upper one; rounding alone breaks the prices' symmetry, and with it the LP's reduction)."""
    x = pts * h
    if cost.is_invariant(x):
        _, group = np.unique(np.sort(np.abs(pts), axis=1), axis=0, return_inverse=True)
        group = group.reshape(-1)
    elif cost.is_even(x):  # the box in C order: −x is the mirrored flat index
        flat = np.arange(len(pts))
        group = np.minimum(flat, len(pts) - 1 - flat)
    else:
        return price
    if upper:
        most = np.full(group.max() + 1, -np.inf)
        np.maximum.at(most, group, price)
        return most[group]
    least = np.full(group.max() + 1, np.inf)
    np.minimum.at(least, group, price)
    return least[group]


def node_prices(cost, d: int, n: int, R: int, sensitivity: float) -> tuple[np.ndarray, float]:
    """The relaxation's prices on the box [−R, R]^d (C order) and the far mass's price (module docstring).

    >>> p, far = node_prices("l1", 2, 2, 3, 1.0)
    >>> float(p[len(p) // 2]), round(far, 12)   # the origin costs 0; beyond the box, ‖x‖∞ >= 3h = 1.5
    (0.0, 1.5)
    """
    _check(cost, d)
    h_lo, h_hi = _h(sensitivity, n)
    pts = box_points(d, R)
    if _is_expr(cost):  # L(x_k) minus the largest bound of the interpolation error (module docstring)
        lo, _ = cost.enclose_box(*_cube_boxes(pts, pts, h_lo, h_hi))
        e = largest_around(expression_interpolation_errors(cost, cube_corners(d, R), h_lo, h_hi), d, R)
        price = _symmetrised(cost, round_down(lo - e), pts, R, 0.5 * (h_lo + h_hi))
    else:
        lo, _ = _cost_at(cost, pts, h_lo, h_hi)
        # the largest error over the 2^d cubes with corner k: lowest corners k − s, s ∈ {0, 1}^d
        e = np.zeros(len(pts))
        for s in np.ndindex(*(2,) * d):
            e = np.maximum(e, interpolation_errors(cost, pts - np.array(s, dtype=np.int64), h_hi))
        price = np.where(e == 0, lo, round_down(lo - e))
    far = _outside_min(cost, R, h_lo)
    edge = np.abs(pts).max(axis=1) == R
    price = np.where(edge, np.minimum(price, far), price)
    return price, far  # may be negative near the origin: the bound needs E[L̂(Y) | X] <= L(X), not L̂ >= 0


def _outside_min(cost, R: int, h_lo: float) -> float:
    """inf of L over ‖x‖∞ >= R·h: every named cost here is >= ‖x‖∞ (l2sq: >= ‖x‖∞²); an expression's
    enclosure over ‖x‖∞ > r for an r just below R·h."""
    r = float(round_down(R * h_lo))
    if _is_expr(cost):
        return float(cost.outside_cube_min(float(np.nextafter(r, -np.inf)) if r > 0 else -1.0))
    return float(round_down(r * r)) if cost == "l2sq" else r


def cell_mean_upper_nd(cost, k: np.ndarray, sensitivity: float, n: int) -> np.ndarray:
    """Upper bounds of the mean of L over the cubes C_k (rows of k):

    * l1: Σ_i mean |x_i| = Σ_i (|k_i|·h, or h/4 where k_i = 0);
    * l2sq: h²·(‖k‖² + d/12);
    * l2: <= √(mean ‖x‖²) = h·√(‖k‖² + d/12) (Jensen);
    * linf: <= the average of L at the cube's 2^d corners (L is convex along each coordinate, so it lies below
      its multilinear interpolant, whose mean over the cube is that average).

    >>> [round(float(v), 12) for v in cell_mean_upper_nd("l1", np.array([[0, 0], [1, 0]]), 1.0, 2)]
    [0.25, 0.625]
    """
    h_lo, h_hi = _h(sensitivity, n)
    d = k.shape[1]
    if _is_expr(cost):  # the mean of the enclosures' upper ends over m^d equal sub-boxes, widened outward
        m = EXPR_SUBDIVISIONS.get(d, 1)
        kf = np.asarray(k, dtype=float) - 0.5
        total = np.zeros(len(kf))
        for j in np.ndindex(*(m,) * d):
            off = np.array(j, dtype=float) / m  # exact: m is a power of 2
            box = _cube_boxes(kf + off, kf + off + 1.0 / m, h_lo, h_hi)
            # the box's mean is at most L(mid) + Σ_i w_i² sup (∂_ii L)₊ / 24 where L is C² on it
            # (module docstring), else at most the enclosure's upper end
            mid = kf + off + 0.5 / m
            at_mid = cost.enclose_box(*_cube_boxes(mid, mid, h_lo, h_hi))[1]
            with np.errstate(all="ignore"):
                second = round_up(at_mid + round_up(curvature_sums(cost, *box) / 24.0))
            top = cost.enclose_box(*box)[1]
            total = total + np.where(np.isfinite(second), np.minimum(top, second), top)
        return round_up(round_up(total) / float(m**d))
    a = np.abs(k).astype(float)
    if cost == "l1":
        return round_up(np.where(a == 0, 0.25, a).sum(axis=1) * h_hi)
    if cost == "linf":  # corner values max_i |k_i ± ½| are exact halves, their sum is exact
        total = np.zeros(len(a))
        for sgn in np.ndindex(*(2,) * d):
            total = total + np.abs(k + (np.array(sgn) - 0.5)).max(axis=1)
        return round_up(round_up(total / float(2**d)) * h_hi)
    sq = (k.astype(np.int64) ** 2).sum(axis=1).astype(float) + d / 12.0
    if cost == "l2sq":
        return round_up(round_up(sq) * (h_hi * h_hi))
    return round_up(round_up(np.sqrt(round_up(sq))) * h_hi)


def cell_prices(cost, d: int, n: int, R: int, N: int, sensitivity: float) -> tuple[np.ndarray, float]:
    """The candidate LP's prices: cell means on the inner box [−N, N]^d, prohibitive on the layer and
    the far mass (they have no rows of their own)."""
    _check(cost, d)
    pts = box_points(d, R)
    mean = cell_mean_upper_nd(cost, pts, sensitivity, n)
    if _is_expr(cost):  # the candidate's audit re-prices each cube; the LP only needs symmetric prices
        mean = _symmetrised(cost, mean, pts, R, float(sensitivity) / n, upper=True)
    top = 1e3 * float(mean.max())
    inner = np.abs(pts).max(axis=1) <= N
    return np.where(inner, mean, top), top
