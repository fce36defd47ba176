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

The split of W1 (exact for every law).  F_X(k) = 0 for k < x_lo and F_X(k) = 1 for k >= x_hi, so
the sign of F_X(k) − F_Y(k) is known outside [x_lo, x_hi − 1]:

.. math:: W_1 = \sum_l p(l)\,h(l) + \sum_{k=x_lo}^{x_hi-1} |F_X(k) - F_Y(k)|,\qquad
          h(l) = \sum_{k<x_lo} F_X(k-l) + \sum_{k>=x_hi} S_X(k-l)

(S_X = 1 − F_X; the first sum is Σ_{k<x_lo} F_Y(k), the second Σ_{k>=x_hi} (1 − F_Y(k)), both linear
in p because Σ_l p(l) = 1).  h(l) = E(x_lo − X − l)_+ + E(X + l − x_hi)_+ = T_L(x_lo − 1 − l) +
T_R(x_hi − l) with T_L(a) = Σ_{y<=a} F_X(y), T_R(a) = Σ_{y>=a} S_X(y) (:func:`outside_support_price`);
h(0) = 0, h is nonincreasing for l <= 0 and nondecreasing for l >= 0, and h(l ± d) = h(l) + d for
|l| >= w, d >= 0 (slope 1 beyond the width).  Only w = x_hi − x_lo absolute values remain, and for
those k every k − i (i in [x_lo, x_hi]) lies in [−w, w − 1], so F_Y(k) = Σ_i p_X(i) G_{k−i} with
noise-CDF variables G_j = P(θ <= j) for j = −w .. w − 1 only.

The relaxation (lower bound), pure ε-DP.  Noise window [−K, K] (K >= w + m) with variables p_j,
and excess far masses e_L, e_R (columns ``far``).

* Privacy inside the window: every pair p_i <= e^ε p_j, 0 < |i − j| <= m, through the O(N)
  window-minimum rows of :mod:`optmech.problems.windows` (exactly the pair rows, proof there).
* Tail profile beyond the window (as in :mod:`optmech.problems.pure`): every ε-DP law has
  p(x + qm) >= b^q p(x) (b = e^{−ε}, q >= 1) for x in the last period K − m + 1..K, and likewise
  p(x − qm) >= b^q p(x) for x in the first period; these points are distinct and cover everything
  beyond the window, so the mass beyond K is Σ_x p(x)·b/(1 − b) + e_R with e_R >= 0 (and e_L
  likewise).  The normalisation row reads Σ_window (1 + τ_j) p_j + e_L + e_R = 1 with
  τ_j = b/(1 − b) on the edge periods and 0 elsewhere.
* Cost: the law's W1 is Σ_l p(l) h(l) + (support terms).  The profile's h-cost is exactly
  Σ_q b^q h(x ± qm) = τ·h(x) + m·b/(1 − b)² per unit of p(x) (slope 1 beyond w, :func:`tail_price`);
  every excess point costs h(l) >= h(±(K + 1)), the price of e_L, e_R.  The support terms are exact:
  t_k >= ±(F_X(k) − Σ_i p_X(i) G_{k−i}) with G_{−w} = e_L + Σ_{j<=−w} (1 + τ_j) p_j (all profile
  and excess mass on the left lies below −w) and G_j = G_{j−1} + p_j; the right profile and excess
  lie above w − 1 and do not enter.

So every ε-DP law maps to a feasible point (its window masses, e_L, e_R >= 0 as above, the true
window minima as auxiliaries, its G_j and t_k = |F_X(k) − F_Y(k)|) whose objective is at most its
W1; the LP value is a lower bound on the optimum.  It is tight whenever an optimal law is
geometric beyond K − m, which the measured cases are from K = w + m on (the family doubles K
otherwise).  For the surrogate E|θ| (``utility="surrogate"``) h(l) = |l| and there are no support
terms: W1 equals E|θ| for a point-mass input (§4.3).

