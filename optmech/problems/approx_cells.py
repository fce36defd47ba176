"""(ε, δ)-DP on ℝ as a lattice LP: nodes for the lower bound, centred cells for the upper bound.

The problem [GV13, (18), with real noise]: minimise E L(X) over laws P of X on ℝ such that, for
every shift |t| <= Δ, the hockey-stick divergence

    H_t(P) = sup_S [P(S) − e^ε P(S − t)]  (= ∫ (p(x) − e^ε p(x − t))_+ dx for a density p)

is at most δ.  Fix n (cells per Δ), h = Δ/n, the nodes x_k = k·h (k ∈ ℤ) and the centred cells
C_k = [x_k − h/2, x_k + h/2).  Both bounds below are the integer (ε, δ) problem with sensitivity
n on ℤ (:func:`optmech.problems.approx.build_approx`): masses q_k, and for every integer shift
0 < |m| <= n, Σ_k (q_k − e^ε q_{k−m})_+ <= δ.  Only the prices of a unit of mass at node k differ.

**Upper bound (restriction).**  Let q be such a lattice pmf and X have density q_k/h on C_k.  For a
shift t = (m + f)·h with integer m and 0 <= f < 1, a point x of C_k is moved out of C_{k−m−1}
for a fraction f of the cell and out of C_{k−m} for the rest, so

    H_t(X) = f·H_{m+1}(q) + (1 − f)·H_m(q)                                          (1)

(H_m the lattice hockey-stick sum).  H_t is linear in f between grid shifts, so its maximum over
0 <= t <= Δ = n·h is the maximum of H_m(q) over m = 0..n; the same for t < 0.  Hence X is (ε, δ)-DP
on ℝ exactly when q is (ε, δ)-DP on ℤ for the shifts |m| <= n, which the lattice audit checks
with outward rounding, and E L(X) = Σ q_k·mean_{C_k} L: :func:`cell_mean_upper` prices each cell
by a rigorous upper bound of that mean (L >= 0 is proven first, so integrating over a slightly
larger interval only raises it).

**Lower bound (relaxation), second order.**  Let X be any (ε, δ)-DP noise on ℝ and Y its
randomised rounding to the nodes: for X in the segment [x_j, x_{j+1}] at x_j + θh, Y = j with
probability 1 − θ and j + 1 with probability θ.  Rounding X + m·h gives Y + m (θ is unchanged), so
Y's law is a post-processing of X's that commutes with the shifts by m·h, |m·h| <= Δ; the
hockey-stick divergence does not increase under post-processing, so the law of Y is feasible for
the lattice problem with sensitivity n.  Its price: E[L(h·Y) | X] is the linear interpolant
I_hL(X) of L between the nodes, and on the segment j, I_hL − L <= e_j, where e_j is the smallest
of these proven bounds (:meth:`NodeCosts.chord_errors`):

* max(L(x_j), L(x_{j+1})) − min over the segment of L (any L);
* h·(M − m)/4 when L is Lipschitz on the segment with (generalised) derivatives in [m, M] (the
  chord lies below min((s − m)(x − x_j), (M − s)(x_{j+1} − x)) above L, s the chord's slope);
* h²·K/8 when L'' <= K on the segment (the interpolation error formula), and 0 where L is
  concave (for named costs |x|^P, P <= 1: the nodes include 0, so no segment crosses the kink).

Since the segment of X is j = Y − 1 or j = Y, E L(X) >= E[L(h·Y) − max(e_{Y−1}, e_Y)], which is
the node price L̂(k) = L_lo(x_k) − max(e_{k−1}, e_k) of :meth:`NodeCosts.lower`.  On the LP's box
[−R, R] the mass beyond it is one "far" variable: the segments [x_R, x_{R+1}] and beyond are
priced at c_far = inf_{|x| >= x_R} L (:meth:`NodeCosts.beyond`) and the boundary node's price is
lowered to at most the minimum of L on its outer segment, so that on the boundary segment
(1 − θ)·L̂(R) + θ·c_far <= min L <= L(X).  So V*(ℝ) >= V*(lattice, prices L̂) >= the LP's
certified dual bound.  For |x| the nodes' prices are exact (e = 0) and the bracket's width is
the centre cell's (h/4)·q_0; for x², e = h²/4 and the width is h²/3: both O(h²).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.costs import Cost
from optmech.errors import SpecError
from optmech.costs.interval import WIDEN_LIBM, WIDEN_ROUNDED, round_down, round_up
from optmech.problems.lattice import Grid1D, LatticeMechanism, enclose, integral

__all__ = ["NodeCosts", "AlignedCells", "node_interval", "cell_mean_upper", "aligned_cell_mean_upper", "half_cell_grid",
           "cells_law", "aligned_cells_law", "SPIKE_GRID_STEPS", "SPIKE_STEPS", "spike_steps", "spiked_cells_law"]

#: Geometric pieces that cover [x_R, ∞) for the far mass's price (as Grid1D.outside_min).
_FAR_PIECES = np.concatenate([[0.0], np.geomspace(1e-300, 1e300, 600)])


def node_interval(k, sensitivity: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """An enclosure [lo, hi] of the real node x_k = k·Δ/n (exact 0 at k = 0, odd in k)."""
    k = np.asarray(k, dtype=float)
    x = k * float(sensitivity) / float(n)  # two correctly rounded operations: relative error <= 2^-52
    zero = x == 0.0  # k = 0 exactly
    return np.where(zero, 0.0, round_down(x, WIDEN_ROUNDED)), np.where(zero, 0.0, round_up(x, WIDEN_ROUNDED))


def _step_upper(sensitivity: float, n: int) -> float:
    return float(round_up(np.float64(float(sensitivity) / float(n))))


class NodeCosts:
    """The node prices L̂(k) of the relaxation (module docstring) for cost L, Δ and n cells per Δ.

    >>> from optmech.costs import parse_cost
    >>> nc = NodeCosts(parse_cost("abs"), 1.0, 4)
    >>> [round(float(v), 12) for v in nc.lower(np.arange(-2, 3))]      # |x| needs no correction
    [0.5, 0.25, 0.0, 0.25, 0.5]
    >>> sq = NodeCosts(parse_cost("square"), 1.0, 4)
    >>> float(sq.chord_errors(np.array([3]))[0]) >= 1 / 64             # h²/4 with h = 1/4
    True
    """

    def __init__(self, cost: Cost, sensitivity: float, n: int) -> None:
        self.cost, self.sensitivity, self.n = cost, float(sensitivity), int(n)
        self.h_hi = _step_upper(sensitivity, n)

    def _segment(self, j) -> tuple[np.ndarray, np.ndarray]:
        """An interval containing the segment [x_j, x_{j+1}]."""
        a, _ = node_interval(j, self.sensitivity, self.n)
        _, b = node_interval(np.asarray(j) + 1, self.sensitivity, self.n)
        return a, b

    def chord_errors(self, j) -> np.ndarray:
        """Proven upper bounds e_j >= sup over the segment [x_j, x_{j+1}] of I_hL − L (>= 0)."""
        j = np.asarray(j, dtype=np.int64)
        a, b = self._segment(j)
        cost, h = self.cost, self.h_hi
        with np.errstate(all="ignore"):
            _, la = enclose(cost, *node_interval(j, self.sensitivity, self.n))
            _, lb = enclose(cost, *node_interval(j + 1, self.sensitivity, self.n))
            mn, _ = enclose(cost, a, b)
            e = round_up(np.maximum(la, lb) - mn)  # any L
            dlo, dhi, lipschitz = cost.slopes(a, b)
            lip = np.where(lipschitz, round_up(round_up(h * round_up(dhi - dlo)) / 4.0), np.inf)
            e = np.minimum(e, lip)
            if cost.kind != "expr":
                P = float(cost.power)
                if P <= 1.0:  # |x|^P is linear (P = 1) or concave on each side of 0, a node: chord <= L
                    e = np.where((a >= 0) | (b <= 0), 0.0, e)
                elif P >= 2.0:  # L'' = P(P−1)|x|^{P−2} <= its value at the outer end
                    far = np.maximum(np.abs(a), np.abs(b))
                    k2 = round_up(P * (P - 1.0) * round_up(np.power(far, P - 2.0), WIDEN_LIBM))
                    e = np.minimum(e, round_up(round_up(round_up(h * h) * k2) / 8.0))
            return np.where(np.isnan(e), np.inf, np.maximum(e, 0.0))

    def lower(self, k) -> np.ndarray:
        """Node prices L̂(k) = L_lo(x_k) − max(e_{k−1}, e_k), rounded down (may be −inf)."""
        k = np.asarray(k, dtype=np.int64)
        lo, _ = enclose(self.cost, *node_interval(k, self.sensitivity, self.n))
        e = np.maximum(self.chord_errors(k - 1), self.chord_errors(k))
        with np.errstate(all="ignore"):
            out = np.where(e == 0, lo, round_down(lo - e))
        return np.where(np.isnan(out), -np.inf, out)

    def boundary_lower(self, R: int) -> tuple[float, float]:
        """The prices of the box's end nodes −R and R: L̂ lowered to the minimum of L on the outer segment."""
        ends = self.lower(np.array([-R, R]))
        a, b = self._segment(np.array([-R - 1, R]))
        mn, _ = enclose(self.cost, a, b)
        return float(min(ends[0], mn[0])), float(min(ends[1], mn[1]))

    def beyond(self, R: int) -> float:
        """c_far: a proven lower bound of L on |x| >= x_R, raised to the cost's floor on ℝ."""
        start, _ = node_interval(np.array([R]), self.sensitivity, self.n)
        s = float(start[0])
        g = _FAR_PIECES
        a = np.concatenate([s + g[:-1], [s + g[-1]], -(s + g[1:]), [-np.inf]])
        b = np.concatenate([s + g[1:], [np.inf], -(s + g[:-1]), [-(s + g[-1])]])
        lo, _ = enclose(self.cost, np.minimum(a, b), np.maximum(a, b))
        return max(self.cost.domain_minimum(integer=False), float(np.min(lo)))

    def even(self, k) -> bool:
        """L̂(k) == L̂(−k) at every node k given (exact comparison)."""
        k = np.asarray(k, dtype=np.int64)
        return bool(np.array_equal(self.lower(k), self.lower(-k)))


