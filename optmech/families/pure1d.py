"""The 1-D pure ε-DP family: window LPs on ℤ or on cells of ℝ, refined adaptively.

Sizes are windows of whole periods on a grid (:class:`_Plan`); :meth:`Pure1DFamily.grow` widens
the window when the relaxation still uses mass outside it, or refines the cells where the
bracket loses most (continuous domain).  The loop itself is :func:`optmech.drive.run`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from optmech.budget import TIME_SAFETY, LPPlan, gib, memory_budget, now, out_of_time
from optmech.certify import (FAR_DECADES, FAR_MAX_CELLS, UpperCertificate, is_infimum_at_infinity, reference_inside,
                             upper_bound)
from optmech.errors import ProblemTooLarge, SpecError
from optmech.families.base import Built, Context, Step, Stop, default_lower
from optmech.problems.lattice import ENCLOSURE_CHUNK, TAIL_CHUNK_TERMS, Grid1D, SampledCells
from optmech.problems.pure import PureLP, build_general, build_periodic
from optmech.result import ReferenceValue
from optmech.solvers import backend_for
from optmech.spec import Continuous, IntegerLattice, Problem

#: The window reaches where the cost exceeds this multiple of a known upper bound (beyond it
#: the relaxation's excess mass is too expensive to use; the loop widens it if it is used).
WINDOW_COST_FACTOR = 1.0


@dataclass(frozen=True)
class _Plan:
    grid: Grid1D
    symmetric: bool
    k_lo: int
    k_hi: int


#: Bytes per window point beside the LP: the upper bound's repaired mechanism, its audit over the
#: window plus two tail periods, the point costs and tail sums (about 40 float64 arrays).
AUDIT_BYTES_PER_POINT = 8 * 40
#: The periodic builder's LP is solved exactly by the O(W) chain backend, not HiGHS: the whole step
#: (builder, mirror enclosures, the audit over six periods) took at most 0.95 KB per period point
#: on ℤ (W = 10^6) and 2.8 KB per cell (W = 10^5 cells), beside the tail sums.
PERIODIC_BYTES_PER_POINT = {"integer": 1600, "cells": 4000}
#: The general builder's LP couples each point with the 2W + 1 around it (van Herk blocks): the
#: simplex's LU factors grew like N·W, up to 6.3 bytes per (window point × period point) measured
#: beyond 1 KB per line (Δ = 3000–6000, N = 4Δ + 3: 0.19–1.1 GB above the baseline, 1.8 to 5.3
#: KB per line).  This term, with a margin of 1.4, keeps the estimate above those peaks.
FILL_BYTES = 9
#: With an interior-point backend (Clarabel, sparse LDLᵀ with AMD ordering) the factors stay nearly
#: linear: 9 KB per window point measured (Δ = 3000 and 10 000, N = 4Δ + 3) above the baseline, so
#: 12 KB per point with a margin replaces the simplex's N·W fill.
IPM_BYTES_PER_POINT = 12 * 1024
#: Tail series are summed ``TAIL_CHUNK_TERMS`` terms at a time: about 57 bytes per term measured
#: (W = 10^5), and an expression cost's enclosures take up to ~12 KB per element of their
#: ``ENCLOSURE_CHUNK`` blocks.
TAIL_BYTES_PER_TERM, ENCLOSURE_BYTES_PER_ELEMENT = 120, 16 * 1024
#: The first LP's build and certification, per window point, in units of the measured time per
#: point of the first upper bound (an audit and pricing of Laplace noise on 4W + 1 points):
#: 0.9–1.2 (build) and 0.4–0.6 (certify) measured on the general builder, 0.6 and 0.7 per period
#: point on the periodic one; the loop measures later steps itself.
BUILD_PER_AUDIT_POINT, CERTIFY_PER_AUDIT_POINT = 2.0, 1.5
#: The same for a cost expression on the general builder.  Its first upper bound is dominated by the
#: tail series (about 60 periods at epsilon = 1, each enclosed in interval arithmetic) while the LP
#: encloses its window once: the whole first LP (build, solve and certification) took 0.07 to 0.92
#: units per window point, measured on six expressions (nested where() steps of 1,300 characters
#: among them) at epsilon 0.3, 1 and 3; the units above predicted 3.5, and refused LPs that took a
#: second.
EXPR_BUILD_PER_AUDIT_POINT, EXPR_CERTIFY_PER_AUDIT_POINT = 1.0, 0.5
#: The first upper bound is timed on a grid this many times coarser before it runs on W points
#: of at least ``CALIBRATE_FROM``, and extrapolated by RATIO^CALIBRATE_GROWTH: its time grew like
#: W^1.02 to W^1.18 in our measurements (integers up to W = 10^5, cells up to 1024 per Δ).
CALIBRATE_FROM, CALIBRATE_RATIO, CALIBRATE_GROWTH = 2048, 8, 1.25


def tail_bytes(problem: Problem, grid: Grid1D) -> float:
    """Memory of the tail series (one block of terms) and of an expression's enclosure blocks."""
    b = math.exp(-problem.epsilon)
    periods = min(100_000, int(math.log(1e-19) / math.log(b)) + 16) if 0 < b < 1 else 100_000
    terms = min(TAIL_CHUNK_TERMS, periods * grid.W)
    expr = ENCLOSURE_BYTES_PER_ELEMENT * ENCLOSURE_CHUNK if problem.cost.kind == "expr" else 0
    return TAIL_BYTES_PER_TERM * terms + expr


