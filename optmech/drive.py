"""``optmech.solve``: one entry point for every problem family.

spec → family (:mod:`optmech.families`) → builder → LinearProgram → solver → certificates → Result.
The loop and its rules (best bracket, time and memory budgets, failures, stalls) are
:func:`optmech.loop.run`; this module picks the family, runs the loop, compares the references
with the bracket and assembles the :class:`~optmech.result.Result`.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from optmech.certify import reference_inside
from optmech.errors import SpecError
from optmech.families import family_for
from optmech.families.base import Context
from optmech.loop import Run, make_context, run
from optmech.result import Result, Status, solver_info
from optmech.spec import Problem


def solve(problem: Problem, *, solver: str | None = None, time_limit: float | None = None,
          target_gap: float | None = None, candidate: str | None = None, references: bool = True) -> Result:
    """Solve an optimal-noise problem of any family with a certified bracket.

    Parameters
    ----------
    problem : Problem
        Pure, (ε, δ) or Lipschitz privacy; expected cost or Wasserstein objective; ℤ, ℝ, ℤ^d, ℝ^d.
    solver : str, optional
        Solver profile name (``optmech solvers``) or path to a TOML profile (default ``"default"``).
    time_limit : float, optional
        Wall-clock budget in seconds for the whole solve (default ``DEFAULT_TIME_LIMIT`` = 300).
    target_gap : float, optional
        Overrides ``problem.target_gap``: the relative gap at which the loop stops.
    candidate : str, optional
        Conjecture mode: ``staircase``, ``layered``, ``laplace`` or a mechanism file; its exact cost
        is compared with the certified lower bound (``Result.candidate``).
    references : bool
        False leaves the closed-form references out of the Result (some sum long series or calibrate
        by search: seconds at small ε); the bracket and the mechanism are the same.  Searches that
        solve many problems and read only the bracket use it.

    Returns
    -------
    Result
        ``certified`` is true when both ends are certified; a bracket wider than the target is still
        certified, with status ``gap_not_reached`` and the reason in ``message``.

    Examples
    --------
    On ℝ with cost |x| the optimum is the staircase's V* = Δ/(2 sinh(ε/2)) [Geng13, Thm 2.5]; a
    coarse grid (4 cells per Δ) already brackets it:

    >>> import math
    >>> from optmech.spec import Continuous, IntegerLattice, Problem, PureDP
    >>> r = solve(Problem(privacy=PureDP(1), cost="abs", domain=Continuous(4), target_gap=1e-3))
    >>> v_star = 1 / (2 * math.sinh(0.5))
    >>> r.certified, r.lower_bound <= v_star <= r.upper_bound
    (True, True)

    In two dimensions (ℓ1 sensitivity 1 on ℤ², cost ‖x‖₁) the bracket holds twice the 1-D
    geometric optimum 2b/(1 − b²), b = e^{-1}:

    >>> r2 = solve(Problem(privacy=PureDP(1), cost="l1", dim=2, domain=IntegerLattice()))
    >>> b = math.exp(-1)
    >>> r2.lower_bound <= 2 * (2 * b / (1 - b * b)) <= r2.upper_bound
    True
    >>> r2.mechanism(np.zeros((5, 2), dtype=int), rng=0).shape     # noise vectors for 5 answers
    (5, 2)
    """
    if not isinstance(problem, Problem):
        raise SpecError(f"solve() takes a Problem, got {type(problem).__name__}")
    if target_gap is not None:
        problem = dataclasses.replace(problem, target_gap=target_gap)
    prepared = None
    if candidate is not None:
        from optmech.candidate import prepare_candidate
        from optmech.spec import ExpectedCost, PureDP

        if not (isinstance(problem.privacy, PureDP) and isinstance(problem.objective, ExpectedCost)):
            raise SpecError("a candidate (conjecture mode) applies to pure DP with an expected cost")

        prepared = prepare_candidate(problem, candidate)  # a bad candidate fails before the solve
    ctx = make_context(solver, time_limit)
    family = family_for(problem)(problem, ctx)
    r = run(family, ctx, problem.target_gap)
    result = assemble(problem, family, r, ctx, references=references)
    if candidate is not None:
        from optmech.candidate import evaluate_candidate

        result = dataclasses.replace(result, candidate=evaluate_candidate(problem, result, candidate, prepared))
    return result


def assemble(problem: Problem, family: Any, r: Run, ctx: Context, *, references: bool = True) -> Result:
    """The Result of a run: the driver's fields plus the family's report (``references=False``: without
    the closed-form references)."""
    best = r.best
    lo, up = best.lower, best.upper_value
    rep = family.report(best, r.last, r.status)
    interrupted = r.status == Status.INTERRUPTED.value
    # an interrupted solve answers at once: the references (some solve LPs or sum long series) are left out
    refs = [] if interrupted or not references else [
        dataclasses.replace(ref, inside_bracket=reference_inside(ref.value, lo, up, ref.exact))
        for ref in family.references(lo, up)]
    lcert = best.lower_certificate
    audit = dict(rep.get("audit", {}))
    audit.setdefault("lower_bound_clipped_rows", lcert.clipped_rows if lcert else None)
    audit.setdefault("lower_bound_error_term", lcert.error_term if lcert else None)
    if r.last is not None:
        raw = r.last.raw
        lp = r.last.built.lp.size() | {"solver": raw.backend, "builder": r.last.built.builder} | rep.get("lp", {})
        solver = solver_info(raw, ctx.profile)
    else:
        lp = {"rows": 0, "cols": 0, "nonzeros": 0, "solver": None, "builder": rep.get("builder", "none")} | rep.get("lp", {})
        solver = {"backend": None, "method": None, "version": None, "status": "not run", "objective": None,
                  "profile": ctx.profile.name, "options": {}, "failed_attempts": []}
    if r.budget:  # the loop's promise: the estimated peak (process RSS) and the builder it named
        lp["budget"] = dict(r.budget)
    return Result(
        problem=problem.to_dict() | rep.get("problem", {}),
        lower_bound=lo,
        upper_bound=up,
        certified=best.certified,
        status=Status(r.status),
        message=r.message,
        seconds=time.perf_counter() - ctx.t0,
        references=refs,
        lp=lp,
        solver=solver,
        mechanism=rep.get("mechanism"),
        audit=audit,
        truncation=rep.get("truncation", {}),
        history=r.history,
        claims=[*filter(None, [getattr(problem.cost, "rewrite_note", None)]), *rep.get("claims", []),
                *(["the closed-form references were not computed: the solve was interrupted"] if interrupted else []),
                *(["the closed-form references were not computed (references=False)"]
                  if not references and not interrupted else [])],
    )


def solve_lipschitz(epsilon: float, cost: Any, *, dim: int = 1, norm: str = "l1", domain: str = "integer",
                    resolution: int | None = None, target_gap: float | None = None, time_limit: float | None = None,
                    solver: str | None = None) -> Result:
    """Shorthand for ``solve(Problem(privacy=Lipschitz(epsilon), cost=cost, dim=dim, norm=norm, domain=...))``
    (see :mod:`optmech.families.lipschitz`).

    On ℤ, ε-Lipschitz privacy is ε-DP for Δ = 1, so the optimum for |x| is the geometric law's
    2b/(1 − b²), b = e^{-ε}:

    >>> import math
    >>> r = solve_lipschitz(1.0, "abs")
    >>> b = math.exp(-1)
    >>> r.certified, r.lower_bound <= 2 * b / (1 - b * b) <= r.upper_bound
    (True, True)
    """
    from optmech.spec import Continuous, IntegerLattice, Lipschitz

    if domain not in ("integer", "continuous"):
        raise SpecError(f"domain must be 'integer' or 'continuous', got {domain!r}")
    if domain == "integer" and resolution is not None:
        raise SpecError("resolution is for the continuous domain only")
    dom = IntegerLattice() if domain == "integer" else Continuous(resolution)
    return solve(Problem(privacy=Lipschitz(epsilon), cost=cost, dim=dim, norm=norm, domain=dom, target_gap=target_gap),
                 solver=solver, time_limit=time_limit)


def solve_wasserstein(input_pmf: Any, epsilon: float, sensitivity_m: int, *, delta: float = 0.0,
                      utility: str = "wasserstein", target_gap: float | None = None, time_limit: float | None = None,
                      solver: str | None = None) -> Result:
    """Shorthand for ``solve(Problem(privacy, objective=Wasserstein(input_pmf, surrogate=...), sensitivity=m,
    domain=IntegerLattice()))`` (see :mod:`optmech.families.wasserstein`).

    The surrogate objective equals E|θ| [derived], so for ε = 1, m = 1 its optimum is the
    geometric law's 2b/(1 − b²), b = e^{-1}, whatever the input:

    >>> import math
    >>> from optmech.inputs import input_from_arrays
    >>> inp = input_from_arrays([0, 1, 2], [0.25, 0.5, 0.25], label="toy")
    >>> r = solve_wasserstein(inp, 1.0, 1, utility="surrogate")
    >>> b = math.exp(-1)
    >>> r.certified, r.lower_bound <= 2 * b / (1 - b * b) <= r.upper_bound
    (True, True)
    >>> solve_wasserstein(inp, 1.0, 1).upper_bound <= r.upper_bound   # W1 never exceeds E|θ|
    True
    """
    from optmech.spec import ApproxDP, IntegerLattice, PureDP, Wasserstein

    if utility not in ("wasserstein", "surrogate"):
        raise SpecError(f"utility must be wasserstein or surrogate, got {utility!r}")
    privacy = ApproxDP(epsilon, delta) if delta else PureDP(epsilon)
    return solve(Problem(privacy=privacy, objective=Wasserstein(input_pmf, surrogate=utility == "surrogate"),
                         sensitivity=sensitivity_m, domain=IntegerLattice(), target_gap=target_gap),
                 solver=solver, time_limit=time_limit)


#: The public entry points (``assemble``, the driver's last step, is internal to the solve).
__all__ = ["solve", "solve_lipschitz", "solve_wasserstein"]