def cell_mean_upper(cost: Cost, k, sensitivity: float, n: int) -> np.ndarray:
    """Rigorous upper bounds of the mean of L on the centred cells C_k (L >= 0 proven by the caller).

    The interval [x_k − h/2, x_k + h/2] is widened outward, the integral enclosed
    (:meth:`optmech.costs.Cost.integral`) and divided by a lower bound of h.
    """
    k = np.asarray(k, dtype=float)
    two_n = 2.0 * float(n)
    a = round_down((2.0 * k - 1.0) * float(sensitivity) / two_n)
    b = round_up((2.0 * k + 1.0) * float(sensitivity) / two_n)
    _, hi = integral(cost, a, b)
    h_lo = float(round_down(np.float64(float(sensitivity) / float(n))))
    with np.errstate(all="ignore"):
        return round_up(hi / h_lo)


def aligned_cell_mean_upper(cost: Cost, k, sensitivity: float, n: int) -> np.ndarray:
    """Rigorous upper bounds of the mean of L on the aligned cells [k·h, (k+1)·h) (L >= 0 proven by
    the caller): as :func:`cell_mean_upper`, on the interval widened outward."""
    k = np.asarray(k, dtype=float)
    a = round_down(k * float(sensitivity) / float(n))
    b = round_up((k + 1.0) * float(sensitivity) / float(n))
    a = np.where(k == 0, 0.0, a)  # 0 is exact
    b = np.where(k == -1, 0.0, b)
    _, hi = integral(cost, a, b)
    h_lo = float(round_down(np.float64(float(sensitivity) / float(n))))
    with np.errstate(all="ignore"):
        return round_up(hi / h_lo)


