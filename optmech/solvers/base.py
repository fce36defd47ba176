"""What every solver backend returns, and the one dual sign convention they all use.

Dual sign convention
--------------------
For ``min c·x  s.t.  row_lower <= A x <= row_upper,  col_lower <= x <= col_upper`` every
backend returns row duals ``y`` (``RawSolution.row_dual``) and column duals ``s``
(``RawSolution.col_dual``) with

.. math::

    c = A^\\top y + s \\qquad \\text{(stationarity)}

and the signs

* a row at its **upper** bound has ``y_i <= 0``; a row at its **lower** bound has ``y_i >= 0``;
  an equality row (``row_lower == row_upper``) has ``y_i`` free; a basic row has ``y_i = 0``;
* a column at its lower bound has ``s_j >= 0``; at its upper bound ``s_j <= 0``.

Equivalently ``y_i`` and ``s_j`` are the derivatives of the optimal value with respect to the
active bound.  This is HiGHS's native convention (HiGHS docs, ``guide/kkt.md``); the scipy and
cvxpy backends convert to it, and ``tests/test_solvers.py`` pins it on a two-variable LP for
every installed backend.  :func:`optmech.certify.dual_lower_bound` relies on it.

Backends never raise for a solver failure: they return a :class:`RawSolution` whose status is
not ``OPTIMAL``.  They raise :class:`~optmech.errors.SolverUnavailable` when their package is
missing and :class:`~optmech.errors.SpecError` for an option the solver rejects.
"""

from __future__ import annotations

import abc
import importlib.util
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np

from optmech.errors import SolverUnavailable
from optmech.lp import LinearProgram
from optmech.solvers.console import solver_console, wants_log


class Status(str, Enum):
    """Solver outcome, independent of the backend.  ``OPTIMAL`` is the only success."""

    OPTIMAL = "optimal"
    INACCURATE = "inaccurate"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"
    TIME_LIMIT = "time_limit"
    ITERATION_LIMIT = "iteration_limit"
    ERROR = "error"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


@dataclass
class RawSolution:
    """A backend's answer, uncertified.

    Attributes
    ----------
    status : Status
        ``OPTIMAL`` guarantees that ``x``, ``row_dual`` and ``col_dual`` are arrays (a backend
        that reports optimality without them is downgraded to ``INACCURATE``).
    raw_status : str
        The solver's own status code, e.g. ``"kOptimal"``.
    message : str
        The solver's status text, or the exception message.
    objective : float
        ``c·x`` as reported by the solver; ``nan`` when there is no primal solution.
    x, row_dual, col_dual : ndarray or None
        Primal values and duals in the module's sign convention; ``None`` when not valid.
    backend, method, version : str
        Backend name (``"highs"``), solver or algorithm used, and package version.
    seconds : float
        Wall-clock time of the solve, model hand-off included.
    iterations : int or None
    options : dict
        The options the attempt ran with; :func:`optmech.solvers.solve_lp` adds
        ``failed_attempts``, a list of ``(backend, method, status, message)``.
    basis : (ndarray, ndarray) or None
        The final simplex basis as HiGHS's ``HighsBasisStatus`` codes of the columns and rows
        (0 at lower bound, 1 basic, 2 at upper bound, 3 free at zero, 4 nonbasic), where the
        LP asks for it (``meta["keep_basis"]``) and the backend has one.  An LP whose ``meta["start_basis"]`` holds such a pair (of its own sizes;
        e.g. this basis with added columns at their lower bounds) starts HiGHS's simplex from it: a
        warm start for column generation.  Other backends, and HiGHS's interior point, ignore it.
    """

    status: Status
    raw_status: str
    message: str
    objective: float
    x: np.ndarray | None
    row_dual: np.ndarray | None
    col_dual: np.ndarray | None
    backend: str
    method: str
    version: str
    seconds: float
    iterations: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    basis: tuple[np.ndarray, np.ndarray] | None = None

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        if self.status is Status.OPTIMAL and (self.x is None or self.row_dual is None or self.col_dual is None):
            self.status = Status.INACCURATE
            self.message = f"{self.message}; reported optimal without a primal and dual solution".lstrip("; ")

    @property
    def ok(self) -> bool:
        return self.status is Status.OPTIMAL


class Backend(abc.ABC):
    """One solver package.  Subclasses set ``name`` and ``module`` and implement ``solve``."""

    name: str = ""
    #: the importable module whose presence makes the backend available
    module: str = ""

    def available(self) -> bool:
        """True when the backend's package can be imported (checked without importing it)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False

    def require(self) -> None:
        """Raise :class:`SolverUnavailable` unless the package is installed."""
        if not self.available():
            raise SolverUnavailable(
                f"solver backend '{self.name}' needs the '{self.module}' package, which is not installed"
            )

    def accepts(self, lp: LinearProgram) -> bool:
        """Whether this backend can solve ``lp`` at all (special-structure backends say no to
        other LPs, and :func:`optmech.solvers.solve_lp` then skips them silently)."""
        return True

    @abc.abstractmethod
    def version(self) -> str:
        """Version string of the underlying solver package."""

    def solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        """Solve ``lp``; never raises for a solver failure (see module docstring).

        Standard output is kept for the caller: the solver runs inside
        :func:`optmech.solvers.console.solver_console`, which drops its output, or sends it to
        standard error when the options ask for the log (``output_flag``, ``verbose``, ``disp``).
        Backends implement :meth:`_solve`.

        ``lp.meta["solve_scale"]`` (a power of two S, optional) solves the LP in the variables S·x:
        bounds times S, the primal and objective divided by S on return (exact in binary floating
        point), duals unchanged (``c = Aᵀy + s`` does not involve the bounds).  The solvers' absolute
        feasibility tolerances then act on S·x: an LP whose variables are all small (probability
        masses of about 1/S) is solved S times more accurately."""
        scale = float(lp.meta.get("solve_scale", 1.0))
        if scale != 1.0:
            lp = replace(lp, row_lower=lp.row_lower * scale, row_upper=lp.row_upper * scale,
                         col_lower=lp.col_lower * scale, col_upper=lp.col_upper * scale)
        with solver_console(wants_log(options)):
            sol = self._solve(lp, options)
        if scale != 1.0:
            sol.objective = sol.objective / scale
            if sol.x is not None:
                sol.x = np.asarray(sol.x) / scale
        return sol

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        """The backend's solve, run by :meth:`solve` with standard output redirected."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def as_array(values: Any, size: int) -> np.ndarray | None:
    """``values`` as a float64 array of length ``size``, or None if it is missing or the wrong size."""
    if values is None:
        return None
    arr = np.asarray(values, dtype=float)
    if arr.shape != (size,):
        return None
    return arr