(ε, δ)-DP: hockey-stick rows Σ_j [p(j) − e^ε p(j+s)]_+ <= δ for every 0 < |s| <= m on the window
(the dropped terms are nonnegative), no tail profile (none exists for δ > 0: the law may end
anywhere), the same split for the cost, far masses e_L, e_R priced at h(±(K + 1)).  Edge rows
[derived, as in :mod:`optmech.problems.approx`]: for s > 0 let E_s be the s window points whose
partner j + s lies beyond K and O the points beyond K; S = E_s ∪ O has S + s ⊂ O, so
P(S) − e^ε P(S + s) >= P(E_s) − (e^ε − 1)·e_R, and the points of S have no other row of shift s:
the row Σ_{E_s} p_j − (e^ε − 1)·e_R <= T_s with T_s >= 0 in s's budget is implied by (ε, δ)-DP
(likewise on the left with e_L).  Without it the far and edge masses escape the budgets, and the
window had to be several times the optimum's reach.

Column bounds: p_j <= the largest point mass of any ε-DP law (``pure.max_point_mass``; 1 for
δ > 0), the window minima likewise, G, t, e_L, e_R <= 1 (|F_X − F_Y| <= 1), hockey-stick and edge
slacks <= δ (implied by their budget rows).

``direct=True`` builds the first version's LP instead (2·N·m pair rows, an epigraph pair for every
output point k in [x_hi − K − 1, x_lo + K] with G on the whole window, the out-of-range terms
bounded below by the far masses at ±(K + 1), no tail profile), a weaker but valid relaxation of
the same problem that the tests compare the compact one with; :data:`MAX_PAIR_ROWS` caps its
pair rows (and the hockey-stick slacks of either form).

Data.  The input is *defined* by its float CDF ``InputPMF.cdf()`` (monotone, last value 1), so
F_X, S_X, T_L and T_R are exact up to a few roundings each (within ``certify.DATA_RELERR``); p_X(i)
coefficients are the float differences of that CDF (one rounding); the profile's closed forms are
a few roundings of positive terms.  Window masses are scaled as in :mod:`optmech.problems.pure`
(q = p·e^{min(ε|j|/m, 12)}/p_max) for pure DP.

:func:`w1_of_pmf` / :func:`w1_of_mechanism` evaluate W1 of a given noise law (the upper bound),
with an explicit bound on the truncated tails; :func:`w1_of_lattice_law` evaluates it by the split
above with the geometric tails in closed form (the references: m staircases per solve).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from optmech.errors import ProblemTooLarge, SpecError
from optmech.inputs import InputPMF
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.approx import edge_points
from optmech.problems.lattice import LatticeMechanism
from optmech.problems.pure import SCALE_EFOLDS, max_point_mass
from optmech.problems.windows import window_ratio_rows

__all__ = ["WassersteinLP", "build_wasserstein", "input_tables", "outside_support_price", "tail_price", "w1_of_pmf",
           "w1_of_pmf_bounded", "w1_of_mechanism", "w1_of_lattice_law", "mechanism_total", "MAX_PAIR_ROWS", "UTILITIES"]

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


def input_tables(inp: InputPMF):
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


def outside_support_price(inp: InputPMF, shifts: np.ndarray) -> np.ndarray:
    r"""h(l) = Σ_{k<x_lo} F_X(k − l) + Σ_{k>=x_hi} S_X(k − l) = E(x_lo − X − l)_+ + E(X + l − x_hi)_+.

    The W1 terms outside the input's support, per unit of noise mass at l: for k < x_lo,
    F_X(k) = 0 and the term is F_Y(k) = Σ_l p(l) F_X(k − l); for k >= x_hi, F_X(k) = 1 and it is
    1 − F_Y(k) = Σ_l p(l) S_X(k − l) (Σ_l p(l) = 1).  Summed over k: T_L(x_lo − 1 − l) + T_R(x_hi − l)
    with the long double tables of :func:`input_tables`.  h(0) = 0; for l >= 0 the first sum is 0
    (F_X vanishes below x_lo) and the second is nondecreasing in l, for l <= 0 the other way round,
    so the smallest h over l >= K + 1 is h(K + 1), and over l <= −K − 1 it is h(−K − 1).
    """
    _, T_L, T_R = input_tables(inp)
    shifts = np.asarray(shifts, dtype=np.int64)
    return T_L(inp.lo - 1 - shifts) + T_R(inp.hi - shifts)


