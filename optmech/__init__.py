"""optmech: optimal differential-privacy noise by linear programming, with certified bounds.

The data flow is ``spec -> problem builder -> LinearProgram -> solver -> certificate -> Result``.
Heavy dependencies (highspy, cvxpy, matplotlib) are imported lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "solve", "Problem", "PureDP", "ApproxDP", "Lipschitz", "IntegerLattice", "Continuous",
           "ExpectedCost", "Wasserstein", "Cost", "Result", "Status", "OptmechError", "SpecError"]


def __getattr__(name: str):  # lazy public API, keeps `import optmech` cheap
    if name == "solve":
        from optmech.drive import solve

        return solve
    if name in {"Result", "Status"}:
        from optmech import result

        return getattr(result, name)
    if name in {"OptmechError", "SpecError"}:
        from optmech import errors

        return getattr(errors, name)
    if name in {"Problem", "PureDP", "ApproxDP", "Lipschitz", "IntegerLattice", "Continuous", "ExpectedCost", "Wasserstein"}:
        from optmech import spec

        return getattr(spec, name)
    if name == "Cost":
        from optmech.costs import Cost

        return Cost
    raise AttributeError(f"module 'optmech' has no attribute {name!r}")
