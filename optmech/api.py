"""``optmech.solve``: spec → builder → LP → solver → certificates → Result, refined adaptively.

The loop keeps the best certified lower bound and the best certified upper bound seen over
all refinements (each is valid on its own), and refines the window (when the relaxation
still uses mass outside it) or the cell resolution (continuous domain) until the relative gap
reaches the target, the size limit or the time limit.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from optmech.budget import DEFAULT_MEMORY_GB, DEFAULT_TIME_LIMIT, memory_budget  # noqa: F401  (re-exported)
from optmech.certify import (FAR_DECADES, FAR_MAX_CELLS, UpperCertificate, dual_lower_bound, is_infimum_at_infinity,
                             upper_bound)
from optmech.errors import ProblemTooLarge, SolveFailed, SpecError
from optmech.problems.lattice import Grid1D
from optmech.problems.pure import PureLP, build_general, build_periodic
from optmech.result import ReferenceValue, Result, solver_info
from optmech.result import relative_gap as _gap
from optmech.spec import Continuous, IntegerLattice, Problem

#: Bytes per nonzero / per row-or-column that HiGHS needs, a conservative estimate [derived/measured].
BYTES_PER_NNZ = 160
BYTES_PER_LINE = 200
#: The window reaches where the cost exceeds this multiple of a known upper bound (beyond it
#: the relaxation's excess mass is too expensive to use; the loop widens it if it is used).
WINDOW_COST_FACTOR = 1.0


@dataclass(frozen=True)
class _Plan:
    grid: Grid1D
    symmetric: bool
    k_lo: int
    k_hi: int


def estimate_bytes(plan: _Plan) -> float:
    """Estimated peak memory of building and solving the LP of ``plan``."""
    return _estimate(plan.k_hi - plan.k_lo + 1, plan.grid.W, plan.symmetric)


def _estimate(points: int, W: int, periodic: bool) -> float:
    if periodic:  # one period (build_periodic), plus the tail sums and the audit's window
        return BYTES_PER_NNZ * 3 * W + BYTES_PER_LINE * 2 * W + 8 * 40 * W
    return BYTES_PER_NNZ * 12 * points + BYTES_PER_LINE * 9 * points


def _check_size(points: int, W: int, periodic: bool, what: str) -> None:
    need = _estimate(points, W, periodic)
    budget = memory_budget()
    if need > budget:
        raise ProblemTooLarge(
            f"{what} needs about {need / 2**30:.1f} GiB ({points} lattice points, "
            f"{'periodic' if periodic else 'general'} builder); the limit is "
            f"{budget / 2**30:.1f} GiB: lower the sensitivity or resolution, raise --target-gap, "
            f"or set OPTMECH_MAX_MEMORY_GB"
        )


def _grid(problem: Problem, resolution: int) -> Grid1D:
    if isinstance(problem.domain, IntegerLattice):
        return Grid1D.integer(int(problem.sensitivity))
    return Grid1D.cells(problem.sensitivity, resolution)


def _symmetric_ok(problem: Problem) -> bool:
    """Whether the symmetric, monotone (periodic) reduction may be used: only when the cost is
    **proven** symmetric and nondecreasing in |x| on the whole domain (``Cost.is_symmetric_nondecreasing``);
    otherwise the general builder, which assumes nothing about the cost's shape."""
    if problem.symmetry == "off":
        return False
    return problem.cost.is_symmetric_nondecreasing(integer=isinstance(problem.domain, IntegerLattice))


def _initial_upper(problem: Problem, grid: Grid1D, periods: int = 0) -> UpperCertificate:
    """Certified upper bound from the (discrete) Laplace law on the grid, ∝ e^{−ε|x − c|/Δ},
    centred at c = ``periods``·Δ (a shift of ε-DP noise is ε-DP noise)."""
    W = grid.W
    k = np.arange(-2 * W, 2 * W + 1) if grid.kind == "integer" else np.arange(-2 * W, 2 * W)
    c = np.abs(grid.center(k))
    weights = np.exp(-problem.epsilon * (c - c.min()) / grid.period)
    return upper_bound(grid, int(k[0]) + int(periods) * W, weights, problem.epsilon, problem.cost)


