r"""The relaxed LPs of [GV13] for (ε, δ)-DP on ℤ, truncated to relaxations (builders only).

``build_symmetric``: [GV13] (25)–(27) (ε = 0) / (54)–(57) (ε > 0), a symmetric cost; ``build_all_k``:
the 1-D version of (75) / (104) with k ∈ ℤ (no symmetry).  The window −K..K keeps every row whose
terms lie inside; the mass beyond is priced at the cost's rigorous minimum there, so each LP is a
relaxation of the paper's relaxed LP, itself a relaxation of the exact problem [GV13, §III-B,
§IV-A, §V]: its certified dual value is a lower bound on V* (solved by
:mod:`optmech.families.relaxed`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from optmech.costs import Cost
from optmech.lp import LinearProgram, stack_rows

__all__ = ["build_symmetric", "build_all_k"]


def _coo(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]) -> sp.coo_array:
    return sp.coo_array((np.asarray(vals, dtype=float), (np.asarray(rows), np.asarray(cols))), shape=shape)


def _cost_lo(cost: Cost, x: np.ndarray) -> np.ndarray:
    """Rigorous lower ends of L at the integers x."""
    x = np.asarray(x, dtype=float)
    return np.asarray(cost.enclose(x, x)[0], dtype=float)


def _beyond(cost: Cost, K: int, side: int) -> float:
    """A lower bound of L on the integers beyond the window (k > K for side +1, k < −K for −1)."""
    if side > 0:
        lo = cost.enclose(np.array([K + 1.0]), np.array([np.inf]))[0]
    else:
        lo = cost.enclose(np.array([-np.inf]), np.array([-K - 1.0]))[0]
    return float(lo[0])


def build_symmetric(cost: Cost, eps: float, delta: float, D: int, K: int) -> LinearProgram:
    """[GV13] (25)–(27) (ε = 0) / (54)–(57) (ε > 0) on P_0..P_K with cumulative columns and far mass."""
    E = math.exp(eps)
    half_em1 = math.expm1(eps) / 2.0
    P = np.arange(K + 1)  # P_k, k = 0..K
    C = K + np.arange(1, K + 1)  # C_j = Σ_{k=1}^j P_k at column K + j, j = 1..K
    F = 2 * K + 1  # far mass Σ_{k>K} P_k (one side)
    n = 2 * K + 2

    def col_c(j: np.ndarray) -> np.ndarray:
        return K + j

    # normalisation (54) as an equality, doubled: P_0 + 2 C_K + 2 F = 1
    norm = _coo([0, 0, 0], [P[0], col_c(K), F], [1.0, 2.0, 2.0], (1, n))
    # links C_j − C_{j−1} − P_j = 0
    j = np.arange(1, K + 1)
    jj = j[j >= 2]
    link = _coo(np.concatenate([j - 1, jj - 1, j - 1]), np.concatenate([col_c(j), col_c(jj - 1), P[j]]),
                np.concatenate([np.ones(K), -np.ones(len(jj)), -np.ones(K)]), (K, n))
    # tail rows i = 0..K: P_0 c_i − C_{i−1} + e^ε C_{min(i+Δ−1, K)} <= δ + (e^ε − 1)/2
    i = np.arange(K + 1)
    top = np.minimum(i + D - 1, K)
    r_p0, c_p0 = i, np.zeros(K + 1, dtype=int)
    v_p0 = np.where(i == 0, (1.0 + E) / 2.0, half_em1)
    has_prev = i >= 2
    r_prev, c_prev = i[has_prev], col_c(i[has_prev] - 1)
    has_top = top >= 1
    r_top, c_top = i[has_top], col_c(top[has_top])
    tail = _coo(np.concatenate([r_p0, r_prev, r_top]), np.concatenate([c_p0, c_prev, c_top]),
                np.concatenate([v_p0, -np.ones(len(r_prev)), np.full(len(r_top), E)]), (K + 1, n))
    A, rl, ru, blocks = stack_rows([
        ("normalisation", norm, 1.0, 1.0),
        ("cumulative", link, 0.0, 0.0),
        ("tail", tail, -np.inf, delta + half_em1),
    ], n)
    k = np.arange(1, K + 1, dtype=float)
    c = np.zeros(n)
    c[0] = _cost_lo(cost, np.zeros(1))[0]
    c[P[1:]] = _cost_lo(cost, k) + _cost_lo(cost, -k)
    c[F] = _beyond(cost, K, +1) + _beyond(cost, K, -1)
    # column bounds every symmetric feasible pmf satisfies (rows 0 and k of the full relaxation
    # contain P_0, resp. P_k, with coefficient (1+E)/2, resp. E, and all their terms are >= 0):
    # P_0 <= (2δ + E − 1)/(1 + E), P_k <= a = (δ + (E−1)/2)/E, C_j <= min(½, j·a); F <= ½.  Tight
    # bounds keep the certificate's loss Σ min(0, s_j)·u_j small; 1e-12 margin for rounding.
    a = (delta + half_em1) / E
    upper = np.empty(n)
    upper[0] = min(1.0, (2.0 * delta + 2.0 * half_em1) / (1.0 + E))
    upper[P[1:]] = min(0.5, a)
    upper[C] = np.minimum(0.5, np.arange(1, K + 1) * a)
    upper[F] = 0.5
    upper *= 1.0 + 1e-12
    return LinearProgram(c, A, rl, ru, np.zeros(n), upper, blocks,
                         {"p": slice(0, K + 1), "cumulative": slice(K + 1, 2 * K + 1), "far": slice(F, F + 1)},
                         {"normalisation_row": 0, "builder": "approx_relaxed_symmetric", "K": K})


def build_all_k(cost: Cost, eps: float, delta: float, D: int, K: int) -> LinearProgram:
    """[GV13] (75) (ε = 0) / (104) (ε > 0) at d = 1 with k ∈ ℤ, on the window [−K, K], survival columns, far masses."""
    E = math.exp(eps)
    N = 2 * K + 1
    x = np.arange(-K, K + 1)
    P = x + K  # columns 0..N−1
    Fp, Fm = 2 * N, 2 * N + 1  # far masses right (k > K) and left (k < −K)
    n = 2 * N + 2

    def col_t(j: np.ndarray) -> np.ndarray:
        """T_j = P(X >= j) for j = −K..K+1 (T_{K+1} is the right far mass)."""
        j = np.asarray(j)
        return np.where(j == K + 1, Fp, N + j + K)

    norm = _coo([0, 0], [col_t(np.array([-K]))[0], Fm], [1.0, 1.0], (1, n))  # P(X >= −K) + P(X < −K) = 1
    r = np.arange(N)
    link = _coo(np.concatenate([r, r, r]), np.concatenate([col_t(x), P, col_t(x + 1)]),
                np.concatenate([np.ones(N), -np.ones(N), -np.ones(N)]), (N, n))  # T_j − P_j − T_{j+1} = 0
    k = np.arange(-K, K + 2 - D)  # rows whose tail set {>= k + Δ} lies inside the window or is the far mass
    m = len(k)
    rk = np.arange(m)
    tail = _coo(np.concatenate([rk, rk]), np.concatenate([col_t(k), col_t(k + D)]),
                np.concatenate([np.ones(m), np.full(m, -E)]), (m, n))  # T_k − e^ε T_{k+Δ} <= δ
    A, rl, ru, blocks = stack_rows([
        ("normalisation", norm, 1.0, 1.0),
        ("survival", link, 0.0, 0.0),
        ("tail", tail, -np.inf, delta),
    ], n)
    c = np.zeros(n)
    c[P] = _cost_lo(cost, x)
    c[Fp] = _beyond(cost, K, +1)
    c[Fm] = _beyond(cost, K, -1)
    # P_j <= δ + e^ε − 1 (a window of Δ points holds at most δ + (e^ε − 1)P(X >= k+Δ)); 1e-12 margin
    upper = np.ones(n)
    upper[P] = min(1.0, (delta + math.expm1(eps)) * (1.0 + 1e-12))
    return LinearProgram(c, A, rl, ru, np.zeros(n), upper, blocks,
                         {"p": slice(0, N), "survival": slice(N, 2 * N), "far": slice(2 * N, 2 * N + 2)},
                         {"normalisation_row": 0, "builder": "approx_relaxed_all_k", "K": K})