def lp_plan(plan: _Plan, seconds_per_point: float | None = None, beside: float = 0.0, solver: str = "highs",
            expression: bool = False) -> LPPlan:
    """The LP of ``plan`` before it is built: the builder :func:`_build` will use, its shape
    (:func:`optmech.problems.pure.build_general`: 3N + 2 columns, at most 6N rows and 13N
    nonzeros, and the solver's factors: simplex LU fill ``FILL_BYTES``·N·W, or
    ``IPM_BYTES_PER_POINT``·N when ``solver`` is ``"clarabel"``;
    :func:`~optmech.problems.pure.build_periodic`: W columns, W rows, 3W nonzeros), the audit's
    arrays plus ``beside`` (:func:`tail_bytes`), and the build and certification seconds when the
    first upper bound's pace per point is known (``expression``: the cost is an expression, whose
    general LP is predicted with ``EXPR_BUILD_PER_AUDIT_POINT`` and ``EXPR_CERTIFY_PER_AUDIT_POINT``)."""
    W = plan.grid.W
    rate = seconds_per_point
    if plan.symmetric:  # one period, solved by the chain backend; its tail sums cost about what the
        # first upper bound's do (4W points' worth), and the audit spans 2 x 3 periods
        build_pts, audit_pts = 4 * W, 6 * W
        return LPPlan(rows=W + 1, cols=W, nonzeros=3 * W, builder="periodic", solver="chain",
                      lp_bytes=PERIODIC_BYTES_PER_POINT[plan.grid.kind] * W, extra_bytes=beside,
                      build_seconds=None if rate is None else BUILD_PER_AUDIT_POINT * build_pts * rate,
                      certify_seconds=None if rate is None else CERTIFY_PER_AUDIT_POINT * audit_pts * rate)
    N = plan.k_hi - plan.k_lo + 1
    factors = IPM_BYTES_PER_POINT * N if solver == "clarabel" else FILL_BYTES * N * W
    build, certify = ((EXPR_BUILD_PER_AUDIT_POINT, EXPR_CERTIFY_PER_AUDIT_POINT) if expression else
                      (BUILD_PER_AUDIT_POINT, CERTIFY_PER_AUDIT_POINT))
    return LPPlan(rows=6 * N, cols=3 * N + 2, nonzeros=13 * N, builder="general", solver=solver,
                  extra_bytes=AUDIT_BYTES_PER_POINT * N + factors + beside,
                  build_seconds=None if rate is None else build * N * rate,
                  certify_seconds=None if rate is None else certify * N * rate)


def _size_message(what: str, lp: LPPlan, points: int, need: float, budget: float) -> str:
    where = f"{points} points per period" if lp.builder == "periodic" else f"{points} lattice points"
    return (f"{what} needs about {gib(need)} GiB ({where}, {lp.builder} builder, "
            f"{lp.rows} rows, {lp.cols} columns, {lp.nonzeros} nonzeros); the limit is {gib(budget)} GiB: lower the "
            "sensitivity or resolution, raise --target-gap, or set OPTMECH_MAX_MEMORY_GB")


def _grid(problem: Problem, resolution: int) -> Grid1D:
    if isinstance(problem.domain, IntegerLattice):
        return Grid1D.integer(int(problem.sensitivity))
    return Grid1D.cells(problem.sensitivity, resolution)


#: Sample minorants (:class:`~optmech.problems.lattice.SampledCells`) are used this many periods beyond
#: the window, at most: past them the tail weights e^{−ε·periods} are below e^{−30}.
SAMPLED_TAIL_PERIODS = 30.0
#: How the build and certification seconds of a sampled-cells step grow with its LP (0.7 measured from
#: 64 to 1024 cells per period on ℝ, N = 4W + 2; a margin above linear).
SAMPLED_GROWTH = 1.1


