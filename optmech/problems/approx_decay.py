r"""The (ε, δ) LP on ℤ restricted to periodic-decay laws: one column per residue, not per point [derived].

The optimum of the (ε, δ) LP on ℤ [GV13, (18)] for an even cost (|x|, x²) is periodic with decay from
the centre on: p(x + Δ) = e^{−ε} p(x) for 0 <= x < T − O(Δ), with a few plateaus per period and a
truncation near T ≈ Δ(n + 1), n = ln(1 + (e^ε − 1)/(2δ))/ε [GV13, (58)–(60)] (measured at Δ <= 64 to the
solver's precision; nothing here assumes it: the law below is audited and the lower bound is a dual
certificate checked on the whole of ℤ, :mod:`optmech.certify_decay`).  This module builds the LP over
the laws of that shape, whose size does not grow with n.

Layout.  For sensitivity m (Δ, or Δ/k on a coarse lattice), K periods and a tail of W points, with
b = e^{−ε}, a law of the family is

.. math::
   p(x) = b^{\lfloor |x|/m \rfloor} u_{|x| \bmod m} \quad (|x| < Km), \qquad
   p(x) = w_{|x| - Km} \quad (Km <= |x| < Km + W), \qquad p(x) = 0 \text{ beyond},

with columns u_0..u_{m−1}, w_0..w_{W−1} >= 0 (:class:`DecayLayout`).  Every point x with p(x) possibly
positive is p(x) = b^{k(x)}·v_{c(x)} for one column c(x) and exponent k(x) (k = 0 in the tail).

Grouping identity.  For a shift s, the hockey-stick term of x is
(p(x) − e^ε p(x + s))_+ = b^{k(x)} (v_{c(x)} − e^ε b^{k(x+s) − k(x)} v_{c(x+s)})_+ (the second column
absent, coefficient 0, where p(x + s) = 0 by the layout).  So all points x with the same key
(c(x), c(x + s), k(x + s) − k(x)) have the *same* linear form inside (·)_+, up to the positive factor
b^{k(x)}, and Σ over the group is ω·(form)_+ with ω = Σ b^{k(x)}.  The LP has one epigraph row per
shift and key, form − t <= 0, and the budget Σ ω t <= δ per shift.  Points whose form is identically
zero (same column and exponent difference 1, at s = m: b·e^ε = 1) contribute nothing and have no row;
points x with p(x) = 0 by the layout have a form −e^ε p(x + s) <= 0 and no row either.

Exactness.  Given columns v >= 0, the LP's rows with t at their least values hold iff, for every kept
shift, Σ_key ω (form)_+ = Σ_x (p(x) − e^ε p(x + s))_+ <= δ: the rows are the law's own hockey-stick
sums, so the LP's optimum is the cheapest law of the family that is (ε, δ)-DP at the kept shifts (by
the shift ±s symmetry of an even law, the shifts −s are the shifts s).  It is used as a *candidate*:
the upper bound is the law's exact audit at every shift and its outward-rounded cost
(:func:`optmech.families.approx.upper_from_pmf`); and the lower bound is not this LP's dual value but
a dual of the full problem built from it (:mod:`optmech.certify_decay`).

Size.  Per kept shift about 2m keys in the periodic zones (one per residue and side), at most m where
x and x + s straddle 0, and 2W in the tails: about (3m + 2W)·(kept shifts) rows and m + W + 1 columns
of masses, independent of n (the per-point LP has 2Δ(n + 1)·Δ rows).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram
from optmech.problems.approx import point_costs

__all__ = ["DecayLP", "DecayLayout", "OneSidedLayout", "build_decay", "build_decay_onesided", "decay_rows"]

_U = 2.0**-53


@dataclasses.dataclass(frozen=True)
class DecayLayout:
    """Where each point's mass comes from (module docstring): K periods of m residues, then W tail points.

    >>> lay = DecayLayout(sensitivity=2, periods=2, tail=3, epsilon=math.log(2.0))
    >>> lay.support_half_width, lay.columns
    (7, 5)
    >>> col, k = lay.column_of(np.arange(-1, 8))
    >>> col.tolist(), k.tolist()
    ([1, 0, 1, 0, 1, 2, 3, 4, -1], [0, 0, 0, 1, 1, 0, 0, 0, 0])
    >>> np.round(lay.pmf(np.array([4.0, 4.0, 1.0, 1.0, 1.0]))[6:], 12).tolist()   # x = 0..6 (b = 1/2)
    [4.0, 4.0, 2.0, 2.0, 1.0, 1.0, 1.0]
    """

    sensitivity: int
    periods: int
    tail: int
    epsilon: float

    @property
    def support_half_width(self) -> int:
        """R: every law of the family is 0 at |x| >= R."""
        return self.periods * self.sensitivity + self.tail

    @property
    def columns(self) -> int:
        return self.sensitivity + self.tail

    one_sided = False

    @property
    def max_exponent(self) -> int:
        return self.periods

    def points(self) -> np.ndarray:
        """The points that may carry mass: |x| < R."""
        return np.arange(-(self.support_half_width - 1), self.support_half_width)

    @property
    def ratio(self) -> float:
        """b = e^{−ε} as a float (the LP's and the pmf's, not a certified value: the law is audited)."""
        return math.exp(-self.epsilon)

    def column_of(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(column, exponent k) of each integer x: p(x) = b^k·v[column]; column −1 where p(x) = 0."""
        a = np.abs(np.asarray(x, dtype=np.int64))
        m, Km = self.sensitivity, self.periods * self.sensitivity
        col = np.full(a.shape, -1, dtype=np.int64)
        k = np.zeros(a.shape, dtype=np.int64)
        per = a < Km
        col[per], k[per] = a[per] % m, a[per] // m
        tail = ~per & (a < Km + self.tail)
        col[tail] = m + a[tail] - Km
        return col, k

    def pmf(self, values: np.ndarray) -> np.ndarray:
        """The law's masses on [−(R − 1), R − 1] (index x + R − 1), not normalised.  Each period's factor is
        b·(1 + 8u) (u = 2^−53) instead of b, so that p(x) <= e^ε p(x + m) holds in floating point in the
        periodic zone (a ratio of exactly b would leave rounding-level positive hockey-stick terms at the shift
        m, which at δ = 1e-8 would exceed the audit's margin); the cost of the factor is about 1e-14 relative."""
        return _pmf(self, values)