def tail_price(price: np.ndarray, tail_mass: np.ndarray, epsilon: float, m: int) -> np.ndarray:
    """Σ_{q>=1} b^q h(j ± qm) = tail_mass·h(j) + m·b/(1 − b)² where tail_mass > 0 (0 elsewhere).

    For the edge periods' points j (|j| >= K − m + 1 > w), h(j ± qm) = h(j) + qm: beyond the input's
    width h has slope 1 in |l| (:func:`outside_support_price`; for the surrogate h(l) = |l|), so the
    geometric profile's cost is this closed form (positive terms, a few roundings).
    """
    b = math.exp(-epsilon)
    second = m * b / (math.expm1(-epsilon) ** 2)
    return np.where(tail_mass > 0, tail_mass * price + second, 0.0)


def _pair_rows(q_idx: np.ndarray, s: np.ndarray, m: int, e_eps: float, n: int) -> sp.coo_array:
    """The direct pair rows s_a·(p_a − e^ε p_b) <= 0, i.e. q_a − e^ε (s_a/s_b) q_b <= 0, 0 < |a − b| <= m."""
    N = len(q_idx)
    a = np.concatenate([np.arange(0, N - d) for d in range(1, m + 1)])
    d = np.concatenate([np.full(N - d, d) for d in range(1, m + 1)])
    a, b = np.concatenate([a, a + d]), np.concatenate([a + d, a])
    r = np.arange(len(a))
    return _coo(np.concatenate([r, r]), np.concatenate([q_idx[a], q_idx[b]]),
                np.concatenate([np.ones(len(a)), -e_eps * s[a] / s[b]]), (len(a), n))


def _hockey_stick_rows(q_idx: np.ndarray, s: np.ndarray, m: int, e_eps: float, delta: float, tau0: int,
                       n: int, far: tuple[int, int] | None = None, edge0: int | None = None) -> list:
    """(ε, δ) on the window: τ_{s,j} >= p_j − e^ε p_{j+s} (τ >= 0) and Σ_j τ_{s,j} <= δ, 0 < |s| <= m.

    With ``far`` (the columns of the masses beyond the window on the left and on the right) and
    ``edge0`` (the first of 2m more columns T_s >= 0 in the budgets), each shift also gets its edge
    row Σ_{j in E_s} p_j − (e^ε − 1)·far_s <= T_s over the |s| points E_s whose partner j + s leaves
    the window, far_s the mass beyond the window on that side (module docstring)."""
    N = len(q_idx)
    shifts = np.concatenate([np.arange(1, m + 1), -np.arange(1, m + 1)])
    rows_r, rows_c, rows_v = [], [], []
    row = 0
    for si, sh in enumerate(shifts):
        jj = np.arange(N)
        jj = jj[(jj + sh >= 0) & (jj + sh < N)]
        rr = row + np.arange(len(jj))
        # τ − p_j + e^ε p_{j+s} >= 0
        rows_r += [rr, rr, rr]
        rows_c += [tau0 + si * N + jj, q_idx[jj], q_idx[jj + sh]]
        rows_v += [np.ones(len(jj)), -1.0 / s[jj], e_eps / s[jj + sh]]
        row += len(jj)
    sum_r = np.repeat(np.arange(len(shifts)), N)
    sum_c = tau0 + np.arange(len(shifts) * N)
    blocks = [("hockey_stick_terms", _coo(np.concatenate(rows_r), np.concatenate(rows_c), np.concatenate(rows_v),
                                          (row, n)), 0.0, np.inf)]
    if far is None:
        return blocks + [("hockey_stick_sums", _coo(sum_r, sum_c, np.ones(len(sum_c)), (len(shifts), n)), -np.inf,
                          delta)]
    # edge rows: T_s − Σ_{E_s} p_j + (e^ε − 1)·far_s >= 0, E_s the last s points (s > 0) or the first |s|
    mag = np.abs(shifts)
    er = np.repeat(np.arange(len(shifts)), mag)
    ej = edge_points(shifts, N)
    far_col = np.where(shifts > 0, far[1], far[0])
    edge_cols = edge0 + np.arange(len(shifts))
    edge = _coo(np.concatenate([np.arange(len(shifts)), er, np.arange(len(shifts))]),
                np.concatenate([edge_cols, q_idx[ej], far_col]),
                np.concatenate([np.ones(len(shifts)), -1.0 / s[ej], np.full(len(shifts), e_eps - 1.0)]),
                (len(shifts), n))
    sums = _coo(np.concatenate([sum_r, np.arange(len(shifts))]), np.concatenate([sum_c, edge_cols]),
                np.ones(len(sum_c) + len(shifts)), (len(shifts), n))
    return blocks + [("hockey_stick_edges", edge, 0.0, np.inf), ("hockey_stick_sums", sums, -np.inf, delta)]


