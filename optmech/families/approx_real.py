"""The (ε, δ)-DP family on ℝ (1-D): the lattice LP of :mod:`optmech.problems.approx_cells`.

A size is ``(n, N, shifts)``: n cells per sensitivity (h = Δ/n), the inner half-width N in nodes
and the shift magnitudes 1 <= m <= n whose hockey-stick rows the LP keeps.  Each step builds the
integer (ε, δ) relaxation with sensitivity n whose node prices are those of the randomised-rounding
relaxation (:class:`~optmech.problems.approx_cells.NodeCosts`); its repaired dual is a certified
lower bound on V*(ℝ).

* **Row generation.**  Dropping every row of a shift only enlarges the relaxation's feasible set, so
  an LP that keeps some shifts is still a relaxation and its dual a certified lower bound.  The
  first resolution keeps all n shifts; a finer one starts from the shifts that bound the previous
  optimum (nonzero budget duals or an audit at δ), mapped to the finer grid; a step whose primal
  fails the audit at a dropped shift is followed by the same LP with those shifts added.
* **δ slack.**  The LP is solved with the budget δ − s (s = min(δ/1000, 2e-9), doubled after a
  step whose audit still needs a repair), so that the primal passes the exact audit at δ without
  the mixing repair; the lower bound evaluates the same duals against the LP with the budget δ
  (weak duality holds for any dual-feasible multipliers), losing s·Σ|y_budget| at most.
* **Outward rows.**  For a cost proven even and nondecreasing in |x|, the per-point LPs keep, of each kept
  shift, only the rows (v, x) with |x + v| >= |x| (:mod:`optmech.problems.approx`, "Outward rows"): still a
  relaxation whatever the cost, with about half the rows; the monotonicity only decides where it is used (for
  a cost that falls with |x| somewhere the relaxation uses the dropped rows).  A step whose primal exceeds δ at a kept shift (which only the dropped rows allow) is followed by
  the same LP with every row, and every later LP keeps them.
* **Polished duals.**  Before they certify, the duals go through :func:`optmech.certify.polish_row_duals`,
  which re-optimises the multipliers of the hockey-stick rows touching the columns an interior point left
  short (its first round always, further rounds within ``POLISH_SHARE`` of the LP's seconds); any duals
  certify, so this only moves the bound up.
* **Upper bounds.**  The primal, read as the density q_k/h on the centred cells, is audited for
  every integer shift 0 < |m| <= n (the audit of every real shift |t| <= Δ, by the linearity (1)
  of that module's docstring) and priced by rigorous upper bounds of the cost's mean on each cell.
  When the centre cell carries most of the bracket's width (a kink at 0, as for |x|: its mean
  costs (h/4)·q_0 more than the node price), a second candidate LP on the aligned cells
  [kh, (k+1)h) (:class:`~optmech.problems.approx_cells.AlignedCells`) proposes masses that are
  audited and priced the same way; it is not a relaxation and serves the upper bound only.  Its LP
  has one more column, a spike at 0 (:func:`with_spike`): at large δ the optimum puts an atom of
  mass about δ there (ε = 5, δ = 1e-2: the node LP's mass at 0 exceeds its neighbours' by about δ,
  measured), which cells of width h smear.  The spike's law is audited and priced by
  :func:`spiked_upper` (its docstring derives H_t <= a + (1 − a)·H_t(cells)).

The loop widens the window while the relaxation uses its outer layer or far mass, and otherwise
refines the cells by the factor the O(h²) width of the bracket asks for.

**Resolutions that put the step on a node.**  The relaxation's loss depends on where the optimum's
steps fall among the nodes, not only on h: for |x| at ε = 5, δ = 1e-6 it is 1.7e-2 at n = 32 and
3.9e-3 at n = 27 (measured; the staircase's step γ*·Δ = 0.0759Δ lies 0.43 and 0.05 cells from a
node).  Where the cost's ε-DP staircase has a step γ* ∈ (0, 1) ([Geng13, Thm 2.4];
:func:`staircase_breakpoint`), the first resolution is the one in FIRST_CELLS..2·FIRST_CELLS that
puts γ*·Δ nearest a node, and each refinement picks, among the resolutions up to ALIGN_REACH
times the one the O(h²) gap asks for whose LP is predicted to fit the time left, the one whose
node lies nearest γ*·Δ (:meth:`ApproxRealFamily._aligned_next`).  This is a heuristic that proposes sizes; every
step's bound is certified whatever n is, and the bracket keeps the best of them (a resolution
that is not a multiple of the last may be looser than it).  The aligned-cell candidate LP is
solved by the profile's general attempts (builder name ``hockey_stick_aligned``): the structured
interior point stopped far from its optimum (measured).

**The periodic-decay path** (costs ``abs`` and ``square``, ε > 0).  The relaxation above is the integer
problem with sensitivity n and the node prices L̂; so is the coarse level of the integer family, and the
periodic-decay machinery of issue 37 applies to it unchanged: the LP over periodic-decay laws
(:mod:`optmech.problems.approx_decay`, its size independent of ln(1/δ)) proposes a law and multipliers;
the lower end is a dual of the *whole* node problem on ℤ built from them and checked at every node with
outward rounding (:func:`optmech.certify_decay.decay_lower_bound`, with ``prices`` = L̂ and the proven far
price :func:`optmech.families.approx_decay.far_node_price`), so it is a certified lower bound on V*(ℝ) by
the rounding argument above; the upper end is the law read as the centred-cell density, audited and priced
as above.  The first step has ``DECAY_FIRST_CELLS`` cells per sensitivity; the next ones refine by the
factor the O(h²) gap asks for while the predicted time fits.  Where the dual does not extend (its certified
value more than ``DECAY_FAILED_GAP`` below the LP's objective; at ε = 5 for ``abs``, measured), the family
goes on with the per-point LP above, keeping the decay law as an upper end.  The structure is a guess that
proposes; the certificates decide.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from optmech.budget import TIME_SAFETY, LPPlan, Pace, gib
from optmech.errors import SpecError
from optmech.families.approx import audit_record, closed_form_uppers, outward_mean, reference_values, upper_from_pmf
from optmech.certify import dual_lower_bound, polish_row_duals, relative_gap
from optmech.certify_decay import decay_lower_bound
from optmech.families.approx_decay import (TAIL_MASS, DecaySize, coarse_allowed, decay_lp_plan, decay_plan_rows,
                                           far_node_price, kept_shifts, layout_for, predicted_seconds,
                                           prepared_decay_lp, tail_share)
from optmech.problems.approx_decay import DecayLP, build_decay
from optmech.families.base import Built, Step, Stop
from optmech.mechanisms.approx.bounds import thm8_n
from optmech.problems.approx import build_approx, estimate_size
from optmech.problems.approx_cells import (AlignedCells, NodeCosts, aligned_cell_mean_upper, aligned_cells_law,
                                           cell_mean_upper, cells_law, spike_steps, spiked_cells_law)
from optmech.lp import LinearProgram
from optmech.problems.lattice import Grid1D
from optmech.result import ReferenceValue

#: Cells per sensitivity of the first LP (``--resolution`` overrides it); with a staircase breakpoint, the
#: resolution in FIRST_CELLS..2·FIRST_CELLS that puts it nearest a node (:func:`aligned_resolution`).
FIRST_CELLS = 8
#: A refinement asks for about f·n cells; with a breakpoint it may take any resolution from n + 1 to
#: ALIGN_REACH·f·n (:meth:`ApproxRealFamily._aligned_next`).
ALIGN_REACH = 1.3
#: A refinement that the O(h²) width predicts to reach the target gap is preferred: the resolutions from
#: ALIGN_LOW·k to ALIGN_REACH·k, k = n·(gap/(TARGET_MARGIN·target))^{1/2}, when one of them is predicted to fit
#: (:meth:`ApproxRealFamily._aligned_next`); the larger ones only spend time once the target is within reach.
ALIGN_LOW, TARGET_MARGIN = 0.85, 0.7
#: Offsets below this many cells count as equal when resolutions are compared (the measured losses stop
#: shrinking there).
ALIGN_OFFSET_FLOOR = 0.005
#: A refinement's window: 1.1 times the reach of the last law's masses above REACH_MASS times its largest, plus
#: REACH_MARGIN sensitivities.  Any window is a relaxation (far mass, edge rows) and the spill check widens it
#: again where the relaxation uses its layer; smaller windows only make the LPs smaller.  With 1e-7 and 1 (before
#: 1e-15 and 1.5: the interior point's masses are nowhere exactly 0) the ε = 5 rows shrank by a third and the
#: gaps stayed or fell (|x|, δ = 1e-6: 9.3e-5 in 9.9 s against 9.8e-5 in 14 s; measured).
REACH_MASS, REACH_MARGIN = 1e-7, 1.0
#: The window is widened (not refined) while the layer and far mass exceed this share of the target gap.
SPILL_SHARE = 1e-3
#: The aligned-cell candidate LP is solved when the centre cell carries at least this share of the gap.
CENTRE_SHARE = 0.25
#: The aligned-cell candidate is no longer solved after ALIGNED_IDLE resolutions in a row at which it lowered the
#: best upper end by less than ALIGNED_MIN_GAIN of the target gap (at ε = 5, δ <= 1e-4, |x| the staircase is
#: within 5e-6 of it at n = 66, and the candidate's LP took twice the relaxation's time; measured).
ALIGNED_IDLE, ALIGNED_MIN_GAIN = 2, 0.1
#: The aligned-cell candidate's spike (:func:`spiked_upper`) is kept when the LP gives it more than this share of δ.
SPIKE_MIN = 1e-6
#: A dropped shift is added when the primal's audit exceeds the LP's budget by this relative margin.
VIOLATION = 1e-6


#: Cells per sensitivity of the ε-DP density that is the first upper bound for a cost without an exact closed form.
PURE_UPPER_CELLS = 16
#: The time polish_row_duals may take, as a share of the LP's solve (its first round always runs; at ε = 5, x²,
#: 194 cells per sensitivity that round took 0.3 s after the 6 s interior point and raised the bound from 1.7e-3
#: to 1.5e-5 below the objective, where a second one took 1.9 s for nothing; measured).
POLISH_SHARE = 0.1
#: Cells per sensitivity of the first periodic-decay step (module docstring).
DECAY_FIRST_CELLS = 32
#: A decay step whose certified lower end is further than this (relative) below its LP's objective did not find
#: an extendable dual: the family goes on with the per-point LP.
DECAY_FAILED_GAP = 1e-3
#: A decay dual losing more than this share of the target gap against its LP's objective hands over to the
#: per-point path.
DECAY_LOSS_SHARE = 0.5
#: A decay step may take this share of the time left (predicted by ``optmech.families.approx_decay``).
DECAY_TIME_SHARE = 0.4
#: The decay path is taken below this ε: at ε = 5 its dual did not extend for |x| and its LP stalled the interior
#: point at 128 cells for x² (measured), where the per-point LP does better.
DECAY_MAX_EPSILON = 2.5
#: Exponent of the predicted time ratio of two decay steps in the refinement factor (rows grow as its square).
DECAY_GROWTH = 2.5


@dataclasses.dataclass(frozen=True)
class RealDecaySize:
    """One decay step on ℝ: n cells per sensitivity and the layout of the node problem (sensitivity n)."""

    n: int
    layout: DecaySize


@dataclasses.dataclass
class _DecayModel:
    """One decay step's LP (:class:`~optmech.problems.approx_decay.DecayLP`) with its node prices."""

    n: int
    dlp: DecayLP
    nodes: NodeCosts


