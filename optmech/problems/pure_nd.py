r"""Builder for pure ε-DP additive noise on ℤ^d: the full lattice LP, no radial assumption.

Constraint: p(x) <= e^ε p(y) whenever ‖x − y‖ <= Δ (sensitivity ball of the ℓ1, ℓ∞ or ℓ2 norm),
for integer Δ on the integer lattice [000 §3.1 in lattice form; reference/multidim.md §9, Test C].

Truncation semantics (a relaxation): variables on a domain C — the ℓ1 ball ‖x‖₁ <= R for the ℓ1
norm (where the mass of an ℓ1-decaying law sits; d! times fewer points than the cube), the cube
[−R, R]^d otherwise — the constraints of every pair inside C, and one far-mass variable priced at
the cost's minimum outside C.  Any ε-DP law
maps to a feasible point of no larger cost, so the repaired dual is a certified lower bound.

Compact constraints (reference/multidim.md §9, numerics.md §7.5).  For the ℓ1 and ℓ∞ balls the
pairwise rows are replaced by the unit-step recursion m_0 = p, m_r(x) <= m_{r−1}(x + e) for the
unit steps e of the norm (ℓ1: 0, ±e_i; ℓ∞: every e ∈ {−1, 0, 1}^d) with x + e in C, and
p(x) <= e^ε m_Δ(x).  Lattice paths of such steps between points of C can stay in C (the cube is a
product of intervals; in the ℓ1 ball, a monotone path that first moves every coordinate toward 0
never exceeds the larger of the two norms), so m_Δ(x) can be as large as the minimum of p over
(x + ball) ∩ C: the rows say exactly "every in-domain pair".  O(#points·Δ·|steps|) nonzeros instead of O(#points·|ball|).
The ℓ2 ball has no such decomposition; its shifts are enumerated (all pairs).

Symmetry.  The named costs (l1, l2, l2sq, linf) and the three norms are invariant under signed
permutations (the hyperoctahedral group, order 2^d d!), and so is the LP with its auxiliaries, so
averaging an optimum over the group gives an invariant optimum: one variable per orbit,
represented by its sorted absolute values, with objective and normalisation coefficients
multiplied by the orbit size (reference/multidim.md §9).  Rows are generated for the orbit
representatives only; the rows of the other points of an orbit are images of those.

Scaling.  Variables are q = p / σ with σ(x) = e^{−min(ε‖x‖₁/Δ, 6)}, so the recursion's
coefficients σ(x + e)/σ(x) stay within e^{±ε/Δ}, O(1) (reference/numerics.md §1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.approx import COSTS_ND, outside_min, point_costs

__all__ = ["PureNDLP", "build_pure_nd", "NORMS", "orbit_points", "norm_steps"]

NORMS = ("l1", "l2", "linf")
#: The scaling saturates after this many e-folds: with 12, HiGHS's duals were cleanest but the
#: simplex took twice as long as with 6 on the d = 3, Δ = 4 case; both certify to ~1e-8.
SCALE_EFOLDS = 6.0


@dataclass(frozen=True)
class Orbits:
    """Orbit representatives of the cube [−R, R]^d (or every point when ``reduced`` is False)."""

    reps: np.ndarray  # (n, d) int64; sorted absolute values when reduced
    size: np.ndarray  # (n,) orbit sizes
    keys: np.ndarray  # (n,) sorted lookup keys
    R: int
    reduced: bool
    shape: str = "cube"  # "cube" ‖x‖∞ <= R, or "ball" ‖x‖₁ <= R

    def index(self, pts: np.ndarray) -> np.ndarray:
        """Orbit index of integer points (−1 outside the domain)."""
        pts = np.asarray(pts, dtype=np.int64)
        inside = np.all(np.abs(pts) <= self.R, axis=-1)
        if self.shape == "ball":
            inside &= np.abs(pts).sum(axis=-1) <= self.R
        k = _key(np.sort(np.abs(pts), axis=-1) if self.reduced else pts + self.R, self.R)
        pos = np.searchsorted(self.keys, k)
        pos = np.minimum(pos, len(self.keys) - 1)
        return np.where(inside & (self.keys[pos] == k), pos, -1)


def _key(a: np.ndarray, R: int) -> np.ndarray:
    base = 2 * R + 1
    w = base ** np.arange(a.shape[-1] - 1, -1, -1, dtype=np.int64)
    return (a.astype(np.int64) * w).sum(axis=-1)


def orbit_points(d: int, R: int, reduced: bool = True, shape: str = "cube") -> Orbits:
    """Representatives and orbit sizes of the cube [−R, R]^d or the ℓ1 ball ‖x‖₁ <= R
    (hyperoctahedral group when ``reduced``)."""
    if reduced:
        reps = np.array(list(itertools.combinations_with_replacement(range(R + 1), d)), dtype=np.int64)
        if shape == "ball":
            reps = reps[reps.sum(axis=1) <= R]
        nonzero = (reps > 0).sum(axis=1)
        mult = np.ones(len(reps))
        for v in range(R + 1):
            c = (reps == v).sum(axis=1)
            mult *= np.array([math.factorial(int(x)) for x in range(d + 1)])[c]
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
    return Orbits(reps[order], size[order], keys[order], R, reduced, shape)


def norm_steps(norm: str, d: int, sensitivity: int) -> tuple[np.ndarray, int]:
    """(steps, layers): unit steps (incl. 0) repeated Δ times for ℓ1/ℓ∞; all shifts once for ℓ2."""
    if norm == "l1":
        e = np.vstack([np.zeros((1, d), dtype=np.int64), np.eye(d, dtype=np.int64), -np.eye(d, dtype=np.int64)])
        return e, int(sensitivity)
    if norm == "linf":
        return np.array(list(itertools.product((-1, 0, 1), repeat=d)), dtype=np.int64), int(sensitivity)
    if norm == "l2":
        D = int(sensitivity)
        v = np.array(list(itertools.product(range(-D, D + 1), repeat=d)), dtype=np.int64)
        return v[(v * v).sum(axis=1) <= D * D], 1
    raise SpecError(f"norm must be one of {', '.join(NORMS)}, got {norm!r}")


@dataclass(frozen=True)
class PureNDLP:
    """A built d-D pure-DP LP and what is needed to read its solution back."""

    lp: LinearProgram
    orbits: Orbits
    sigma: np.ndarray  # scale of each orbit variable: p = sigma * q
    dim: int
    sensitivity: int
    norm: str
    neighbours: np.ndarray  # (n, |steps|): orbit of rep + step, −1 outside the cube
    layers: int  # steps are applied this many times to cover the ball
    variant: str = "lattice_nd"

    def masses(self, x: np.ndarray) -> np.ndarray:
        """p per orbit representative (clipped at 0)."""
        q = np.asarray(x, dtype=float)[self.lp.col_blocks["p"]]
        return np.maximum(q, 0.0) * self.sigma

    def far_mass(self, x: np.ndarray) -> float:
        return float(max(0.0, x[self.lp.col_blocks["far"].start]))

    def cube(self, x: np.ndarray) -> np.ndarray:
        """p on the whole cube [−R, R]^d (shape (2R+1,)*d)."""
        R, d = self.orbits.R, self.dim
        axes = [np.arange(-R, R + 1)] * d
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, d)
        return self.masses(x)[self.orbits.index(pts)].reshape((2 * R + 1,) * d)


def domain_outside_min(cost: str, R: int, d: int, shape: str) -> float:
    """A lower bound of the named cost outside the cube / ℓ1 ball of radius R."""
    if shape == "cube":
        return outside_min(cost, R, d)
    r1 = float(R + 1)  # ‖x‖₁ >= R + 1: ‖x‖₂ >= r1/√d, ‖x‖∞ >= r1/d
    return {"l1": r1, "l2": r1 / math.sqrt(d), "l2sq": r1 * r1 / d, "linf": r1 / d}[cost] * (1 - 1e-15)


def build_pure_nd(cost: str, epsilon: float, sensitivity: int, R: int, *, dim: int, norm: str = "l1",
                  reduced: bool = True, shape: str | None = None, scale_efolds: float = SCALE_EFOLDS) -> PureNDLP:
    """The relaxation LP of the module docstring on the domain of radius R."""
    if cost not in COSTS_ND:
        raise SpecError(f"d-dimensional costs are {', '.join(COSTS_ND)}; got {cost!r}")
    d, D = int(dim), int(sensitivity)
    shape = shape or ("ball" if norm == "l1" else "cube")
    orb = orbit_points(d, R, reduced, shape)
    n = len(orb.reps)
    n1 = np.abs(orb.reps).sum(axis=1).astype(float)
    sigma = np.exp(-np.minimum(epsilon * n1 / D, scale_efolds))
    steps, layers = norm_steps(norm, d, D)
    recursive = norm in ("l1", "linf")
    n_aux = layers * n if recursive else 0
    col_far = n + n_aux
    n_cols = col_far + 1

    def pcol(layer: int, idx: np.ndarray) -> np.ndarray:  # layer 0 = p, r >= 1 = m_r
        return idx if layer == 0 else n + (layer - 1) * n + idx

    # neighbour table: rep index, step index -> orbit of rep + step (−1 outside the cube)
    nb = orb.index(orb.reps[:, None, :] + steps[None, :, :])  # (n, |steps|)
    i_rep, i_step = np.nonzero(nb >= 0)
    j = nb[i_rep, i_step]
    ratio = sigma[j] / sigma[i_rep]
    blocks = []
    e = math.exp(epsilon)
    if recursive:
        rows_per_layer = len(i_rep)
        r_idx, c_idx, vals = [], [], []
        for layer in range(1, layers + 1):
            base = (layer - 1) * rows_per_layer
            rows = base + np.arange(rows_per_layer)
            r_idx += [rows, rows]
            c_idx += [pcol(layer, i_rep), pcol(layer - 1, j)]
            vals += [np.ones(rows_per_layer), -ratio]
        rec = sp.coo_array((np.concatenate(vals), (np.concatenate(r_idx), np.concatenate(c_idx))),
                           shape=(layers * rows_per_layer, n_cols))
        fin = sp.coo_array((np.concatenate([np.ones(n), np.full(n, -e)]),
                            (np.concatenate([np.arange(n)] * 2), np.concatenate([np.arange(n), pcol(layers, np.arange(n))]))),
                           shape=(n, n_cols))
        blocks += [("recursion", rec, -np.inf, 0.0), ("ratio", fin, -np.inf, 0.0)]
    else:
        keep = i_rep != j
        m = int(keep.sum())
        rows = np.arange(m)
        pair = sp.coo_array((np.concatenate([np.ones(m), -e * ratio[keep]]),
                             (np.concatenate([rows, rows]), np.concatenate([i_rep[keep], j[keep]]))), shape=(m, n_cols))
        blocks.append(("ratio", pair, -np.inf, 0.0))
    norm_row = sp.coo_array((np.append(orb.size * sigma, 1.0), (np.zeros(n + 1, dtype=np.int64),
                                                                np.append(np.arange(n), col_far))), shape=(1, n_cols))
    A, rl, ru, row_blocks = stack_rows([("normalisation", norm_row, 1.0, 1.0)] + blocks, n_cols)
    c_lo, _ = point_costs(cost, orb.reps)
    c = np.zeros(n_cols)
    c[:n] = orb.size * np.maximum(c_lo, 0.0) * sigma
    c[col_far] = domain_outside_min(cost, R, d, shape)
    qmax = 1.0 / (orb.size * sigma)  # p <= 1 / orbit size
    col_upper = np.concatenate([qmax, np.tile(qmax, layers) if recursive else [], [1.0]])
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n_cols), col_upper=col_upper,
        row_blocks=row_blocks,
        col_blocks={"p": slice(0, n), "aux": slice(n, n + n_aux), "far": slice(col_far, col_far + 1)},
        meta={"normalisation_row": row_blocks["normalisation"].start, "epsilon": epsilon},
    )
    return PureNDLP(lp, orb, sigma, d, D, norm, nb, layers, "lattice_nd" + ("_orbits" if reduced else ""))