def _pmf(layout, values: np.ndarray) -> np.ndarray:
    v = np.maximum(np.asarray(values, dtype=float), 0.0)
    col, k = layout.column_of(layout.points())
    factor = (layout.ratio * (1.0 + 8.0 * _U)) ** np.arange(layout.max_exponent + 1, dtype=float)
    return np.where(col >= 0, factor[k] * v[np.maximum(col, 0)], 0.0)


@dataclasses.dataclass(frozen=True)
class OneSidedLayout:
    """Noise on ℕ (module docstring, One-sided layout): a growth zone of ``growth`` periods from 0, a free centre
    block of ``centre`` points, a decay zone of ``decay`` periods and a free tail of ``tail`` points.

    >>> lay = OneSidedLayout(sensitivity=2, growth=2, centre=1, decay=2, tail=1, epsilon=math.log(2.0))
    >>> lay.support_half_width, lay.columns
    (10, 6)
    >>> col, k = lay.column_of(np.arange(-1, 11))
    >>> col.tolist()
    [-1, 0, 1, 0, 1, 4, 2, 3, 2, 3, 5, -1]
    >>> k.tolist()
    [0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    >>> np.round(lay.pmf(np.array([2.0, 2.0, 4.0, 4.0, 8.0, 1.0])), 12).tolist()   # x = 0..9 (b = 1/2)
    [1.0, 1.0, 2.0, 2.0, 8.0, 4.0, 4.0, 2.0, 2.0, 1.0]
    """

    sensitivity: int
    growth: int
    centre: int
    decay: int
    tail: int
    epsilon: float

    one_sided = True

    @property
    def decay_start(self) -> int:
        return self.growth * self.sensitivity + self.centre

    @property
    def support_half_width(self) -> int:
        """R: every law of the family is 0 outside [0, R)."""
        return self.decay_start + self.decay * self.sensitivity + self.tail

    @property
    def columns(self) -> int:
        return 2 * self.sensitivity + self.centre + self.tail

    @property
    def max_exponent(self) -> int:
        return max(self.growth, self.decay)

    @property
    def ratio(self) -> float:
        return math.exp(-self.epsilon)

    def points(self) -> np.ndarray:
        return np.arange(0, self.support_half_width)

    def column_of(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(column, exponent k) of each integer x: p(x) = b^k·v[column]; column −1 where p(x) = 0.  Columns:
        the growth pattern (0..m−1, p(x) = b^{G−1−⌊x/m⌋} v_{x mod m}), the decay pattern (m..2m−1), the centre
        block, the tail block."""
        x = np.asarray(x, dtype=np.int64)
        m, G, S = self.sensitivity, self.growth, self.decay_start
        col = np.full(x.shape, -1, dtype=np.int64)
        k = np.zeros(x.shape, dtype=np.int64)
        g = (x >= 0) & (x < G * m)
        col[g], k[g] = x[g] % m, G - 1 - x[g] // m
        c = (x >= G * m) & (x < S)
        col[c] = 2 * m + x[c] - G * m
        d = (x >= S) & (x < S + self.decay * m)
        col[d], k[d] = m + (x[d] - S) % m, (x[d] - S) // m
        t = (x >= S + self.decay * m) & (x < self.support_half_width)
        col[t] = 2 * m + self.centre + x[t] - S - self.decay * m
        return col, k

    def pmf(self, values: np.ndarray) -> np.ndarray:
        """The law's masses on [0, R), not normalised (the ratio b·(1 + 8u) per period, as for
        :meth:`DecayLayout.pmf`)."""
        return _pmf(self, values)


@dataclasses.dataclass
class DecayLP:
    """The restricted LP (module docstring) and what maps its rows back to points and shifts.

    ``keys[i]`` are shift ``shifts[i]``'s sorted row keys (:meth:`key_of`), its rows
    ``row_start[i] .. row_start[i] + len(keys[i]) − 1`` of the hockey-stick block; ``omega`` the budget
    weights of all hockey-stick rows in order."""

    lp: LinearProgram
    layout: DecayLayout
    delta: float
    shifts: np.ndarray
    keys: list
    row_start: np.ndarray
    omega: np.ndarray
    #: rows only for the points x >= first_point (None: every point; a relaxation of the family otherwise)
    first_point: int | None = None
    variant: str = "hockey_stick_decay"

    @property
    def R(self) -> int:
        return self.layout.support_half_width

    def key_of(self, s: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For shift s and points x: each point's row key (−1 where it has no row), and b^{k(x)}, and
        whether its form is identically zero (module docstring)."""
        lay = self.layout
        ca, ka = lay.column_of(x)
        cb, kb = lay.column_of(x + s)
        n_col = lay.columns + 1
        dk = np.where(cb >= 0, kb - ka, 0)
        span = 2 * lay.max_exponent + 3
        zero = (ca >= 0) & (ca == cb) & (kb - ka == 1)
        live = (ca >= 0) & ~zero
        key = np.where(live, (ca * n_col + (cb + 1)) * span + (dk + lay.max_exponent + 1), -1)
        return key, ka, zero

    def points(self) -> np.ndarray:
        """The points x that may carry mass (|x| < R; on ℕ 0 <= x < R)."""
        return self.layout.points()

    def row_of(self, i: int, x: np.ndarray) -> np.ndarray:
        """The hockey-stick row (index in its block) of each point x for the i-th kept shift, −1 where the
        point has none (no form, a vanishing form, or a point before ``first_point``)."""
        key, _, _ = self.key_of(int(self.shifts[i]), x)
        if self.first_point is not None:
            key = np.where(x >= self.first_point, key, -1)
        keys = self.keys[i]
        pos = np.searchsorted(keys, key)
        pos = np.minimum(pos, max(keys.size - 1, 0))
        found = (key >= 0) & (keys.size > 0) & (keys[pos] == key) if keys.size else np.zeros(x.shape, bool)
        return np.where(found, self.row_start[i] + pos, -1)