def sampled_refinement(gap: float, target: float, most: int = 16) -> int:
    """Factor (a power of two, 2 to ``most``) by which to multiply the cells per period of a
    :class:`~optmech.problems.lattice.SampledCells` grid: its bracket closes like h², so the factor
    that takes ``gap`` to half of ``target`` is about sqrt(2·gap/target)."""
    if not (math.isfinite(gap) and gap > 0 and target > 0):
        return 2
    want = math.sqrt(2.0 * gap / target)
    return int(min(most, max(2, 2 ** math.ceil(math.log2(max(want, 1.0))))))


def _sampled_grid(problem: Problem, resolution: int, extent_x: tuple[float, float]) -> SampledCells:
    """Uniform cells with second-order sample minorants out to the window plus the tails that matter."""
    periods = math.ceil(max(extent_x) / problem.sensitivity) + 2
    periods += min(2000, math.ceil(SAMPLED_TAIL_PERIODS / problem.epsilon))
    return SampledCells.with_resolution(problem.sensitivity, resolution, near=periods * resolution)


def _symmetric_ok(problem: Problem) -> bool:
    """Whether the symmetric, monotone (periodic) reduction may be used: only when the cost is
    **proven** symmetric and nondecreasing in |x| on the whole domain (``Cost.is_symmetric_nondecreasing``);
    otherwise the general builder, which assumes nothing about the cost's shape."""
    if problem.symmetry == "off":
        return False
    return problem.cost.is_symmetric_nondecreasing(integer=isinstance(problem.domain, IntegerLattice))


def laplace_upper(problem: Problem, grid: Grid1D, periods: int = 0) -> UpperCertificate:
    """Certified upper bound from the (discrete) Laplace law on the grid, ∝ e^{−ε|x − c|/Δ},
    centred at c = ``periods``·Δ (a shift of ε-DP noise is ε-DP noise)."""
    W = grid.W
    k = np.arange(-2 * W, 2 * W + 1) if grid.kind == "integer" else np.arange(-2 * W, 2 * W)
    c = np.abs(grid.center(k))
    weights = np.exp(-problem.epsilon * (c - c.min()) / grid.period)
    return upper_bound(grid, int(k[0]) + int(periods) * W, weights, problem.epsilon, problem.cost)


def _far_upper(problem: Problem, grid: Grid1D, reference: float,
               affordable=lambda: True) -> tuple[UpperCertificate, float] | None:
    """The best certified upper bound from Laplace noise centred far from 0, and its centre.

    A cost that is not proven nondecreasing in |x| may be cheaper far out (``abs(x)/(1+x**2)``
    tends to 0): then V* is approached by noise centred ever farther away, and no window around 0
    can compete.  Tried at ±10^j·Δ for j in ``FAR_DECADES`` on each side where the cost is not
    proven to stay above ``reference`` (the centred noise's cost) beyond 100 periods; None when
    none is certified; ``affordable()`` is asked before each try (the time budget: the bound is optional).
    """
    best = None
    for sign in (1, -1):
        # a side whose proven minimum beyond 100 periods is at least the centred noise's cost cannot
        # offer cheaper noise out there: skip it (the far bound is optional, so this only saves time)
        k_first = 100 * grid.W if sign > 0 else -100 * grid.W - 1
        if grid.outside_min(problem.cost, k_first, sign) >= reference:
            continue
        prev = math.inf
        for j in FAR_DECADES:
            if 10.0**j * grid.W > FAR_MAX_CELLS:  # keep cell indices and edges far from float64's limits
                break
            if not affordable():
                return best
            try:
                up = laplace_upper(problem, grid, sign * 10**j)
            except (ArithmeticError, ValueError, OverflowError):
                break
            if not up.certified or up.value > 2.0 * prev:  # no better farther out on this side (a heuristic stop)
                break
            prev = up.value
            if best is None or up.value < best[0].value:
                best = (up, sign * 10.0**j * grid.period)
    return best


