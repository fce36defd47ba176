r"""A lower bound for pure ε-DP on ℤ^d, ℓ1 sensitivity Δ, cost ‖x‖₁^m: the ℓ1-layer LP lifted by sphere couplings.

The layer LP has one variable per ℓ1 sphere S_k = {‖x‖₁ = k} (its mass q_k, k <= R, and a far mass
beyond R priced at (R + 1)^m) and rows q_k/|S_k| <= e^ε q_j/|S_j| for the pairs j = k + 1..k + Δ.
Alone it bounds only mechanisms constant on spheres.  Lifting lemma [derived]: if for a pair (k, j)
the uniform laws on S_k and S_j have a coupling π supported on pairs at ℓ1 distance <= Δ, then a
multiplier μ >= 0 of that row lifts to the multipliers λ(x, y) = μ π(x, y) of the rows
p(x) <= e^ε p(y) of the full LP on ℤ^d, and every point x ∈ S_k gets exactly the layer column's
reduced cost (Σ_y λ(x, y) = μ/|S_k|, Σ_w λ(w, x) = μ/|S_k| for x ∈ S_j).  So a dual-feasible point of
the layer LP whose rows all have couplings is a dual-feasible point of the full LP (truncated to the
ℓ1 ball of radius R with its far mass, itself a relaxation of ℤ^d): its value is a certified lower
bound on V*(ℤ^d), not only on the best layered mechanism.

Only unit couplings S_k → S_{k+1} are checked: composing the couplings of k → k+1 → .. → k+m couples S_k
and S_{k+m} on pairs at distance m <= Δ.  Couplings are checked exactly (:mod:`optmech.couplings`) on the orbits of the signed permutations: the group acts
transitively on each orbit and preserves distances, so an orbit-level transport plan F(o, o') on
orbit pairs with a point pair at distance <= Δ (sorted absolute values within Δ; here b = sort(a + e),
e >= 0, Σe = j − k), spread uniformly over the point pairs of (o, o'), is a coupling (every point of
o has the same number of partners in o').  The transport problem has integer supplies |o|·|S_j| and
demands |o'|·|S_k|; it is solved as a max-flow in exact integers (scipy, when the capacities fit in
32 bits) or by HiGHS, whose basic solution's support is a forest on which the integer flow is
recomputed exactly (leaf elimination) and checked.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from optmech.lp import LinearProgram

__all__ = ["sphere_orbits", "sphere_pair_edges", "build_layer_lp", "coupled_pairs"]


@lru_cache(maxsize=512)
def sphere_orbits(k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(representatives, sizes): the signed-permutation orbits of S_k as sorted (descending) absolute
    values, and the number of points of each (distinct permutations × 2^{nonzeros})."""
    out: list[tuple[int, ...]] = []

    def rec(rem: int, cap: int, pre: list[int]) -> None:
        if len(pre) == d:
            if rem == 0:
                out.append(tuple(pre))
            return
        slots = d - len(pre)
        for v in range(min(rem, cap), -1, -1):
            if v * slots < rem:
                break
            rec(rem - v, v, pre + [v])

    rec(k, k, [])
    reps = np.array(out, dtype=np.int64).reshape(-1, d)
    sizes = []
    for a in out:
        perms = math.factorial(d)
        for v in set(a):
            perms //= math.factorial(a.count(v))
        sizes.append(perms * 2 ** sum(1 for v in a if v))
    return reps, np.array(sizes, dtype=object)


def _compositions(m: int, d: int) -> np.ndarray:
    """Every e >= 0 in ℤ^d with Σe = m."""
    if d == 1:
        return np.array([[m]], dtype=np.int64)
    rows = []
    for first in range(m, -1, -1):
        for rest in _compositions(m - first, d - 1):
            rows.append([first, *rest])
    return np.array(rows, dtype=np.int64)


def sphere_pair_edges(k: int, j: int, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(A, sa, B, sb, pairs): the orbits of S_k and S_j and the orbit pairs (ia, ib) with b = sort(a + e)."""
    A, sa = sphere_orbits(k, d)
    B, sb = sphere_orbits(j, d)
    E = _compositions(j - k, d)
    cand = -np.sort(-(A[:, None, :] + E[None, :, :]), axis=-1)  # (nA, nE, d), sorted descending
    base = j + 1
    w = base ** np.arange(d - 1, -1, -1, dtype=np.int64)
    keys_b = B @ w
    order = np.argsort(keys_b)
    keys = (cand @ w).ravel()
    pos = np.searchsorted(keys_b[order], keys)
    ib = order[np.minimum(pos, len(order) - 1)]
    ia = np.repeat(np.arange(len(A)), len(E))
    pairs = np.unique(np.stack([ia, ib], axis=1), axis=0)
    return A, sa, B, sb, pairs


def build_layer_lp(epsilon: float, sensitivity: int, dim: int, power: int, R: int,
                   pairs: list[tuple[int, int]]) -> LinearProgram:
    """The layer LP (module docstring) with rows for ``pairs`` (k < j <= k + Δ, both <= R); columns
    q_0..q_R (sphere masses) and the far mass; every column has normalisation coefficient 1."""
    from optmech.problems.pure_nd import sphere_sizes

    k = np.arange(R + 1)
    S = sphere_sizes(k, dim)
    n = R + 2
    c = np.append(k.astype(float) ** power, float(R + 1) ** power)
    e_up = math.nextafter(math.exp(epsilon) * (1 + 4 * 2.0**-53), math.inf)
    P = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    r = np.arange(len(P))
    A = sp.vstack([sp.csr_array(np.ones((1, n))),
                   sp.csr_array((np.concatenate([1.0 / S[P[:, 0]], -e_up / S[P[:, 1]]]),
                                 (np.concatenate([r, r]), np.concatenate([P[:, 0], P[:, 1]]))), shape=(len(P), n))],
                  format="csc")
    return LinearProgram(c=c, A=sp.csc_array(A), row_lower=np.concatenate([[1.0], np.full(len(P), -np.inf)]),
                         row_upper=np.concatenate([[1.0], np.zeros(len(P))]), col_lower=np.zeros(n),
                         col_upper=np.ones(n), meta={"normalisation_row": 0, "builder": "layers_coupled"})


def coupled_pairs(R: int, sensitivity: int, unit: list[bool]) -> list[tuple[int, int]]:
    """The outward pairs (k, k + m), m <= Δ, k + m <= R, whose unit steps k → k+1 .. k+m−1 → k+m are all
    proven (composition of couplings, module docstring)."""
    bad = np.concatenate([[0], np.cumsum(~np.array(unit + [False] * (R - len(unit)), dtype=bool)
                                         | (np.arange(R) >= len(unit)))])
    return [(k, k + m) for m in range(1, int(sensitivity) + 1) for k in range(0, R + 1 - m) if bad[k + m] == bad[k]]
