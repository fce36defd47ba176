r"""The exact W1 utility of additive lattice noise as an LP [QHFL22, §IV-C].

Model ([QHFL22, §III-C, §IV-C], lattice step Δ = 1).  A random input X with pmf p_X on
ℤ (:class:`optmech.inputs.InputPMF`, support in [x_lo, x_hi], width w = x_hi − x_lo) is released
as Y = X + θ with θ independent of X.  The utility is

.. math:: W_1(X, Y) = \sum_{k\in\mathbb Z} |F_X(k) - F_Y(k)|,\qquad
          F_Y(k) = \sum_l p_\theta(l)\,F_X(k-l),

which is a sum of absolute values of affine functions of p_θ, hence convex and an LP with
epigraph variables t_k (the paper's "non-convex" P1 is in fact this LP; its surrogate P2 is
E|θ| [derived]).  Privacy: pure ε-DP with integer sensitivity m (p(a) <= e^ε p(b) for 0 < |a−b| <= m,
[QHFL22, Thm 1]), or (ε, δ)-DP as hockey-stick rows Σ_j [p(j) − e^ε p(j+s)]_+ <= δ for every
0 < |s| <= m (the exact form of [QHFL22, Thm 2]).

The relaxation (lower bound).  Noise window [−K, K] (K >= w + m) with variables p_j, plus far
masses m_L = P(θ < −K), m_R = P(θ > K) with no privacy rows beyond the window.  Noise CDF
variables G_j = P(θ <= j), j = −K−1..K, with G_{−K−1} = m_L and G_j = G_{j−1} + p_j, keep every
row sparse.  Every θ maps to the point (its window masses, its far masses, t_k = |F_X(k) − F_Y(k)|)
and the LP objective at that point is <= its W1:

* middle k ∈ [x_hi − K − 1, x_lo + K]: every k − i (i in supp X) lies in [−K−1, K], so
  F_Y(k) = Σ_i p_X(i) G_{k−i} exactly, and t_k >= ±(F_X(k) − F_Y(k)) are exact epigraph rows;
* right k > x_lo + K (>= x_hi): the term is P(X + θ > k) >= 0; keeping the window part exactly and
  bounding the far right part below by m_R·S_X(k − K − 1) (S_X = 1 − F_X, nonincreasing; the far
  left part is dropped) gives a linear lower bound; summed over k, p_j gets the coefficient
  T_R(x_lo + K + 1 − j) and m_R gets T_R(x_lo) = E[X − x_lo], with T_R(a) = Σ_{y>=a} S_X(y);
* left k < x_hi − K − 1 (< x_lo): the term is P(X + θ <= k) >= Σ_j p_j F_X(k − j) + m_L F_X(k + K + 1);
  p_j gets T_L(x_hi − K − 2 − j) and m_L gets T_L(x_hi − 1) = E[x_hi − X], with
  T_L(a) = Σ_{y<=a} F_X(y).

So W1 >= the LP value for every noise law whose window part satisfies the window's privacy
rows, which every ε-DP (or (ε, δ)-DP: the dropped hockey-stick terms are nonnegative) law does.
Column bounds: p_j <= the largest point mass of any ε-DP law (``pure.max_point_mass``; 1 for
δ > 0), G, t, m_L, m_R <= 1 (|F_X − F_Y| <= 1), hockey-stick slacks <= 1.

Surrogate (``utility="surrogate"``): E|θ| >= Σ_window |j| p_j + (K + 1)(m_L + m_R); W1 equals
E|θ| for a point-mass input (§4.3).

Data.  The input is *defined* by its float CDF ``InputPMF.cdf()`` (monotone, last value 1), so
F_X, S_X, T_L and T_R are exact up to a few roundings each (within ``certify.DATA_RELERR``); p_X(i)
coefficients are the float differences of that CDF (one rounding).  Window masses are scaled as
in :mod:`optmech.problems.pure` (q = p·e^{min(ε|j|/m, 12)}/p_max) for pure DP.

Privacy rows are the direct pairs (2·N·m rows); :data:`MAX_PAIR_ROWS` caps them.

:func:`w1_of_pmf` / :func:`w1_of_mechanism` evaluate W1 of a given noise law (the upper bound and
the references), with an explicit bound on the truncated tails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.errors import ProblemTooLarge, SpecError
from optmech.inputs import InputPMF
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.lattice import LatticeMechanism
from optmech.problems.pure import SCALE_EFOLDS, max_point_mass

__all__ = ["WassersteinLP", "build_wasserstein", "w1_of_pmf", "w1_of_mechanism", "MAX_PAIR_ROWS", "UTILITIES"]

MAX_PAIR_ROWS = 4_000_000
UTILITIES = ("wasserstein", "surrogate")
_U = 2.0**-53
_LD = np.longdouble


@dataclass(frozen=True)
class WassersteinLP:
    lp: LinearProgram
    K: int
    epsilon: float
    delta: float
    m: int
    utility: str

    def window_masses(self, x: np.ndarray) -> np.ndarray:
        """p_j on −K..K from an LP solution (negatives clipped)."""
        q = np.asarray(x[self.lp.col_blocks["q"]], dtype=float)
        return np.maximum(q, 0.0) / self.lp.meta["scale"]

    def far_mass(self, x: np.ndarray) -> float:
        blk = self.lp.col_blocks["far"]
        return float(np.sum(np.maximum(x[blk], 0.0)))


def _input_tables(inp: InputPMF):
    """Float CDF on lo..hi and the exact-ish T_L, T_R helpers (long double sums)."""
    F = inp.cdf()
    lo, hi = inp.lo, inp.hi
    Fl = F.astype(_LD)
    cumF = np.concatenate([[_LD(0)], np.cumsum(Fl)])  # cumF[i] = Σ_{y<lo+i} F(y)
    S = (_LD(1) - Fl)
    cumS_rev = np.concatenate([np.cumsum(S[::-1])[::-1], [_LD(0)]])  # cumS_rev[i] = Σ_{y>=lo+i} S(y)

    def T_L(a: np.ndarray) -> np.ndarray:  # Σ_{y<=a} F_X(y) (F = 1 beyond hi)
        a = np.asarray(a, dtype=np.int64)
        idx = np.clip(a - lo + 1, 0, len(F))
        out = cumF[idx] + np.maximum(a - hi, 0).astype(_LD)
        return out.astype(float)

    def T_R(a: np.ndarray) -> np.ndarray:  # Σ_{y>=a} S_X(y) (S = 1 below lo)
        a = np.asarray(a, dtype=np.int64)
        idx = np.clip(a - lo, 0, len(F))
        out = cumS_rev[idx] + np.maximum(lo - a, 0).astype(_LD)
        return out.astype(float)

    return F, T_L, T_R


def _scale(j: np.ndarray, epsilon: float, m: int, pmax: float, delta: float) -> np.ndarray:
    if delta > 0:
        return np.ones(len(j))
    return np.exp(np.minimum(epsilon * np.abs(j) / m, SCALE_EFOLDS)) / pmax


def _coo(r, c, v, shape):
    return sp.coo_array((np.asarray(v, float), (np.asarray(r), np.asarray(c))), shape=shape)


def build_wasserstein(
    inp: InputPMF, epsilon: float, m: int, K: int, *, delta: float = 0.0, utility: str = "wasserstein"
) -> WassersteinLP:
    """The relaxation LP on the noise window −K..K (see the module docstring)."""
    if utility not in UTILITIES:
        raise SpecError(f"utility must be one of {', '.join(UTILITIES)}, got {utility!r}")
    m = int(m)
    w = inp.hi - inp.lo
    if K < w + m:
        raise ValueError(f"window half-width K = {K} must be >= input width + m = {w + m}")
    N = 2 * K + 1
    if 2 * N * m > MAX_PAIR_ROWS and delta == 0:
        raise ProblemTooLarge(f"the W1 LP needs {2 * N * m} privacy rows (window {N}, m = {m}); limit {MAX_PAIR_ROWS}")
    if delta > 0 and 2 * m * N > MAX_PAIR_ROWS:
        raise ProblemTooLarge(f"the W1 LP needs {2 * m * N} hockey-stick slacks; limit {MAX_PAIR_ROWS}")
    j = np.arange(-K, K + 1)
    pmax = max_point_mass(epsilon, m) if delta == 0 else 1.0
    s = _scale(j, epsilon, m, pmax, delta)
    E = math.exp(epsilon)

    # column layout
    cols: dict[str, slice] = {}
    n = 0

    def add(name: str, size: int) -> slice:
        nonlocal n
        cols[name] = slice(n, n + size)
        n += size
        return cols[name]

    Q = add("q", N)
    FAR = add("far", 2)  # [m_L, m_R]
    mL, mR = FAR.start, FAR.start + 1
    wass = utility == "wasserstein"
    if wass:
        kmid = np.arange(inp.hi - K - 1, inp.lo + K + 1)
        G = add("G", N + 1)  # G_{−K−1..K}
        T = add("t", len(kmid))
    if delta > 0:
        shifts = np.concatenate([np.arange(1, m + 1), -np.arange(1, m + 1)])
        TAU = add("tau", len(shifts) * N)

    c = np.zeros(n)
    cu = np.ones(n)
    cu[Q] = pmax * s
    q_idx = np.arange(Q.start, Q.stop)
    blocks = []
    norm = np.zeros(n)
    norm[Q] = 1.0 / s
    norm[mL] = norm[mR] = 1.0
    nz = np.flatnonzero(norm)
    blocks.append(("normalisation", _coo(np.zeros(len(nz), int), nz, norm[nz], (1, n)), 1.0, 1.0))

    # privacy
    if delta == 0:
        a_list, b_list = [], []
        for d in range(1, m + 1):
            a = np.arange(0, N - d)
            a_list += [a, a + d]
            b_list += [a + d, a]
        a = np.concatenate(a_list)
        b = np.concatenate(b_list)
        r = np.arange(len(a))
        # s_a·(p_a − e^ε p_b) <= 0  ⇔  q_a − e^ε (s_a/s_b) q_b <= 0
        mat = _coo(np.concatenate([r, r]), np.concatenate([q_idx[a], q_idx[b]]),
                   np.concatenate([np.ones(len(a)), -E * s[a] / s[b]]), (len(a), n))
        blocks.append(("privacy", mat, -np.inf, 0.0))
    else:
        tau0 = TAU.start
        rows_r, rows_c, rows_v = [], [], []
        sum_r, sum_c = [], []
        row = 0
        for si, sh in enumerate(shifts):
            jj = np.arange(N)
            ok = (jj + sh >= 0) & (jj + sh < N)
            jj = jj[ok]
            tcol = tau0 + si * N + jj
            rr = row + np.arange(len(jj))
            # τ − p_j + e^ε p_{j+s} >= 0
            rows_r += [rr, rr, rr]
            rows_c += [tcol, q_idx[jj], q_idx[jj + sh]]
            rows_v += [np.ones(len(jj)), -1.0 / s[jj], E / s[jj + sh]]
            row += len(jj)
            sum_r.append(np.full(N, si))
            sum_c.append(tau0 + si * N + np.arange(N))
        blocks.append(("hockey_stick_terms", _coo(np.concatenate(rows_r), np.concatenate(rows_c),
                                                  np.concatenate(rows_v), (row, n)), 0.0, np.inf))
        sc = np.concatenate(sum_c)
        blocks.append(("hockey_stick_sums", _coo(np.concatenate(sum_r), sc, np.ones(len(sc)), (len(shifts), n)),
                       -np.inf, float(delta)))

    if wass:
        F, T_L, T_R = _input_tables(inp)
        g_idx = np.arange(G.start, G.stop)  # g_idx[i] is G_{i−K−1}
        # G_{−K−1} − m_L = 0 ; G_j − G_{j−1} − p_j = 0
        r0 = _coo([0, 0], [g_idx[0], mL], [1.0, -1.0], (1, n))
        rr = np.arange(N)
        chain = _coo(np.concatenate([rr, rr, rr]), np.concatenate([g_idx[1:], g_idx[:-1], q_idx]),
                     np.concatenate([np.ones(N), -np.ones(N), -1.0 / s]), (N, n))
        blocks.append(("cdf", sp.vstack([r0, chain]), 0.0, 0.0))
        # epigraph rows: t_k ± (F_X(k) − Σ_i p_X(i) G_{k−i})
        dX = np.diff(np.concatenate([[0.0], F]))
        xs = np.arange(inp.lo, inp.hi + 1)
        keep = dX > 0
        xs, dX = xs[keep], dX[keep]
        M = len(kmid)
        FX = np.where(kmid >= inp.hi, 1.0, np.where(kmid < inp.lo, 0.0, F[np.clip(kmid - inp.lo, 0, len(F) - 1)]))
        gcol = g_idx[(kmid[:, None] - xs[None, :]) + K + 1]
        rr = np.repeat(np.arange(M), len(xs))
        t_idx = np.arange(T.start, T.stop)
        for sign, name in ((1.0, "epigraph_plus"), (-1.0, "epigraph_minus")):
            # t_k + sign·Σ p_X(i) G_{k−i} >= sign·F_X(k)
            mat = _coo(np.concatenate([np.arange(M), rr]), np.concatenate([t_idx, gcol.ravel()]),
                       np.concatenate([np.ones(M), sign * np.tile(dX, M)]), (M, n))
            blocks.append((name, mat, sign * FX, np.inf))
        c[T] = 1.0
        # far regions (linear lower bounds)
        c[Q] = (T_R(inp.lo + K + 1 - j) + T_L(inp.hi - K - 2 - j)) / s
        c[mL] = float(T_L(np.array([inp.hi - 1]))[0])
        c[mR] = float(T_R(np.array([inp.lo]))[0])
    else:
        c[Q] = np.abs(j) / s
        c[mL] = c[mR] = K + 1.0

    A, rl, ru, row_blocks = stack_rows(blocks, n)
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n), col_upper=cu,
        row_blocks=row_blocks, col_blocks=cols,
        meta={"scale": s, "builder": "wasserstein", "semantics": "relaxation", "normalisation_row": 0,
              "K": K, "utility": utility},
    )
    return WassersteinLP(lp, K, float(epsilon), float(delta), m, utility)


# ------------------------------------------------------------------------------------------------
# W1 of a given noise law
# ------------------------------------------------------------------------------------------------
def w1_of_pmf(inp: InputPMF | None, k_first: int, q: np.ndarray) -> float:
    """Σ_k |Σ_l q_l (F_X(k) − F_X(k − l))| for noise masses q on k_first.. (point-mass 0 input
    when ``inp`` is None: then it is Σ_l q_l |l|).

    For a pmf (Σ q = 1) this is W1(X, X + θ) exactly; for a truncated law it differs from the
    full W1 by at most the truncated part's Σ p(l)|l| (see :func:`w1_of_mechanism`).
    Sums in long double; relative rounding error below 1e-14 for the sizes used here.
    """
    q = np.asarray(q, dtype=float)
    if inp is None:
        l = np.arange(k_first, k_first + len(q))
        return float(math.fsum(q * np.abs(l)))
    F = inp.cdf()
    dX = np.diff(np.concatenate([[0.0], F]))
    conv = np.convolve(dX.astype(np.float64), q)  # pmf of X + θ on lo + k_first ..
    y_lo = inp.lo + k_first
    y_hi = y_lo + len(conv) - 1
    k = np.arange(min(inp.lo, y_lo) - 1, max(inp.hi, y_hi) + 1)
    FY = np.zeros(len(k), dtype=_LD)
    FY[y_lo - k[0]: y_hi - k[0] + 1] = np.cumsum(conv.astype(_LD))
    FY[y_hi - k[0] + 1:] = FY[y_hi - k[0]]
    FXk = np.where(k >= inp.hi, 1.0, np.where(k < inp.lo, 0.0, F[np.clip(k - inp.lo, 0, len(F) - 1)])).astype(_LD)
    S = np.sum(q.astype(_LD))
    return float(np.sum(np.abs(FXk * S - FY)))


def _tail_moment(gen: np.ndarray, beta: float, P: int, W: int, base: float) -> float:
    """Upper bound of Σ_{q>P} Σ_r gen_r β^q (base + qW)."""
    if not np.any(gen > 0) or beta == 0:
        return 0.0
    g = math.fsum(gen)
    A = beta ** (P + 1) / (1 - beta)
    B = beta ** (P + 1) * ((P + 1) - P * beta) / (1 - beta) ** 2
    return g * (base * A + W * B) * (1 + 1e-12)


def mechanism_total(mech: LatticeMechanism) -> float:
    """Σ of all weights (window + geometric tails)."""
    tail = (math.fsum(mech.left_gen) + math.fsum(mech.right_gen)) * mech.beta / (1 - mech.beta) if mech.beta > 0 else 0.0
    return math.fsum(mech.weights) + tail


def w1_of_mechanism(inp: InputPMF | None, mech: LatticeMechanism, *, max_points: int = 4_000_000) -> tuple[float, float]:
    """(W1 value, absolute error bound) of a lattice noise law with geometric tails.

    The law is extended by P tail periods each side (P grows until the rest's Σ p(l)|l| is
    below 1e-15 of the value or the array would exceed ``max_points``); the rest is bounded by
    the closed-form geometric moment (|W1 − truncated| <= Σ_{|l| beyond} p(l)|l|, because
    F_X(k) − F_Y(k) = Σ_l p(l)(F_X(k) − F_X(k−l)) and Σ_k |F_X(k) − F_X(k−l)| = |l|).
    The bound also carries 1e-13 relative for rounding.
    """
    W = mech.grid.W
    total = mechanism_total(mech)
    beta = float(mech.beta)
    P = 1
    while True:
        rest = (_tail_moment(mech.right_gen, beta, P, W, abs(mech.k_hi) + 1.0)
                + _tail_moment(mech.left_gen, beta, P, W, abs(mech.k_lo) + W)) / total
        size = len(mech.weights) + 2 * P * W
        if rest <= 1e-17 or size * 2 > max_points or beta == 0:
            break
        P *= 2
    k0, wts = mech.extended(periods=P)
    val = w1_of_pmf(inp, k0, wts / total)
    return val, rest + 1e-13 * val + 1e-16