@dataclasses.dataclass
class _Model:
    """One step's LP: ``alp`` (solved with the budget ``delta_lp``) and ``lp_true`` (the same rows with
    the budget δ, against which the duals are certified)."""

    n: int
    alp: object
    lp_true: LinearProgram
    delta_lp: float
    outward: bool = False


def aligned_resolution(lo: int, hi: int, breakpoint: float | None) -> int:
    """The number of cells per sensitivity n in [lo, hi] whose node spacing Δ/n puts the breakpoint b·Δ
    nearest a node: the least distance |b·n − round(b·n)| in cells (ties: the smaller n); ``lo`` without a
    breakpoint.

    Why: the relaxation's value depends on where the optimum's steps fall on the nodes, not only on n.  At
    ε = 5, δ = 1e-6, cost |x| (the staircase's step at b = 1/(1 + e^{ε/2}) = 0.0759 of Δ) it lies
    3.9e-3, 1.4e-3 and 1.0e-4 below the optimum at n = 27, 40 and 66 (b·n within 0.05 of an integer) and
    1.7e-2 and 9.4e-4 below at n = 32 and 128 (b·n = 2.43 and 9.71), measured.  The choice only proposes
    a size: every step's bound is certified whatever n is, and the bracket keeps the best of them.

    >>> aligned_resolution(8, 16, 0.0758582)          # 13 × 0.0759 = 0.986
    13
    >>> aligned_resolution(8, 16, None)
    8
    """
    lo, hi = int(lo), max(int(lo), int(hi))
    if breakpoint is None or not 0.0 < breakpoint < 1.0:
        return lo
    n = np.arange(lo, hi + 1)
    off = np.abs(breakpoint * n - np.round(breakpoint * n))
    return int(n[int(np.argmin(off))])


def staircase_breakpoint(cost, epsilon: float, sensitivity: float) -> float | None:
    """The step of the ε-DP staircase optimum for ``cost`` as a fraction γ* of Δ ([Geng13, Thm 2.4];
    :func:`~optmech.mechanisms.staircase.optimal_gamma`), or None where it is not defined or not found.
    The (ε, δ) optimum keeps the staircase's step at small δ (measured); used only to place the nodes."""
    if not epsilon > 0:
        return None
    try:
        from optmech.mechanisms.staircase import optimal_gamma

        g = float(optimal_gamma(cost, epsilon, sensitivity))
    except Exception:  # noqa: BLE001 - a heuristic: no breakpoint, uniform refinement
        return None
    return g if 0.0 < g < 1.0 else None


