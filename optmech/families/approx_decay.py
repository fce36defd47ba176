r"""The periodic-decay path of the (ε, δ) family on ℤ: large sensitivities, both ends certified [derived].

:class:`optmech.families.approx.ApproxFamily` takes this path in 1-D on ℤ (not ℕ) for an even cost from
sensitivity ``DECAY_FROM`` on.  Each step solves the restricted LP of :mod:`optmech.problems.approx_decay`
(laws periodic with decay e^{−ε} per period, a free tail; its size does not grow with n =
ln(1 + (e^ε − 1)/(2δ))/ε) and certifies

* the upper end by the law's exact audit at every shift 1..Δ and its outward-rounded cost
  (:func:`optmech.families.approx.upper_from_pmf`), after mixing repair if the solver's tolerances left
  an excess; on a coarse level the law's node masses spread over blocks of k integers
  (:meth:`ApproxFamily.upper`, the audit then at every fine shift);
* the lower end by a dual of the *full* problem on ℤ built from the LP's duals and checked at every
  integer with outward rounding (:func:`optmech.certify_decay.decay_lower_bound`); on a coarse level that
  is the problem on the nodes kℤ with their proven node prices, a relaxation of V* (the coarse-to-fine
  argument of :mod:`optmech.families.approx`).

The steps.  The first level is the finest k (a divisor of Δ; k = 1 the exact problem) whose LP is predicted
to fit in ``FIRST_SHARE`` of the time left (``SECONDS_PER_ROW``, measured), keeping the largest
``START_SHIFT_SHARE`` of the shifts; coarse levels only for ``abs`` and ``square``, whose node prices have
explicit bounds far out (:func:`far_node_price`).  A step whose audited law exceeds δ at a dropped shift is
followed by the same LP with those shifts; one whose law keeps mass in the last half period of its tail, by a
longer tail; otherwise the next finer level that fits.  If the exact level's certificates do not meet the
target, the family continues on its per-point path (the structure is a guess: a wrong guess costs time, never
validity).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from optmech.mechanisms.approx.bounds import thm8_n

__all__ = ["DECAY_FROM", "DecaySize", "decay_lp_plan", "decay_plan_rows", "far_node_price", "first_level", "layout_for",
           "prepared_decay_lp", "tail_share"]

#: the path is taken from this sensitivity on (below it the per-point LP is exact within a second)
DECAY_FROM = 16
#: seconds per hockey-stick row of a decay LP, solve included (measured on the 2-core machine with rows from
#: x = −m on: 4.5 s for the 1.26e5 rows of Δ = 256 at ε = 0.1, δ = 0.01; 11 s for the 5.0e5 rows of Δ = 512 at
#: ε = 1, δ = 1e-8)
SECONDS_PER_ROW = 3.6e-5
#: the first level's predicted seconds may take this share of the time left
FIRST_SHARE = 0.8
#: the share of the shifts (the largest) in the first LP of a level: the budget duals of the others were zero
#: in every case measured (the multipliers sit on the shifts above about 0.65 m)
START_SHIFT_SHARE = 0.4
#: coarse levels go no coarser than this node sensitivity m = Δ/k
MIN_NODE_SENSITIVITY = 16
#: a law with more than this share of its mass in the last half period of its tail gets a longer tail
TAIL_MASS = 1e-12


@dataclasses.dataclass(frozen=True)
class DecaySize:
    """One decay step: coarse factor k (1: exact), periods K, tail W (in nodes) and the kept shifts."""

    factor: int
    periods: int
    tail: int
    shifts: tuple[int, ...]
    #: noise on ℕ: the one-sided layout of :func:`onesided_layout_parts` (``periods`` = ⌊n⌋)
    one_sided: bool = False

    def describe(self, sensitivity: int) -> dict:
        m = sensitivity // self.factor
        if self.one_sided:
            return {"layout": "one_sided_decay", "periods": self.periods, "tail": self.tail,
                    "support": onesided_layout_parts(self.periods, self.tail, m)[-1], "shifts_kept": len(self.shifts)}
        out = {"layout": "periodic_decay", "periods": self.periods, "tail": self.tail,
               "half_width": (self.periods * m + self.tail) * self.factor, "shifts_kept": len(self.shifts)}
        if self.factor > 1:
            out.update(coarse_factor=self.factor, coarse_sensitivity=m)
        return out


def layout_for(epsilon: float, delta: float, m: int) -> tuple[int, int]:
    """(K, W) for node sensitivity m: K = ⌊n⌋ periods and a tail of 2m points, so the family's support
    reaches (⌊n⌋ + 2)m >= (n + 1)m, past the end ≈ m(n + 0.3) of the optima measured."""
    n = thm8_n(epsilon, delta)
    return max(1, int(math.floor(n))), 2 * m


def kept_shifts(m: int, share: float = START_SHIFT_SHARE, one_sided: bool = False) -> tuple[int, ...]:
    """The largest ⌈share·m⌉ shift magnitudes (both signs on ℕ, where the law is not symmetric)."""
    keep = max(1, math.ceil(m * share))
    pos = tuple(range(m - keep + 1, m + 1))
    return tuple(-v for v in reversed(pos)) + pos if one_sided else pos


def onesided_layout_parts(periods: int, tail: int, m: int) -> tuple[int, int, int, int, int]:
    """(growth, centre, decay, tail, support) of the one-sided layout with ``periods`` = ⌊n⌋: ⌊n⌋ − 1 growth
    periods from 0, a centre block of 2m points, ⌊n⌋ − 2 decay periods and the tail (3m by default): the optima
    measured on ℕ grow by e^ε per period up to about n·m and decay after it, ending near (2n + 0.3)m."""
    G, D = max(1, periods - 1), max(1, periods - 2)
    return G, 2 * m, D, tail, (G + D) * m + 2 * m + tail


def decay_plan_rows(m: int, tail: int, kept: int) -> int:
    """Rows of the decay LP with rows from x = −m on (:func:`optmech.problems.approx_decay.decay_rows`)."""
    from optmech.problems.approx_decay import decay_rows

    return decay_rows(m, 0, tail, kept, first_point=-m)


def predicted_seconds(m: int, one_sided: bool = False) -> float:
    """Predicted seconds of one decay step at node sensitivity m (the default layout and shift share); on ℕ
    about 2m + 2m + 3m + m/2 rows per signed shift (measured: 29 s for the 4.5e5 rows of Δ = 256)."""
    if one_sided:
        return 1.4 * SECONDS_PER_ROW * len(kept_shifts(m, one_sided=True)) * (7 * m + m // 2)
    return SECONDS_PER_ROW * decay_plan_rows(m, 2 * m, len(kept_shifts(m)))


def first_level(sensitivity: int, seconds: float, coarse_ok: bool, one_sided: bool = False) -> int | None:
    """The finest coarse factor k (a divisor of Δ; 1 first) whose step is predicted to fit in ``seconds``;
    None when none does (or only coarse ones do and ``coarse_ok`` is false)."""
    D = int(sensitivity)
    for k in (d for d in range(1, D + 1) if D % d == 0):
        if k > 1 and (not coarse_ok or D // k < MIN_NODE_SENSITIVITY):
            return None
        if predicted_seconds(D // k, one_sided) <= seconds:
            return k
    return None


def finer_level(sensitivity: int, k: int, seconds: float) -> int:
    """The finest divisor k' < k of Δ predicted to fit in ``seconds`` (else the next divisor below k)."""
    D = int(sensitivity)
    below = [d for d in range(1, k) if D % d == 0]
    fits = [d for d in below if predicted_seconds(D // d) <= seconds]
    return min(fits) if fits else max(below)


def decay_lp_plan(rows: int, masses: int, kept: int, audit_terms: float, extra_bytes: float = 0.0):
    """The :class:`~optmech.budget.LPPlan` of a decay LP with ``rows`` hockey-stick rows, ``masses`` free masses
    and ``kept`` shifts, solved by ``hockey_ipm``; ``audit_terms`` (the audit's hockey-stick terms) set the
    certification's predicted seconds."""
    from optmech.budget import LPPlan

    return LPPlan(rows=1 + rows + kept, cols=masses + 1 + rows, nonzeros=4 * rows + 2 * masses,
                  builder="hockey_stick_decay", extra_bytes=extra_bytes, solver="hockey_ipm", build_seconds=2e-6 * rows,
                  certify_seconds=0.1 + 2e-8 * audit_terms)


def prepared_decay_lp(dlp, budget: float):
    """The decay LP as solved: the hockey-stick budget set to ``budget`` (δ less the family's slack; the duals
    are certified against δ) and its masses scaled by a power of two near the support's size
    (:mod:`optmech.solvers.base`), so that the solver's absolute tolerances do not add up over the rows."""
    lp = dlp.lp
    ru = lp.row_upper.copy()
    ru[lp.row_blocks["budget"]] = budget
    scale = 2.0 ** math.ceil(math.log2(2 * dlp.R + 1))
    return dataclasses.replace(lp, row_upper=ru, meta=dict(lp.meta, solve_scale=scale))


def tail_share(dlp, x: np.ndarray) -> float:
    """The share of the decay law's mass in the last half period of its tail (both ends when symmetric): a law
    that needs it gets a longer tail."""
    p = dlp.layout.pmf(x[:dlp.layout.columns])
    half = max(1, dlp.layout.sensitivity // 2)
    tot = math.fsum(p)
    ends = math.fsum(p[-half:]) + (0.0 if dlp.layout.one_sided else math.fsum(p[:half]))
    return ends / tot if tot > 0 else 0.0


def coarse_allowed(cost) -> bool:
    """Coarse decay levels need a proven price far out (:func:`far_node_price`): |x| and x² only."""
    return getattr(cost, "kind", "") in ("abs", "square")


def far_node_price(nodes, limit: int) -> float:
    r"""A proven lower bound of the node prices L̂(z) = L_lo(x_z) − max(e_{z−1}, e_z) at every |z| > limit
    (:class:`optmech.problems.approx_cells.NodeCosts`), for |x| and x² [derived]: the node x_z = z·h is
    an odd function of z, so the prices are even; for |x| every segment between nodes lies on one side of 0,
    where |x| is linear and its chord error is 0, so L̂(z) = L_lo(x_z), nondecreasing in |z|; for x² the chord
    error of any segment of length h is h²/4 (NodeCosts subtracts that bound up to its own rounding), so
    L̂(z) >= L_lo(x_z) − h² with room to spare, and L_lo(x_z) is nondecreasing in |z|.  Both read the
    enclosure at z = limit + 1; for x² h_hi² (rounded up) is subtracted."""
    from optmech.costs.interval import round_down, round_up
    from optmech.problems.approx_cells import node_interval
    from optmech.problems.lattice import enclose

    if nodes.cost.kind == "abs":
        return float(nodes.lower(np.array([limit + 1]))[0])
    a, b = node_interval(np.array([limit + 1]), nodes.sensitivity, nodes.n)
    lo, _ = enclose(nodes.cost, a, b)
    h = float(nodes.h_hi)
    return float(round_down(float(lo[0]) - float(round_up(h * h))))