class AlignedCells:
    """Prices for the candidate LP of the upper bound on the aligned cells A_k = [k·h, (k+1)·h).

    A density constant on the A_k is audited exactly by the integer shifts (the linearity (1) of the
    module docstring holds for any cells of width h), and costs Σ q_k·mean_{A_k} L.  For a cost with
    a kink at 0 (|x|) no aligned cell straddles it, so the mean is the cost at the cell's centre and
    the candidate loses nothing there, where the centred cell C_0 loses (h/4)·q_0.  The LP built with
    these prices (``half_offset``: k = −R−1..R, paired k ↔ −1−k when the prices are mirror-equal)
    is *not* a relaxation: it only proposes masses, which are audited and priced like any candidate.
    Its outer layer and far mass (no rows of their own) are priced prohibitively so it does not use them.

    >>> from optmech.costs import parse_cost
    >>> a = AlignedCells(parse_cost("abs"), 1.0, 4)
    >>> [round(float(v), 12) for v in a.lower(np.arange(-2, 2))]      # the cells' centres' |x|
    [0.375, 0.125, 0.125, 0.375]
    """

    half_offset = True
    #: Price of the outer layer and of the far mass, per unit of the box's largest price.
    PROHIBITIVE = 1e3

    def __init__(self, cost: Cost, sensitivity: float, n: int) -> None:
        self.cost, self.sensitivity, self.n = cost, float(sensitivity), int(n)
        self._top = 1.0

    def lower(self, k) -> np.ndarray:
        """Upper bounds of the cost's mean on each cell A_k (the LP's objective; name shared with
        :class:`NodeCosts`, whose prices the builder reads the same way)."""
        v = aligned_cell_mean_upper(self.cost, k, self.sensitivity, self.n)
        fin = v[np.isfinite(v)]
        self._top = max(self._top, float(fin.max()) if fin.size else 1.0)
        return np.where(np.isfinite(v), v, self.PROHIBITIVE * self._top)

    def boundary_lower(self, R: int) -> tuple[float, float]:
        """The end cells −R−1 and R: prohibitive (no rows of their own)."""
        return self.PROHIBITIVE * self._top, self.PROHIBITIVE * self._top

    def beyond(self, R: int) -> float:
        """The far mass: prohibitive."""
        return self.PROHIBITIVE * self._top

    def even(self, k) -> bool:
        """Mirror-equal prices: mean over A_k == mean over A_{−1−k} at every cell given (exact)."""
        k = np.asarray(k, dtype=np.int64)
        return bool(np.array_equal(self.lower(k), self.lower(-1 - k)))


