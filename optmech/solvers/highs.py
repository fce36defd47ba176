"""HiGHS through highspy: one bulk ``passModel`` of the CSC matrix, native dual signs.

highspy is imported inside :meth:`HighsBackend.solve` and :meth:`HighsBackend.version` only.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optmech.errors import SpecError
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status, as_array
from optmech.solvers.console import solver_console

#: HighsModelStatus name → Status; every member of the 1.15 enum is listed, and a member this
#: table does not know (a later highspy) reads as UNKNOWN.
STATUS_MAP: dict[str, Status] = {
    "kNotset": Status.UNKNOWN,
    "kLoadError": Status.ERROR,
    "kModelError": Status.ERROR,
    "kPresolveError": Status.ERROR,
    "kSolveError": Status.ERROR,
    "kPostsolveError": Status.ERROR,
    "kModelEmpty": Status.UNKNOWN,
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnboundedOrInfeasible": Status.INFEASIBLE_OR_UNBOUNDED,
    "kUnbounded": Status.UNBOUNDED,
    "kObjectiveBound": Status.UNKNOWN,
    "kObjectiveTarget": Status.UNKNOWN,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    "kUnknown": Status.UNKNOWN,
    "kSolutionLimit": Status.UNKNOWN,
    "kInterrupt": Status.UNKNOWN,
    "kMemoryLimit": Status.UNKNOWN,
    "kHighsInterrupt": Status.UNKNOWN,
}


def _highs_lp(highspy: Any, lp: LinearProgram) -> Any:
    """``lp`` as a ``highspy.HighsLp`` with a column-wise matrix taken straight from the CSC arrays."""
    A = lp.A
    h_lp = highspy.HighsLp()
    h_lp.num_col_ = lp.cols
    h_lp.num_row_ = lp.rows
    h_lp.col_cost_ = np.ascontiguousarray(lp.c, dtype=np.float64)
    h_lp.col_lower_ = np.ascontiguousarray(lp.col_lower, dtype=np.float64)
    h_lp.col_upper_ = np.ascontiguousarray(lp.col_upper, dtype=np.float64)
    h_lp.row_lower_ = np.ascontiguousarray(lp.row_lower, dtype=np.float64)
    h_lp.row_upper_ = np.ascontiguousarray(lp.row_upper, dtype=np.float64)
    h_lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    h_lp.a_matrix_.num_col_ = lp.cols
    h_lp.a_matrix_.num_row_ = lp.rows
    h_lp.a_matrix_.start_ = np.ascontiguousarray(A.indptr, dtype=np.int32)
    h_lp.a_matrix_.index_ = np.ascontiguousarray(A.indices, dtype=np.int32)
    h_lp.a_matrix_.value_ = np.ascontiguousarray(A.data, dtype=np.float64)
    return h_lp


def _set_options(highspy: Any, h: Any, options: dict[str, Any]) -> None:
    """Apply ``options`` with ``setOptionValue``; ``output_flag`` is off unless given.

    A boolean given for a string option (``presolve = true``) is passed as ``"on"``/``"off"``.
    Raises SpecError naming the first (name, value) HiGHS rejects.
    """
    h.setOptionValue("output_flag", bool(options.get("output_flag", False)))
    for name, value in options.items():
        if name == "output_flag":
            continue
        if isinstance(value, bool):
            st, kind = h.getOptionType(name)
            if st == highspy.HighsStatus.kOk and kind == highspy.HighsOptionType.kString:
                value = "on" if value else "off"
        if h.setOptionValue(name, value) == highspy.HighsStatus.kError:
            raise SpecError(f"HiGHS rejected option (name, value) = ({name!r}, {value!r})")


#: Seconds between two looks of the waiting thread at a solve running in HiGHS's own thread.
POLL_SECONDS = 0.05
#: Seconds a cancelled solve is given to stop before the interrupt is passed on regardless.
CANCEL_WAIT_SECONDS = 1.0


def _set_start_basis(highspy: Any, h: Any, lp: LinearProgram) -> bool:
    """Start the simplex from ``lp.meta["start_basis"]`` (``RawSolution.basis``'s form) when it is there and
    of the LP's sizes; whether HiGHS took it (a basis it rejects leaves the solve cold).  Only for the simplex
    (``solver`` ``choose`` or ``simplex``): HiGHS's interior point given a basis measured slower than cold."""
    start = lp.meta.get("start_basis")
    if start is None:
        return False
    cols, rows = (np.asarray(v) for v in start)
    if cols.size != lp.cols or rows.size != lp.rows:
        return False
    basis = highspy.HighsBasis()
    status = {int(v): v for v in highspy.HighsBasisStatus.__members__.values()}
    basis.col_status = [status[v] for v in cols.tolist()]
    basis.row_status = [status[v] for v in rows.tolist()]
    basis.valid = True
    return h.setBasis(basis) != highspy.HighsStatus.kError


def run_interruptibly(h: Any) -> None:
    """``h.run()``, answering Ctrl-C (KeyboardInterrupt) and signals within about ``POLL_SECONDS``.

    ``Highs.run`` holds the calling thread inside C++ until the solve ends, so a Python signal
    handler would run only afterwards (a 40 s LP answered Ctrl-C after 40 s).  Where highspy has
    ``startSolve``/``cancelSolve`` (1.8 and later), the solve runs in HiGHS's own thread with its
    user-interrupt callbacks on, and this thread waits in short steps; a KeyboardInterrupt (or
    :class:`~optmech.errors.Interrupted`, which derives from it) raised here by a signal handler
    cancels the solve, waits for it to stop (milliseconds: the callbacks are checked every
    iteration), and is raised again to the caller.  Older highspy: plain ``run()``.
    """
    if not (hasattr(h, "startSolve") and hasattr(h, "cancelSolve") and hasattr(h, "wait")):
        h.run()
        return
    h.HandleUserInterrupt = True
    h.startSolve()
    try:
        while not h.wait(POLL_SECONDS)[0]:
            pass
    except KeyboardInterrupt:
        h.cancelSolve()
        deadline = time.perf_counter() + CANCEL_WAIT_SECONDS
        while time.perf_counter() < deadline:
            try:
                if h.wait(POLL_SECONDS)[0]:
                    break
            except KeyboardInterrupt:  # a second signal while the solve stops: stop waiting
                break
        raise


class HighsBackend(Backend):
    """HiGHS via highspy (simplex, IPX with crossover, PDLP, ... through the ``solver`` option).

    Options are HiGHS option names, passed through ``Highs.setOptionValue`` unchanged
    (e.g. ``solver``, ``presolve``, ``run_crossover``, ``primal_feasibility_tolerance``,
    ``dual_feasibility_tolerance``, ``ipm_optimality_tolerance``, ``time_limit``, ``threads``).
    """

    name = "highs"
    module = "highspy"

    def version(self) -> str:
        self.require()
        import highspy

        with solver_console():  # the first Highs() of a process prints a banner (highspy >= 1.16)
            h = highspy.Highs()
        return f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        self.require()
        import highspy

        options = dict(options)
        method = str(options.get("solver", "choose"))
        t0 = time.perf_counter()
        h = highspy.Highs()
        version = f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"
        _set_options(highspy, h, options)

        def fail(status: Status, raw: str, message: str) -> RawSolution:
            return RawSolution(
                status=status, raw_status=raw, message=message, objective=float("nan"), x=None,
                row_dual=None, col_dual=None, backend=self.name, method=method, version=version,
                seconds=time.perf_counter() - t0, iterations=None, options=options,
            )

        if lp.nonzeros >= np.iinfo(np.int32).max:
            return fail(Status.ERROR, "nnz", f"{lp.nonzeros} nonzeros exceed HiGHS's 32-bit index range")
        try:
            if h.passModel(_highs_lp(highspy, lp)) == highspy.HighsStatus.kError:
                return fail(Status.ERROR, "passModel:kError", "HiGHS rejected the LP data (passModel returned kError)")
            warm = method in ("choose", "simplex") and _set_start_basis(highspy, h, lp)
            run_interruptibly(h)
        except Exception as exc:  # noqa: BLE001 - a solver crash is reported, not raised
            return fail(Status.ERROR, type(exc).__name__, f"HiGHS raised {type(exc).__name__}: {exc}")

        model_status = h.getModelStatus()
        raw = getattr(model_status, "name", str(model_status))
        status = STATUS_MAP.get(raw, Status.UNKNOWN)
        info = h.getInfo()
        sol = h.getSolution()
        x = as_array(sol.col_value, lp.cols) if sol.value_valid else None
        row_dual = as_array(sol.row_dual, lp.rows) if sol.dual_valid else None
        col_dual = as_array(sol.col_dual, lp.cols) if sol.dual_valid else None
        basis = None
        got = h.getBasis() if lp.meta.get("keep_basis") else None
        if got is not None and got.valid:
            basis = (np.array([int(v) for v in got.col_status], dtype=np.int8),
                     np.array([int(v) for v in got.row_status], dtype=np.int8))
        if warm:
            method = f"{method} (warm start)"
        iterations = sum(
            max(0, int(getattr(info, key, 0)))
            for key in ("simplex_iteration_count", "ipm_iteration_count", "pdlp_iteration_count")
        )
        return RawSolution(
            status=status,
            raw_status=raw,
            message=h.modelStatusToString(model_status),
            objective=float(info.objective_function_value) if x is not None else float("nan"),
            x=x,
            row_dual=row_dual,
            col_dual=col_dual,
            backend=self.name,
            method=method,
            version=version,
            seconds=time.perf_counter() - t0,
            iterations=iterations,
            options=options,
            basis=basis,
        )
