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
* **Time.**  One default budget, :data:`optmech.budget.DEFAULT_TIME_LIMIT` (300 s), for every family,
  and it bounds the whole solve, building and certifying included.  Before each step the loop
  predicts its build, the solver's start-up (HiGHS reads its clock only once it iterates) and its
  certification (from the family's :class:`~optmech.budget.LPPlan` for the first step, from the
  measured previous step afterwards: :class:`~optmech.budget.Pace`) and starts it only if that and
  ``FINAL_SECONDS`` for the report (or the family's ``final_seconds()``, when larger) fit in the time
  left; the solver gets what remains after the certification's share.  Beyond that, a new step starts only while less than half of the budget is
  spent and the last step, taken ``STEP_FACTOR`` times over (a family's ``step_factor`` when it
  sizes its steps to the time left itself), still fits.  A step that does not fit,
  or a solve stopped by its time limit, ends the loop with the best bracket so far
  (``gap_not_reached``, "time limit reached ..."); when the first LP does not fit, the family's
  bounds found without an LP are returned if they make a certified bracket
  (:meth:`fallback_lower` with a certified first upper bound), else the solve fails with one line
  (:class:`~optmech.budget.TimeLimitReached`, exit status 4 at the CLI).
* **Memory.**  Each LP's estimated peak (the family's :meth:`estimate_bytes`: the whole process's
  resident set, imports included) must fit :func:`optmech.budget.memory_budget`: the first LP is
  refused with one line (or, when the family chose its size and says so with ``size_is_explicit``
  false, answered with its certified bracket without an LP, as for the time limit), later steps
  stop.  The estimate and the builder it names are reported in ``Result.lp["budget"]``.
* **After the LPs**, while the bracket misses its target, the family's optional :meth:`final_lower` may
  raise the lower end in the time left (less ``FINAL_SECONDS``; the family keeps its share back through
  ``final_seconds()``): a bound the LPs rarely lose to, which would otherwise take time they need.
* **Without an LP** the bracket is the family's :meth:`fallback_lower` and the best certified upper
  bound among its first ones and the :meth:`fallback_uppers` it offers for that case only (also when its
  :meth:`start` answers with a :class:`Stop`: no LP will run, and the time left is theirs).
* **Failures.**  A solver failure on the first LP is an error (exit status 4 at the CLI), unless it
  is the time limit and a certified bracket exists without an LP (as above); on a later step the
  loop stops and keeps the bracket it has.
* **Stalls.**  ``STALL_LIMIT`` steps in a row without a better lower bound, or a lower bound whose
  certified rounding allowance is most of the remaining gap, stop the loop with the reason.
* **References** are compared with the bracket with one tolerance
  (:func:`optmech.certify.reference_inside`).
"""

from __future__ import annotations

import dataclasses
import math
import signal
import time
from typing import Any

from optmech.budget import DEFAULT_TIME_LIMIT, FINAL_SECONDS, Pace, TimeLimitReached, memory_budget, out_of_time
from optmech.certify import BestBracket, relative_gap
from optmech.errors import Interrupted, ProblemTooLarge, SolveFailed, SpecError
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
    budget: dict = dataclasses.field(default_factory=dict)


def _plan(family: Any, size: Any):
    """The family's :class:`~optmech.budget.LPPlan` for ``size`` (None for a family without ``plan``)."""
    plan = getattr(family, "plan", None)
    return plan(size) if plan is not None else None


def _describe(plan: Any) -> str:
    if plan is None:
        return "the LP"
    return f"the {plan.builder} LP ({plan.rows} rows, {plan.cols} columns, {plan.nonzeros} nonzeros)"


def _is_time_limit(exc: BaseException) -> bool:
    attempts = getattr(exc, "attempts", None)
    if isinstance(exc, TimeLimitReached):
        return True
    return bool(attempts) and all(a[2] == "time_limit" for a in attempts)


def _without_lp(family: Any, ctx: Context, best: BestBracket, reason: str, exc: BaseException | None,
                record: dict, limit: str = "time") -> Run:
    """The first LP does not fit in the time limit, or (``limit="memory"``, a size the family chose,
    not one the user asked for) in memory: ``reason`` says why.  The bracket the family has without
    an LP if it is certified (its :meth:`fallback_lower` and a certified first upper bound), else the
    one-line :class:`~optmech.budget.TimeLimitReached` (or the :class:`ProblemTooLarge` ``exc``)."""
    fallback = getattr(family, "fallback_lower", None)
    for up in getattr(family, "fallback_uppers", lambda: [])():  # bounds a family offers only without an LP
        best.offer_upper(up)
    if best.upper is not None and best.upper.certified:
        what = "the certified lower bound found before any LP"
        if fallback is not None:
            value, why = fallback()
            if value is not None and math.isfinite(value) and value >= best.lower:
                best.lower, what = float(value), why
        if math.isfinite(best.lower):
            advice = "; raise --time-limit for a tighter one" if limit == "time" else ""
            status, message = best.outcome(
                Status.GAP_NOT_REACHED.value,
                f"{limit} limit reached before the first LP ({reason}): the bracket is {what} and the certified "
                f"upper bound found before the first LP step{advice}")
            return Run(best, [], None, status, message, ctx.elapsed(), record)
    if limit == "memory" and exc is not None:
        raise exc
    err = out_of_time(ctx.time_limit, reason)
    if exc is not None:
        raise err from exc
    raise err


