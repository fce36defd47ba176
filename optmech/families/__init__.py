"""Problem families behind the one solve loop (:mod:`optmech.drive`), and the registry.

Each family is one module with one class implementing :class:`optmech.families.base.Family`;
:func:`family_for` picks it for a :class:`~optmech.spec.Problem`.  Adding a family is one builder
module (``optmech/problems/``), one family module here and one line in :data:`REGISTRY`.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from optmech.spec import ApproxDP, Continuous, Lipschitz, Problem, Wasserstein

#: (applies to the problem?, "module:Class"), tried in order: the first match solves it.
REGISTRY: list[tuple[Callable[[Problem], bool], str]] = [
    (lambda p: isinstance(p.objective, Wasserstein), "optmech.families.wasserstein:WassersteinFamily"),
    (lambda p: isinstance(p.privacy, Lipschitz), "optmech.families.lipschitz:LipschitzFamily"),
    (lambda p: isinstance(p.privacy, ApproxDP) and p.delta > 0 and isinstance(p.domain, Continuous) and p.dim > 1,
     "optmech.families.approx_real_nd:ApproxRealNDFamily"),
    (lambda p: isinstance(p.privacy, ApproxDP) and p.delta > 0 and isinstance(p.domain, Continuous),
     "optmech.families.approx_real:ApproxRealFamily"),
    (lambda p: isinstance(p.privacy, ApproxDP) and p.delta > 0, "optmech.families.approx:ApproxFamily"),
    (lambda p: p.dim > 1 and _radial(p), "optmech.families.radial:RadialFamily"),
    (lambda p: p.dim > 1, "optmech.families.pure_nd:PureNDFamily"),
    (lambda p: True, "optmech.families.pure1d:Pure1DFamily"),
]


def _radial(problem: Problem) -> bool:
    from optmech.families.radial import radial_power

    return radial_power(problem) is not None


def family_for(problem: Problem) -> Any:
    """The family class that solves ``problem`` (imported on demand: heavy modules stay lazy)."""
    for applies, target in REGISTRY:
        if applies(problem):
            module, _, name = target.partition(":")
            return getattr(importlib.import_module(module), name)
    raise AssertionError("the last registry entry applies to every problem")  # pragma: no cover