def aligned_cells_law(p: np.ndarray, k0: int, sensitivity: float, n: int) -> LatticeMechanism:
    """The density p_j/h on the aligned cells A_{k0+j} as a :class:`LatticeMechanism` on the cells
    [i·h, (i+1)·h) of a period [0, Δ)."""
    d = float(sensitivity)
    h = d / n
    grid = Grid1D("cells", d, n, np.arange(n + 1) * h)
    w = np.asarray(p, dtype=float) / h
    total = math.fsum(w * grid.width(np.arange(k0, k0 + len(w))))
    return LatticeMechanism(grid, int(k0), w, 0.0, np.zeros(n), np.zeros(n), total=total)


def half_cell_grid(sensitivity: float, n: int) -> Grid1D:
    """A :class:`~optmech.problems.lattice.Grid1D` whose cells are the halves of C_0 and C_n and the
    whole C_1 … C_{n−1} within each period [0, Δ): edges 0, h/2, 3h/2, …, (n − 1/2)h, Δ."""
    d = float(sensitivity)
    h = d / n
    edges = np.concatenate([[0.0], (np.arange(n) + 0.5) * h, [d]])
    return Grid1D("cells", d, n + 1, edges)


def cells_law(p: np.ndarray, R: int, sensitivity: float, n: int) -> LatticeMechanism:
    """The density p_k/h on C_k (k = −R..R) as a :class:`LatticeMechanism` on :func:`half_cell_grid`."""
    grid = half_cell_grid(sensitivity, n)
    W = n + 1
    k = np.arange(-R, R + 1)
    q, r = np.divmod(k, n)
    h = float(sensitivity) / n
    dens = np.asarray(p, dtype=float) / h
    # node k = q·n + r: the whole cell q·W + r (r >= 1), or the halves q·W + 0 and (q−1)·W + n (r = 0)
    idx_main = q * W + r
    g_lo = int(min(idx_main.min(), ((q - 1) * W + n)[r == 0].min(initial=idx_main.min())))
    g_hi = int(max(idx_main.max(), ((q - 1) * W + n)[r == 0].max(initial=idx_main.max())))
    w = np.zeros(g_hi - g_lo + 1)
    w[idx_main - g_lo] += dens
    left_half = ((q - 1) * W + n)[r == 0]
    w[left_half - g_lo] += dens[r == 0]
    total = math.fsum(w * grid.width(np.arange(g_lo, g_hi + 1)))
    return LatticeMechanism(grid, g_lo, w, 0.0, np.zeros(W), np.zeros(W), total=total)