def with_spike(lp: LinearProgram, price: float) -> LinearProgram:
    """The aligned-cell candidate LP with one more column: a mass ``spike`` on [−η/2, η/2) (:func:`spiked_upper`),
    priced at ``price`` (an upper bound of the cost's mean there), counted in the normalisation and, at its full
    mass, in every kept shift's budget row."""
    m, n_cols = lp.A.shape
    budget = lp.row_blocks["budget"]
    rows = np.concatenate([[int(lp.meta["normalisation_row"])], np.arange(budget.start, budget.stop)])
    col = sp.csc_array((np.ones(len(rows)), (rows, np.zeros(len(rows), dtype=np.int64))), shape=(m, 1))
    return dataclasses.replace(
        lp, c=np.append(lp.c, price), A=sp.csc_array(sp.hstack([lp.A, col], format="csc")),
        col_lower=np.append(lp.col_lower, 0.0), col_upper=np.append(lp.col_upper, 1.0),
        col_blocks=dict(lp.col_blocks, spike=slice(n_cols, n_cols + 1)))


def spiked_upper(cost, box: np.ndarray, R1: int, atom: float, epsilon: float, delta: float, n: int, price,
                 spike_price: float):
    """The certified upper end of the law P = a·U + (1 − a)·F: U uniform on the spike [−η/2, η/2), F the density
    of the masses ``box`` on the aligned cells (normalised), a = ``atom`` < δ.

    Privacy [derived]: for every set S and shift t, P(S) − e^ε P_t(S) = a·(U(S) − e^ε U_t(S)) + (1 − a)·(F(S) −
    e^ε F_t(S)) <= a + (1 − a)·H_t(F), so H_t(P) <= a + (1 − a)·H_t(F) for every real t.  F is audited
    (:func:`~optmech.families.approx.upper_from_pmf`, repaired by mixing if needed) at the budget δ_F, the
    float below (δ − a)/(1 − a); a + (1 − a)·δ_F <= δ is checked in exact rationals.  Cost: (1 − a)·(F's
    outward-rounded cost) + a·``spike_price``, computed exactly in rationals from the floats and rounded up."""
    a = Fraction(float(atom))
    d = Fraction(float(delta))
    if not 0 < a < d:
        raise SpecError(f"the spike's mass must lie in (0, delta): {float(a)!r}")
    delta_f = float(np.nextafter(float((d - a) / (1 - a)), -np.inf))
    if a + (1 - a) * Fraction(delta_f) > d:
        delta_f = float(np.nextafter(delta_f, -np.inf))
    up = upper_from_pmf(cost, box, R1, epsilon, delta_f, n, price=price)
    realised = a + (1 - a) * Fraction(float(up.realised_delta))
    value = (1 - a) * Fraction(float(up.value)) + a * Fraction(float(spike_price)) if math.isfinite(up.value) else None
    up.realised_delta = float(np.nextafter(float(realised), np.inf))
    up.shifts_delta = np.asarray([float(np.nextafter(float(a + (1 - a) * Fraction(float(v))), np.inf))
                                  for v in up.shifts_delta])
    up.value = float(np.nextafter(float(value), np.inf)) if value is not None else math.inf
    up.certified = bool(up.certified and realised <= d and math.isfinite(up.value))
    up.atom = float(a)
    return up


