r"""Problem builder for (ε, δ)-DP additive noise on ℤ^d with integer ℓ1 sensitivity Δ [002; 000 Ch. 4].

The constraint P(S) <= e^ε P(S + v) + δ for every set S and every shift 0 < ‖v‖₁ <= Δ is, for
additive noise, exactly the hockey-stick condition (reference/approx-dp.md §3)

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
(:mod:`optmech.audit`), gives the upper bound (see :mod:`optmech.solve_approx`).

Symmetry.  When the cost is even (L(x) = L(−x) at every point of B; the named d-D costs and
``abs``/``square``/``pow`` are), the optimum may be taken even (the average of P and its mirror is
feasible, by convexity of each hockey-stick sum and since the mirror swaps v and −v), so
p(x) = p(−x) shares one variable and only one of ±v is kept.  Monotonicity is *not* assumed: the
(ε, δ) optimum is not monotone in |x| in general (reference/approx-dp.md §3).

Columns: p (one per point, or per pair {x, −x}), far, t (one per kept shift and inner point).
Rows: the hockey-stick epigraph rows (3 nonzeros each), one budget row per kept shift, and the
normalisation Σ p + far = 1.  All blocks are assembled from index arrays (no per-row loops).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram, stack_rows

__all__ = ["ApproxLP", "build_approx", "shift_vectors", "COSTS_ND", "point_costs", "outside_min"]

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
        return cost.enclose(x, x)
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
        Whether p(x) = p(−x) shares one variable.
    shifts : ndarray (K, d)
        The shifts with hockey-stick rows.
    point_var : ndarray (M,)
        Column of each box point (flat, C order over [−R, R]^d).
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

    @property
    def box_shape(self) -> tuple[int, ...]:
        return (2 * self.R + 1,) * self.dim

    def box_masses(self, x: np.ndarray) -> np.ndarray:
        """p on the box (array of ``box_shape``), negatives clipped, from LP primal values."""
        p = np.maximum(np.asarray(x, dtype=float)[self.point_var], 0.0)
        return p.reshape(self.box_shape)

    def far_mass(self, x: np.ndarray) -> float:
        return float(max(0.0, x[self.lp.col_blocks["far"].start]))

    def layer_mass(self, x: np.ndarray) -> float:
        """Mass the relaxation put on the outer layer (points without rows of their own)."""
        p = self.box_masses(x)
        inner = tuple(slice(self.R - self.N, self.R + self.N + 1) for _ in range(self.dim))
        return float(p.sum() - p[inner].sum())


def build_approx(
    cost, epsilon: float, delta: float, sensitivity: int, N: int, *, dim: int = 1, symmetry: str = "auto"
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
    symmetry : {"auto", "off"}
    """
    d, D, N = int(dim), int(sensitivity), int(N)
    R = N + D
    side = 2 * R + 1
    M = side**d
    coords = np.stack(np.unravel_index(np.arange(M), (side,) * d), axis=-1) - R  # (M, d), C order
    even = symmetry != "off" and is_even(cost, coords)
    # point -> column: pairs {x, -x} share a column (the negation reverses the C-order flat index)
    flat = np.arange(M)
    point_var = np.minimum(flat, M - 1 - flat) if even else flat
    n_p = (M + 1) // 2 if even else M
    shifts = shift_vectors(d, D, half=even)
    K = len(shifts)
    inner_mask = np.all(np.abs(coords) <= N, axis=1)
    inner = np.flatnonzero(inner_mask)
    n_in = len(inner)
    col_far = n_p
    col_t0 = n_p + 1
    n_cols = col_t0 + K * n_in

    # objective: cost lower bounds, summed over each orbit
    if not isinstance(cost, str):
        cost.check_values(coords[:, 0].astype(float))  # one-line SpecError if negative, NaN or infinite
    c_lo, _ = point_costs(cost, coords)
    if not np.all(np.isfinite(c_lo)):
        raise SpecError("the cost must be finite at every lattice point of the window")
    c_lo = np.maximum(c_lo, 0.0)  # costs are nonnegative (checked above): the enclosure's sign slack is moot
    c = np.zeros(n_cols)
    np.add.at(c, point_var, c_lo)
    c[col_far] = max(0.0, outside_min(cost, R, d))

    # hockey-stick rows: p(x) − e^ε p(x+v) − t_{v,x} <= 0, x inner, v kept
    strides = side ** np.arange(d - 1, -1, -1)
    step = shifts @ strides  # flat offset of each shift
    e = math.exp(epsilon)
    xi = np.repeat(inner[None, :], K, axis=0)  # (K, n_in)
    yi = xi + step[:, None]
    rows = np.arange(K * n_in).reshape(K, n_in)
    t_cols = col_t0 + rows
    r = np.concatenate([rows.ravel()] * 3)
    cc = np.concatenate([point_var[xi].ravel(), point_var[yi].ravel(), t_cols.ravel()])
    vals = np.concatenate([np.ones(K * n_in), np.full(K * n_in, -e), np.full(K * n_in, -1.0)])
    hs = sp.coo_array((vals, (r, cc)), shape=(K * n_in, n_cols))  # duplicates (x+v = −x) are summed
    budget = sp.coo_array(
        (np.ones(K * n_in), (np.repeat(np.arange(K), n_in), t_cols.ravel())), shape=(K, n_cols)
    )
    orbit = np.bincount(point_var, minlength=n_p).astype(float)
    norm = sp.coo_array(
        (np.append(orbit, 1.0), (np.zeros(n_p + 1, dtype=np.int64), np.append(np.arange(n_p), col_far))),
        shape=(1, n_cols),
    )
    A, rl, ru, row_blocks = stack_rows(
        [("normalisation", norm, 1.0, 1.0), ("hockey_stick", hs, -np.inf, 0.0), ("budget", budget, -np.inf, delta)],
        n_cols,
    )
    col_upper = np.concatenate([1.0 / orbit, [1.0], np.full(K * n_in, delta)])  # all valid: masses <= 1, t <= δ
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
              "exp_epsilon": e},
    )
    return ApproxLP(lp, d, D, N, R, bool(even), shifts, point_var)


def estimate_size(dim: int, sensitivity: int, N: int, even: bool = True) -> tuple[int, int]:
    """(columns, nonzeros) of :func:`build_approx` without building it."""
    D = int(sensitivity)
    K = len(shift_vectors(dim, D, half=even)) if D ** dim < 10**6 else (2 * D + 1) ** dim
    n_in = (2 * N + 1) ** dim
    M = (2 * (N + D) + 1) ** dim
    return M + 1 + K * n_in, 4 * K * n_in + M + 1

