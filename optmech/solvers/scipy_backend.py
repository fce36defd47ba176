"""``scipy.optimize.linprog`` with its vendored HiGHS (``highs``, ``highs-ds``, ``highs-ipm``).

linprog wants ``A_ub x <= b_ub`` and ``A_eq x == b_eq``, so the two-sided rows are split:
rows with ``row_lower == row_upper`` go to ``A_eq``; a finite upper bound gives a row of
``A_ub``, a finite lower bound a negated row.  linprog's marginals are derivatives of the
optimum with respect to ``b_ub``/``b_eq``/bounds, which is the module convention of
:mod:`optmech.solvers.base` once the negated rows are negated back:
``y = m_upper − m_lower`` row by row, ``s = lower.marginals + upper.marginals``.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status, as_array

#: linprog ``res.status`` → Status (1 is refined to TIME_LIMIT from the message)
STATUS_MAP: dict[int, Status] = {
    0: Status.OPTIMAL,
    1: Status.ITERATION_LIMIT,
    2: Status.INFEASIBLE,
    3: Status.UNBOUNDED,
    4: Status.ERROR,
}

METHODS = ("highs", "highs-ds", "highs-ipm")

#: option names linprog's HiGHS methods accept (scipy.optimize.show_options("linprog", "highs"))
OPTIONS = (
    "time_limit",
    "primal_feasibility_tolerance",
    "dual_feasibility_tolerance",
    "ipm_optimality_tolerance",
    "presolve",
    "maxiter",
    "disp",
    "simplex_dual_edge_weight_strategy",
)


def _linprog_options(options: dict[str, Any]) -> dict[str, Any]:
    """The linprog ``options`` dict; SpecError for a name linprog does not know."""
    out = {}
    for name, value in options.items():
        if name == "method":
            continue
        if name not in OPTIONS:
            raise SpecError(
                f"scipy backend: unknown option {name!r}; allowed: method, {', '.join(OPTIONS)}"
            )
        if name == "presolve" and isinstance(value, str):
            if value.lower() not in ("on", "off"):
                raise SpecError(f"scipy backend: presolve must be true/false or 'on'/'off', not {value!r}")
            value = value.lower() == "on"
        out[name] = value
    return out


def split_rows(lp: LinearProgram) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the equality rows, the rows with a finite upper bound, and with a finite lower bound.

    Equality rows (``row_lower == row_upper``) are in neither of the other two.
    """
    rl, ru = lp.row_lower, lp.row_upper
    eq = rl == ru
    return (
        np.flatnonzero(eq),
        np.flatnonzero(~eq & np.isfinite(ru)),
        np.flatnonzero(~eq & np.isfinite(rl)),
    )


class ScipyBackend(Backend):
    """``scipy.optimize.linprog``; ``options["method"]`` is one of ``highs``, ``highs-ds``, ``highs-ipm``."""

    name = "scipy"
    module = "scipy"

    def version(self) -> str:
        import scipy

        return scipy.__version__

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        self.require()
        from scipy.optimize import OptimizeWarning, linprog

        options = dict(options)
        method = str(options.get("method", "highs"))
        if method not in METHODS:
            raise SpecError(f"scipy backend: method {method!r} is not one of {', '.join(METHODS)}")
        lp_options = _linprog_options(options)
        version = self.version()

        t0 = time.perf_counter()
        eq, up, lo = split_rows(lp)
        A = sp.csr_array(lp.A)
        n_up = len(up)
        A_ub = b_ub = A_eq = b_eq = None
        if n_up + len(lo):
            A_ub = sp.csc_array(sp.vstack([A[up], -A[lo]], format="csc"))
            b_ub = np.concatenate([lp.row_upper[up], -lp.row_lower[lo]])
        if len(eq):
            A_eq = sp.csc_array(A[eq])
            b_eq = lp.row_lower[eq]
        bounds = np.column_stack([lp.col_lower, lp.col_upper])

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OptimizeWarning)
                res = linprog(
                    lp.c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds,
                    method=method, options=lp_options,
                )
        except Exception as exc:  # noqa: BLE001 - a solver crash is reported, not raised
            return RawSolution(
                status=Status.ERROR, raw_status=type(exc).__name__,
                message=f"linprog raised {type(exc).__name__}: {exc}", objective=float("nan"),
                x=None, row_dual=None, col_dual=None, backend=self.name, method=method,
                version=version, seconds=time.perf_counter() - t0, iterations=None, options=options,
            )

        status = STATUS_MAP.get(int(res.status), Status.UNKNOWN)
        message = str(res.message)
        if status is Status.ITERATION_LIMIT and "time" in message.lower():
            status = Status.TIME_LIMIT
        x = as_array(res.x, lp.cols) if res.x is not None else None
        row_dual = col_dual = None
        if x is not None and status is Status.OPTIMAL:
            row_dual = np.zeros(lp.rows)
            if A_ub is not None and getattr(res, "ineqlin", None) is not None:
                m = np.asarray(res.ineqlin.marginals, dtype=float)
                np.add.at(row_dual, up, m[:n_up])
                np.subtract.at(row_dual, lo, m[n_up:])
            if A_eq is not None and getattr(res, "eqlin", None) is not None:
                row_dual[eq] = np.asarray(res.eqlin.marginals, dtype=float)
            col_dual = np.asarray(res.lower.marginals, dtype=float) + np.asarray(res.upper.marginals, dtype=float)
        nit = getattr(res, "nit", None)
        return RawSolution(
            status=status,
            raw_status=str(int(res.status)),
            message=message,
            objective=float(res.fun) if x is not None and res.fun is not None else float("nan"),
            x=x,
            row_dual=row_dual,
            col_dual=col_dual,
            backend=self.name,
            method=method,
            version=version,
            seconds=time.perf_counter() - t0,
            iterations=int(nit) if nit is not None else None,
            options=options,
        )
