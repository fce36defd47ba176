"""Exact proofs that two ℓ1 spheres of ℤ^d have a coupling of their uniform laws on nearby pairs.

The certificate behind :mod:`optmech.problems.lattice_layers` (its module docstring has the lifting
lemma): a transport plan between the signed-permutation orbits of S_k and S_j, supported on the orbit
pairs of :func:`optmech.problems.lattice_layers.sphere_pair_edges`, with integer supplies |o|·|S_j| and
demands |o'|·|S_k|.  It is proven by an integer max-flow (scipy, capacities below 2^31) or by HiGHS
followed by exact integer leaf elimination on the support forest of its basic solution.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from optmech.lp import LinearProgram
from optmech.problems.lattice_layers import sphere_pair_edges

__all__ = ["coupling_exists", "prove_unit_couplings", "exact_maxflow_feasible", "forest_transport_feasible"]


@lru_cache(maxsize=4096)
def coupling_exists(k: int, j: int, d: int) -> bool:
    """Whether the uniform laws on S_k and S_j (k < j <= k + Δ) have a coupling on pairs b = a + e,
    e >= 0 (distance j − k), proven in exact integer arithmetic (module docstring)."""
    A, sa, B, sb, pairs = sphere_pair_edges(k, j, d)
    Sk, Sj = int(sum(sa)), int(sum(sb))
    g = math.gcd(Sk, Sj)
    supply = [int(s) * (Sj // g) for s in sa]
    demand = [int(s) * (Sk // g) for s in sb]
    total = Sk * Sj // g
    if max(max(supply), max(demand), total) < 2**31 - 1:
        return exact_maxflow_feasible(supply, demand, pairs, total)
    return forest_transport_feasible(supply, demand, pairs)


def exact_maxflow_feasible(supply: list[int], demand: list[int], pairs: np.ndarray, total: int) -> bool:
    from scipy.sparse.csgraph import maximum_flow

    nA, nB = len(supply), len(demand)
    s, t = nA + nB, nA + nB + 1
    rows = np.concatenate([np.full(nA, s), pairs[:, 0], nA + np.arange(nB)])
    cols = np.concatenate([np.arange(nA), nA + pairs[:, 1], np.full(nB, t)])
    cap = np.concatenate([np.array(supply, dtype=np.int64), np.full(len(pairs), total, dtype=np.int64),
                          np.array(demand, dtype=np.int64)]).astype(np.int32)
    M = sp.csr_array((cap, (rows, cols)), shape=(nA + nB + 2, nA + nB + 2))
    return int(maximum_flow(M, s, t).flow_value) == total


def forest_transport_feasible(supply: list[int], demand: list[int], pairs: np.ndarray) -> bool:
    """HiGHS on the transport LP, then the exact integer flow on the support of its basic solution."""
    from optmech.solvers.highs import HighsBackend

    nA, nB, nE = len(supply), len(demand), len(pairs)
    scale = float(max(max(supply), max(demand)))
    A = sp.csc_array(sp.coo_array((np.ones(2 * nE), (np.concatenate([pairs[:, 0], nA + pairs[:, 1]]),
                                                      np.concatenate([np.arange(nE)] * 2))), shape=(nA + nB, nE)))
    rhs = np.concatenate([np.array(supply, dtype=float), np.array(demand, dtype=float)]) / scale
    lp = LinearProgram(c=np.zeros(nE), A=A, row_lower=rhs, row_upper=rhs, col_lower=np.zeros(nE),
                       col_upper=np.full(nE, 1.0 + rhs.max()), meta={"normalisation_row": 0})
    raw = HighsBackend().solve(lp, {"solver": "simplex", "primal_feasibility_tolerance": 1e-10})
    if raw.x is None:
        return False
    support = np.flatnonzero(raw.x > 1e-12 * max(1.0, float(np.max(raw.x))))
    if len(support) > nA + nB - 1:
        return False
    # leaf elimination in exact integers
    rem = {("a", i): v for i, v in enumerate(supply)} | {("b", i): v for i, v in enumerate(demand)}
    adj: dict = {node: set() for node in rem}
    for e in support:
        a, b = ("a", int(pairs[e, 0])), ("b", int(pairs[e, 1]))
        adj[a].add((e, b))
        adj[b].add((e, a))
    leaves = [v for v in adj if len(adj[v]) == 1]
    done = set()
    while leaves:
        v = leaves.pop()
        if v in done or len(adj[v]) != 1:
            continue
        (e, w), = tuple(adj[v])
        flow = rem[v]
        if flow < 0:
            return False
        rem[v] = 0
        rem[w] -= flow
        adj[w].discard((e, v))
        adj[v].clear()
        done.add(v)
        if len(adj[w]) == 1:
            leaves.append(w)
    return all(len(a) == 0 for a in adj.values()) and all(v == 0 for v in rem.values())


def prove_unit_couplings(R: int, dim: int, deadline: float | None = None) -> list[bool]:
    """Whether S_k → S_{k+1} has a coupling (:func:`coupling_exists`), for k = 0..R−1; the list stops
    early past ``deadline`` (a ``time.perf_counter`` value)."""
    import time

    out = []
    for k in range(R):
        if deadline is not None and time.perf_counter() > deadline:
            break
        out.append(coupling_exists(k, k + 1, dim))
    return out


