"""Solver layer: backends behind one interface, fallback profiles, one dual sign convention.

``solve_lp(lp, profile)`` runs the attempts of a :class:`SolverProfile` (see
:mod:`optmech.solvers.profiles`) and returns the first optimal :class:`RawSolution`.  Every
backend reports duals with ``c = Aᵀy + s`` and HiGHS's signs (see :mod:`optmech.solvers.base`).

Importing this package imports no solver package: highspy and cvxpy are imported when a
backend solves or reports its version.
"""

from __future__ import annotations

from optmech.solvers.base import Backend, RawSolution, Status
from optmech.solvers.dispatch import solve_lp
from optmech.solvers.profiles import Attempt, SolverProfile, backend_for, load_profile, profile_names
from optmech.solvers.registry import BACKENDS, available_backends, get_backend

__all__ = [
    "solve_lp",
    "Status",
    "RawSolution",
    "SolverProfile",
    "Attempt",
    "load_profile",
    "profile_names",
    "backend_for",
    "available_backends",
    "get_backend",
    "Backend",
    "BACKENDS",
]
