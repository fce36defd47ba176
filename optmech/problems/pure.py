"""Problem builders for 1-D pure ε-DP noise [Geng13, §2.5 (continuous), §2.8 (integer)].

Every builder produces a *relaxation* of the infinite problem, so the repaired dual of their
LP is a certified lower bound on V*; the LP's primal, repaired to an exactly private
mechanism in :mod:`optmech.certify`, gives the upper bound.

Truncation semantics of the general builder (the periodic builder
needs none).  Inside a window of lattice indices the ratio rows are exact.  Beyond it, any ε-DP law satisfies p(x ± W) ≥ e^{−ε} p(x), so the mass outside
is at least the geometric continuation of the window's outermost period, with a cost of at
least Σ_m e^{−mε} L(x ± mW) per unit; whatever mass exceeds that profile ("excess") costs at
least the minimum of L outside the window.  Every ε-DP law therefore maps to a feasible
point of no larger cost.

Builders
--------
``build_general``
    Any cost (asymmetric, non-monotone).  The ratio rows p_i <= e^ε p_j for |i − j| <= W are
    replaced by the block prefix/suffix max/min formulation (van Herk / Gil–Werman):
    O(N) rows and nonzeros, independent of W.
``build_periodic``
    Costs checked to be symmetric and nondecreasing in |x|: a symmetric pmf, nonincreasing in
    |x| and decaying by e^{−ε} per period [Geng13, Lemmas A.3, A.8, A.10; A.15–A.17], so one
    period of W variables with W rows is the whole LP.  On
    cells it also uses the second-order monotone in-cell cost bound of
    :func:`optmech.problems.lattice.monotone_cell_correction`.  ``optmech.solvers.chain`` solves
    it exactly in O(W).

Variables are densities (mass per unit length on cells, mass on points; see
:class:`~optmech.problems.lattice.Grid1D`), Laplace-normalised as q = p·e^{ε|x|/Δ}/p_max with
p_max the largest value any ε-DP law can take (:func:`max_density`), so that HiGHS sees O(1)
numbers.  The normalisation saturates after ``SCALE_EFOLDS``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.costs import Cost
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.lattice import Grid1D, enclose, integral, monotone_cell_correction
from optmech.problems.windows import window_ratio_rows


@dataclass(frozen=True)
class PureLP:
    """A built pure-DP LP together with what is needed to read its solution back.

    Attributes
    ----------
    lp : LinearProgram
    grid : Grid1D
    epsilon : float
    variant : {"general", "periodic"}
    k_lo, k_hi : int
        Full-line index range of the window (inclusive).
    """

    lp: LinearProgram
    grid: Grid1D
    epsilon: float
    variant: str
    k_lo: int
    k_hi: int

    def window_weights(self, x: np.ndarray) -> np.ndarray:
        """Densities (masses on ℤ) on the full-line window k_lo..k_hi from an LP solution vector."""
        q = np.asarray(x[self.lp.col_blocks["q"]], dtype=float)
        p = np.maximum(q, 0.0) / self.lp.meta["scale"]
        if self.variant == "general":
            return p
        if self.variant == "periodic":  # one period → the half line's first periods, decaying by b
            periods = self.lp.meta["periods_shown"]
            decay = np.exp(-self.epsilon * np.arange(periods))
            p = (decay[:, None] * p[None, :]).ravel()
        if self.grid.kind == "integer":  # half line 0..K → −K..K
            return np.concatenate([p[:0:-1], p])
        return np.concatenate([p[::-1], p])  # cells 0..K−1 → −K..K−1

    def excess(self, x: np.ndarray) -> float:
        """Mass the relaxation parks outside its window (none for the periodic builder)."""
        blk = self.lp.col_blocks.get("excess")
        return 0.0 if blk is None else float(np.sum(x[blk]))


def max_point_mass(epsilon: float, W: int) -> float:
    """Largest mass an ε-DP law on ℤ with window W can put on one point [derived].

    From p(y) >= p(x)·e^{−ε⌈|x−y|/W⌉} and Σ_y p(y) = 1: p(x) <= 1/(1 + 2W·b/(1−b)).
    """
    b = math.exp(-epsilon)
    return 1.0 / (1.0 + 2.0 * W * b / -math.expm1(-epsilon))


def max_density(grid: Grid1D, epsilon: float) -> float:
    """Largest value of an LP variable (mass on ℤ, average density on a cell) of any ε-DP law.

    On ℝ: f(y) >= f(x)·e^{−ε⌈|x−y|/Δ⌉} integrates to 1 >= f(x)·2Δ·b/(1−b) [derived].
    """
    if grid.kind == "integer":
        return max_point_mass(epsilon, grid.W)
    b = math.exp(-epsilon)
    return -math.expm1(-epsilon) / (2.0 * grid.period * b)


#: Laplace normalisation stops growing after this many e-folds.  Larger factors make HiGHS's
#: absolute dual tolerance cost more than the scaling gains on the far tails [derived/measured].
SCALE_EFOLDS = 12.0


def _scale(grid: Grid1D, k: np.ndarray, epsilon: float) -> np.ndarray:
    """Variable scaling s: the LP sees q = p·s with p·e^{ε|x|/Δ} = O(1)."""
    efolds = np.minimum(epsilon * grid.distance(k) / grid.W, SCALE_EFOLDS)
    return np.exp(efolds) / max_density(grid, epsilon)


def _coo(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> sp.coo_array:
    return sp.coo_array((vals, (rows, cols)), shape=shape)


def _pair_rows(
    a: np.ndarray, ca: np.ndarray, b: np.ndarray, cb: np.ndarray, n_cols: int
) -> sp.coo_array:
    """Rows ``ca·x[a] + cb·x[b]`` for arrays of column pairs (one row per pair)."""
    m = len(a)
    r = np.arange(m)
    return _coo(np.concatenate([r, r]), np.concatenate([a, b]), np.concatenate([ca, cb]), (m, n_cols))


def build_general(grid: Grid1D, epsilon: float, cost: Cost, k_lo: int, k_hi: int) -> PureLP:
    """The general relaxation on window indices k_lo..k_hi (any cost).

    Columns: q (N), block suffix minima and prefix minima (N each), excess left/right.

    Every pair within W is covered by the rows p_i <= e^ε·min(p[i−W..i+W]) (clipped to the
    window), written with block suffix and prefix minima by
    :func:`optmech.problems.windows.window_ratio_rows` (van Herk / Gil–Werman; its docstring proves
    the rows are exactly the pairwise ones).  About 3N columns, 6N rows and 12N nonzeros,
    independent of W.
    """
    W = grid.W
    N = k_hi - k_lo + 1
    if N < 2 * W + 1:
        raise ValueError("window must span at least two periods")
    b = math.exp(-epsilon)
    k = np.arange(k_lo, k_hi + 1)
    s = _scale(grid, k, epsilon)
    gmax = max_density(grid, epsilon)
    Q = np.arange(N)
    EL, ER = 3 * N, 3 * N + 1
    n = 3 * N + 2
    rows = window_ratio_rows(Q, s, W, math.exp(epsilon), N, n, gmax * s)
    blocks = list(rows.blocks)

    # normalisation and cost, with the geometric lower-profile tails and the excess masses
    tail_mass = b / -math.expm1(-epsilon)
    width = grid.width(k)
    mass = np.ones(N)
    mass[:W] += tail_mass
    mass[N - W:] += tail_mass
    mass *= width
    c_point = grid.cost_lower(cost, k)
    tau = np.zeros(N)
    tau[N - W:] = grid.tail_sums(cost, k[N - W:], +1, b, bound="lower")
    tau[:W] += grid.tail_sums(cost, k[:W], -1, b, bound="lower")
    c = np.zeros(n)
    c[Q] = width * (c_point + tau) / s
    c[EL] = grid.outside_min(cost, k_lo - 1, -1)
    c[ER] = grid.outside_min(cost, k_hi + 1, +1)
    norm = np.zeros(n)
    norm[Q] = mass / s
    norm[EL] = norm[ER] = 1.0
    nz = np.flatnonzero(norm)
    blocks.insert(0, ("normalisation", _coo(np.zeros(len(nz), int), nz, norm[nz], (1, n)), 1.0, 1.0))
    A, rl, ru, row_blocks = stack_rows(blocks, n)

    cu = np.empty(n)
    cu[Q] = gmax * s
    cu[rows.aux] = rows.aux_upper
    cu[EL] = cu[ER] = 1.0
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n), col_upper=cu,
        row_blocks=row_blocks,
        col_blocks={"q": slice(0, N), "aux": slice(N, 3 * N), "excess": slice(3 * N, n)},
        meta={"scale": s, "builder": "general", "semantics": "relaxation", "normalisation_row": 0},
    )
    return PureLP(lp, grid, epsilon, "general", k_lo, k_hi)


def _mirror_enclosures(grid: Grid1D, cost: Cost, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower cost at half-line index k and at its mirror image, combined by min (rigorous)."""
    lo = grid.cost_lower(cost, k)
    if grid.kind == "integer":
        lo_m, _ = enclose(cost, -grid.left(k), -grid.left(k))
    else:
        lo_m, _ = enclose(cost, -grid.right(k), -grid.left(k))
    corr = monotone_cell_correction(grid, cost, k)
    if grid.kind == "cells":
        corr_m = _mirror_correction(grid, cost, k)
        corr = np.minimum(corr, corr_m)
    return np.minimum(lo, lo_m), corr


