"""``solve_lp``: run a profile's attempts in order until one is optimal."""

from __future__ import annotations

import time

from optmech.errors import SolveFailed, SolverUnavailable
from optmech.lp import LinearProgram
from optmech.solvers.base import RawSolution, Status
from optmech.solvers.profiles import SolverProfile, load_profile
from optmech.solvers.registry import get_backend

#: the option each backend reads as its algorithm, for reporting attempts that never ran
_METHOD_KEY = {"highs": ("solver", "choose"), "scipy": ("method", "highs"), "cvxpy": ("solver", "default"),
               "clarabel": ("method", "ipm"), "hockey_ipm": ("method", "mehrotra-gondzio")}


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def solve_lp(
    lp: LinearProgram,
    profile: SolverProfile | str = "default",
    *,
    time_limit: float | None = None,
) -> RawSolution:
    """Solve ``lp`` with the first attempt of ``profile`` that reports an optimal solution.

    Parameters
    ----------
    lp : LinearProgram
    profile : SolverProfile or str
        A profile, a shipped profile name, or a path to a ``.toml`` profile.
    time_limit : float, optional
        Wall-clock budget in seconds for the whole chain.  Each attempt's ``time_limit``
        option is replaced by what is left of it; attempts that find nothing left are
        recorded as ``time_limit`` failures without running.

    Returns
    -------
    RawSolution
        The first optimal solution.  ``options["failed_attempts"]`` lists the attempts before
        it as ``(backend, method, status, message)`` tuples of strings.

    Raises
    ------
    SolveFailed
        No attempt was optimal; the one-line message lists every attempt's status.
        ``exc.attempts`` holds the same tuples.
    SolverUnavailable
        No attempt's backend is installed.
    SpecError
        A backend rejected an option of the profile.
    """
    prof = load_profile(profile)
    failed: list[tuple[str, str, str, str]] = []
    unavailable = 0
    skipped = 0
    t0 = time.perf_counter()
    for attempt in prof.attempts:
        options = dict(attempt.options)
        key, default = _METHOD_KEY.get(attempt.backend, ("method", "default"))
        method = str(options.get(key, default))
        if time_limit is not None:
            left = float(time_limit) - (time.perf_counter() - t0)
            if left <= 0.0:
                failed.append((attempt.backend, method, Status.TIME_LIMIT.value, "no time left for this attempt"))
                continue
            options["time_limit"] = left
        backend = get_backend(attempt.backend)
        if not attempt.applies(lp) or not backend.accepts(lp):
            skipped += 1
            continue
        try:
            sol = backend.solve(lp, options)
        except SolverUnavailable as exc:
            unavailable += 1
            failed.append((attempt.backend, method, Status.ERROR.value, f"not installed ({_one_line(exc)})"))
            continue
        if sol.status is Status.OPTIMAL:
            sol.options["failed_attempts"] = failed
            return sol
        failed.append((sol.backend, sol.method, sol.status.value, _one_line(sol.message)))

    if skipped == len(prof.attempts):
        raise SolveFailed(f"solver profile '{prof.name}': no attempt's backend accepts this LP")
    if unavailable == len(prof.attempts) - skipped:
        raise SolverUnavailable(
            f"solver profile '{prof.name}': no backend installed for any attempt "
            f"({', '.join(sorted({a.backend for a in prof.attempts}))})"
        )
    summary = "; ".join(f"{b}/{m}: {s} ({msg})" for b, m, s, msg in failed)
    exc = SolveFailed(f"solver profile '{prof.name}': no attempt was optimal: {summary}")
    exc.attempts = failed  # type: ignore[attr-defined]
    raise exc
