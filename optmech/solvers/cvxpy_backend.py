"""cvxpy, for cross-checks and for solvers optmech has no direct interface to.

Constraints are built from the sparse matrix in one expression per family (upper rows, lower
rows, equality rows, column bounds).  cvxpy's multipliers are nonnegative for ``<=`` and
``>=`` constraints (textbook Lagrangian), so ``y = λ_lower − λ_upper`` on inequality rows and
``y = −ν`` on equality rows (cvxpy's Lagrangian adds ``ν·(A x − b)``).  The column duals are
recomputed as ``s = c − Aᵀy``, which makes stationarity exact by construction.

Options: ``solver`` (default ``"HIGHS"`` when cvxpy has it, else ``"CLARABEL"``), ``verbose``,
``time_limit`` (translated to the solver's own name; ignored with a warning for a solver
not in :data:`TIME_LIMIT_NAMES`), and any other key, passed to
``Problem.solve`` as a solver option.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from optmech.errors import SolverUnavailable, SpecError
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status, as_array
from optmech.solvers.scipy_backend import split_rows

#: cvxpy status string → Status
STATUS_MAP: dict[str, Status] = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.INACCURATE,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "infeasible_or_unbounded": Status.INFEASIBLE_OR_UNBOUNDED,
    "user_limit": Status.UNKNOWN,
    "solver_error": Status.ERROR,
}

#: the option each solver reads as a wall-clock limit in seconds
TIME_LIMIT_NAMES: dict[str, str] = {
    "HIGHS": "time_limit",
    "CLARABEL": "time_limit",
    "SCS": "time_limit_secs",
    "OSQP": "time_limit",
}


class CvxpyBackend(Backend):
    """cvxpy with ``options["solver"]`` (HIGHS, CLARABEL, or any other installed LP solver)."""

    name = "cvxpy"
    module = "cvxpy"

    def version(self) -> str:
        self.require()
        import cvxpy

        return str(cvxpy.__version__)

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        self.require()
        import cvxpy as cp

        options = dict(options)
        installed = cp.installed_solvers()
        solver = str(options.get("solver", "HIGHS" if "HIGHS" in installed else "CLARABEL")).upper()
        if solver not in installed:
            raise SolverUnavailable(f"cvxpy solver {solver} is not installed (installed: {', '.join(installed)})")
        kwargs = {k: v for k, v in options.items() if k not in ("solver", "verbose", "time_limit")}
        if options.get("time_limit") is not None:
            if solver in TIME_LIMIT_NAMES:
                kwargs[TIME_LIMIT_NAMES[solver]] = float(options["time_limit"])
            else:
                warnings.warn(f"cvxpy solver {solver}: time_limit ignored (no known option for it)", stacklevel=2)
        version = f"{cp.__version__}"
        t0 = time.perf_counter()

        eq, up, lo = split_rows(lp)
        A = lp.A.tocsr()
        x = cp.Variable(lp.cols)
        families: list[tuple[np.ndarray, Any]] = []
        if len(up):
            families.append((up, A[up] @ x <= lp.row_upper[up]))
        if len(lo):
            families.append((lo, A[lo] @ x >= lp.row_lower[lo]))
        if len(eq):
            families.append((eq, A[eq] @ x == lp.row_lower[eq]))
        bounds = [x >= lp.col_lower, x <= lp.col_upper]
        problem = cp.Problem(cp.Minimize(lp.c @ x), [con for _, con in families] + bounds)

        def result(status: Status, raw: str, message: str, **sol: Any) -> RawSolution:
            return RawSolution(
                status=status, raw_status=raw, message=message,
                objective=sol.get("objective", float("nan")), x=sol.get("x"),
                row_dual=sol.get("row_dual"), col_dual=sol.get("col_dual"), backend=self.name,
                method=solver, version=version, seconds=time.perf_counter() - t0,
                iterations=sol.get("iterations"), options=options,
            )

        try:
            problem.solve(solver=solver, verbose=bool(options.get("verbose", False)), **kwargs)
        except (TypeError, ValueError) as exc:
            # cvxpy raises these for unknown or ill-typed solver options
            raise SpecError(f"cvxpy solver {solver} rejected the options {kwargs!r}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - SolverError and crashes are reported, not raised
            return result(Status.ERROR, type(exc).__name__, f"cvxpy/{solver} raised {type(exc).__name__}: {exc}")

        raw = str(problem.status)
        status = STATUS_MAP.get(raw, Status.UNKNOWN)
        xv = as_array(x.value, lp.cols)
        row_dual = col_dual = None
        if xv is not None and status in (Status.OPTIMAL, Status.INACCURATE):
            row_dual = np.zeros(lp.rows)
            ok = True
            for (rows, con), sign in zip(families, _signs(len(up), len(lo), len(eq))):
                dual = as_array(con.dual_value, len(rows))
                if dual is None:
                    ok = False
                    break
                row_dual[rows] += sign * dual
            if ok:
                col_dual = lp.c - lp.A.T @ row_dual
            else:
                row_dual = None
        stats = problem.solver_stats
        iterations = getattr(stats, "num_iters", None) if stats is not None else None
        return result(
            status, raw, raw,
            objective=float(lp.c @ xv) if xv is not None else float("nan"),
            x=xv, row_dual=row_dual, col_dual=col_dual,
            iterations=int(iterations) if iterations is not None else None,
        )


def _signs(n_up: int, n_lo: int, n_eq: int) -> list[float]:
    """Factor turning each family's cvxpy multiplier into the module's ``y``, in family order."""
    return [s for n, s in ((n_up, -1.0), (n_lo, 1.0), (n_eq, -1.0)) if n]