@dataclasses.dataclass
class _Progress:
    """What a run has established so far, kept outside the steps so that an interrupt finds it."""

    best: BestBracket
    history: list
    last: Step | None = None
    record: dict = dataclasses.field(default_factory=dict)


def run(family: Any, ctx: Context, target_gap: float) -> Run:
    """The loop (module docstring) for one family object; :func:`solve` wraps it into a Result.

    A KeyboardInterrupt (Ctrl-C, or an :class:`~optmech.errors.Interrupted` raised by a signal
    handler; the solver backends pass it on within about 0.05 s, HiGHS's solve cancelled) ends the
    run with the best certified bracket of the steps that finished, status ``interrupted``; when no
    certified bracket exists yet it is raised again as :class:`~optmech.errors.Interrupted` saying so.
    """
    progress = _Progress(BestBracket(), [])
    try:
        return _steps(family, ctx, target_gap, progress)
    except KeyboardInterrupt as exc:
        return _interrupted(progress, ctx, exc)


def _interrupted(progress: _Progress, ctx: Context, exc: KeyboardInterrupt) -> Run:
    """The Run of an interrupted solve: its best certified bracket, or :class:`Interrupted` when it has none."""
    signum = int(getattr(exc, "signum", signal.SIGINT))
    name = signal.Signals(signum).name
    best = progress.best
    if not best.certified:
        raise Interrupted(signum, "no certified bracket existed yet") from None
    steps = len(progress.history)
    message = (f"interrupted by {name} after {ctx.elapsed():.3g} s and {steps} completed step{'s' if steps != 1 else ''}: "
               "the bracket is the best certified one found before the signal")
    return Run(best, progress.history, progress.last, Status.INTERRUPTED.value, message, ctx.elapsed(),
               progress.record)


