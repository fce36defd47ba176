"""The one solve loop, for every problem family (:func:`run`); :func:`optmech.drive.solve` wraps it.

spec → family (:mod:`optmech.families`) → builder → LinearProgram → solver → certificates → Result.

The loop asks the problem's family (found by :func:`optmech.families.family_for`) for a first
size, then repeats: build the LP, solve it, certify a lower bound (the repaired dual) and an upper
bound (an audited mechanism), keep the best bracket, record the step, and ask the family for the
next size, until the target gap, a stop rule, the time budget or the memory budget ends it.

The rules, written once here:

* **Best bracket.**  Each step's lower certificate and each certified upper bound is valid on its
  own, so the bracket is the largest certified lower bound and the smallest certified upper bound
  of any step, kept independently (:class:`optmech.certify.BestBracket`); the mechanism returned is
  the one whose audited cost is the upper end.
* **Time.**  One default budget, :data:`optmech.budget.DEFAULT_TIME_LIMIT` (300 s), for every family.
  A new step starts only while less than half of it is spent and the last step, taken ``STEP_FACTOR``
  times over, still fits; each LP gets what remains.
* **Memory.**  Each LP's estimated peak (the family's :meth:`estimate_bytes`) must fit
  :func:`optmech.budget.memory_budget`: the first LP is refused with one line, later steps stop.
* **Failures.**  A solver failure on the first LP is an error (exit status 4 at the CLI); on a later
  step the loop stops and keeps the bracket it has.
* **Stalls.**  ``STALL_LIMIT`` steps in a row without a better lower bound, or a lower bound whose
  certified rounding allowance is most of the remaining gap, stop the loop with the reason.
* **References** are compared with the bracket with one tolerance
  (:func:`optmech.certify.reference_inside`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from optmech.budget import DEFAULT_TIME_LIMIT, memory_budget
from optmech.certify import BestBracket, relative_gap
from optmech.errors import ProblemTooLarge, SolveFailed, SpecError
from optmech.families.base import Context, Step, Stop
from optmech.result import HistoryRecord, Status

#: A new step starts only if the last one, taken this many times over, fits in the time left.
STEP_FACTOR = 6.0
#: Steps in a row without a better certified lower bound after which the loop stops and says why.
STALL_LIMIT = 5


@dataclasses.dataclass
class Run:
    """What :func:`run` established: the best bracket, the steps and how the loop ended."""

    best: BestBracket
    history: list
    last: Step | None
    status: str
    message: str
    seconds: float


def run(family: Any, ctx: Context, target_gap: float) -> Run:
    """The loop (module docstring) for one family object; :func:`solve` wraps it into a Result."""
    best = BestBracket()
    for up in family.initial_uppers():
        best.offer_upper(up)
    first = family.start()
    history: list[dict] = []
    if isinstance(first, Stop):
        if first.lower is not None:
            best.lower = max(best.lower, first.lower)
        status, message = best.outcome(first.status or Status.GAP_NOT_REACHED.value, first.message)
        return Run(best, history, None, status, message, ctx.elapsed())
    size = first
    need, budget = family.estimate_bytes(size), memory_budget()
    if need > budget:
        raise ProblemTooLarge(family.size_message(size, need, budget))
    last: Step | None = None
    status, message = Status.GAP_NOT_REACHED.value, ""
    stalled, lower_before = 0, -math.inf
    for it in range(family.max_steps):
        t_step = time.perf_counter()
        built = family.build(size)
        try:
            raw = ctx.solve_lp(built.lp)
            lower = family.lower(built, raw)
            upper = family.upper(built, raw)
        except SolveFailed as exc:
            if last is None:
                raise
            message = f"refinement stopped: {exc}"
            break
        best.update(lower, upper)
        step = Step(it, built, raw, lower, upper, math.nan, 0.0)
        for extra in family.extra_uppers(step):
            best.offer_upper(extra)
        gap = relative_gap(best.lower, best.upper_value)
        step.gap, step.seconds = gap, time.perf_counter() - t_step
        step.diagnostics = family.diagnostics(built, raw, upper)
        last = step
        history.append(HistoryRecord(
            iteration=it, size=built.size, lp=built.lp.size(), solver_objective=raw.objective,
            lower_bound=lower.value, upper_bound=upper.value, upper_certified=bool(upper.certified),
            relative_gap=gap, seconds=ctx.elapsed(), diagnostics=step.diagnostics).to_dict())
        if gap <= target_gap:
            status, message = Status.OPTIMAL.value, f"certified relative gap {gap:.3g} <= target {target_gap:g}"
            break
        stalled = stalled + 1 if lower.value <= lower_before else 0
        lower_before = max(lower_before, lower.value)
        if stalled >= STALL_LIMIT:
            message = (f"the certified lower bound stopped improving ({STALL_LIMIT} steps without gain): the last LP's "
                       f"solver objective is {raw.objective:.6g} but its duals certify only {lower.value:.6g}")
            break
        if it >= 2 and lower.rounding_loss > 0.5 * (best.upper_value - best.lower):
            message = (f"the lower bound is limited by floating-point conditioning: the certified allowance for rounding "
                       f"and data errors in the LP's reduced costs ({lower.rounding_loss:.3g}) is most of the remaining "
                       "gap; finer steps do not help (a tighter bracket needs exact or higher-precision arithmetic)")
            break
        elapsed = ctx.elapsed()
        if elapsed > 0.5 * ctx.time_limit or elapsed + STEP_FACTOR * step.seconds > ctx.time_limit:
            message = "time limit reached before the target gap"
            break
        nxt = family.grow(step, best)
        if isinstance(nxt, Stop):
            if nxt.lower is not None:
                best.lower = max(best.lower, nxt.lower)
            status, message = nxt.status or status, nxt.message
            break
        if family.estimate_bytes(nxt) > memory_budget():
            message = "size limit reached before the target gap (see OPTMECH_MAX_MEMORY_GB)"
            break
        size = nxt
    else:
        message = f"no convergence within {family.max_steps} refinements"
    status, message = best.outcome(status, message)
    return Run(best, history, last, status, message, ctx.elapsed())


def make_context(solver: str | None, time_limit: float | None) -> Context:
    """The solver profile and the clock for one solve (``time_limit`` None: ``DEFAULT_TIME_LIMIT``)."""
    from optmech.solvers import load_profile, solve_lp

    profile = load_profile(solver or "default")
    limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    if not (limit > 0 and math.isfinite(limit)):
        raise SpecError(f"time_limit must be positive, got {time_limit!r}")
    ctx = Context(profile, limit, time.perf_counter(), None)

    def solve(lp, share: float = 1.0):
        return solve_lp(lp, profile, time_limit=max(1.0, share * (ctx.time_limit - ctx.elapsed())))

    ctx.solve_lp = solve
    return ctx



__all__ = ["run", "make_context", "Run", "STEP_FACTOR", "STALL_LIMIT"]