def build_wasserstein(
    inp: InputPMF, epsilon: float, m: int, K: int, *, delta: float = 0.0, utility: str = "wasserstein",
    direct: bool = False, edge_rows: bool = True,
) -> WassersteinLP:
    """The relaxation LP on the noise window −K..K (see the module docstring).

    ``direct=True`` builds the formulation of the first version instead (2·N·m pair rows for pure
    DP, one epigraph pair per output point of the window's range, far masses priced by the
    far-region bounds): the same relaxation written with ~m and ~N/w times more rows, kept as the
    independent reference the tests compare the compact one with.  ``edge_rows=False`` (δ > 0) leaves
    out the edge rows (a weaker relaxation, kept for comparisons).
    """
    if utility not in UTILITIES:
        raise SpecError(f"utility must be one of {', '.join(UTILITIES)}, got {utility!r}")
    m = int(m)
    w = inp.hi - inp.lo
    if K < w + m:
        raise ValueError(f"window half-width K = {K} must be >= input width + m = {w + m}")
    N = 2 * K + 1
    if direct and 2 * N * m > MAX_PAIR_ROWS and delta == 0:
        raise ProblemTooLarge(f"the W1 LP needs {2 * N * m} privacy rows (window {N}, m = {m}); limit {MAX_PAIR_ROWS}")
    if delta > 0 and 2 * m * N > MAX_PAIR_ROWS:
        raise ProblemTooLarge(f"the W1 LP needs {2 * m * N} hockey-stick slacks; limit {MAX_PAIR_ROWS}")
    j = np.arange(-K, K + 1)
    pmax = max_point_mass(epsilon, m) if delta == 0 else 1.0
    s = _scale(j, epsilon, m, pmax, delta)
    E = math.exp(epsilon)
    wass = utility == "wasserstein"

    # column layout
    cols: dict[str, slice] = {}
    n = 0

    def add(name: str, size: int) -> slice:
        nonlocal n
        cols[name] = slice(n, n + size)
        n += size
        return cols[name]

    Q = add("q", N)
    FAR = add("far", 2)  # far (direct) or excess far (compact) masses [left, right]
    mL, mR = FAR.start, FAR.start + 1
    if delta == 0 and not direct:
        AUX = add("aux", 2 * N)
    if wass:
        if direct:
            kmid = np.arange(inp.hi - K - 1, inp.lo + K + 1)
            g_first = -K - 1
        else:
            kmid = np.arange(inp.lo, inp.hi)  # the input's support less its last point: the only signed terms
            g_first = -w
        G = add("G", N + 1 if direct else 2 * w)  # G_j = P(θ <= j), j = g_first ..
        T = add("t", len(kmid))
    if delta > 0:
        TAU = add("tau", 2 * m * N)  # one per shift 0 < |s| <= m and window point
        if edge_rows:
            EDGE = add("edge", 2 * m)  # one per shift: its edge row's T_s

    c = np.zeros(n)
    cu = np.ones(n)
    cu[Q] = pmax * s
    if delta > 0:  # implied by the budgets (every slack is >= 0 and a budget's terms sum to <= δ): a tighter
        cu[TAU] = delta  # box makes the dual repair's price for the solver's tolerances 1/δ times smaller
        if edge_rows:
            cu[EDGE] = delta
    q_idx = np.arange(Q.start, Q.stop)
    blocks = []
    # pure DP, compact: the geometric lower profile beyond the window (module docstring): a unit of
    # p_j in an edge period brings tail_mass[j] = b/(1 − b) more mass at j ± qm, q >= 1
    tail_mass = np.zeros(N)
    if delta == 0 and not direct:
        tail_mass[:m] = tail_mass[N - m:] = math.exp(-epsilon) / -math.expm1(-epsilon)
    norm = np.zeros(n)
    norm[Q] = (1.0 + tail_mass) / s
    norm[mL] = norm[mR] = 1.0
    nz = np.flatnonzero(norm)
    blocks.append(("normalisation", _coo(np.zeros(len(nz), int), nz, norm[nz], (1, n)), 1.0, 1.0))

    # privacy
    if delta == 0 and not direct:
        win = window_ratio_rows(q_idx, s, m, E, AUX.start, n, cu[Q])
        blocks += win.blocks
        cu[AUX] = win.aux_upper
    elif delta == 0:
        blocks.append(("privacy", _pair_rows(q_idx, s, m, E, n), -np.inf, 0.0))
    else:
        blocks += _hockey_stick_rows(q_idx, s, m, E, float(delta), TAU.start, n,
                                     **({"far": (mL, mR), "edge0": EDGE.start} if edge_rows else {}))

    if wass:
        F, T_L, T_R = input_tables(inp)
        g_idx = np.arange(G.start, G.stop)  # g_idx[i] is G_{g_first + i}
        if direct:
            # G_{−K−1} − m_L = 0 ; G_j − G_{j−1} − p_j = 0
            first = _coo([0, 0], [g_idx[0], mL], [1.0, -1.0], (1, n))
            rr = np.arange(N)
            chain = _coo(np.concatenate([rr, rr, rr]), np.concatenate([g_idx[1:], g_idx[:-1], q_idx]),
                         np.concatenate([np.ones(N), -np.ones(N), -1.0 / s]), (N, n))
        elif w > 0:
            # G_{−w} − m_L − Σ_{j<=−w} p_j = 0 ; G_j − G_{j−1} − p_j = 0 for j = −w+1 .. w−1
            head = np.arange(0, K - w + 1)  # window positions of j = −K .. −w (the left tail profile included)
            first = _coo(np.zeros(len(head) + 2, int), np.concatenate([[g_idx[0], mL], q_idx[head]]),
                         np.concatenate([[1.0, -1.0], -(1.0 + tail_mass[head]) / s[head]]), (1, n))
            rr = np.arange(2 * w - 1)
            jpos = K - w + 1 + rr  # window positions of j = −w+1 .. w−1
            chain = _coo(np.concatenate([rr, rr, rr]), np.concatenate([g_idx[1:], g_idx[:-1], q_idx[jpos]]),
                         np.concatenate([np.ones(len(rr)), -np.ones(len(rr)), -1.0 / s[jpos]]), (len(rr), n))
        if direct or w > 0:
            blocks.append(("cdf", sp.vstack([first, chain]), 0.0, 0.0))
        # epigraph rows: t_k ± (F_X(k) − Σ_i p_X(i) G_{k−i})
        dX = np.diff(np.concatenate([[0.0], F]))
        xs = np.arange(inp.lo, inp.hi + 1)
        keep = dX > 0
        xs, dX = xs[keep], dX[keep]
        M = len(kmid)
        if M:
            FX = np.where(kmid >= inp.hi, 1.0, np.where(kmid < inp.lo, 0.0, F[np.clip(kmid - inp.lo, 0, len(F) - 1)]))
            gcol = g_idx[(kmid[:, None] - xs[None, :]) - g_first]
            rr = np.repeat(np.arange(M), len(xs))
            t_idx = np.arange(T.start, T.stop)
            for sign, name in ((1.0, "epigraph_plus"), (-1.0, "epigraph_minus")):
                # t_k + sign·Σ p_X(i) G_{k−i} >= sign·F_X(k)
                mat = _coo(np.concatenate([np.arange(M), rr]), np.concatenate([t_idx, gcol.ravel()]),
                           np.concatenate([np.ones(M), sign * np.tile(dX, M)]), (M, n))
                blocks.append((name, mat, sign * FX, np.inf))
            c[T] = 1.0
        if direct:
            # far regions (linear lower bounds)
            c[Q] = (T_R(inp.lo + K + 1 - j) + T_L(inp.hi - K - 2 - j)) / s
            c[mL] = float(T_L(np.array([inp.hi - 1]))[0])
            c[mR] = float(T_R(np.array([inp.lo]))[0])
        else:
            # the terms outside the support, exactly linear (module docstring); far masses at h(±(K+1))
            price = outside_support_price(inp, j)
            c[Q] = (price + tail_price(price, tail_mass, epsilon, m)) / s
            c[mL], c[mR] = outside_support_price(inp, np.array([-K - 1, K + 1]))
    else:
        price = np.abs(j).astype(float)
        c[Q] = (price + tail_price(price, tail_mass, epsilon, m)) / s
        c[mL] = c[mR] = K + 1.0

    A, rl, ru, row_blocks = stack_rows(blocks, n)
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n), col_upper=cu,
        row_blocks=row_blocks, col_blocks=cols,
        meta={"scale": s, "builder": "wasserstein", "semantics": "relaxation", "normalisation_row": 0,
              "K": K, "utility": utility, "formulation": "direct" if direct else "compact",
              **({"G_first": g_first, "t_first": int(kmid[0]) if len(kmid) else None} if wass else {})},
    )
    return WassersteinLP(lp, K, float(epsilon), float(delta), m, utility)