def build_decay(cost, epsilon: float, delta: float, sensitivity: int, periods: int, tail: int, *,
                shifts=None, prices=None, first_point: int | None = None) -> DecayLP:
    """The restricted LP of the module docstring for (ε, δ), sensitivity m = ``sensitivity``, K =
    ``periods`` and W = ``tail``, keeping the shifts ``shifts`` (default 1..m) and the rows of the points
    x >= ``first_point`` (default all: fewer rows make a relaxation of the family, whose law the audit
    then decides on).

    ``prices(x)``: the price of the points x in the objective (default: the cost's lower enclosure; a coarse
    level passes its node prices).  The objective only steers the candidate: neither certificate reads it.
    Columns: p (the m + W masses u, w), far (fixed at 0: the family has no far mass; the column keeps
    the block layout of :mod:`optmech.solvers.hockey_ipm`), t (one per row).  Rows: normalisation,
    hockey_stick, budget."""
    m, K, W = int(sensitivity), int(periods), int(tail)
    if m < 1 or K < 1 or W < 1 or not epsilon > 0 or not 0 < delta < 1:
        raise SpecError("build_decay needs sensitivity, periods and tail >= 1, epsilon > 0 and 0 < delta < 1")
    lay = DecayLayout(m, K, W, float(epsilon))
    kept = np.arange(1, m + 1) if shifts is None else np.unique(np.asarray(shifts, dtype=np.int64))
    if kept.size == 0 or kept[0] < 1 or kept[-1] > m:
        raise SpecError(f"build_decay: shifts must lie in 1..{m}")
    return _build(cost, lay, delta, kept, prices, first_point)