class ApproxRealFamily:
    """(ε, δ)-DP on ℝ, d = 1 (δ > 0): sizes ``(n, N, shifts)``, module docstring."""

    name = "approx_real"
    max_steps = 24

    def __init__(self, problem, ctx) -> None:
        self.problem, self.ctx = problem, ctx
        self.eps, self.delta = problem.epsilon, problem.delta
        self.D = float(problem.sensitivity)
        cost = problem.cost
        floor = cost.domain_minimum(integer=False)
        if not floor >= 0.0:
            raise SpecError(f"(epsilon, delta)-DP on the real line needs a cost proven nonnegative on ℝ; the proven "
                            f"floor of {cost} is {floor:g}")
        self.prev_gap = math.inf
        self.slack_scale = 1.0
        #: build the per-point LPs with the outward rows only (module docstring): for costs proven even and
        #: nondecreasing in |x| (a choice, not a premise of any certificate: for |(|x| − 1)| at ε = 1, δ = 1e-3 the
        #: outward LP's bracket was [0.671, 0.736] against [0.6836, 0.6842] with every row; measured); cleared
        #: for good when a step's primal exceeds the budget at a kept shift (the dropped rows were used)
        self.outward_rows = cost.is_symmetric_nondecreasing()
        self.used_outward = False
        self.aligned_won = False
        #: resolutions in a row at which the aligned candidate did not lower the best upper end found so far by
        #: ALIGNED_MIN_GAIN of the target gap; from ALIGNED_IDLE on it is not solved any more
        self.aligned_misses = 0
        #: the least certified upper end the family has seen (closed forms, steps, candidates)
        self.known_upper = math.inf
        self.refinements = 0
        self._plans: dict = {}
        res = getattr(problem.domain, "resolution", None)
        #: the periodic-decay path first (module docstring): abs and square, ε > 0, n >= 16 cells
        self.decay = (coarse_allowed(cost) and 0 < self.eps < DECAY_MAX_EPSILON and self.delta > 0
                      and (res is None or int(res) >= 16))
        self.decay_failed = False
        self.decay_tail_tries = 0
        self._decay_factor: float | None = None
        self._decay_lower_value = -math.inf
        self.decay_slack, self.decay_slack_tries = 0.0, 0
        self.decay_all_rows = False
        #: the resolution of the last decay step before the per-point path took over (0: none)
        self.decay_cells = 0
        #: the staircase's step (a fraction of Δ) that the per-point resolutions put on a node, or None
        self.breakpoint = staircase_breakpoint(cost, self.eps, self.D)

    def initial_uppers(self) -> list:
        """The valid closed-form references (staircase, Laplace, truncated Laplace, Gaussians, uniform) as
        certified upper bounds (:func:`~optmech.families.approx.closed_form_uppers`)."""
        out = closed_form_uppers(self.problem.cost, self.eps, self.delta, self.D)
        self.known_upper = min([self.known_upper] + [u.value for u in out if u.certified])
        if out or self.eps <= 0:
            return out
        # no exact closed form for this cost: the pure family's Laplace-shaped density on cells of width Δ/16,
        # audited as ε-DP (hence (ε, δ)-DP) and priced with rigorous cost enclosures and tail bounds
        from optmech.families.pure1d import laplace_upper
        from optmech.spec import PureDP

        up = laplace_upper(dataclasses.replace(self.problem, privacy=PureDP(self.eps)),
                           Grid1D.cells(self.D, PURE_UPPER_CELLS))
        return [up] if up.certified and math.isfinite(up.value) else []

    def fallback_lower(self) -> tuple[float, str]:
        """A certified lower bound without any LP (a time limit or an interrupt before the first one):
        the cost's proven floor on ℝ (every noise costs at least inf L)."""
        return float(self.problem.cost.domain_minimum(integer=False)), "the cost's proven floor on ℝ"

    def initial_lower(self) -> float:
        """The same bound, held from the start (so an interrupt before the first LP still has a bracket)."""
        return self.fallback_lower()[0]

    @property
    def step_factor(self) -> float:
        """The predicted time ratio of the next step to the last one while on the decay path; after a decay
        step whose dual did not extend, the per-point path's first step (far smaller); on the per-point path
        with a breakpoint, the least one (n + 1 cells: the refinement picks among the resolutions predicted to
        fit the time left, :meth:`_aligned_next`, and the loop checks the chosen LP's prediction again); the
        loop's default otherwise."""
        if self.decay_failed:
            return 0.25
        if self._decay_factor is not None:
            return self._decay_factor
        if self.breakpoint is not None and isinstance(getattr(self, "_current", None), tuple):
            n = self._current[0]
            return ((n + 1) / n) ** (2 * Pace.GROWTH)
        raise AttributeError("step_factor")

    def _decay_size(self, n: int) -> RealDecaySize:
        K, W = layout_for(self.eps, self.delta, n)
        return RealDecaySize(n, DecaySize(1, K, W, kept_shifts(n)))

    def start(self):
        res = getattr(self.problem.domain, "resolution", None)
        if self.decay:
            return self._set_decay(self._decay_size(int(res) if res else DECAY_FIRST_CELLS))
        return self._classic_start()

    def _classic_start(self) -> tuple[int, int, tuple[int, ...]]:
        """The first size of the per-point path."""
        res = getattr(self.problem.domain, "resolution", None)
        # small ε: the optimum varies on scales of Δ/ε and its window spans ~ln(1/δ)/ε sensitivities, so
        # fewer cells per sensitivity reach the gap on a far wider (costlier) window
        first = FIRST_CELLS // 2 if self.eps <= 0.25 else FIRST_CELLS
        n = int(res) if res else aligned_resolution(first, 2 * first, self.breakpoint)
        blocks = thm8_n(self.eps, self.delta)
        return self._set(n, int(2 * n * (math.ceil(blocks) + 2)), tuple(range(1, n + 1)))

    def plan(self, size) -> LPPlan:
        """The LP of ``size`` before it is built: the even or full hockey-stick LP with sensitivity n,
        the kept shifts' share of its rows (their outward rows only, while the LPs are built so)."""
        if isinstance(size, RealDecaySize):
            return self._decay_plan(size)
        if size not in self._plans:
            n, N, shifts = size
            even = self.problem.symmetry != "off" and self.problem.cost.is_even()
            cols, nnz = estimate_size(1, n, N, even)
            box = 2 * (N + n) + 2
            if even and self.outward_rows:  # the rows x >= −v/2 of each kept shift v
                t_cols = sum(N + 1 + int(v) // 2 for v in shifts)
                t_nnz = 4 * t_cols
            else:
                share = len(shifts) / n
                t_cols, t_nnz = int((cols - box) * share), int((nnz - box) * share)
            self._plans[size] = LPPlan(rows=t_cols + len(shifts) + 1, cols=box + t_cols, nonzeros=t_nnz + box,
                                       builder="hockey_stick_cells")
        return self._plans[size]

    def _decay_plan(self, size: RealDecaySize) -> LPPlan:
        """The decay LP's shape (as :meth:`optmech.families.approx.ApproxFamily.plan`) and its audit's terms."""
        if size not in self._plans:
            n, lay = size.n, size.layout
            self._plans[size] = decay_lp_plan(decay_plan_rows(n, lay.tail, len(lay.shifts)), n + lay.tail,
                                              len(lay.shifts), 2.0 * (lay.periods * n + lay.tail) * 2 * n)
        return self._plans[size]

    def estimate_bytes(self, size) -> float:
        return self.plan(size).peak_bytes()

    def size_message(self, size, need: float, budget: float) -> str:
        lp = self.plan(size)
        if isinstance(size, RealDecaySize):
            return (f"the (epsilon, delta) decay LP on the real line needs about {gib(need)} GiB ({lp.cols} columns, "
                    f"{lp.nonzeros} nonzeros; {size.n} cells per sensitivity); the limit is {gib(budget)} GiB: lower "
                    "--resolution, raise delta or epsilon, or set OPTMECH_MAX_MEMORY_GB")
        return (f"the (epsilon, delta) LP on the real line needs about {gib(need)} GiB ({lp.cols} columns, "
                f"{lp.nonzeros} nonzeros; {size[0]} cells per sensitivity, half-width {size[1]} cells); the limit is "
                f"{gib(budget)} GiB: lower --resolution, raise delta or epsilon, or set OPTMECH_MAX_MEMORY_GB")

    def _slack(self) -> float:
        return min(self.delta * 0.5, min(self.delta * 1e-3, 2e-9) * self.slack_scale)

    def _outward(self, nodes: NodeCosts, n: int, N: int) -> bool:
        """Whether the node LP of this size is built with the outward rows only: while the flag holds, where the
        ±x reduction applies (the node prices even on the box, as :func:`optmech.problems.approx.build_approx`
        decides)."""
        return (self.outward_rows and self.problem.symmetry != "off"
                and bool(nodes.even(np.arange(-(N + n), N + n + 1))))

    def _build(self, n: int, N: int, shifts, nodes, outward: bool = False) -> tuple:
        """(LP solved with δ − s, ApproxLP with the budget δ) for the kept shifts (``outward``: their outward rows
        only)."""
        alp = build_approx(self.problem.cost, self.eps, self.delta, n, N, symmetry=self.problem.symmetry,
                           nodes=nodes, keep_shifts=np.asarray(shifts, dtype=np.int64)[:, None],
                           outward_rows=outward)
        lp = alp.lp
        delta_lp = self.delta - self._slack()
        ru = lp.row_upper.copy()
        ru[lp.row_blocks["budget"]] = delta_lp
        return dataclasses.replace(lp, row_upper=ru, meta=dict(lp.meta, builder="hockey_stick_cells")), alp, delta_lp

    def _decay_budget_slack(self) -> float:
        return max(self._slack(), self.decay_slack)

    def _build_decay(self, size: RealDecaySize) -> Built:
        """The LP over periodic-decay laws of the node problem with sensitivity n (module docstring), solved
        with the budget δ − s (its duals are certified against δ)."""
        n, lay = size.n, size.layout
        nodes = NodeCosts(self.problem.cost, self.D, n)
        dlp = build_decay(self.problem.cost, self.eps, self.delta, n, lay.periods, lay.tail, shifts=lay.shifts,
                          prices=nodes.lower, first_point=None if self.decay_all_rows else -n)
        lp = prepared_decay_lp(dlp, self.delta - self._decay_budget_slack())
        desc = dict(lay.describe(n), cells_per_sensitivity=n, cell_width=self.D / n)
        return Built(lp, desc, _DecayModel(n, dlp, nodes), "hockey_stick_decay")

    def build(self, size) -> Built:
        if isinstance(size, RealDecaySize):
            return self._build_decay(size)
        n, N, shifts = size
        nodes = NodeCosts(self.problem.cost, self.D, n)
        outward = self._outward(nodes, n, N)
        self.used_outward |= outward
        lp, alp, delta_lp = self._build(n, N, shifts, nodes, outward)
        return Built(lp, {"cells_per_sensitivity": n, "half_width_cells": N, "cell_width": self.D / n,
                          "shifts_kept": len(shifts), "outward_rows_only": outward},
                     _Model(n, alp, alp.lp, delta_lp, outward), "hockey_stick_cells")

    def lower(self, built: Built, raw):
        """The duals of the LP solved at δ − s, certified against the same LP with the budget δ; on the decay
        path, the dual of the whole node problem built from them (module docstring)."""
        m = built.model
        if isinstance(m, _DecayModel):
            nodes = m.nodes
            cert = decay_lower_bound(m.dlp, raw.row_dual, nodes.lower, lambda limit: far_node_price(nodes, limit),
                                     solver_objective=raw.objective)
            # a dual that loses more than half the target gap against the LP's own objective does not extend well
            # (it did not shrink with finer cells, measured): the per-point path certifies the lower end instead
            lossy = DECAY_LOSS_SHARE * self.problem.target_gap
            self.decay_failed = not cert.value > (1 - min(DECAY_FAILED_GAP, lossy)) * raw.objective
            if self.decay_failed and not cert.value > self.initial_lower():
                # no extendable dual: the bound stays the cost's floor (the per-point path or more shifts next);
                # the chain's float allowance is not the bracket's limit
                cert = dataclasses.replace(cert, value=self.initial_lower(), rounding_loss=0.0)
            self._decay_lower_value = cert.value
            return cert
        # an interior point's duals fall short on a few columns: polished first (any duals certify), in at most
        # POLISH_SHARE of the LP's own time after the first round
        lp = built.model.lp_true
        hockey = lp.row_blocks["hockey_stick"]
        seconds = POLISH_SHARE * raw.seconds if raw.seconds and math.isfinite(raw.seconds) else math.inf
        y = polish_row_duals(lp, raw.row_dual, raw.objective, np.arange(hockey.start, hockey.stop), seconds=seconds)
        return dual_lower_bound(lp, y, raw.objective)

    def _price(self, n: int, means):
        def price(p: np.ndarray, R: int) -> float:
            k = np.arange(-R, R + 1)
            nz = p > 0
            return outward_mean(means(self.problem.cost, k[nz], self.D, n), p[nz], math.fsum(p))

        return price

    def upper(self, built: Built, raw):
        m = built.model
        if isinstance(m, _DecayModel):  # the law on the nodes −(R − 1)..R − 1, read as centred cells
            lay = m.dlp.layout
            p, R = lay.pmf(raw.x[:lay.columns]), m.dlp.R - 1
            up = upper_from_pmf(self.problem.cost, p, R, self.eps, self.delta, m.n,
                                price=self._price(m.n, cell_mean_upper))
            up.cells, up.aligned = m.n, False
            return up
        up = upper_from_pmf(self.problem.cost, m.alp.box_masses(raw.x), m.alp.R, self.eps, self.delta, m.n,
                            price=self._price(m.n, cell_mean_upper))
        up.cells, up.aligned = m.n, False  # the cells its masses live on (the best may come from an earlier step)
        return up

    def _centre_share(self, step: Step) -> float:
        """The share of the step's bracket that the centre cell's price difference makes."""
        m = step.built.model
        p = m.alp.box_masses(step.raw.x)
        q0 = float(p[m.alp.R]) / max(float(p.sum()), 1e-300)
        cost, n = self.problem.cost, m.n
        node = NodeCosts(cost, self.D, n).lower(np.array([0]))[0]
        mean0 = cell_mean_upper(cost, np.array([0]), self.D, n)[0]
        width = step.upper.value - step.lower.value
        if not (math.isfinite(width) and width > 0 and math.isfinite(mean0) and math.isfinite(node)):
            return 0.0
        return q0 * (mean0 - node) / width

    def extra_uppers(self, step: Step) -> list:
        """The aligned-cell candidate (module docstring) when the centre cell makes most of the gap, or
        when it beat the centred cells at an earlier resolution."""
        if isinstance(step.built.model, _DecayModel):
            return []
        if step.upper.certified:
            self.known_upper = min(self.known_upper, step.upper.value)
        if relative_gap(step.lower.value, self.known_upper) <= self.problem.target_gap:
            # the target is met without it: its LP would only delay the answer (ε = 5, |x|, δ = 1e-4: the
            # relaxation at n = 79 met it with the aligned law of n = 66, and the candidate of n = 79 took 5.9 s of
            # the solve's 12.7 s; measured)
            return []
        if self.ctx is None or (self._centre_share(step) < CENTRE_SHARE and not self.aligned_won):
            return []
        if self.aligned_misses >= ALIGNED_IDLE:
            return []
        n, N, shifts = self._current
        lp, alp, _ = self._build(n, N, shifts, AlignedCells(self.problem.cost, self.D, n))
        # its own builder name: the profiles' structured interior point (for "hockey_stick_cells") stopped far from
        # this LP's optimum (0.08276 against HiGHS simplex's 0.08265 at ε = 5, δ = 1e-6, |x|, n = 40; measured, in
        # about the same time), so the candidate goes to the profile's general attempts
        lp = dataclasses.replace(lp, meta=dict(lp.meta, builder="hockey_stick_aligned"))
        steps = spike_steps(n)
        # the spike [−η/2, η/2), η = h/steps, is the centre cell C_0 at n·steps cells per sensitivity
        spike_price = float(cell_mean_upper(self.problem.cost, np.array([0]), self.D, n * steps)[0])
        lp = with_spike(lp, spike_price) if math.isfinite(spike_price) else lp
        try:
            raw = self.ctx.solve_lp(lp, share=0.5)
        except Exception:  # noqa: BLE001 - an optional candidate: the step's own bounds stand
            return []
        if raw.x is None:
            return []
        p = alp.box_masses(raw.x)
        spike = lp.col_blocks.get("spike")
        atom = float(raw.x[spike][0]) if spike is not None else 0.0
        # the cells k = −R−1..R audited on the box [−(R+1), R+1] (one empty cell appended)
        R1 = alp.R + 1
        box = np.concatenate([p, [0.0]])

        def means(cost, k, D, n_):  # box index k on [−R1, R1] is the aligned cell k
            return aligned_cell_mean_upper(cost, k, D, n_)

        if SPIKE_MIN * self.delta < atom < self.delta:
            up = spiked_upper(self.problem.cost, box, R1, atom, self.eps, self.delta, n, self._price(n, means),
                              spike_price)
            up.spike_steps = steps
        else:
            up = upper_from_pmf(self.problem.cost, box, R1, self.eps, self.delta, n, price=self._price(n, means))
        up.cells, up.aligned = n, True
        if up.certified and up.value < step.upper.value:
            self.aligned_won = True  # keep proposing aligned masses at the finer resolutions
        gain = self.known_upper - up.value if up.certified else -math.inf
        useful = gain > ALIGNED_MIN_GAIN * self.problem.target_gap * abs(self.known_upper)
        self.aligned_misses = 0 if useful else self.aligned_misses + 1
        if up.certified:
            self.known_upper = min(self.known_upper, up.value)
        return [up]

    def diagnostics(self, built: Built, raw, upper) -> dict:
        m = built.model
        if isinstance(m, _DecayModel):
            tail = tail_share(m.dlp, raw.x)
            # the loop reads step_factor before grow(): the next step's predicted seconds over this one's
            if self._decay_violated(m, upper):
                self._decay_factor = 1.5  # the same resolution again, with the violated shifts
            elif self.decay_failed:
                self._decay_factor = None
            elif tail > TAIL_MASS or upper.mixed > 0:
                self._decay_factor = 1.5  # the same resolution again, with more shifts, tail or slack
            else:
                lo = self._decay_lower_value
                gap = (upper.value - lo) / upper.value if upper.value > 0 and math.isfinite(lo) else math.inf
                n2 = self._decay_next(m.n, gap)
                self._decay_factor = (n2 / m.n) ** DECAY_GROWTH if n2 else None
            return {"mixed_weight": upper.mixed, "tail_mass": tail, "layer_and_far_mass": 0.0}
        alp = built.model.alp
        return {"mixed_weight": upper.mixed, "layer_and_far_mass": alp.far_mass(raw.x) + alp.layer_mass(raw.x)}

    def _binding(self, step: Step) -> set[int]:
        """The kept shifts that bound the step's optimum: a nonzero budget dual, or an audit at δ."""
        m = step.built.model
        y = np.asarray(step.raw.row_dual)[m.alp.lp.row_blocks["budget"]]
        kept = np.abs(m.alp.shifts[:, 0])
        out = {int(v) for v, yy in zip(kept, y) if abs(yy) > 1e-12}
        per = np.asarray(step.upper.shifts_delta)
        if per.size == 2 * m.n:
            mags = np.concatenate([np.arange(m.n, 0, -1), np.arange(1, m.n + 1)])
            out |= {int(v) for v in mags[per >= m.delta_lp * (1 - 1e-3)]}
        return out

    @staticmethod
    def _exceeding(step: Step, budget: float, *, before_repair: bool = False) -> set[int]:
        """The shift magnitudes at which the step's audit (``before_repair``: before a mixing repair, where there
        was one) exceeds ``budget`` (1 + VIOLATION)."""
        m, up = step.built.model, step.upper
        before = getattr(up, "pre_repair_delta", None) if before_repair else None
        per = np.asarray(before if before is not None else up.shifts_delta)
        if per.size != 2 * m.n:
            return set()
        mags = np.concatenate([np.arange(m.n, 0, -1), np.arange(1, m.n + 1)])
        return {int(v) for v in mags[per > budget * (1 + VIOLATION)]}

    def _inward_used(self, step: Step) -> bool:
        """Whether the step's primal, before any repair, exceeds δ at a kept shift: only the rows the outward LP
        dropped can let it (module docstring of :mod:`optmech.problems.approx`, "Outward rows")."""
        return bool(self._exceeding(step, self.delta, before_repair=True) & set(self._current[2]))

    def _violated(self, step: Step) -> set[int]:
        """Dropped shifts at which the step's primal exceeds the LP's budget."""
        return self._exceeding(step, step.built.model.delta_lp) - set(self._current[2])

    def _decay_violated(self, m: _DecayModel, upper) -> set[int]:
        """Dropped shift magnitudes where the decay law's audit (before any repair) exceeds δ."""
        per = np.asarray(upper.pre_repair_delta if getattr(upper, "pre_repair_delta", None) is not None
                         else upper.shifts_delta)
        if per.size != 2 * m.n:
            return set()
        mags = np.concatenate([np.arange(m.n, 0, -1), np.arange(1, m.n + 1)])
        kept = {int(v) for v in m.dlp.shifts}
        return {int(v) for v in mags[per > self.delta * (1 + VIOLATION)] if int(v) not in kept}

    def _decay_next(self, n: int, gap: float) -> int | None:
        """The next decay resolution after n: the factor (2..4) the O(h²) gap asks for, the largest predicted to
        fit in ``DECAY_TIME_SHARE`` of the time left; None when none does."""
        target = self.problem.target_gap
        want = min(4, max(2, math.ceil(math.sqrt(gap / target) - 0.05))) if math.isfinite(gap) and gap > 0 else 2
        left = self.ctx.remaining() if self.ctx is not None else math.inf
        for f in range(want, 1, -1):
            if predicted_seconds(n * f) <= DECAY_TIME_SHARE * left:
                return n * f
        return None

    def _grow_decay(self, step: Step):
        """After a decay step: the dropped shifts the law violates, a longer tail, more slack, a finer
        resolution; the per-point path where the dual did not extend."""
        m = step.built.model
        lay = self._current_decay.layout
        self._decay_factor = None
        violated = self._decay_violated(m, step.upper)
        if violated:  # first: a dual may fail to extend only because the LP lacked these shifts
            self.decay_failed = False
            return self._set_decay(RealDecaySize(m.n, dataclasses.replace(lay, shifts=tuple(sorted(set(lay.shifts) | violated)))))
        if self.decay_failed:
            self.decay, self.decay_cells = False, m.n
            return self._classic_start()
        if step.diagnostics.get("tail_mass", 0.0) > TAIL_MASS and self.decay_tail_tries < 2:
            self.decay_tail_tries += 1
            return self._set_decay(RealDecaySize(m.n, dataclasses.replace(lay, tail=lay.tail + m.n)))
        if step.upper.mixed > 0 and not self.decay_all_rows:
            # rows start one period left of 0 (the others were slack in most cases measured); the law needed the
            # repair, so the omitted rows may bind: the same LP with every row
            self.decay_all_rows = True
            return self._set_decay(RealDecaySize(m.n, lay))
        if step.upper.mixed > 0 and self.decay_slack_tries < 3:
            # the solver's tolerances left an excess over δ: the same LP with the budget lowered by twice it
            pre = getattr(step.upper, "pre_repair_delta", None)
            excess = float(np.max(pre)) - self.delta if pre is not None else 0.0
            self.decay_slack = min(0.5 * self.delta, max(2.0 * excess, 4.0 * self._decay_budget_slack()))
            self.decay_slack_tries += 1
            return self._set_decay(RealDecaySize(m.n, lay))
        n2 = self._decay_next(m.n, step.gap)
        if n2 is None:
            return Stop("time limit reached before the target gap: the next decay resolution would not fit in the "
                        "time left")
        self.decay_tail_tries = 0
        return self._set_decay(self._decay_size(n2))

    def _set_decay(self, size: RealDecaySize) -> RealDecaySize:
        self._current_decay = size
        return size

    def grow(self, step: Step, best):
        """Add the dropped shifts the primal violates (same resolution); widen while the relaxation
        uses its outer layer or far mass; else refine the cells by the factor the O(h²) width of
        the bracket asks for (2, 3 or 4), on a window fitted to the support the LP found."""
        if isinstance(step.built.model, _DecayModel):
            return self._grow_decay(step)
        m = step.built.model
        n, alp = m.n, m.alp
        shifts = self._current[2]
        gap, up = step.gap, step.upper
        if up.mixed > 0:  # solver tolerances still needed the mixing repair: more slack next time
            self.slack_scale *= 4.0
        if m.outward and self._inward_used(step):  # the same LP with every row, from now on
            self.outward_rows = False
            self._plans.clear()
            return self._set(n, alp.N, shifts)
        violated = self._violated(step)
        if violated:
            return self._set(n, alp.N, tuple(sorted(set(shifts) | violated)))
        spill = step.diagnostics["layer_and_far_mass"]
        target = self.problem.target_gap
        if not up.certified and spill <= SPILL_SHARE * target and not math.isfinite(best.upper_value):
            return Stop(f"the upper bound could not be certified: {up.note}")
        if spill > SPILL_SHARE * target:
            return self._set(n, 2 * alp.N, shifts)
        prev, self.prev_gap = self.prev_gap, gap
        self.refinements += 1
        # after a decay step the bracket is its until the per-point path passes its resolution: no stall before
        if self.refinements >= 3 and gap > 0.9 * prev and n > self.decay_cells:
            return Stop("finer cells do not help: the remaining gap is the solver's accuracy")
        # integer factors: the relaxation at a multiple of n is at least as tight (its nodes include n's;
        # for a cost linear between the coarse nodes exactly so), where other resolutions may be looser;
        # with a breakpoint, the resolution near that factor that puts it on a node (aligned_resolution)
        factor = min(4, max(2, math.ceil(math.sqrt(gap / target) - 0.05))) if math.isfinite(gap) and gap > 0 else 2
        p = alp.box_masses(step.raw.x)
        used = np.flatnonzero(p > REACH_MASS * max(float(p.max()), 1e-300))
        reach = (float(np.max(np.abs(used - alp.R))) / n) if used.size else float(alp.N) / n  # in sensitivities
        binding = self._binding(step) | {n}

        def size_at(k: int) -> tuple[int, int, tuple[int, ...]]:
            N = min(int(math.ceil((1.1 * reach + REACH_MARGIN) * k)), int(math.ceil(alp.N * k / n)))
            mapped = {j for s in binding for j in range(max(1, (s - 1) * k // n), min(k, -(-(s + 1) * k // n)) + 1)}
            return k, N, tuple(sorted(mapped | {k}))

        k = n * factor if self.breakpoint is None else self._aligned_next(step, n * factor, size_at)
        return self._set(*size_at(k))

    def _aligned_next(self, step: Step, want: int, size_at) -> int:
        """The next resolution with a breakpoint b: among n + 1 .. ALIGN_REACH·want (the factor the O(h²) gap
        asks for), those whose LP is predicted to fit the time left (the last step's seconds scaled by the work
        ratio, as the loop predicts), the one whose node lies nearest b·Δ in sensitivities, |b·k − round(b·k)|/k
        with offsets below ALIGN_OFFSET_FLOOR cells counted as that floor (the relaxation's loss fell with this
        distance in the measurements of :func:`aligned_resolution`); ties: the smaller k.  Among them, those from
        ALIGN_LOW·k* to ALIGN_REACH·k*, k* = n·(gap/(TARGET_MARGIN·target))^{1/2} (the resolution at which the
        O(h²) width of the bracket would be TARGET_MARGIN of the target), when any of them fits: the larger ones
        cost time without a better chance of stopping (ε = 5, |x|, δ = 1e-6: n = 79 after 66 reaches 9.2e-5 in
        5.8 s, where n = 145 took 10.4 s; measured).  When none is predicted to fit, the best aligned one up to
        ``want`` (the loop then checks its prediction and stops)."""
        n = step.built.model.n
        b = float(self.breakpoint)
        ks = np.arange(n + 1, max(n + 1, math.ceil(ALIGN_REACH * want)) + 1)
        left = self.ctx.remaining() if self.ctx is not None and hasattr(self.ctx, "remaining") else math.inf
        if math.isfinite(left) and step.seconds > 0:
            w0 = max(self.plan(self._current).work, 1.0)
            pred = np.array([step.seconds * max(self.plan(size_at(int(k))).work / w0, 1.0) ** Pace.GROWTH
                             for k in ks])
            fits = ks[TIME_SAFETY * pred <= left]
        else:
            fits = ks
        if fits.size == 0:
            return aligned_resolution(n + 1, want, b)
        target, gap = self.problem.target_gap, step.gap
        if math.isfinite(gap) and gap > 0 and target > 0:
            need = n * math.sqrt(gap / (TARGET_MARGIN * target))
            enough = fits[(fits >= ALIGN_LOW * need) & (fits <= ALIGN_REACH * need)]
            if enough.size:
                fits = enough
        off = np.maximum(np.abs(b * fits - np.round(b * fits)), ALIGN_OFFSET_FLOOR)
        return int(fits[int(np.argmin(off / fits))])

    def _set(self, n: int, N: int, shifts: tuple):
        self._current = (n, N, shifts)
        return self._current

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return continuous_reference_values(self.problem, lower, upper)

    def report(self, best, last: Step | None, status: str) -> dict:
        from optmech.mechanisms.tabulated import Tabulated

        eps, delta, D = self.eps, self.delta, self.D
        best_up = best.upper
        decay = last is not None and isinstance(last.built.model, _DecayModel)
        n, alp = (last.built.model.n, getattr(last.built.model, "alp", None)) if last is not None else (None, None)
        ref = getattr(best_up, "reference", None)
        mech = None
        aligned = bool(getattr(best_up, "aligned", False))
        pure_upper = best_up is not None and not hasattr(best_up, "p")  # the audited ε-DP density of initial_uppers
        if ref is not None:
            mech = reference_mechanism(ref, best_up.parameters, eps, delta, D)
        elif pure_upper:
            mech = Tabulated.from_law(best_up.mechanism, eps, delta=delta)
        elif best_up is not None:
            atom = float(getattr(best_up, "atom", 0.0) or 0.0)
            if aligned and atom > 0:
                law = spiked_cells_law((1.0 - atom) * np.asarray(best_up.p) / math.fsum(best_up.p), -best_up.R, atom,
                                       D, best_up.cells, best_up.spike_steps)
            elif aligned:
                law = aligned_cells_law(best_up.p, -best_up.R, D, best_up.cells)
            else:
                law = cells_law(best_up.p, best_up.R, D, best_up.cells)
            mech = Tabulated.from_law(law, eps, delta=delta)
        cells = "aligned cells [kh, (k+1)h)" if aligned else "centred cells [(k-1/2)h, (k+1/2)h)"
        if ref is not None:
            upper_claim = (f"upper bound: the closed-form reference {ref!r} (parameters {_plain(mech.parameters if mech is not None else best_up.parameters)}), "
                           "(epsilon, delta)-DP by its own proof (module optmech.mechanisms.approx.references), its "
                           "closed-form expected cost widened by 1e-12 relative; no audited cell density at the "
                           "resolutions solved was cheaper")
        elif pure_upper:
            upper_claim = ("upper bound: a Laplace-shaped density constant on cells of width sensitivity/"
                           f"{PURE_UPPER_CELLS}, audited as epsilon-DP (hence (epsilon, delta)-DP) and priced with "
                           "rigorous cost enclosures and tail bounds; no audited LP density was cheaper")
        else:
            upper_claim = (
                f"upper bound: masses on {best_up.cells if best_up is not None else n} {cells} per sensitivity as a "
                "cell-constant density; for such a density the hockey-stick divergence is linear in the shift between "
                "multiples of the cell width, so the audit of the integer shifts 1..n (outward rounding) is the audit of "
                "every real shift; cost = the masses times proven upper bounds of the cost's mean on each cell"
                + (f" (mixed at weight {best_up.mixed:.3g} with a law of delta <= delta/2, to absorb solver tolerances)"
                   if best_up is not None and best_up.mixed > 0 else ""))
            if best_up is not None and float(getattr(best_up, "atom", 0.0) or 0.0) > 0:
                a, steps = float(best_up.atom), int(best_up.spike_steps)
                upper_claim += (
                    f"; plus a spike: mass {a:.6g} spread uniformly on [-h/{2 * steps}, h/{2 * steps}) (the optimum puts "
                    "about delta at 0). For every real shift the hockey-stick divergence of the mixture is at most the "
                    "spike's mass plus (1 - mass) times the cell density's (the supremum over sets is subadditive) "
                    "[derived, optmech.families.approx_real.spiked_upper]: the cell density is audited at "
                    "(delta - mass)/(1 - mass), rounded down and checked in exact rationals; the spike is priced at a "
                    "proven upper bound of the cost's mean on it")
        claims = [
            "(epsilon, delta)-DP on the real line: the hockey-stick divergence for every real shift |t| <= sensitivity "
            "[GV13, (18)]",
            upper_claim,
            "lower bound: the randomised rounding of any (epsilon, delta)-DP noise to the nodes k*h is (epsilon, delta)-DP "
            "for the integer shifts |m| <= n (post-processing that commutes with shifts by whole cells); its expected "
            "node cost exceeds E L(X) by at most the proven chord error of L between nodes, which the node prices "
            "subtract; the relaxation LP (window, outer layer, far mass priced at the cost's proven minimum beyond it, "
            "the hockey-stick rows of a subset of the shifts"
            + (", of each, in the LPs built so, only the rows (v, x) with |x + v| >= |x|" if self.used_outward else "")
            + ": dropping rows only relaxes) is certified through its duals, computed at a budget slightly below "
            "delta and checked against the budget delta (the interior point's duals re-optimised on the rows of the "
            "columns they left short first, optmech.certify.polish_row_duals: any duals certify)",
        ]
        if decay:
            claims[2] = (
                "lower bound: the randomised rounding of any (epsilon, delta)-DP noise to the nodes k*h is (epsilon, "
                "delta)-DP for the integer shifts |m| <= n (post-processing that commutes with shifts by whole cells); "
                "its expected node cost exceeds E L(X) by at most the proven chord error of L between nodes, which the "
                "node prices subtract; that node problem on Z is bounded by a dual of the whole problem (multipliers "
                "at every node and shift, checked at every node with outward rounding, the proven node price beyond "
                "the checked range), built from the duals of the LP over periodic-decay laws [derived, "
                "optmech.certify_decay]")
            if ref is None and not pure_upper:
                claims[1] = claims[1].replace("upper bound: masses", "upper bound: the periodic-decay LP's masses", 1)
        elif alp is None:  # no LP finished (a time limit or an interrupt): the floor is the lower end
            claims[2] = "lower bound without an LP: " + self.fallback_lower()[1]
        elif alp.even:
            claims.append("even reduction p(x) = p(-x): the node prices were proven equal at k and -k at every node of the "
                          "box (exact comparison), which is all the relaxation uses; no monotonicity is assumed")
        if ref is not None:
            audit = {"realised_delta": None, "target_delta": delta, "epsilon": eps, "passed": True, "shifts": 0,
                     "method": f"closed form: the {ref} reference (its own privacy proof)", "mixed_weight": None}
        elif pure_upper:
            audit = {"realised_delta": 0.0, "target_delta": delta, "epsilon": eps, "passed": bool(best_up.certified),
                     "shifts": PURE_UPPER_CELLS, "method": "epsilon-DP audit of a cell-constant density (ratio test over "
                     "every real shift), outward-rounded", "mixed_weight": None}
        else:
            audit = audit_record(best_up, eps, delta,
                                 "hockey-stick sums of the cell masses for every integer shift 1..n (exact for every "
                                 "real shift of a cell-constant density), outward-rounded")
        return {
            "mechanism": mech,
            "audit": audit,
            "truncation": self._decay_truncation(last, ref, aligned) if decay else {} if alp is None else {
                "cells_per_sensitivity": n, "cell_width": D / n, "half_width_cells": alp.N, "box_half_width_cells": alp.R,
                "shifts_kept": int(len(alp.shifts)),
                "upper_bound_cells": f"reference:{ref}" if ref is not None else ("aligned" if aligned else "centred"),
                "upper_bound_spike_mass": (float(getattr(best_up, "atom", 0.0) or 0.0)
                                           if ref is None and best_up is not None else 0.0),
                "lower_bound": "relaxation: randomised rounding to the nodes; hockey-stick rows on the inner nodes for the "
                               "kept shifts, outer layer without rows, far mass",
                "upper_bound": (f"closed form: the {ref} reference" if ref is not None else
                                "restriction: density constant on the cells of the box (zero outside), audited"),
            },
            "claims": claims,
        }


    def _decay_truncation(self, last: Step, ref, aligned: bool) -> dict:
        m = last.built.model
        return dict(last.built.size, cells_per_sensitivity=m.n, cell_width=self.D / m.n,
                    upper_bound_cells=f"reference:{ref}" if ref is not None else ("aligned" if aligned else "centred"),
                    lower_bound="relaxation: randomised rounding to the nodes; the node problem on Z bounded by a dual "
                                "of the whole problem built from the periodic-decay LP's duals, checked at every node",
                    upper_bound=(f"closed form: the {ref} reference" if ref is not None else
                                 "restriction: density constant on the cells (zero outside), audited"))


def _plain(parameters: dict) -> str:
    """A reference's calibration as ``name=value`` pairs (floats in repr)."""
    return ", ".join(f"{k}={v!r}" for k, v in parameters.items() if isinstance(v, (int, float)) and not isinstance(v, bool))


def reference_mechanism(name: str, parameters: dict, epsilon: float, delta: float, sensitivity: float):
    """The 1-D mechanism object of a closed-form reference with its calibration ``parameters``
    (:func:`~optmech.mechanisms.approx.references.continuous_approx_references`), or None for a
    reference without one here.

    >>> m = reference_mechanism("staircase", {"gamma": 0.25}, 1.0, 1e-6, 1.0)
    >>> m.name, m.gamma
    ('staircase', 0.25)
    """
    from optmech.mechanisms.approx.truncated import TruncatedLaplace
    from optmech.mechanisms.approx.gaussian import Gaussian
    from optmech.mechanisms.laplace import Laplace
    from optmech.mechanisms.staircase import Staircase
    from optmech.mechanisms.uniform import UniformContinuous

    if name == "staircase":
        return Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=parameters["gamma"])
    if name == "laplace":
        return Laplace(epsilon=epsilon, sensitivity=sensitivity)
    if name == "truncated_laplace":
        return TruncatedLaplace(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    if name in ("gaussian", "analytic_gaussian"):
        return Gaussian(sigma=parameters["sigma"], epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    if name == "uniform":
        return UniformContinuous(delta=delta, sensitivity=sensitivity)
    return None


def continuous_reference_values(problem, lo: float, up: float) -> list[ReferenceValue]:
    """The reference mechanisms for (ε, δ) on ℝ (:mod:`optmech.mechanisms.approx.references`), each at
    its best shift (:func:`optmech.mechanisms.shifts.shift_references`, the rule of every family)."""
    from optmech.mechanisms.approx.references import continuous_approx_references
    from optmech.mechanisms.shifts import shift_references

    bounds = continuous_approx_references(problem.cost, problem.epsilon, problem.delta, problem.sensitivity)
    bounds = shift_references(bounds, problem.cost, epsilon=problem.epsilon, sensitivity=problem.sensitivity,
                              delta=problem.delta, integer=False)
    return reference_values(bounds, lo, up)
