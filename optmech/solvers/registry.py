"""Backend name → class.  Importing this imports no solver package."""

from __future__ import annotations

from optmech.solvers.base import Backend
from optmech.solvers.chain import ChainBackend
from optmech.solvers.clarabel_backend import ClarabelBackend
from optmech.solvers.cvxpy_backend import CvxpyBackend
from optmech.solvers.highs import HighsBackend
from optmech.solvers.hockey_ipm import HockeyIPMBackend
from optmech.solvers.scipy_backend import ScipyBackend

BACKENDS: dict[str, type[Backend]] = {
    "highs": HighsBackend,
    "scipy": ScipyBackend,
    "cvxpy": CvxpyBackend,
    "chain": ChainBackend,
    "clarabel": ClarabelBackend,
    "hockey_ipm": HockeyIPMBackend,
}


def get_backend(name: str) -> Backend:
    """An instance of the backend called ``name`` (KeyError if there is none)."""
    return BACKENDS[name]()


def available_backends() -> dict[str, bool]:
    """``{name: installed}`` for every backend, checked without importing the packages."""
    return {name: cls().available() for name, cls in BACKENDS.items()}