def _mirror_correction(grid: Grid1D, cost: Cost, k: np.ndarray) -> np.ndarray:
    """:func:`monotone_cell_correction` for the mirror image cell −k−1 = [−right(k), −left(k))."""
    a, bb = -grid.right(k), -grid.left(k)
    lo, _ = integral(cost, a, bb)
    with np.errstate(all="ignore"):
        mean_lo = np.nextafter(lo / np.nextafter(grid.width(k), np.inf), -np.inf)
        _, inner_hi = enclose(cost, bb, bb)
        corr = np.nextafter(mean_lo - inner_hi, -np.inf)
    return np.where(np.isfinite(corr), np.maximum(corr, 0.0), 0.0)


def _mirror_tail_lower(grid: Grid1D, cost: Cost, last: np.ndarray, b: float) -> np.ndarray:
    """Tail lower sums for the mirror images of the half line's last period."""
    mirror = -last if grid.kind == "integer" else -last - 1
    return grid.tail_sums(cost, mirror, -1, b, bound="lower")


def _mirror_tail_correction(grid: Grid1D, cost: Cost, last: np.ndarray, b: float) -> np.ndarray:
    total = np.zeros(len(last))
    factor = 1.0
    for m in range(1, 100_000):
        factor *= b
        term = factor * _mirror_correction(grid, cost, last + m * grid.W)
        total += term
        if factor < 1e-300 or (m >= 2 and np.all(term <= 1e-19 * total)):
            break
    return np.nextafter(total * (1 - 1e-13 * m), -np.inf)


