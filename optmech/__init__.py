"""optmech: optimal differential-privacy noise by linear programming, with certified bounds.

The data flow is ``spec -> problem builder -> LinearProgram -> solver -> certificate -> Result``.
Heavy dependencies (highspy, cvxpy, matplotlib) are imported lazily: every public name below is
resolved on first use, so ``import optmech`` stays cheap, and ``dir(optmech)`` lists them all.

>>> import optmech
>>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
>>> r.certified, r.status
(True, <Status.OPTIMAL: 'optimal'>)
>>> noisy = r.mechanism(np.array([3, 5, 8]), rng=1)     # add the optimal noise to query answers
>>> noisy.shape
(3,)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers and IDEs; at run time every name is resolved lazily below
    from optmech.costs import Cost
    from optmech.drive import solve
    from optmech.errors import OptmechError, SpecError
    from optmech.mechanisms import (DiscreteLaplace, DiscreteStaircase, Geometric, Laplace, Mechanism, Staircase,
                                    Uniform, UniformContinuous, make_mechanism)
    from optmech.result import Result, Status
    from optmech.spec import (ApproxDP, Continuous, ExpectedCost, IntegerLattice, Lipschitz, Problem, PureDP,
                              Wasserstein)
    from optmech.store import read as read_store
    from optmech.recommendation import Recommendation, recommend
    from optmech.table import build_table

__version__ = "0.1.0"

#: public name -> (module, attribute) it is read from on first use
_LAZY = {
    "solve": ("optmech.drive", "solve"),
    "Result": ("optmech.result", "Result"),
    "Status": ("optmech.result", "Status"),
    "OptmechError": ("optmech.errors", "OptmechError"),
    "SpecError": ("optmech.errors", "SpecError"),
    "Cost": ("optmech.costs", "Cost"),
    "read_store": ("optmech.store", "read"),
    "build_table": ("optmech.table", "build_table"),
    "recommend": ("optmech.recommendation", "recommend"),
    "Recommendation": ("optmech.recommendation", "Recommendation"),
    **{n: ("optmech.spec", n) for n in ("Problem", "PureDP", "ApproxDP", "Lipschitz", "IntegerLattice", "Continuous",
                                        "ExpectedCost", "Wasserstein")},
    **{n: ("optmech.mechanisms", n) for n in ("Mechanism", "Laplace", "DiscreteLaplace", "Staircase",
                                              "DiscreteStaircase", "Geometric", "Uniform", "UniformContinuous",
                                              "make_mechanism")},
}

#: submodules a user reaches as attributes (``optmech.store.read(path)``), imported on first use
_SUBMODULES = frozenset({"store", "table", "plots", "mechanisms", "costs", "spec", "drive", "result", "sweep",
                         "certify", "sources", "audit", "compare", "errors", "inputs", "reproduce", "workers",
                         "interop", "recommendation"})

__all__ = ["__version__", "solve", "Problem", "PureDP", "ApproxDP", "Lipschitz", "IntegerLattice", "Continuous",
           "ExpectedCost", "Wasserstein", "Cost", "Result", "Status", "OptmechError", "SpecError",
           "Mechanism", "Laplace", "DiscreteLaplace", "Staircase", "DiscreteStaircase", "Geometric", "Uniform",
           "UniformContinuous", "make_mechanism", "read_store", "build_table", "recommend", "Recommendation"]


def __getattr__(name: str):  # lazy public API, keeps `import optmech` cheap
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"optmech.{name}")
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'optmech' has no attribute {name!r}")
    return getattr(importlib.import_module(target[0]), target[1])


def __dir__() -> list[str]:
    """The public API and the module's attributes, for tab completion."""
    own = {n for n in globals() if n.startswith("__") or not n.startswith("_")} - {"annotations", "TYPE_CHECKING"}
    return sorted(set(__all__) | own | _SUBMODULES)
