"""1-D lattices and cells: where the LP's variables live, and what a unit of mass costs there.

A :class:`Grid1D` is either the integer lattice ℤ (one variable per point) or the cells
[k·h, (k+1)·h) of width h = Δ/resolution (one variable per cell mass) [Geng13, App. A,
Lemma A.6].  In both cases a shift by the sensitivity is a shift by ``W`` indices, so
the same LP structure serves both domains.

Costs per unit mass come in two flavours, both outward-rounded:

* ``cost_lower(k)`` — a lower bound of the cost of any mass placed at index k (the minimum of
  the cost over the cell), used by the lower-bound relaxation;
* ``cost_upper(k)`` — an upper bound of the cost of a unit of mass spread *uniformly* over the
  cell (the cell mean), or of a point mass at k, used to price an exactly feasible mechanism.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optmech.costs import Cost
from optmech.costs.interval import round_down, round_up
from optmech.errors import ProblemTooLarge, SpecError

#: Largest number of terms a tail series may take (a guard against hour-long sums).
MAX_TAIL_TERMS = 3 * 10**8
#: Terms evaluated per vectorised block of a tail series.
TAIL_CHUNK_TERMS = 2 * 10**6
#: An expression cost is enclosed this many points or cells at a time: its interval enclosure cuts
#: each interval at the conditions' breakpoints and into dyadic sub-pieces, and a cell integral
#: into 32 pieces of those, so one cell may need ~12 KB of temporaries [measured]; blocks keep
#: that bounded (the enclosures are elementwise: the values do not depend on the block size).
ENCLOSURE_CHUNK = 4096

_UP = np.inf
_DOWN = -np.inf


@dataclass(frozen=True, eq=False)
class Grid1D:
    """A 1-D lattice of points or of cells, periodic with the sensitivity Δ.

    Index k lies in period ``q = k // W`` at offset ``r = k % W``.  On the integer lattice it is
    the point k.  On the continuous domain it is the cell
    ``[q·Δ + edges[r], q·Δ + edges[r + 1])``: the breakpoints ``edges`` (``0 = t_0 < … < t_W = Δ``)
    repeat in every period, so a shift by Δ maps cell k onto cell k + W, and two cells contain
    points closer than Δ exactly when their indices differ by at most W.  The edges are
    symmetric (t ↦ Δ − t), so the mirror image of cell k is cell −k − 1.  A uniform grid
    (``edges = linspace(0, Δ, W+1)``) is the cell discretisation of [Geng13, App. A, Lemma A.6];
    finer breakpoints where mass and cost concentrate keep the LP small at large ε.

    LP variables are *densities*: mass per unit length on cells, mass on points (``width = 1``).

    Attributes
    ----------
    kind : {"integer", "cells"}
    period : float
        Δ.
    W : int
        Points or cells per period.
    edges : ndarray or None
        The W + 1 breakpoints of one period (cells only).
    """

    kind: str
    period: float
    W: int
    edges: np.ndarray | None = None

    @classmethod
    def integer(cls, sensitivity: int) -> "Grid1D":
        return cls("integer", float(int(sensitivity)), int(sensitivity))

    @classmethod
    def cells(cls, sensitivity: float, resolution: int) -> "Grid1D":
        """Uniform cells of width Δ/resolution."""
        return cls.from_edges(float(sensitivity), np.linspace(0.0, float(sensitivity), int(resolution) + 1))

    @classmethod
    def from_edges(cls, sensitivity: float, edges: np.ndarray) -> "Grid1D":
        """Cells with the given breakpoints of [0, Δ], symmetrised (t and Δ − t both kept)."""
        d = float(sensitivity)
        e = np.asarray(edges, dtype=float)
        e = np.unique(np.concatenate([[0.0, d], e, d - e]))
        e = e[(e >= 0.0) & (e <= d)]
        keep = np.concatenate([[True], np.diff(e) > 1e-14 * d])
        e = e[keep]
        e[0], e[-1] = 0.0, d
        return cls("cells", d, len(e) - 1, e)

    @property
    def h(self) -> float:
        """Smallest step (cell width, or 1 on the integer lattice)."""
        return 1.0 if self.edges is None else float(np.min(np.diff(self.edges)))

    @property
    def uniform(self) -> bool:
        return self.edges is None or bool(np.allclose(np.diff(self.edges), self.period / self.W, rtol=1e-12, atol=0))

    # -- geometry --------------------------------------------------------------------------------
    def _split(self, k) -> tuple[np.ndarray, np.ndarray]:
        q, r = np.divmod(np.asarray(k, dtype=np.int64), self.W)
        return q.astype(float), r

    def left(self, k: np.ndarray) -> np.ndarray:
        """Left end of cell k (the point itself on the integer lattice)."""
        if self.kind == "integer":
            return np.asarray(k, dtype=float)
        q, r = self._split(k)
        return q * self.period + self.edges[r]

    def right(self, k: np.ndarray) -> np.ndarray:
        """Right end of cell k (the point itself on the integer lattice)."""
        if self.kind == "integer":
            return np.asarray(k, dtype=float)
        q, r = self._split(k)
        return q * self.period + self.edges[r + 1]

    def width(self, k: np.ndarray) -> np.ndarray:
        """Cell width (1 on the integer lattice: LP variables are then masses)."""
        if self.kind == "integer":
            return np.ones(np.shape(k))
        _, r = self._split(k)
        return self.edges[r + 1] - self.edges[r]

    def center(self, k: np.ndarray) -> np.ndarray:
        return 0.5 * (self.left(k) + self.right(k))

    def distance(self, k: np.ndarray) -> np.ndarray:
        """Distance of index k from the origin in units of Δ/W (used for variable scaling)."""
        return np.abs(self.center(k)) * (self.W / self.period)

    def cells_beyond(self, x: float) -> int:
        """Number of whole periods' worth of indices covering [0, x] (at least 0)."""
        return int(math.ceil(max(x, 0.0) / self.period)) * self.W

    # -- costs -----------------------------------------------------------------------------------
    def cost_lower(self, cost: Cost, k: np.ndarray) -> np.ndarray:
        """Rigorous lower bound of the cost anywhere at index k."""
        lo, _ = enclose(cost, self.left(k), self.right(k))
        return lo

    def cost_upper(self, cost: Cost, k: np.ndarray) -> np.ndarray:
        """Rigorous upper bound of the cost of a unit mass at point k, or spread uniformly on cell k."""
        if self.kind == "integer":
            _, hi = enclose(cost, self.left(k), self.right(k))
            return hi
        _, hi = integral(cost, self.left(k), self.right(k))
        with np.errstate(all="ignore"):
            return np.nextafter(hi / np.nextafter(self.width(k), _DOWN), _UP)

    def cost_at_left_edge(self, cost: Cost, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Enclosure of L at the left end of cell k."""
        x = self.left(k)
        return enclose(cost, x, x)

    def cell_mean_lower(self, cost: Cost, k: np.ndarray) -> np.ndarray:
        """Lower bound of the mean of L over cell k (cells only)."""
        lo, _ = integral(cost, self.left(k), self.right(k))
        with np.errstate(all="ignore"):
            return np.nextafter(lo / np.nextafter(self.width(k), _UP), _DOWN)

    def outside_min(self, cost: Cost, k_first: int, direction: int) -> float:
        """Lower bound of the cost on the half-line from index ``k_first`` outwards.

        ``direction=+1`` covers [left(k_first), ∞), ``-1`` covers (−∞, right(k_first)].  The
        half-line is cut into dyadically growing pieces so that interval dependency stays local;
        the result is raised to :meth:`cost_floor`, the cost's proven minimum over the domain.
        """
        g = np.concatenate([[0.0], np.geomspace(max(self.h, 1e-300), 1e300, 600)])
        if direction > 0:
            start = float(self.left(k_first))
            a = np.append(start + g[:-1], start + g[-1])
            b = np.append(start + g[1:], np.inf)
        else:
            end = float(self.right(k_first))
            a = np.append(end - g[1:], -np.inf)
            b = np.append(end - g[:-1], end - g[-1])
        if self.kind == "integer":  # only the integers of each piece belong to the domain
            a, b = np.ceil(a), np.floor(b)
            keep = a <= b
            a, b = a[keep], b[keep]
        lo, _ = cost.enclose(a, b)
        return max(self.cost_floor(cost), float(np.min(lo)))

    def cost_floor(self, cost: Cost) -> float:
        """A proven lower bound of the cost on the whole domain (ℤ for integer grids, ℝ for
        cells): :meth:`Cost.domain_minimum`, 0 or more when the cost is proven nonnegative."""
        return cost.domain_minimum(integer=self.kind == "integer")

    def tail_sums(
        self,
        cost: Cost,
        k_base: np.ndarray,
        direction: int,
        beta: float,
        *,
        bound: str,
        weights: str = "cost",
        rtol: float = 1e-19,
        max_periods: int = 100_000,
    ) -> np.ndarray:
        """Σ_{m≥1} β^m · cost(k_base + direction·m·W) for each base index, rigorously bounded.

        Parameters
        ----------
        bound : {"lower", "upper"}
            ``"lower"`` truncates the series and adds floor·Σ_{j>m} β^j for the truncated terms
            when the cost's proven floor (:meth:`cost_floor`) is negative (0 otherwise) and uses
            :meth:`cost_lower`; ``"upper"`` uses :meth:`cost_upper` and adds a remainder bound from
            :meth:`Cost.growth`, returning +inf where the series cannot be shown to converge.
        weights : {"cost", "correction"}
            ``"correction"`` sums the monotone in-cell correction terms of
            :func:`monotone_cell_correction` instead of the cost (lower bound only).
        """
        k_base = np.asarray(k_base, dtype=np.int64)
        periods = min(max_periods, int(math.log(rtol) / math.log(beta)) + 16) if 0 < beta < 1 else max_periods
        if periods * max(k_base.size, 1) > MAX_TAIL_TERMS:
            raise ProblemTooLarge(
                f"the geometric tail series needs about {periods * k_base.size:.2g} terms "
                f"({periods} periods of {k_base.size} points): raise epsilon or lower the sensitivity/resolution"
            )
        total = np.zeros(k_base.shape, dtype=float)
        chunk = max(1, min(periods, TAIL_CHUNK_TERMS // max(k_base.size, 1)))
        m = 0
        with np.errstate(all="ignore"):
            while m < max_periods:
                ms = np.arange(m + 1, min(m + chunk, max_periods) + 1)
                k = k_base[None, :] + direction * self.W * ms[:, None]
                if weights == "correction":
                    vals = monotone_cell_correction(self, cost, k.ravel())
                elif bound == "lower":
                    vals = self.cost_lower(cost, k.ravel())
                else:
                    vals = self.cost_upper(cost, k.ravel())
                factors = beta ** ms.astype(float)
                terms = factors[:, None] * vals.reshape(k.shape)
                total = total + terms.sum(axis=0)
                m = int(ms[-1])
                factor = float(factors[-1])
                if not np.all(np.isfinite(total)):
                    break
                if bound == "lower":
                    if factor < 1e-300 or np.all(terms[-1] <= rtol * total):
                        break
                elif factor < 0.5:
                    remainder = self._remainder(cost, k_base, direction, beta, m, factor)
                    if factor < 1e-300 or np.all(remainder <= rtol * np.maximum(total, 1e-300)):
                        break
            if bound == "lower":
                total = np.where(np.isfinite(total), total, np.finfo(float).max)
                total = np.nextafter(total * (1.0 - 1e-13 * m), _DOWN)
                floor = self.cost_floor(cost) if weights == "cost" else 0.0
                if floor < 0:  # the truncated terms are >= floor·β^j, not >= 0
                    rest = np.nextafter(floor * factor * beta / (1.0 - beta) * (1.0 + 1e-12), -_UP) if beta < 1 else -np.inf
                    total = np.nextafter(total + rest, _DOWN)
                return total
            remainder = self._remainder(cost, k_base, direction, beta, m, factor)
            out = (total + remainder) * (1.0 + 1e-13 * m)
            out = np.where(np.isfinite(out), out, np.inf)
        return np.nextafter(out, _UP)

    def _remainder(
        self, cost: Cost, k_base: np.ndarray, direction: int, beta: float, m: int, factor: float
    ) -> np.ndarray:
        """Bound Σ_{j>m} β^j sup_cell L at k_base + direction·j·W via the cost's growth bound."""
        far = np.maximum(np.abs(self.left(k_base + direction * (m + 1) * self.W)),
                         np.abs(self.right(k_base + direction * (m + 1) * self.W)))
        near = np.minimum(np.abs(self.left(k_base + direction * (m + 1) * self.W)),
                          np.abs(self.right(k_base + direction * (m + 1) * self.W)))
        g = cost.growth(float(np.min(near)))
        if g is None:
            return np.full(k_base.shape, np.inf)
        C, P, R = g
        step = self.period
        with np.errstate(all="ignore"):
            x = far
            q = beta * np.exp(R * step) * (1.0 + step / (1.0 + x)) ** P
            first = factor * beta * C * (1.0 + x) ** P * np.exp(R * x)
            rem = np.where(q < 1.0, first / (1.0 - q), np.inf)
        return np.nextafter(rem * (1 + 1e-12), _UP)



@dataclass(frozen=True, eq=False)
class SampledCells(Grid1D):
    """Uniform cells whose lower-bound costs are second-order *sample minorants* [derived].

    The cells are those of :meth:`Grid1D.cells` (width h = Δ/W, cell k = [kh, (k+1)h)), and
    :meth:`cost_upper` is unchanged: a piecewise-constant density on them is priced at its cell
    means.  :meth:`cost_lower` is not the cell minimum (first order in h) but the value at the cell
    midpoint s_k = (k + ½)h of affine minorants of L, which makes the relaxation's error O(h²) for
    costs that are piecewise C¹ [derived; the "lattice sandwich"]:

    1. Every ε-DP law on ℝ has a density f (an atom or a singular part N would give
       ∫_0^Δ μ(N + u) du = 0 against μ(N + u) >= e^{−ε} μ(N) > 0), and for almost every t in [0, h)
       the sequence a_k(t) = f(s_k + t) obeys a_k <= e^ε a_j for |k − j| <= W (each pair of points
       within Δ, for almost every t; countably many pairs).
    2. On each "dual cell" [s_j, s_{j+1}] let g_j(t) (t in [0, h]) be affine with g_j(t) <= L(s_j + t).
       Then ∫ L f = ∫_0^h Σ_k L(s_k + t) a_k(t) dt >= ∫_0^h U(t) M(t) dt with M(t) = Σ_k a_k(t),
       ∫_0^h M = 1, and U(t) = inf over ε-DP sequences q with Σ q = 1 of Σ_k g_k(t) q_k: an infimum of
       affine functions of t, hence concave, so U(t) >= min(U(0), U(h)).  Re-indexing
       (q'_k = q_{k−1} is ε-DP iff q is) gives U(h) = inf Σ_k g_{k−1}(h) q_k.  Both are at least the
       value of the lattice problem with costs c_k = min(g_k(0), g_{k−1}(h)), which the window LP
       of :func:`optmech.problems.pure.build_general` bounds below with these c_k as its point
       costs, its tail sums and its price of mass outside the window (densities times h are the q_k).
    3. The minorants.  With the end values L(s_j), L(s_{j+1}) bounded below and an enclosure
       [d_lo, d_hi] of L' on the dual cell (L Lipschitz there: :meth:`Cost.slopes`), the chord
       through the ends exceeds L by at most t(h − t)/h·(d_hi − d_lo) <= (h/4)(d_hi − d_lo), so
       g_j = chord − (h/4)(d_hi − d_lo) (zero loss where L is affine, O(h²) where L is C²); else
       the crude max(L(s_j), L(s_{j+1})) − min L over the dual cell.  A constant minorant (the
       minimum of L over the dual cell) is used where it is larger on average, and on every dual
       cell with |j| >= ``near`` (so that the price of mass far out is a plain minimum of L).

    The upper bound needs nothing new: the LP's primal as a density on the cells [kh, (k+1)h),
    which are centred at the sample points, is ε-DP exactly when the sequence is
    (:func:`optmech.certify.upper_bound` audits it), and its cell-mean cost exceeds the sample
    value Σ L(s_k) q_k by O(h²) (midpoint rule), so the bracket closes like h².
    """

    near: int = 0

    @classmethod
    def with_resolution(cls, sensitivity: float, resolution: int, near: int) -> "SampledCells":
        """``resolution`` cells per period; chord minorants on the dual cells j with |j| < ``near``."""
        base = Grid1D.cells(sensitivity, resolution)
        return cls("cells", base.period, base.W, base.edges, near=int(near))

    def sample(self, k: np.ndarray) -> np.ndarray:
        """The sample point s_k = (k + ½)h, the midpoint of cell k."""
        return self.center(k)

    def minorant_ends(self, cost: Cost, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(g_j(0), g_j(h)): lower values at both ends of the affine minorant on [s_j, s_{j+1}]."""
        j = np.asarray(j, dtype=np.int64)
        a, b = self.sample(j), self.sample(j + 1)
        low_a, high_a = enclose(cost, a, a)
        low_b, high_b = enclose(cost, b, b)
        low_ab, _ = enclose(cost, a, b)
        with np.errstate(all="ignore"):
            dlo, dhi, lipschitz = cost.slopes(a, b)
            width = round_up(np.maximum(b - a, 0.0))
            smooth = round_up(round_up(0.25 * width) * round_up(dhi - dlo))
            crude = round_up(np.maximum(high_a, high_b) - low_ab)
            defect = np.where(lipschitz & np.isfinite(smooth), np.minimum(smooth, crude), crude)
            ga, gb = round_down(low_a - defect), round_down(low_b - defect)
            chord = np.isfinite(ga) & np.isfinite(gb) & (0.5 * (ga + gb) > low_ab) & (np.abs(j) < self.near)
        return np.where(chord, ga, low_ab), np.where(chord, gb, low_ab)

    def cost_upper(self, cost: Cost, k: np.ndarray) -> np.ndarray:
        """Upper bound of the mean of L over cell k, second order where L is Lipschitz on the cell.

        With m the midpoint and L' in [d_lo, d_hi] on the cell, L(m + u) + L(m − u) − 2L(m) <=
        (d_hi − d_lo)·u for 0 <= u <= h/2, so the mean is at most L(m) + (d_hi − d_lo)·h/8 [derived].
        Cells where L is not proven Lipschitz fall back to the integral enclosure of
        :meth:`Grid1D.cost_upper` (piecewise for expressions, hence only first order)."""
        k = np.asarray(k, dtype=np.int64)
        a, b = self.left(k), self.right(k)
        m = self.center(k)
        _, at_mid = enclose(cost, m, m)
        with np.errstate(all="ignore"):
            dlo, dhi, lipschitz = cost.slopes(a, b)
            spread = round_up(round_up(0.125 * round_up(b - a)) * round_up(dhi - dlo))
            out = round_up(at_mid + spread)
        rest = ~(lipschitz & np.isfinite(out))
        if np.any(rest):  # a jump or an unbounded slope in the cell: the integral enclosure there
            out = np.array(out, dtype=float)
            out[rest] = super().cost_upper(cost, k[rest])
        return out

    def cost_lower(self, cost: Cost, k: np.ndarray) -> np.ndarray:
        """c_k = min(g_k(0), g_{k−1}(h)): the sample minorant at s_k (see the class docstring)."""
        k = np.asarray(k, dtype=np.int64)
        right, _ = self.minorant_ends(cost, k)
        _, left = self.minorant_ends(cost, k - 1)
        out = np.minimum(right, left)
        return np.where(np.isnan(out), -np.inf, out)

    def outside_min(self, cost: Cost, k_first: int, direction: int) -> float:
        """Lower bound of c_k for every k from ``k_first`` outwards: the c_k of the dual cells with
        chord minorants (|j| < ``near``) one by one, then the minimum of L beyond them."""
        k_first = int(k_first)
        if direction > 0:
            stop = max(k_first, self.near + 1)
            explicit = np.arange(k_first, stop)
            beyond = super().outside_min(cost, stop - 1, +1)  # L on [left(stop − 1), ∞) ⊇ the dual cells there
        else:
            stop = min(k_first, -self.near - 2)
            explicit = np.arange(stop + 1, k_first + 1)
            beyond = super().outside_min(cost, stop + 1, -1)
        values = [beyond]
        for i in range(0, explicit.size, 1 << 16):
            values.append(float(np.min(self.cost_lower(cost, explicit[i:i + (1 << 16)]))))
        return max(self.cost_floor(cost), min(values))

def _blocks(method: str, cost: Cost, a, b) -> tuple[np.ndarray, np.ndarray]:
    """``getattr(cost, method)(a, b)`` for an expression cost, ``ENCLOSURE_CHUNK`` elements at a time."""
    fn = getattr(cost, method)
    if getattr(cost, "kind", "expr") != "expr":
        return fn(a, b)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    if a.size <= ENCLOSURE_CHUNK:
        return fn(a, b)
    fa, fb = a.ravel(), b.ravel()
    lo, hi = np.empty(a.size), np.empty(a.size)
    for i in range(0, a.size, ENCLOSURE_CHUNK):
        j = slice(i, i + ENCLOSURE_CHUNK)
        lo[j], hi[j] = fn(fa[j], fb[j])
    return lo.reshape(a.shape), hi.reshape(a.shape)


def enclose(cost: Cost, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """``cost.enclose(lo, hi)`` in blocks of ``ENCLOSURE_CHUNK`` (same values, bounded memory)."""
    return _blocks("enclose", cost, lo, hi)


def integral(cost: Cost, a, b) -> tuple[np.ndarray, np.ndarray]:
    """``cost.integral(a, b)`` in blocks of ``ENCLOSURE_CHUNK`` (same values, bounded memory)."""
    return _blocks("integral", cost, a, b)


def monotone_cell_correction(grid: Grid1D, cost: Cost, k: np.ndarray) -> np.ndarray:
    """Second-order in-cell term for monotone densities on cells k ≥ 0 [derived].

    For a density f that is nonincreasing on [0, ∞) and a cost L nondecreasing there, on cell
    [t, t+h) the density is at least the next cell's average a_{k+1}, so

        ∫_cell L f ≥ a_{k+1}·∫_cell L + (m_k − a_{k+1} h)·L(t)
                   = m_k·L(t) + m_{k+1}·(mean_cell L − L(t)).

    This returns a lower bound of ``mean_cell L − L(t)`` (clipped at 0), the coefficient that the
    *next* cell's mass receives.  It is exact for densities that are flat across the two cells.
    """
    if grid.kind != "cells":
        return np.zeros(np.shape(k))
    mean_lo = grid.cell_mean_lower(cost, k)
    _, at_left_hi = grid.cost_at_left_edge(cost, k)
    with np.errstate(all="ignore"):
        corr = np.nextafter(mean_lo - at_left_hi, _DOWN)
    return np.where(np.isfinite(corr), np.maximum(corr, 0.0), 0.0)


# ------------------------------------------------------------------------------------------------
# the exactly-known 1-D law: window weights + periodic geometric tails, and its JSON form
# ------------------------------------------------------------------------------------------------
@dataclass
class LatticeMechanism:
    """A noise law on a 1-D lattice: window weights plus periodic geometric tails.

    The (unnormalised) weight of index k is ``weights[k − k_lo]`` inside the window; beyond it,
    ``right_gen[r]·β^m`` at k = k_hi − W + 1 + r + m·W and ``left_gen[r]·β^m`` at
    k = k_lo + r − m·W (m >= 1, 0 <= r < W).  Masses are weights / ``total``.  On cells, the
    density on cell k is mass/h (piecewise constant).
    """

    grid: Grid1D
    k_lo: int
    weights: np.ndarray
    beta: float
    left_gen: np.ndarray
    right_gen: np.ndarray
    total: float = field(default=math.nan)

    @property
    def k_hi(self) -> int:
        return self.k_lo + len(self.weights) - 1

    def weight(self, k: np.ndarray) -> np.ndarray:
        """Unnormalised weight at lattice indices k (vectorised, tails included)."""
        k = np.asarray(k, dtype=np.int64)
        W = self.grid.W
        out = np.zeros(k.shape, dtype=float)
        inside = (k >= self.k_lo) & (k <= self.k_hi)
        out[inside] = self.weights[k[inside] - self.k_lo]
        right = k > self.k_hi
        if np.any(right):
            off = k[right] - (self.k_hi - W + 1)
            m, r = np.divmod(off, W)
            out[right] = self.right_gen[r] * self.beta ** m.astype(float)
        left = k < self.k_lo
        if np.any(left):
            off = (self.k_lo + W - 1) - k[left]
            m, r = np.divmod(off, W)
            out[left] = self.left_gen[W - 1 - r] * self.beta ** m.astype(float)
        return out

    def mass(self, k: np.ndarray) -> np.ndarray:
        """Probability mass at indices k (of point k, or of cell k on the continuous domain)."""
        return self.weight(k) * self.grid.width(k) / self.total

    def density(self, k: np.ndarray) -> np.ndarray:
        """Probability density on cell k (the mass of point k on the integer lattice)."""
        return self.weight(k) / self.total

    def _edge_widths(self) -> tuple[np.ndarray, np.ndarray]:
        """Widths of the first and of the last period of the window (the tails' generators)."""
        W = self.grid.W
        return (self.grid.width(np.arange(self.k_lo, self.k_lo + W)),
                self.grid.width(np.arange(self.k_hi - W + 1, self.k_hi + 1)))

    def extended(self, periods: int = 2) -> tuple[int, np.ndarray]:
        """Window plus ``periods`` tail periods on each side: (first index, weights)."""
        W = self.grid.W
        k = np.arange(self.k_lo - periods * W, self.k_hi + periods * W + 1)
        return int(k[0]), self.weight(k)

    def tail_mass(self) -> float:
        """Normalised mass outside the window."""
        wl, wr = self._edge_widths()
        t = (float(np.sum(self.left_gen * wl)) + float(np.sum(self.right_gen * wr))) * self.beta / (1 - self.beta)
        return t / self.total


TAIL_RULE = (
    "index k lies in period q = k // steps_per_period at offset r = k % steps_per_period: the point k "
    "(lattice_pmf) or the cell [q*sensitivity + edges[r], q*sensitivity + edges[r+1]). "
    "weight(k) = weights[k-k_lo] inside the window; right_tail[r]*beta^m at "
    "k = k_lo+len(weights)-steps_per_period+r+m*steps_per_period and left_tail[r]*beta^m at "
    "k = k_lo+r-m*steps_per_period (m>=1); the probability of point k, or the density on cell k, "
    "is weight(k)/total"
)


def lattice_mechanism_to_dict(m: LatticeMechanism) -> dict[str, Any]:
    """The JSON form of a solver mechanism (``optmech solve --save``'s ``mechanism`` field)."""
    g = m.grid
    return {
        "kind": "lattice_pmf" if g.kind == "integer" else "piecewise_constant_density",
        "sensitivity": g.period,
        "steps_per_period": g.W,
        "edges": None if g.edges is None else g.edges.tolist(),
        "k_lo": m.k_lo,
        "weights": m.weights.tolist(),
        "beta": m.beta,
        "left_tail": m.left_gen.tolist(),
        "right_tail": m.right_gen.tolist(),
        "total": m.total,
        "tail_rule": TAIL_RULE,
    }


def _floats(d: dict, key: str) -> np.ndarray:
    try:
        a = np.asarray(d[key], dtype=float)
    except KeyError:
        raise SpecError(f"mechanism field {key!r} is missing") from None
    except (TypeError, ValueError):
        raise SpecError(f"mechanism field {key!r} must be a list of numbers") from None
    if a.ndim != 1 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise SpecError(f"mechanism field {key!r} must be a list of finite nonnegative numbers")
    return a


def lattice_mechanism_from_dict(d: dict) -> LatticeMechanism:
    """Rebuild (and validate) the mechanism saved by ``--save``."""
    if not isinstance(d, dict):
        raise SpecError("a mechanism must be a JSON object")
    kind = d.get("kind", d.get("name"))
    try:
        W = int(d["steps_per_period"])
        if W < 1 or W != d["steps_per_period"]:
            raise ValueError
        if kind == "lattice_pmf":
            grid = Grid1D.integer(W)
        elif kind == "piecewise_constant_density":
            edges = _floats(d, "edges")
            delta = float(d["sensitivity"])
            if len(edges) != W + 1 or edges[0] != 0.0 or edges[-1] != delta or np.any(np.diff(edges) <= 0):
                raise SpecError("mechanism edges must increase from 0 to the sensitivity, steps_per_period+1 of them")
            grid = Grid1D("cells", delta, W, edges)
        else:
            raise SpecError(f"unknown mechanism kind {kind!r} (lattice_pmf or piecewise_constant_density)")
        k_lo, beta = int(d["k_lo"]), float(d["beta"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"malformed mechanism: {type(exc).__name__} {exc}") from None
    weights, left, right = _floats(d, "weights"), _floats(d, "left_tail"), _floats(d, "right_tail")
    if len(left) != W or len(right) != W or len(weights) < W:
        raise SpecError("mechanism tails must have steps_per_period entries and the window at least as many")
    if not (0.0 <= beta < 1.0):
        raise SpecError(f"mechanism beta must be in [0, 1), got {beta!r}")
    m = LatticeMechanism(grid, k_lo, weights, beta, left, right)
    total = d.get("total")
    m.total = lattice_total(m) if total in (None, "nan") else float(total)
    return m


def lattice_total(m: LatticeMechanism) -> float:
    """Σ weights over the window plus the geometric tails' closed-form sums (cell widths included)."""
    wl, wr = m._edge_widths()
    tail = m.beta / (1.0 - m.beta) * (math.fsum(m.left_gen * wl) + math.fsum(m.right_gen * wr))
    return math.fsum(m.weights * m.grid.width(np.arange(m.k_lo, m.k_hi + 1))) + tail