# ------------------------------------------------------------------------------------------------
# W1 of a given noise law
# ------------------------------------------------------------------------------------------------
def w1_of_pmf(inp: InputPMF | None, k_first: int, q: np.ndarray) -> float:
    """Σ_k |Σ_l q_l (F_X(k) − F_X(k − l))| for noise masses q on k_first.. (point-mass 0 input
    when ``inp`` is None: then it is Σ_l q_l |l|).

    For a pmf (Σ q = 1) this is W1(X, X + θ) exactly; for a truncated law it differs from the
    full W1 by at most the truncated part's Σ p(l)|l| (see :func:`w1_of_mechanism`).  The value of
    :func:`w1_of_pmf_bounded`, which also bounds its rounding error.
    """
    return w1_of_pmf_bounded(inp, k_first, q)[0]


def w1_of_pmf_bounded(inp: InputPMF | None, k_first: int, q: np.ndarray) -> tuple[float, float]:
    """(:func:`w1_of_pmf`, a bound on its rounding error) for nonnegative masses q.

    The pmf of X + θ is a double precision convolution of nonnegative terms, each entry within
    γ_n of itself (n = the shorter length, γ_n = nU/(1 − nU)); its running sums F_Y(k) and the
    total S are long double sums (γ'_L, L their length, u' the long double epsilon).  So each
    |F_X(k)·S − F_Y(k)| is within (γ_n + 2γ'_L)·F_Y(k) + γ'_L·S of the exact one, and the final
    long double sum adds γ'_M of the sum of its M terms: the bound is
    (γ_n + 2γ'_L)·Σ_k F_Y(k) + γ'_L·S·M + γ'_M·value (times 1.01), plus one rounding of the value.
    """
    q = np.asarray(q, dtype=float)
    if inp is None:
        l = np.arange(k_first, k_first + len(q))
        val = float(math.fsum(q * np.abs(l)))  # correctly rounded
        return val, 2.0**-53 * abs(val)
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
    value = np.sum(np.abs(FXk * S - FY))
    val = float(value)

    def gamma(count: int, unit: float) -> float:
        return count * unit / (1.0 - count * unit)

    U, u_ld = 2.0**-53, float(np.finfo(_LD).eps)
    n, L, M = min(len(dX), len(q)), len(conv) + 1, len(k)
    err = ((gamma(n, U) + 2 * gamma(L, u_ld)) * float(np.sum(FY)) + gamma(L, u_ld) * float(S) * M
           + gamma(M, u_ld) * abs(val)) * 1.01 + U * abs(val)
    return val, err