def _steps(family: Any, ctx: Context, target_gap: float, progress: _Progress) -> Run:
    """The body of :func:`run`."""
    best = progress.best
    for up in family.initial_uppers():
        best.offer_upper(up)
    initial_lower = getattr(family, "initial_lower", None)  # a certified lower bound without the family's LPs
    if initial_lower is not None:
        best.lower = max(best.lower, initial_lower())
    first = family.start()
    history: list[dict] = progress.history
    if isinstance(first, Stop):
        if first.lower is not None:
            best.lower = max(best.lower, first.lower)
        for up in getattr(family, "fallback_uppers", lambda: [])():  # no LP will run: the time left is theirs
            best.offer_upper(up)
        status, message = best.outcome(first.status or Status.GAP_NOT_REACHED.value, first.message)
        return Run(best, history, None, status, message, ctx.elapsed())
    size = first
    need, budget = family.estimate_bytes(size), memory_budget()
    # what was promised: the largest estimated peak of the LPs built (of the first LP when none was:
    # the work before it is smaller), the builder the estimate named for the last LP built
    record: dict[str, Any] = {"estimated_peak_bytes": float(need), "builder": None, "memory_limit_bytes": budget,
                              "time_limit_s": ctx.time_limit}
    progress.record = record
    if need > budget:
        too_large = ProblemTooLarge(family.size_message(size, need, budget))
        if getattr(family, "size_is_explicit", True):
            raise too_large
        return _without_lp(family, ctx, best, str(too_large), too_large, record, limit="memory")
    plan = _plan(family, size)
    pace = Pace()
    last: Step | None = None
    status, message = Status.GAP_NOT_REACHED.value, ""
    stalled, lower_before = 0, -math.inf
    # kept back for the report and the references after the last solve
    final = max(FINAL_SECONDS, float(getattr(family, "final_seconds", lambda: 0.0)()))
    for it in range(family.max_steps):
        pred = pace.predict(plan, final)
        if ctx.elapsed() + pred.total > ctx.time_limit:
            reason = (f"{_describe(plan)} would need about {pred.total:.3g} s to build, start the solver on and "
                      f"certify, more than the {ctx.remaining():.3g} s left")
            if last is None:
                return _without_lp(family, ctx, best, reason, None, record)
            message = f"time limit reached before the target gap: {reason}"
            break
        t_step = time.perf_counter()
        built = family.build(size)
        t_built = time.perf_counter()
        est = family.estimate_bytes(size)
        record["estimated_peak_bytes"] = max(record["estimated_peak_bytes"], float(est))
        # the builder the estimate named (tests check it is the one that built the LP, lp["builder"])
        record["builder"] = plan.builder if plan is not None else None
        # the solver gets what is left after the certification's and the report's share; it runs only
        # if that is at least twice its start-up (which it spends before it reads its clock)
        ctx.reserve = pred.certify + pred.final
        if ctx.time_limit - ctx.elapsed() - ctx.reserve < 2.0 * pred.setup:
            ctx.reserve = 0.0
            reason = (f"after building {_describe(plan)} ({t_built - t_step:.3g} s), too little time is left to start "
                      "the solver on it and certify its solution")
            if last is None:
                return _without_lp(family, ctx, best, reason, None, record)
            message = f"time limit reached before the target gap: {reason}"
            break
        try:
            raw = ctx.solve_lp(built.lp, share=1.0 / max(1, plan.lps if plan is not None else 1))
            t_solved = time.perf_counter()
            lower = family.lower(built, raw)
            upper = family.upper(built, raw)
        except SolveFailed as exc:
            ctx.reserve = 0.0
            if last is None:
                if _is_time_limit(exc):
                    return _without_lp(family, ctx, best, f"the solver's time limit stopped it on {_describe(plan)}: "
                                       f"{' '.join(str(exc).split())}", exc, record)
                raise
            if _is_time_limit(exc):
                message = f"time limit reached before the target gap (the solver stopped at its time limit: {exc})"
            else:
                message = f"refinement stopped: {exc}"
            break
        finally:
            ctx.reserve = 0.0
        step = Step(it, built, raw, lower, upper, math.nan, 0.0)
        progress.last = step  # its bounds go into the best bracket: an interrupt from here on reports this step
        best.update(lower, upper)
        for extra in family.extra_uppers(step):
            best.offer_upper(extra)
        gap = relative_gap(best.lower, best.upper_value)
        step.gap, step.seconds = gap, time.perf_counter() - t_step
        step.diagnostics = family.diagnostics(built, raw, upper)
        pace.record(plan, t_built - t_step, time.perf_counter() - t_solved)
        last = progress.last = step
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
        step_factor = float(getattr(family, "step_factor", STEP_FACTOR))
        if elapsed > 0.5 * ctx.time_limit:
            message = (f"time limit reached before the target gap: {elapsed:.3g} s of the {ctx.time_limit:.3g} s limit "
                       f"are spent, and a new step starts only within the first half (the last took {step.seconds:.3g} s "
                       f"and the next is about {step_factor:.3g} times larger)")
            break
        if elapsed + step_factor * step.seconds > ctx.time_limit:
            message = (f"time limit reached before the target gap: the next step would need about "
                       f"{step_factor * step.seconds:.3g} s ({step_factor:.3g} times the last one's {step.seconds:.3g} s), "
                       f"more than the {ctx.remaining():.3g} s left")
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
        plan = _plan(family, size)
    else:
        message = f"no convergence within {family.max_steps} refinements"
    final_lower = getattr(family, "final_lower", None)  # a certified lower bound in the time the LPs left
    gap = relative_gap(best.lower, best.upper_value)
    if final_lower is not None and gap > target_gap:
        value = final_lower(ctx.remaining() - FINAL_SECONDS, gap)
        if value is not None and math.isfinite(value) and value > best.lower:
            best.lower = float(value)
            gap = relative_gap(best.lower, best.upper_value)
            if gap <= target_gap:
                status, message = Status.OPTIMAL.value, f"certified relative gap {gap:.3g} <= target {target_gap:g}"
    status, message = best.outcome(status, message)
    return Run(best, history, last, status, message, ctx.elapsed(), record)


def make_context(solver: str | None, time_limit: float | None) -> Context:
    """The solver profile and the clock for one solve (``time_limit`` None: ``DEFAULT_TIME_LIMIT``)."""
    from optmech.solvers import load_profile, solve_lp

    profile = load_profile(solver or "default")
    limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    if not (limit > 0 and math.isfinite(limit)):
        raise SpecError(f"time_limit must be positive, got {time_limit!r}")
    ctx = Context(profile, limit, time.perf_counter(), None)

    def solve(lp, share: float = 1.0):
        # what is left of the limit after the caller's reserve (the certification and the report);
        # nothing left: every attempt is recorded as a time_limit failure without running
        return solve_lp(lp, profile, time_limit=max(0.0, share * (ctx.time_limit - ctx.elapsed() - ctx.reserve)))

    ctx.solve_lp = solve
    return ctx



__all__ = ["run", "make_context", "Run", "STEP_FACTOR", "STALL_LIMIT"]