def _extent(problem: Problem, grid: Grid1D, v_ub: float, direction: int) -> float:
    """Distance from 0 beyond which the window may stop, on one side.

    The relaxation prices mass outside the window at the cost's minimum there, so the window must
    reach where that minimum exceeds 2·v_ub (then the optimum parks nothing outside); a cost that
    never gets there stops at a mass criterion, e^{−ε·periods} below the target gap.
    """
    efolds = math.log(1.0 / problem.target_gap) + 10.0
    mass_periods = max(2, int(math.ceil(efolds / problem.epsilon)))
    periods = 2
    while periods < mass_periods:
        k_first = periods * grid.W if direction > 0 else -periods * grid.W - 1
        if grid.outside_min(problem.cost, k_first, direction) >= WINDOW_COST_FACTOR * v_ub:
            return periods * grid.period
        periods = periods + max(1, periods // 2)
    return mass_periods * grid.period


def _outside_price(problem: Problem, plan: _Plan) -> float:
    """The smaller of the prices the relaxation puts on mass beyond either end of the window."""
    grid = plan.grid
    return min(grid.outside_min(problem.cost, plan.k_lo - 1, -1), grid.outside_min(problem.cost, plan.k_hi + 1, +1))


def _build(problem: Problem, plan: _Plan) -> PureLP:
    if plan.symmetric:
        return build_periodic(plan.grid, problem.epsilon, problem.cost)
    return build_general(plan.grid, problem.epsilon, problem.cost, plan.k_lo, plan.k_hi)


def _plan(grid: Grid1D, extent_x: tuple[float, float], symmetric: bool) -> _Plan:
    """Window of whole periods covering [−extent_x[0], extent_x[1]], at least two each side."""
    lo = max(2 * grid.W + 1, grid.cells_beyond(extent_x[0]))
    hi = max(2 * grid.W + 1, grid.cells_beyond(extent_x[1]))
    if symmetric:
        lo = hi = max(lo, hi)
    if grid.kind == "integer":
        return _Plan(grid, symmetric, -lo, hi)
    return _Plan(grid, symmetric, -lo, hi - 1)


#: Fraction of the estimated loss whose cells are split in one refinement (Dörfler marking).
MARK = 0.6


def _refine_grid(problem: Problem, lp: PureLP, x: np.ndarray) -> Grid1D:
    """Split the cells where the bracket loses most, in every period at once [derived].

    A cell's loss is the difference between what the upper bound pays for it (the cell-mean cost)
    and what the relaxation pays (the cell minimum; on the monotone path the in-cell correction
    makes flat stretches exact, leaving the loss at density drops and in the width of the
    enclosure of each cell's mean cost).  Losses are summed over the
    periods and the mirror image, and the base cells that carry a fraction ``MARK`` of it are
    cut into four (Dörfler marking, as in adaptive finite elements).
    """
    grid = lp.grid
    g = lp.window_weights(x)
    k = np.arange(lp.k_lo, lp.k_hi + 1)
    w = grid.width(k)
    mean = grid.cost_upper(problem.cost, k)
    low = grid.cost_lower(problem.cost, k)
    slack = np.where(np.isfinite(mean - low), np.maximum(mean - low, 0.0), 0.0)
    if lp.variant == "periodic":
        nxt = np.append(g[1:], 0.0)
        prv = np.insert(g[:-1], 0, 0.0)
        drop = np.where(k >= 0, g - nxt, g - prv)
        # plus the width of the enclosure of the cell mean itself (first order for expressions,
        # whose integrals are bounded piecewise; zero for the named costs' exact integrals)
        fuzz = mean - grid.cell_mean_lower(problem.cost, k)
        fuzz = np.where(np.isfinite(fuzz), np.maximum(fuzz, 0.0), 0.0)
        loss = w * (np.maximum(drop, 0.0) * slack + g * fuzz)
    else:
        loss = w * g * slack
    r = np.mod(k, grid.W)
    score = np.bincount(r, weights=loss, minlength=grid.W)
    score = score + score[::-1]
    # Dörfler marking: the fewest cells that carry a fraction MARK of the total loss
    order = np.argsort(score)[::-1]
    cum = np.cumsum(score[order])
    if not cum[-1] > 0:
        top = np.arange(grid.W)
    else:
        top = order[: int(np.searchsorted(cum, MARK * cum[-1])) + 1]
    e = grid.edges
    new = [e[top] + (e[top + 1] - e[top]) * f for f in (0.25, 0.5, 0.75)]
    return Grid1D.from_edges(grid.period, np.concatenate([e, *new]))


class Pure1DFamily:
    """1-D pure ε-DP on ℤ or ℝ (and (ε, 0)-DP on ℤ): the window LPs of :mod:`optmech.problems.pure`.

    Sizes are :class:`_Plan` (grid + window).  The first upper bound is the (discrete) Laplace law
    (and, for a cost not proven nondecreasing in |x|, Laplace noise centred far out, which may show
    that V* is an infimum at infinity before any LP).  :meth:`grow` widens the window while the
    relaxation parks mass outside it, then splits the cells where the bracket loses most
    (continuous domain), or widens once more on the general builder.
    """

    name = "pure_1d"
    max_steps = 30

    def __init__(self, problem: Problem, ctx: Context) -> None:
        from optmech.spec import ApproxDP, PureDP

        if isinstance(problem.privacy, ApproxDP):  # δ = 0: pure ε-DP on ℤ, by the pure machinery
            problem = dataclasses.replace(problem, privacy=PureDP(problem.epsilon))
        self.problem, self.ctx = problem, ctx
        eps, cost = problem.epsilon, problem.cost
        continuous = isinstance(problem.domain, Continuous)
        self.continuous = continuous
        self.fixed_resolution = continuous and problem.domain.resolution is not None
        resolution = problem.domain.resolution if self.fixed_resolution else (16 if continuous else 1)
        self.symmetric = _symmetric_ok(problem)
        # the smallest LP this problem could use (two periods each side), with the builder it would use,
        # checked before any grid is made
        lp_resolution = 64 if continuous and not self.fixed_resolution and not self.symmetric else resolution
        W = int(problem.sensitivity) if not continuous else lp_resolution
        stand_in = SimpleNamespace(W=W, kind="cells" if continuous else "integer")
        smallest, budget = _Plan(stand_in, self.symmetric, -(2 * W + 1), 2 * W + 1), memory_budget()
        self.seconds_per_point = None
        if self.estimate_bytes(smallest) > budget:
            raise ProblemTooLarge(self.size_message(smallest, self.estimate_bytes(smallest), budget, "the smallest LP "
                                                    "for this problem"))
        grid = _grid(problem, resolution)
        lp_grid = _grid(problem, lp_resolution) if lp_resolution != resolution else grid
        k0 = np.arange(-2 * grid.W - 1, 2 * grid.W + 1)
        cost.check_values(grid.center(k0) if continuous else k0)
        floor = grid.cost_floor(cost)
        if not math.isfinite(floor):
            raise SpecError(
                f"cost '{cost.spec}' could not be bounded below on {'ℤ' if not continuous else 'ℝ'} by interval "
                "arithmetic (terms that cancel far from 0, such as sqrt(abs(x)) - sqrt(abs(x)), leave it unbounded), so "
                "no lower bound can be certified; write it so that each term is bounded, e.g. with where(), min() or max()"
            )
        # a first certified upper bound, which also sizes the window (and times the audit)
        ub0 = self._first_upper(grid)
        if not math.isfinite(ub0.value):
            raise SpecError(
                f"cost '{cost.spec}' grows too fast: no ε-DP noise with epsilon={eps:g} has a finite "
                "expected cost that optmech can bound"
            )
        self.floor = floor
        self.first_upper, self.far_centre, self.infimum = ub0, None, None
        if cost.kind == "expr" and not self.symmetric:
            # optional: tried while each try (about one first upper bound) leaves half of the time limit
            t_try = 2.0 * self.seconds_per_point * (4 * grid.W + 1)
            far = _far_upper(problem, _grid(problem, 4) if continuous else grid, ub0.value,  # coarse cells suffice out there
                             lambda: ctx.elapsed() + t_try <= 0.5 * ctx.time_limit)
            if far is not None and is_infimum_at_infinity(far[0].value, floor, ub0.value, problem.target_gap):
                self.infimum = far
            elif far is not None and far[0].value < ub0.value:
                self.first_upper, self.far_centre = far  # noise far out beats noise at 0: an upper bound
        self.extent_x = (_extent(problem, grid, ub0.value, -1), _extent(problem, grid, ub0.value, +1))
        # a general cost on ℝ with an adaptive grid: the sample-minorant ("lattice sandwich") bounds, whose
        # bracket closes like h² on uniform cells, instead of the cell minima (first order in h)
        self.sampled = continuous and not self.fixed_resolution and not self.symmetric
        if self.sampled:
            lp_grid = _sampled_grid(problem, lp_resolution, self.extent_x)
            # grow() refines by at most what the time left allows, and at least 2x: the next step takes
            # about 2^SAMPLED_GROWTH times this one, with the loop's safety margin
            self.step_factor = 2.0**SAMPLED_GROWTH * TIME_SAFETY
        self.grid = lp_grid
        self.widened, self.gap_before_widening = False, math.inf
        self.stuck, self.last_price, self.best_before = 0, -math.inf, -math.inf

    def _first_upper(self, grid: Grid1D) -> UpperCertificate:
        """:func:`laplace_upper` on ``grid``, refused with one line when the time limit cannot hold it;
        records the seconds per point, which predict the first LP's build and certification.

        For W >= ``CALIBRATE_FROM`` it is timed first on grids 64 and ``CALIBRATE_RATIO`` times
        coarser: refused when even the linear extrapolation of either does not fit in the time left,
        or the cautious one (``CALIBRATE_GROWTH``) of the finer one."""
        problem, ctx, W = self.problem, self.ctx, grid.W
        if W >= CALIBRATE_FROM:
            for ratio in (64, CALIBRATE_RATIO):
                small = W // ratio
                g = Grid1D.integer(small) if grid.kind == "integer" else Grid1D.cells(problem.sensitivity, small)
                t = now()
                laplace_upper(problem, g)
                t = now() - t
                for need in ((t * ratio, t * ratio**CALIBRATE_GROWTH) if ratio == CALIBRATE_RATIO else (t * ratio,)):
                    if ctx.elapsed() + need > ctx.time_limit:
                        raise out_of_time(ctx.time_limit, f"the first upper bound (Laplace noise audited and priced on "
                                          f"{4 * W + 1} lattice points, before any LP) would need about {need:.3g} s, "
                                          f"more than the {ctx.remaining():.3g} s left")
        t = now()
        ub0 = laplace_upper(problem, grid)
        self.seconds_per_point = (now() - t) / (4 * W + 1)
        return ub0

    # -- the protocol ----------------------------------------------------------------------------
    def initial_uppers(self) -> list:
        return [self.infimum[0] if self.infimum is not None else self.first_upper]

    def start(self) -> _Plan | Stop:
        if self.infimum is not None:
            up, centre = self.infimum
            return Stop(f"V* is an infimum in [{self.floor:.6g}, {up.value:.6g}], approached far from 0: Laplace noise "
                        f"centred at x = {centre:.3g} costs <= {up.value:.6g} (certified) and no noise costs less than "
                        "the cost's proven floor; no window LP is needed (or could do better than that floor)",
                        status="infimum_at_infinity", lower=self.floor)
        plan = _plan(self.grid, self.extent_x, self.symmetric)
        if self.estimate_bytes(plan) <= memory_budget():
            self.problem.cost.check_values(plan.grid.center(np.arange(plan.k_lo, plan.k_hi + 1)))
        return plan

    def plan(self, plan: _Plan) -> LPPlan:
        """The LP of ``plan`` before it is built (builder, shape, memory, predicted seconds)."""
        solver = "highs"
        if not plan.symmetric:
            N = plan.k_hi - plan.k_lo + 1
            solver = backend_for(self.ctx.profile, "general", 3 * N + 2) or "highs"
        lp = lp_plan(plan, self.seconds_per_point, tail_bytes(self.problem, plan.grid), solver,
                     expression=self.problem.cost.kind == "expr")
        if isinstance(plan.grid, SampledCells):  # vectorised enclosures and sums per cell: linear in N
            lp = dataclasses.replace(lp, growth=SAMPLED_GROWTH)
        return lp

    def estimate_bytes(self, plan: _Plan) -> float:
        """The process's estimated peak while it builds, solves and certifies the LP of ``plan``
        (imports included: :meth:`optmech.budget.LPPlan.peak_bytes`)."""
        return self.plan(plan).peak_bytes()

    def size_message(self, plan: _Plan, need: float, budget: float, what: str = "this problem") -> str:
        points = plan.grid.W if plan.symmetric else plan.k_hi - plan.k_lo + 1
        return _size_message(what, self.plan(plan), points, need, budget)

    def fallback_lower(self) -> tuple[float, str]:
        """A certified lower bound without any LP: the cost's proven floor on the domain."""
        return self.floor, "the cost's proven floor on the domain (every noise costs at least inf L)"

    def build(self, plan: _Plan) -> Built:
        lp = _build(self.problem, plan)
        size = {"window": [plan.k_lo, plan.k_hi], "cells_per_period": plan.grid.W if self.continuous else None}
        return Built(lp.lp, size, (plan, lp), lp.variant)

    lower = staticmethod(default_lower)

    def upper(self, built: Built, raw) -> UpperCertificate:
        plan, lp = built.model
        return upper_bound(plan.grid, lp.k_lo, lp.window_weights(raw.x), self.problem.epsilon, self.problem.cost)

    def extra_uppers(self, step: Step) -> list:
        return []

    def diagnostics(self, built: Built, raw, upper) -> dict:
        return {"excess_mass": built.model[1].excess(raw.x)}

    def grow(self, step: Step, best) -> _Plan | Stop:
        """Widen the window while the relaxation parks mass outside it; else refine the cells
        (continuous, Dörfler marking) or widen once more on the general builder while that pays."""
        problem = self.problem
        plan, lp = step.built.model
        lo, gap = step.lower, step.gap
        grown_without_gain = self.widened and gap > 0.5 * self.gap_before_widening
        self.widened = False
        if step.diagnostics["excess_mass"] > 1e-3 * problem.target_gap:
            price = _outside_price(problem, plan)
            self.stuck = self.stuck + 1 if (price <= self.last_price + 1e-3 * abs(self.last_price)
                                            and lo.value <= self.best_before + 1e-6 * abs(self.best_before)) else 0
            self.last_price, self.best_before = price, max(self.best_before, lo.value)
            if self.stuck >= 2:
                return Stop(
                    f"the lower bound cannot improve: the relaxation parks mass outside the window, where the cost's "
                    f"proven minimum stays at {price:.6g} however wide the window grows; write the cost so that "
                    "interval arithmetic bounds it away from 0 far out (e.g. where(x >= 0, x, 3*abs(x)) rather than "
                    "a sum of terms that cancel)")
            self.extent_x = (1.5 * self.extent_x[0], 1.5 * self.extent_x[1])
            grid = _sampled_grid(problem, plan.grid.W, self.extent_x) if self.sampled else plan.grid
            return _plan(grid, self.extent_x, self.symmetric)
        if self.sampled:  # the bracket closes like h²: refine uniformly, straight to the predicted resolution
            # the window need only reach where the cost exceeds the best certified upper bound (the first
            # window was sized with Laplace noise's cost); any window is a relaxation, and one the LP
            # outgrows parks mass outside and is widened again above
            if math.isfinite(best.upper_value):
                self.extent_x = tuple(min(e, _extent(problem, plan.grid, best.upper_value, d))
                                      for e, d in zip(self.extent_x, (-1, +1)))
            factor = sampled_refinement(gap, problem.target_gap)
            # a step longer than the time left would end the solve with the coarser bracket: refine less
            while factor > 2 and step.seconds * factor**SAMPLED_GROWTH * TIME_SAFETY > self.ctx.remaining():
                factor //= 2
            return _plan(_sampled_grid(problem, plan.grid.W * factor, self.extent_x), self.extent_x, self.symmetric)
        if self.continuous and not self.fixed_resolution:
            return _plan(_refine_grid(problem, lp, step.raw.x), self.extent_x, self.symmetric)
        if not self.symmetric and not grown_without_gain:
            self.extent_x = (2.0 * self.extent_x[0], 2.0 * self.extent_x[1])
            self.widened, self.gap_before_widening = True, gap
            return _plan(plan.grid, self.extent_x, self.symmetric)
        if lo.rounding_loss > 0.5 * (best.upper_value - best.lower):
            eps = problem.epsilon
            return Stop(f"the lower bound is limited by floating-point conditioning: at epsilon={eps:g} the LP's "
                        f"coefficients span e^epsilon = {math.exp(eps):.3g}, and the certified allowance for rounding and "
                        f"data errors in its reduced costs ({lo.rounding_loss:.3g}) is most of the remaining gap")
        return Stop("the resolution is fixed (--resolution); the remaining gap is the discretisation's"
                    if self.continuous else "a wider window does not help: the remaining gap is the solver's accuracy")

    def references(self, lower: float, upper: float) -> list[ReferenceValue]:
        return _references(self.problem, lower, upper)

    def report(self, best, last: Step | None, status: str) -> dict:
        from optmech.mechanisms.tabulated import Tabulated

        problem, cost, eps = self.problem, self.problem.cost, self.problem.epsilon
        continuous = self.continuous
        up = best.upper
        mechanism = Tabulated.from_law(up.mechanism, eps) if up is not None and up.mechanism is not None else None
        audit = {"realised_epsilon": up.audit.realised_epsilon if up else None, "target_epsilon": eps,
                 "passed": bool(up and up.audit.passed), "method": up.audit.method if up else None,
                 "repaired_mass_change": up.repaired_mass if up else None}
        if last is None and self.infimum is None:  # the time limit came before the first LP
            far = self.far_centre is not None and up is self.first_upper
            return {
                "problem": {"cells_per_period": self.grid.W if continuous else None},
                "mechanism": mechanism, "audit": audit, "builder": "none (time limit before the first LP)",
                "truncation": {"tail_mass": up.tail_mass if up else None,
                               "lower_bound": "the cost's proven floor on the domain (every noise costs at least inf L)",
                               "upper_bound": "(discrete) Laplace noise" + (f" centred at {self.far_centre:.6g}" if far else "")
                               + ", audited with its geometric tails"},
                "claims": [
                    "lower bound: E L(X) >= inf L for every noise X, and the cost's floor on the domain is proven by "
                    "interval arithmetic (no LP was solved within the time limit)",
                    "upper bound: the (discrete) Laplace law" + (f" centred at {self.far_centre:.6g} (a shift of ε-DP "
                                                                 "noise is ε-DP)" if far else "")
                    + " was audited and priced with rigorous enclosures of the cost and its tails",
                    _floor_claim(cost, integer=not continuous),
                ],
            }
        if last is None:  # V* an infimum at infinity: no LP ran
            centre = self.infimum[1]
            return {
                "problem": {"cells_per_period": self.grid.W if continuous else None},
                "mechanism": mechanism, "audit": audit, "builder": "none (far-centred noise)",
                "truncation": {"centre": centre, "tail_mass": up.tail_mass,
                               "lower_bound": "the cost's proven floor on the domain (every noise costs at least inf L)",
                               "upper_bound": "(discrete) Laplace noise centred far from 0, audited with its geometric tails"},
                "claims": [
                    "lower bound: E L(X) >= inf L for every noise X, and the cost's floor on the whole domain is proven "
                    "by interval arithmetic",
                    f"upper bound: a shift of ε-DP noise is ε-DP; the (discrete) Laplace law centred at {centre:.6g} was "
                    "audited and priced with rigorous enclosures of the cost and its tails",
                    _floor_claim(cost, integer=not continuous),
                ],
            }
        plan = last.built.model[0]
        claims = []
        if self.symmetric:
            claims.append(
                "symmetric, monotone, periodic reduction [Geng13, Lemmas A.3, A.8, A.10; A.15-A.17; "
                "Thm 2.4, 2.13]: one period of W variables with p(x+Δ) = e^-ε p(x); the cost was "
                + ("proven symmetric and nondecreasing in |x| by construction" if cost.monomial is not None else
                   "proven symmetric (by construction) and nondecreasing in |x| on all of "
                   + ("ℤ" if not continuous else "ℝ") + " (interval derivatives over a cover of [0, ∞) cut at its "
                   "breakpoints, upward jumps there)")
            )
        elif problem.symmetry != "off":
            claims.append("general builder, which uses no symmetry or monotonicity of the cost: it was not proven "
                          "symmetric and nondecreasing in |x| on the whole domain (the periodic reduction needs that proof)")
        if self.far_centre is not None and up is self.first_upper:
            claims.append(
                f"upper bound: (discrete) Laplace noise centred at {self.far_centre:.6g} (a shift of ε-DP noise is ε-DP), "
                "audited and priced with rigorous enclosures; it beats every mechanism the window LP found, so the "
                "cost is cheapest far from 0"
            )
        if continuous and isinstance(plan.grid, SampledCells):
            claims.append(
                "continuous domain via sampled cells (second order) [derived]: for almost every offset t the "
                "density at the sample points (k + 1/2)h + t is an ε-DP sequence with sensitivity W; affine "
                "minorants g_k of the cost between consecutive sample points (chords lowered by h/4 times the width "
                "of an interval enclosure of the cost's slope, or the cost's minimum there) make the best cost "
                "over t concave, so the window LP with point costs min(g_k(0), g_(k-1)(h)) bounds V* below; upper "
                "bound from the piecewise-constant density on the cells centred at the sample points, priced at "
                "the cost at each midpoint plus h/8 times its slope width (the cell mean's enclosure where the "
                "cost is not proven Lipschitz)"
            )
        elif continuous:
            claims.append(
                "continuous domain via cells [Geng13, Lemma A.6]: lower bound from cell masses with the "
                "cost's minimum over each cell"
                + (" and the monotone in-cell correction" if self.symmetric else "")
                + "; upper bound from a piecewise-constant density priced at the cell-mean cost"
            )
        if cost.kind == "expr":
            claims.append(_floor_claim(cost, integer=not continuous))
        return {
            "problem": {"cells_per_period": plan.grid.W if continuous else None},
            "mechanism": mechanism,
            "audit": audit,
            "truncation": {
                "window": [plan.k_lo, plan.k_hi],
                "smallest_step": plan.grid.h,
                "period": plan.grid.period,
                "steps_per_period": plan.grid.W,
                "uniform_grid": plan.grid.uniform,
                "lower_bound": "relaxation: geometric lower-profile tails + excess mass at the minimum outside cost"
                + (" (point costs: second-order sample minorants)" if isinstance(plan.grid, SampledCells) else ""),
                "upper_bound": "restriction: majorant-repaired window with periodic geometric tails",
                "tail_mass": up.tail_mass if up else None,
            },
            "claims": claims,
        }


def _floor_claim(cost, *, integer: bool) -> str:
    """What was proven about the cost's sign on the domain, for ``claims``."""
    where = "on ℤ" if integer else "on ℝ"
    floor = cost.domain_minimum(integer=integer)
    how = ("interval arithmetic over the whole line: every integer |k| <= 4096, integer ranges beyond"
           if integer else "interval arithmetic over pieces covering the whole line")
    if floor >= 0:
        return (f"the cost was proven nonnegative {where} ({how}); every cell or point cost, the price of "
                "mass outside the window and the tail series use rigorous interval enclosures")
    return (f"the cost could only be proven >= {floor:.6g} {where} ({how}); the bounds use that floor where "
            "they need one (mass outside the window, truncated tail series), so no nonnegativity is assumed")


def _references(problem: Problem, lo: float, up: float) -> list[ReferenceValue]:
    from optmech.mechanisms import references_for

    domain = "integer" if isinstance(problem.domain, IntegerLattice) else "continuous"
    refs = []
    for r in references_for(problem.cost, problem.epsilon, problem.sensitivity, domain):
        inside = reference_inside(r.value, lo, up, r.exact)
        refs.append(ReferenceValue(r.name, r.value, dict(r.parameters), inside, r.exact, r.note))
    return refs