#: refinements in a row without a better lower bound after which the loop stops and says why
STALL_LIMIT = 5


def _far_upper(problem: Problem, grid: Grid1D, reference: float) -> tuple[UpperCertificate, float] | None:
    """The best certified upper bound from Laplace noise centred far from 0, and its centre.

    A cost that is not proven nondecreasing in |x| may be cheaper far out (``abs(x)/(1+x**2)``
    tends to 0): then V* is approached by noise centred ever farther away, and no window around 0
    can compete.  Tried at ±10^j·Δ for j in ``FAR_DECADES`` on each side where the cost is not
    proven to stay above ``reference`` (the centred noise's cost) beyond 100 periods; None when
    none is certified.
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
            try:
                up = _initial_upper(problem, grid, sign * 10**j)
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


def solve(
    problem: Problem,
    *,
    solver: str = "default",
    time_limit: float | None = None,
    max_refinements: int = 30,
) -> Result:
    """Solve an optimal-noise problem with a certified bracket.

    1-D pure ε-DP here; (ε, δ)-DP (1-D and d-D, integer domain) in :mod:`optmech.solve_approx`.

    Parameters
    ----------
    problem : Problem
    solver : str
        Solver profile name (``optmech/profiles``) or path to a TOML profile.
    time_limit : float, optional
        Wall-clock budget in seconds for the whole adaptive loop (default ``DEFAULT_TIME_LIMIT``);
        refinement stops once half of it is spent, and each LP gets what remains.
    max_refinements : int
        Upper limit on the number of LPs solved.

    Returns
    -------
    Result
        ``certified`` is true when both bounds are certified.  A bracket wider than the target
        gap is still certified; ``status`` is then ``"gap_not_reached"``.
    """
    from optmech.solvers import load_profile, solve_lp
    from optmech.spec import ApproxDP, PureDP

    if isinstance(problem.privacy, ApproxDP):
        if problem.privacy.delta > 0.0:
            from optmech.solve_approx import solve_approx

            return solve_approx(problem, solver=solver, time_limit=time_limit)
        # δ = 0: pure ε-DP on ℤ (1-D), by the pure machinery
        import dataclasses

        problem = dataclasses.replace(problem, privacy=PureDP(problem.epsilon))
    if problem.dim > 1:
        from optmech.solve_pure_nd import solve_pure_nd

        return solve_pure_nd(problem, solver=solver, time_limit=time_limit)
    t0 = time.perf_counter()
    if time_limit is None:
        time_limit = DEFAULT_TIME_LIMIT
    profile = load_profile(solver)
    eps, cost = problem.epsilon, problem.cost
    continuous = isinstance(problem.domain, Continuous)
    fixed_resolution = continuous and problem.domain.resolution is not None
    resolution = problem.domain.resolution if fixed_resolution else (16 if continuous else 1)
    # the smallest LP any plan could use (the periodic builder; the audit spans four periods)
    W = int(problem.sensitivity) if not continuous else resolution
    _check_size(4 * W + 3, W, True, "the smallest LP for this problem")
    grid = _grid(problem, resolution)
    k0 = np.arange(-2 * grid.W - 1, 2 * grid.W + 1)
    cost.check_values(grid.center(k0) if continuous else k0)

    floor = grid.cost_floor(cost)
    if not math.isfinite(floor):
        raise SpecError(
            f"cost '{cost.spec}' could not be bounded below on {'ℤ' if not continuous else 'ℝ'} by interval arithmetic "
            "(terms that cancel far from 0, such as sqrt(abs(x)) - sqrt(abs(x)), leave it unbounded), so no lower bound "
            "can be certified; write it so that each term is bounded, e.g. with where(), min() or max()"
        )
    # a first certified upper bound, which also sizes the window
    ub0 = _initial_upper(problem, grid)
    if not math.isfinite(ub0.value):
        raise SpecError(
            f"cost '{cost.spec}' grows too fast: no ε-DP noise with epsilon={eps:g} has a finite "
            "expected cost that optmech can bound"
        )
    symmetric = _symmetric_ok(problem)
    first_upper, far_centre = ub0, None
    if cost.kind == "expr" and not symmetric:
        far = _far_upper(problem, _grid(problem, 4) if continuous else grid, ub0.value)  # coarse cells suffice out there
        if far is not None and is_infimum_at_infinity(far[0].value, floor, ub0.value, problem.target_gap):
            return _infimum_result(problem, grid, far, floor, profile, t0)
        if far is not None and far[0].value < ub0.value:
            first_upper = far[0]  # noise far out beats noise at 0: keep it as an upper bound
            far_centre = far[1]
    extent_x = (_extent(problem, grid, ub0.value, -1), _extent(problem, grid, ub0.value, +1))
    if continuous and not fixed_resolution and not symmetric:
        grid = _grid(problem, 64)
    plan = _plan(grid, extent_x, symmetric)
    _check_size(plan.k_hi - plan.k_lo + 1, grid.W, symmetric, "this problem")
    cost.check_values(grid.center(np.arange(plan.k_lo, plan.k_hi + 1)))

    best_lo, best_up = -math.inf, first_upper
    stalled, best_lo_before = 0, -math.inf  # refinements in a row that did not raise the lower bound
    lo_cert = None
    history: list[dict] = []
    last_raw = None
    last_lp: PureLP | None = None
    status, message = "gap_not_reached", ""
    widened, gap_before_widening = False, math.inf
    stuck, last_price, best_before = 0, -math.inf, -math.inf  # widenings that did not raise the far price
    for it in range(max_refinements):
        lp = _build(problem, plan)
        remaining = max(1.0, time_limit - (time.perf_counter() - t0))
        try:
            raw = solve_lp(lp.lp, profile, time_limit=remaining)
        except SolveFailed as exc:
            if last_raw is None:
                raise
            message = f"refinement stopped: {exc}"
            break
        last_raw, last_lp = raw, lp
        lo = dual_lower_bound(lp.lp, raw.row_dual, raw.objective)
        up = upper_bound(plan.grid, lp.k_lo, lp.window_weights(raw.x), eps, cost)
        excess = lp.excess(raw.x)
        if lo.value > best_lo:
            best_lo, lo_cert = lo.value, lo
        if up.certified and up.value < best_up.value:
            best_up = up
        gap = _gap(best_lo, best_up.value)
        history.append({
            "iteration": it,
            "cells_per_period": plan.grid.W if continuous else None,
            "window": [plan.k_lo, plan.k_hi],
            "lp": lp.lp.size(),
            "solver_objective": raw.objective,
            "lower_bound": lo.value,
            "upper_bound": up.value,
            "upper_certified": up.certified,
            "excess_mass": excess,
            "relative_gap": gap,
            "seconds": time.perf_counter() - t0,
        })
        if gap <= problem.target_gap:
            status, message = "optimal", f"certified relative gap {gap:.3g} <= target {problem.target_gap:g}"
            break
        stalled = stalled + 1 if lo.value <= best_lo_before else 0
        best_lo_before = max(best_lo_before, lo.value)
        if stalled >= STALL_LIMIT:
            message = (
                f"the certified lower bound stopped improving ({STALL_LIMIT} refinements without gain): the last LP's "
                f"solver objective is {raw.objective:.6g} but its duals certify only {lo.value:.6g}"
                + (f" (at epsilon={eps:g} the coefficients span e^epsilon = {math.exp(eps):.3g}, beyond what the "
                   "solver's tolerances resolve)" if eps > 10 else "")
            )
            break
        if it >= 2 and lo.rounding_loss > 0.5 * (best_up.value - best_lo):
            message = (
                f"the lower bound is limited by floating-point conditioning: at epsilon={eps:g} the LP's coefficients "
                f"span e^epsilon = {math.exp(eps):.3g}, and the certified allowance for rounding and data errors in its "
                f"reduced costs ({lo.rounding_loss:.3g}) is most of the remaining gap; finer cells do not help (a "
                "tighter bracket needs exact or higher-precision arithmetic)"
            )
            break
        elapsed = time.perf_counter() - t0
        if elapsed > 0.5 * time_limit or elapsed + 4.0 * raw.seconds > time_limit:
            message = "time limit reached before the target gap"
            break
        # refine: the window if the relaxation still parks mass outside it, else the cells; a
        # window that looks big enough is still widened once, and again while that pays
        grown_without_gain = widened and gap > 0.5 * gap_before_widening
        widened = False
        if excess > 1e-3 * problem.target_gap:
            price = _outside_price(problem, plan)
            stuck = stuck + 1 if (price <= 1.001 * last_price and lo.value <= best_before * (1 + 1e-6)) else 0
            last_price, best_before = price, max(best_before, lo.value)
            if stuck >= 2:
                message = (
                    f"the lower bound cannot improve: the relaxation parks mass outside the window, where the cost's "
                    f"proven minimum stays at {price:.6g} however wide the window grows; write the cost so that "
                    "interval arithmetic bounds it away from 0 far out (e.g. where(x >= 0, x, 3*abs(x)) rather than "
                    "a sum of terms that cancel)"
                )
                break
            extent_x = (1.5 * extent_x[0], 1.5 * extent_x[1])
            new_plan = _plan(plan.grid, extent_x, symmetric)
        elif continuous and not fixed_resolution:
            new_grid = _refine_grid(problem, lp, raw.x)
            new_plan = _plan(new_grid, extent_x, symmetric)
        elif not symmetric and not grown_without_gain:
            extent_x = (2.0 * extent_x[0], 2.0 * extent_x[1])
            new_plan = _plan(plan.grid, extent_x, symmetric)
            widened, gap_before_widening = True, gap
        else:
            if lo.rounding_loss > 0.5 * (best_up.value - best_lo):
                message = (
                    f"the lower bound is limited by floating-point conditioning: at epsilon={eps:g} the LP's "
                    f"coefficients span e^epsilon = {math.exp(eps):.3g}, and the certified allowance for rounding and "
                    f"data errors in its reduced costs ({lo.rounding_loss:.3g}) is most of the remaining gap"
                )
            else:
                message = (
                    "the resolution is fixed (--resolution); the remaining gap is the discretisation's"
                    if continuous else "a wider window does not help: the remaining gap is the solver's accuracy"
                )
            break
        if estimate_bytes(new_plan) > memory_budget():
            message = "size limit reached before the target gap (see OPTMECH_MAX_MEMORY_GB)"
            break
        plan = new_plan
    else:
        message = f"no convergence within {max_refinements} refinements"

    assert last_raw is not None and last_lp is not None
    raw = last_raw
    seconds = time.perf_counter() - t0
    certified = math.isfinite(best_lo) and best_up.certified
    if not certified:
        status = "uncertified"
        message = message or "a certificate could not be established"
    refs = _references(problem, best_lo, best_up.value)
    mech = best_up.mechanism
    claims = []
    if symmetric:
        claims.append(
            "symmetric, monotone, periodic reduction [Geng13, Lemmas A.3, A.8, A.10; A.15-A.17; "
            "Thm 2.4, 2.13]: one period of W variables with p(x+Δ) = e^-ε p(x); the cost was "
            + ("proven symmetric and nondecreasing in |x| by construction" if cost.kind != "expr" else
               "proven symmetric (by construction) and nondecreasing in |x| on all of "
               + ("ℤ" if not continuous else "ℝ") + " (interval derivatives over a cover of [0, ∞) cut at its "
               "breakpoints, upward jumps there)")
        )
    elif problem.symmetry != "off":
        claims.append("general builder, which uses no symmetry or monotonicity of the cost: it was not proven "
                      "symmetric and nondecreasing in |x| on the whole domain (the periodic reduction needs that proof)")
    if far_centre is not None and best_up is first_upper:
        claims.append(
            f"upper bound: (discrete) Laplace noise centred at {far_centre:.6g} (a shift of ε-DP noise is ε-DP), "
            "audited and priced with rigorous enclosures; it beats every mechanism the window LP found, so the "
            "cost is cheapest far from 0"
        )
    if continuous:
        claims.append(
            "continuous domain via cells [Geng13, Lemma A.6]: lower bound from cell masses with the "
            "cost's minimum over each cell"
            + (" and the monotone in-cell correction" if symmetric else "")
            + "; upper bound from a piecewise-constant density priced at the cell-mean cost"
        )
    if cost.kind == "expr":
        claims.append(_floor_claim(cost, integer=not continuous))
    return Result(
        problem=problem.to_dict() | {"cells_per_period": plan.grid.W if continuous else None},
        lower_bound=best_lo,
        upper_bound=best_up.value,
        certified=certified,
        status=status,
        message=message,
        seconds=seconds,
        references=refs,
        lp=last_lp.lp.size() | {"solver": raw.backend, "builder": last_lp.variant},
        solver=solver_info(raw, profile),
        mechanism=mech,
        audit={
            "realised_epsilon": best_up.audit.realised_epsilon,
            "target_epsilon": eps,
            "passed": best_up.audit.passed,
            "method": best_up.audit.method,
            "repaired_mass_change": best_up.repaired_mass,
            "lower_bound_clipped_rows": lo_cert.clipped_rows if lo_cert else None,
            "lower_bound_error_term": lo_cert.error_term if lo_cert else None,
        },
        truncation={
            "window": [plan.k_lo, plan.k_hi],
            "smallest_step": plan.grid.h,
            "period": plan.grid.period,
            "steps_per_period": plan.grid.W,
            "uniform_grid": plan.grid.uniform,
            "lower_bound": "relaxation: geometric lower-profile tails + excess mass at the minimum outside cost",
            "upper_bound": "restriction: majorant-repaired window with periodic geometric tails",
            "tail_mass": best_up.tail_mass,
        },
        history=history,
        claims=claims,
    )



def _infimum_result(problem: Problem, grid: Grid1D, far: tuple[UpperCertificate, float], floor: float,
                    profile, t0: float) -> Result:
    """The answer when noise centred far from 0 is within the target of the cost's proven floor:
    V* is then an infimum approached at infinity, bracketed by [floor, far upper bound]."""
    up, centre = far
    continuous = isinstance(problem.domain, Continuous)
    message = (f"V* is an infimum in [{floor:.6g}, {up.value:.6g}], approached far from 0: Laplace noise centred at "
               f"x = {centre:.3g} costs <= {up.value:.6g} (certified) and no noise costs less than the cost's proven "
               "floor; no window LP is needed (or could do better than that floor)")
    return Result(
        problem=problem.to_dict() | {"cells_per_period": grid.W if continuous else None},
        lower_bound=floor,
        upper_bound=up.value,
        certified=True,
        status="infimum_at_infinity",
        message=message,
        seconds=time.perf_counter() - t0,
        references=_references(problem, floor, up.value),
        lp={"rows": 0, "cols": 0, "nonzeros": 0, "solver": None, "builder": "none (far-centred noise)"},
        solver={"backend": None, "method": None, "version": None, "status": "not run", "objective": None,
                "profile": profile.name, "options": {}, "failed_attempts": []},
        mechanism=up.mechanism,
        audit={
            "realised_epsilon": up.audit.realised_epsilon,
            "target_epsilon": problem.epsilon,
            "passed": up.audit.passed,
            "method": up.audit.method,
            "repaired_mass_change": up.repaired_mass,
            "lower_bound_clipped_rows": None,
            "lower_bound_error_term": None,
        },
        truncation={"centre": centre, "tail_mass": up.tail_mass,
                    "lower_bound": "the cost's proven floor on the domain (every noise costs at least inf L)",
                    "upper_bound": "(discrete) Laplace noise centred far from 0, audited with its geometric tails"},
        history=[],
        claims=[
            "lower bound: E L(X) >= inf L for every noise X, and the cost's floor on the whole domain is proven "
            "by interval arithmetic",
            f"upper bound: a shift of ε-DP noise is ε-DP; the (discrete) Laplace law centred at {centre:.6g} was "
            "audited and priced with rigorous enclosures of the cost and its tails",
            _floor_claim(problem.cost, integer=not continuous),
        ],
    )


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
        tol = 1e-12 if r.exact else 1e-9
        v = r.value
        inside = bool(math.isfinite(v) and lo - tol * abs(v) <= v <= up + tol * abs(v))
        refs.append(ReferenceValue(r.name, v, dict(r.parameters), inside, r.exact, r.note))
    return refs