def build_periodic(grid: Grid1D, epsilon: float, cost: Cost, periods_shown: int = 3) -> PureLP:
    """The one-period LP for symmetric nondecreasing costs [Geng13, Lemma A.10, A.17; App. A.2 step 6].

    For such costs an optimal law may be taken symmetric, nonincreasing in |x| and periodically
    decaying, p(x + Δ) = e^{−ε} p(x) for x >= 0 (Lemmas A.3/A.8 and A.10 in the cell grid class;
    A.15–A.17 on ℤ): the optimal staircase (Thm 2.4, 2.13) has that shape, and so have its cell
    averages on any grid that repeats with period Δ.  Every DP row then reduces to monotonicity
    inside one period plus a_{W−1} >= e^{−ε} a_0, and the whole infinite law is W variables,
    with no truncation at all.  Costs enter through the rigorous tail sums
    Σ_m e^{−mε} L(x + mΔ) (lower bounds; the upper bound prices the repaired mechanism
    separately).  On cells, the monotone in-cell correction charges cell j's term to cell j+1,
    and the last cell's to the next period's first cell, whose density is e^{−ε} a_0.

    The LP's value is a lower bound on V* because it contains the cell averages (or the pmf) of
    an optimal staircase, at a cost no larger than the staircase's.
    """
    W = grid.W
    b = math.exp(-epsilon)
    k = np.arange(W)
    s = _scale(grid, k, epsilon)
    width = grid.width(k)
    geo = 1.0 / -math.expm1(-epsilon)  # Σ_{m>=0} b^m
    mult = np.full(W, 2.0)
    mass = 2.0 * geo * width
    if grid.kind == "integer":
        mult[0] = 1.0
        mass[0] = 1.0 + 2.0 * b * geo  # point 0 once, ±mW for m >= 1

    # lower cost of one unit of a_k, all periods and both signs (the mirror image of k is −k−1
    # on cells and −k on points; the reduction is symmetric, so the smaller of the two is kept)
    c_point, corr = _mirror_enclosures(grid, cost, k)
    tau = np.minimum(grid.tail_sums(cost, k, +1, b, bound="lower"), _mirror_tail_lower(grid, cost, k, b))
    if grid.kind == "integer":
        cq = mult * c_point
        cq += 2.0 * tau
    else:
        cq = mult * width * (c_point + tau)
        tcorr = np.minimum(grid.tail_sums(cost, k, +1, b, bound="lower", weights="correction"),
                           _mirror_tail_correction(grid, cost, k, b))
        wc = 2.0 * width * (corr + tcorr)  # Σ_m b^m corr(k + mW), charged to the next cell
        cq[1:] += wc[:-1]
        cq[0] += b * wc[-1]

    n = W
    one = np.ones
    jm = np.arange(W - 1)
    blocks = [
        ("normalisation", _coo(np.zeros(n, int), np.arange(n), mass / s, (1, n)), 1.0, 1.0),
        ("monotone", _pair_rows(jm + 1, one(W - 1), jm, -s[jm + 1] / s[jm], n), -np.inf, 0.0),
        ("period", _pair_rows(np.array([0]), np.array([b]), np.array([W - 1]), np.array([-s[0] / s[W - 1]]), n)
         if W > 1 else sp.coo_array((0, n)), -np.inf, 0.0),
    ]
    A, rl, ru, row_blocks = stack_rows(blocks, n)
    lp = LinearProgram(
        c=cq / s, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n),
        col_upper=max_density(grid, epsilon) * s,
        row_blocks=row_blocks, col_blocks={"q": slice(0, n)},
        meta={"scale": s, "builder": "periodic", "semantics": "relaxation (periodic reduction)",
              "normalisation_row": 0, "periods_shown": periods_shown, "decay": b},
    )
    half = periods_shown * W
    k_lo = -(half - 1) if grid.kind == "integer" else -half
    return PureLP(lp, grid, epsilon, "periodic", k_lo, half - 1)