#: The spike's edges ±η/2 lie on the uniform grid of 2·n·s steps per Δ (η = h/s); a law's own audit
#: (:meth:`optmech.mechanisms.tabulated.Tabulated.privacy`) works on such grids up to 4096 steps per Δ, in a
#: time that grows like their square (9 s at 4092 steps, n = 26; measured), so s is at most SPIKE_STEPS.
SPIKE_GRID_STEPS = 4096
#: The spike's width is at least h/SPIKE_STEPS: it costs at most its mass times h/(4·SPIKE_STEPS) more than an
#: atom for |x| (an aligned cell pair costs h/2 times it).
SPIKE_STEPS = 8


def spike_steps(n: int) -> int:
    """s, the spike's width η = h/s for n cells per Δ: the largest s <= SPIKE_STEPS with 2·n·s <= SPIKE_GRID_STEPS
    (at least 1).

    >>> spike_steps(79), spike_steps(300), spike_steps(4096)
    (8, 6, 1)
    """
    return max(1, min(SPIKE_STEPS, SPIKE_GRID_STEPS // (2 * int(n))))


def spiked_cells_law(p: np.ndarray, k0: int, atom: float, sensitivity: float, n: int, steps: int) -> LatticeMechanism:
    """The density p_j/h on the aligned cells A_{k0+j} plus the mass ``atom`` spread uniformly on the spike
    [−η/2, η/2), η = h/steps, as a :class:`LatticeMechanism` on the cells of a period [0, Δ) with edges
    0, η/2, h, 2h, …, (n − 1)h, Δ − η/2, Δ (n + 2 cells: A_0 and A_{n−1} of each period are split at η/2 and
    Δ − η/2, and the spike is the first cell of period 0 and the last of period −1).  Its total mass is
    Σp + atom.

    >>> law = spiked_cells_law(np.array([0.3, 0.3]), -1, 0.4, 1.0, 4, 2)
    >>> round(float(law.total), 12)
    1.0
    """
    d, n, steps = float(sensitivity), int(n), int(steps)
    if n < 2 or steps < 1:
        raise SpecError("a spiked cell law needs n >= 2 cells per sensitivity and steps >= 1")
    h = d / n
    eta = h / steps
    W = n + 2
    edges = np.concatenate([[0.0, eta / 2.0], np.arange(1, n) * h, [d - eta / 2.0, d]])
    grid = Grid1D("cells", d, W, edges)
    j = np.arange(k0, k0 + len(p))
    q, r = np.divmod(j, n)
    dens = np.asarray(p, dtype=float) / h
    main = np.where(r == 0, q * W, np.where(r == n - 1, q * W + n, q * W + r + 1))
    extra_idx = np.concatenate([(q * W + 1)[r == 0], (q * W + n + 1)[r == n - 1]])
    extra_dens = np.concatenate([dens[r == 0], dens[r == n - 1]])
    spike = np.array([0, -W + n + 1])  # [0, η/2) and [−η/2, 0)
    idx = np.concatenate([main, extra_idx, spike])
    g_lo, g_hi = int(idx.min()), int(idx.max())
    w = np.zeros(g_hi - g_lo + 1)
    np.add.at(w, main - g_lo, dens)
    np.add.at(w, extra_idx - g_lo, extra_dens)
    np.add.at(w, spike - g_lo, float(atom) / eta)
    total = math.fsum(w * grid.width(np.arange(g_lo, g_hi + 1)))
    return LatticeMechanism(grid, g_lo, w, 0.0, np.zeros(W), np.zeros(W), total=total)