def build_decay_onesided(cost, epsilon: float, delta: float, layout: OneSidedLayout, *, shifts=None,
                         prices=None) -> DecayLP:
    """The LP of the module docstring over the one-sided laws of ``layout`` (noise on ℕ), with the signed shifts
    ``shifts`` (default ±1..±m; both signs are needed: the law is not symmetric)."""
    m = layout.sensitivity
    if min(m, layout.growth, layout.decay, layout.centre, layout.tail) < 1 or not epsilon > 0 or not 0 < delta < 1:
        raise SpecError("build_decay_onesided needs every part of the layout >= 1, epsilon > 0 and 0 < delta < 1")
    if shifts is None:
        shifts = np.concatenate([np.arange(-m, 0), np.arange(1, m + 1)])
    kept = np.unique(np.asarray(shifts, dtype=np.int64))
    if kept.size == 0 or np.any(kept == 0) or np.any(np.abs(kept) > m):
        raise SpecError(f"build_decay_onesided: shifts must lie in ±1..±{m}")
    return _build(cost, layout, delta, kept, prices, None)


def _build(cost, lay, delta: float, kept: np.ndarray, prices, first_point) -> DecayLP:
    K = lay.max_exponent
    epsilon = lay.epsilon
    b, E = lay.ratio, math.exp(epsilon)
    x = lay.points()
    n_col = lay.columns + 1
    span = 2 * K + 3
    keys, starts, omegas, rows_a, rows_b, coef_b, groups = [], [], [], [], [], [], []
    dlp = DecayLP(None, lay, float(delta), kept, keys, None, None, first_point)  # type: ignore[arg-type]
    bk = b ** np.arange(K + 1, dtype=float)
    start = 0
    for s in kept:
        key, ka, _ = dlp.key_of(int(s), x)
        live = key >= 0
        if first_point is not None:
            live &= x >= first_point
        uk, inv = np.unique(key[live], return_inverse=True)
        keys.append(uk)
        starts.append(start)
        omegas.append(np.bincount(inv, weights=bk[ka[live]], minlength=uk.size))
        dk = uk % span - (K + 1)
        cb = (uk // span) % n_col - 1
        ca = uk // span // n_col
        rows_a.append(ca)
        rows_b.append(cb)
        coef_b.append(np.where(cb >= 0, -E * b ** dk.astype(float), 0.0))
        groups.append(np.full(uk.size, len(groups)))
        start += uk.size
    T = start
    ca, cb, cbv = np.concatenate(rows_a), np.concatenate(rows_b), np.concatenate(coef_b)
    omega, group = np.concatenate(omegas), np.concatenate(groups)
    n_p = lay.columns
    col_far, t0 = n_p, n_p + 1
    r = np.arange(T)
    both = cb >= 0
    same = both & (ca == cb)  # one column: the coefficients add up (1 − e^ε b^dk)
    two = both & ~same
    rows = np.concatenate([r, r[two], r]) + 1
    cols = np.concatenate([ca, cb[two], t0 + r])
    vals = np.concatenate([1.0 + np.where(same, cbv, 0.0), cbv[two], -np.ones(T)])
    H = sp.csr_array((vals, (rows, cols)), shape=(1 + T + len(kept), t0 + T))
    # normalisation and objective: Σ over the points of b^k·v[col]
    col, k = lay.column_of(x)
    a0 = np.bincount(col, weights=bk[k], minlength=n_p)
    px = prices(x) if prices is not None else point_costs(cost, x[:, None])[0]
    px = np.asarray(px, dtype=float)
    if not np.all(np.isfinite(px)):
        raise SpecError("the cost cannot be bounded at the points of the decay layout (an enclosure is infinite)")
    c_p = np.bincount(col, weights=bk[k] * px, minlength=n_p)
    norm = sp.csr_array((np.append(a0, 1.0), (np.zeros(n_p + 1, dtype=np.int64), np.arange(n_p + 1))),
                        shape=(1 + T + len(kept), t0 + T))
    budget = sp.csr_array((omega, (1 + T + group, t0 + r)), shape=(1 + T + len(kept), t0 + T))
    A = sp.csc_array(norm + H + budget)
    c = np.concatenate([c_p, [0.0], np.zeros(T)])
    row_lower = np.concatenate([[1.0], np.full(T + len(kept), -np.inf)])
    row_upper = np.concatenate([[1.0], np.zeros(T), np.full(len(kept), float(delta))])
    col_upper = np.full(t0 + T, 1e30)
    col_upper[col_far] = 0.0
    lp = LinearProgram(
        c=c, A=A, row_lower=row_lower, row_upper=row_upper, col_lower=np.zeros(t0 + T), col_upper=col_upper,
        row_blocks={"normalisation": slice(0, 1), "hockey_stick": slice(1, 1 + T), "budget": slice(1 + T, 1 + T + len(kept))},
        col_blocks={"p": slice(0, n_p), "far": slice(col_far, col_far + 1), "t": slice(t0, t0 + T)},
        meta={"builder": "hockey_stick_decay", "sensitivity": lay.sensitivity, "layout": dataclasses.asdict(lay),
              "delta": float(delta), "shifts_kept": int(len(kept))},
    )
    dlp.lp, dlp.row_start, dlp.omega = lp, np.asarray(starts, dtype=np.int64), omega
    return dlp


def decay_rows(sensitivity: int, periods: int, tail: int, kept: int, *, first_point: int | None = None) -> int:
    """An estimate of the LP's hockey-stick rows (module docstring, Size) for the memory and time plan: per
    kept shift m keys on the positive periodic zone, W on the positive tail, and the points from
    ``first_point`` up to 0 (all 2m + W of the negative side when None), with a quarter period to spare."""
    m, W = int(sensitivity), int(tail)
    negative = m + W if first_point is None else min(-int(first_point), m + W)
    return int(kept) * (m + W + negative + m // 4 + 4)