def _tail_moment(gen: np.ndarray, beta: float, P: int, W: int, base: float) -> float:
    """Upper bound of Σ_{q>P} Σ_r gen_r β^q (base + qW)."""
    if not np.any(gen > 0) or beta == 0:
        return 0.0
    g = math.fsum(gen)
    A = beta ** (P + 1) / (1 - beta)
    B = beta ** (P + 1) * ((P + 1) - P * beta) / (1 - beta) ** 2
    return g * (base * A + W * B) * (1 + 1e-12)


def w1_of_lattice_law(inp: InputPMF | None, mech: LatticeMechanism) -> tuple[float, float]:
    r"""(W1 value, absolute error bound) of a lattice noise law with geometric tails, by the split
    of the module docstring: W1 = Σ_l p(l) h(l) + Σ_{x_lo <= k < x_hi} |F_X(k) − F_Y(k)|.

    An independent evaluator beside :func:`w1_of_mechanism` (the tests compare the two), and
    O(window + periods·W + w²) instead of O(periods·W·w): the references evaluate m staircases.
    The law is extended by P periods each side, so that the extension covers [−w − 1, w] and its
    outermost periods lie where h has slope 1 in |l| (|l| >= w); beyond them each point l of the
    outermost period carries β^q·p(l) at l ± qW (q >= 1), whose h-cost is the closed form
    p(l)·(h(l)·β/(1 − β) + W·β/(1 − β)²), and whose mass enters F_Y on the support as a whole (left)
    or not at all (right).  ``inp`` None: h(l) = |l| (E|θ|, the surrogate).

    Error bound: h(l) is within 3 roundings of double precision (the two tables and their sum), the
    closed forms and the masses within a few of long double, so the h part is within 1e-13 relative
    (as :func:`w1_of_mechanism` allows); each F_Y(k) <= 1 is a long double sum of at most
    n + w + 2 nonnegative terms (n extended points), within (n + w + 2)·u of itself, and there are w
    of them: the bound adds w·(n + w + 2)·u (u the long double epsilon) and 1e-16.
    """
    W = mech.grid.W
    beta = float(mech.beta)
    total = mechanism_total(mech)
    w = 0 if inp is None else inp.hi - inp.lo
    c_right = -(-max(0, w - mech.k_hi) // W)
    c_left = -(-max(0, mech.k_lo + w + 1) // W)
    P = max(c_right, c_left) + 1
    k0, wts = mech.extended(periods=P)
    lat = np.arange(k0, k0 + len(wts))
    p = wts.astype(_LD) / _LD(total)
    h = (np.abs(lat).astype(_LD) if inp is None else outside_support_price(inp, lat).astype(_LD))
    value = np.sum(p * h)
    left_tail = _LD(0)
    if beta > 0:
        g1 = _LD(beta) / (_LD(1) - _LD(beta))  # Σ_{q>=1} β^q
        g2 = _LD(W) * _LD(beta) / (_LD(1) - _LD(beta)) ** 2  # W·Σ_{q>=1} q β^q
        for edge in (slice(0, W), slice(len(p) - W, len(p))):
            value += np.sum(p[edge] * (h[edge] * g1 + g2))
        left_tail = np.sum(p[:W]) * g1
    if w > 0:
        F = inp.cdf().astype(_LD)
        # F_Y(k) = P(θ <= k − x_hi) + Σ_{i=x_lo}^{x_hi−1} p(k − i) F_X(i), k = x_lo .. x_hi − 1
        cdf = left_tail + np.cumsum(p)
        ks = np.arange(inp.lo, inp.hi)
        below = cdf[ks - inp.hi - k0]
        seg = p[(-w + 1) - k0: w - k0]  # p(l), l = −w+1 .. w−1: every k − i here
        conv = np.convolve(seg, F[:-1])  # conv[t] = Σ_{l+i = t + x_lo − w + 1} p(l) F_X(i)
        inner = conv[ks - inp.lo + w - 1]
        value += np.sum(np.abs(F[:-1] - below - inner))
    val = float(value)
    u = float(np.finfo(_LD).eps)
    return val, 1e-13 * abs(val) + w * (len(p) + w + 2) * u + 1e-16


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
    The bound also carries the rounding bound of :func:`w1_of_pmf_bounded`, 2U·Σ p(l)|l| for the
    masses' own rounding (weights/total in double precision; W1 moves by at most |l| per unit of
    mass moved at l) and 1e-13 relative.
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
    q = wts / total
    val, rounding = w1_of_pmf_bounded(inp, k0, q)
    moment = math.fsum(q * np.abs(np.arange(k0, k0 + len(q))))
    return val, rest + rounding + 2.0**-52 * moment * 1.01 + 1e-13 * val + 1e-16
