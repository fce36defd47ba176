"""Clarabel: an interior-point method with a sparse direct (LDLᵀ) factorisation of the KKT system.

Why it is here.  The general 1-D window LP (:func:`optmech.problems.pure.build_general`) couples
every point with the 2W + 1 around it.  Simplex needs about one pivot per column and its basis
factors fill like N·W, so its time grows like Δ^1.8; an interior-point method needs some thirty
factorisations of a KKT matrix whose fill-reducing (AMD) ordering keeps it nearly linear in N, so
its time grows like Δ^1.2 (``benchmarks/bench_scale.py``).  HiGHS's own IPM (IPX) solves its normal
equations by conjugate gradients preconditioned with a basis, which is no faster on these LPs.

The LP ``min c·x, row_lower <= A x <= row_upper, col_lower <= x <= col_upper`` is handed to
Clarabel as ``A' x + s = b`` with ``s`` in the zero cone (equality rows) and the nonnegative cone
(``A x <= row_upper``, ``−A x <= −row_lower``, ``−x <= −col_lower``, ``x <= col_upper``, finite
sides only).  Clarabel's dual ``z`` satisfies ``c + A'ᵀ z = 0`` with ``z`` in the dual cones, so
the module convention of :mod:`optmech.solvers.base` (``c = Aᵀ y + s``) reads ``y = z_lower − z_upper``
per row (``−z`` on equality rows) and ``s = z_collower − z_colupper``.  An interior-point answer is
not a vertex and is feasible only to the tolerances; the certificates do not care: the lower bound
repairs whatever dual it gets (:func:`optmech.certify.dual_lower_bound`) and the upper bound audits
and repairs the primal.

Options: ``time_limit`` (seconds) and any Clarabel setting by name (``tol_gap_abs``,
``tol_gap_rel``, ``tol_feas``, ``max_iter``, ``direct_solve_method``, ...); unknown names are a
:class:`~optmech.errors.SpecError`.  ``clarabel`` is imported inside :meth:`ClarabelBackend.solve`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status, as_array

#: Clarabel's status names → Status (names not listed read as UNKNOWN)
STATUS_MAP: dict[str, Status] = {
    "Solved": Status.OPTIMAL,
    "AlmostSolved": Status.INACCURATE,
    "PrimalInfeasible": Status.INFEASIBLE,
    "AlmostPrimalInfeasible": Status.INFEASIBLE,
    "DualInfeasible": Status.UNBOUNDED,
    "AlmostDualInfeasible": Status.UNBOUNDED,
    "MaxIterations": Status.ITERATION_LIMIT,
    "MaxTime": Status.TIME_LIMIT,
    "NumericalError": Status.ERROR,
    "InsufficientProgress": Status.INACCURATE,
}

#: Tolerances used unless the options say otherwise: tight enough that the repaired certificates
#: of the window LPs close to a relative gap of about 1e-10.
DEFAULT_SETTINGS: dict[str, float] = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11,
                                      "tol_ktratio": 1e-9}


def conic_form(lp: LinearProgram) -> tuple[sp.csc_matrix, np.ndarray, int, dict[str, np.ndarray]]:
    """``lp`` as ``A' x + s = b`` with ``s`` in (zero cone)^n_eq × (nonnegative cone)^rest.

    Returns ``(A', b, n_eq, parts)``; ``parts`` names the row or column indices behind each block
    of ``A'`` in order (``eq``, ``upper``, ``lower``, ``col_lower``, ``col_upper``).
    """
    A = lp.A.tocsr()
    lo, up = lp.row_lower, lp.row_upper
    eq = np.flatnonzero(lo == up)
    ranged = lo != up
    upper = np.flatnonzero(ranged & np.isfinite(up))
    lower = np.flatnonzero(ranged & np.isfinite(lo))
    cols = np.arange(lp.cols)
    col_lower = cols[np.isfinite(lp.col_lower)]
    col_upper = cols[np.isfinite(lp.col_upper)]
    eye = sp.identity(lp.cols, format="csr")
    blocks = [A[eq], A[upper], -A[lower], -eye[col_lower], eye[col_upper]]
    b = np.concatenate([up[eq], up[upper], -lo[lower], -lp.col_lower[col_lower], lp.col_upper[col_upper]])
    parts = {"eq": eq, "upper": upper, "lower": lower, "col_lower": col_lower, "col_upper": col_upper}
    return sp.vstack(blocks, format="csc"), np.asarray(b, dtype=float), len(eq), parts


def duals_from_conic(lp: LinearProgram, z: np.ndarray, parts: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Row and column duals in the convention of :mod:`optmech.solvers.base` from Clarabel's ``z``."""
    y = np.zeros(lp.rows)
    s = np.zeros(lp.cols)
    at = 0
    for name in ("eq", "upper", "lower", "col_lower", "col_upper"):
        idx = parts[name]
        part = z[at: at + len(idx)]
        at += len(idx)
        if name == "eq" or name == "upper":
            y[idx] -= part
        elif name == "lower":
            y[idx] += part
        elif name == "col_lower":
            s[idx] += part
        else:
            s[idx] -= part
    return y, s


class ClarabelBackend(Backend):
    """Clarabel's interior-point method (see the module docstring)."""

    name = "clarabel"
    module = "clarabel"

    def version(self) -> str:
        self.require()
        import clarabel

        return str(clarabel.__version__)

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        self.require()
        import clarabel

        options = dict(options)
        t0 = time.perf_counter()
        version = str(clarabel.__version__)
        settings = clarabel.DefaultSettings()
        settings.verbose = bool(options.get("verbose", False))
        for key, value in {**DEFAULT_SETTINGS, **options}.items():
            if key == "verbose":
                continue
            if not hasattr(settings, key):
                raise SpecError(f"Clarabel rejected option (name, value) = ({key!r}, {value!r}): no such setting")
            try:
                setattr(settings, key, value)
            except (TypeError, ValueError) as exc:
                raise SpecError(f"Clarabel rejected option (name, value) = ({key!r}, {value!r}): {exc}") from None

        def result(status: Status, raw: str, message: str, **sol: Any) -> RawSolution:
            return RawSolution(
                status=status, raw_status=raw, message=message, objective=sol.get("objective", float("nan")),
                x=sol.get("x"), row_dual=sol.get("row_dual"), col_dual=sol.get("col_dual"), backend=self.name,
                method="ipm", version=version, seconds=time.perf_counter() - t0,
                iterations=sol.get("iterations"), options=options,
            )

        try:
            A, b, n_eq, parts = conic_form(lp)
            cones = [clarabel.ZeroConeT(n_eq), clarabel.NonnegativeConeT(len(b) - n_eq)]
            P = sp.csc_matrix((lp.cols, lp.cols))
            solver = clarabel.DefaultSolver(P, np.asarray(lp.c, dtype=float), A, b, cones, settings)
            sol = solver.solve()
        except Exception as exc:  # noqa: BLE001 - a solver crash is reported, not raised
            return result(Status.ERROR, type(exc).__name__, f"Clarabel raised {type(exc).__name__}: {exc}")
        raw = str(sol.status)
        status = STATUS_MAP.get(raw, Status.UNKNOWN)
        x = as_array(sol.x, lp.cols)
        z = as_array(sol.z, len(b))
        row_dual = col_dual = None
        if x is not None and z is not None and status in (Status.OPTIMAL, Status.INACCURATE):
            row_dual, col_dual = duals_from_conic(lp, z, parts)
        return result(status, raw, raw, objective=float(lp.c @ x) if x is not None else float("nan"),
                      x=x, row_dual=row_dual, col_dual=col_dual, iterations=int(sol.iterations))
