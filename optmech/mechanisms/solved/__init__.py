r"""Library mechanisms for the solvers' d-dimensional and Lipschitz outputs.

The d-dimensional and Lipschitz solvers describe their audited upper-bound mechanism as a JSON dict
(the ``mechanism`` field of ``optmech solve --save``).  :func:`mechanism_from_solver_dict` turns such
a dict into a :class:`~optmech.mechanisms.base.Mechanism`; every class here keeps the dict it was
built from, and ``to_dict()`` returns exactly that dict (same keys, same values: a ``kind`` key, no
``name`` key), so the JSON output is unchanged.  Each class is registered under ``name`` = its kind,
so :meth:`Mechanism.from_dict` rebuilds it from the solver dict once this package is imported.

Optional keys the solvers may add and that are read here: ``epsilon`` (the privacy target the law
was audited for), ``delta`` ((ε, δ) outputs), ``beta`` (the majorant ratio β of the pure d-D
outputs) and ``dim`` (Lipschitz outputs).  The keyword arguments ``epsilon``/``delta`` of
:func:`mechanism_from_solver_dict` fill them in when the dict lacks them (they are not added to
``to_dict()``).

Kinds and their laws
--------------------
One module per kind of law; each class reads its own kind (its ``from_dict``), and
:func:`mechanism_from_solver_dict` picks that reader by ``kind`` from :data:`SOLVER_KINDS`.

* :mod:`~optmech.mechanisms.solved.lattice_nd`: ``lattice_pmf_nd``, the (ε, δ) solver's finite pmf on ℤ^d
  (:class:`FiniteLatticePMFND`) and the pure d-D solver's pmf with its β-majorant extension
  (:class:`MajorantLatticePMFND`); :class:`LatticePMFND` returns whichever the dict holds.
* :mod:`~optmech.mechanisms.solved.majorant`: the β-majorant extension itself (the rule, ρ in closed form,
  the sampler), in floats and in exact rationals, with its exact audit and exact sampler.
* :mod:`~optmech.mechanisms.solved.cells`: ``cell_pmf_nd`` (:class:`CellPMFND`, the pure d-D cell density)
  and ``cube_pmf_nd`` (:class:`CubePMFND`, the (ε, δ) ℝ^d solver's cube density).
* :mod:`~optmech.mechanisms.solved.shells`: ``l1_shell_density_nd`` (:class:`ShellDensityND`).
* :mod:`~optmech.mechanisms.solved.radial_shells`: ``radial_shell_density_nd`` (:class:`RadialShellDensityND`, the
  (ε, δ) solver's radial law on ℝ^d for ℓ2 sensitivity) and its audit.
* :mod:`~optmech.mechanisms.solved.lipschitz`: ``lipschitz_points``, ``lipschitz_cells``, ``lipschitz_radial``,
  ``lipschitz_shells`` and their ``per_coordinate`` products ([KHP15]).
* :mod:`~optmech.mechanisms.solved.points` (lookup, orbits, ℓ1 spheres of ℤ^d) and
  :mod:`~optmech.mechanisms.solved.common` (field reading, :class:`SolvedMechanism`, shared numerics).

Privacy: pure outputs give ``Privacy("pure", ε, 0, Δ, norm)``, the (ε, δ) outputs
``Privacy("approx", ε, δ, Δ, norm)`` (NaN where ε/δ are unknown), Lipschitz outputs
``Privacy("lipschitz", ε, 0, None, norm)``.  The laws loaded from a saved dict state what an audit of
their loaded masses proves, not the target they were solved for (the dict's ``epsilon``/``delta`` or
the keywords): the β-majorant laws (points, cells, ℓ1 shells) ε = max(−ln β, ln of the largest exact
ratio of the law at two points one move apart, tails included), rounded up; the finite pmf on ℤ^d
and the cube density on ℝ^d δ(ε) by the hockey-stick sums of their masses at the recorded ε.  Laws
whose audit is not evaluated at load (ℓ2 majorant extensions; more than :data:`LOAD_AUDIT_PAIRS`
pairs) state the recorded audit and say that it was not re-audited.  Lipschitz outputs report the
recorded rate or, where the knots exceed it, the law's realised maximal log-slope.

The samplers are floating-point samplers (see :mod:`optmech.mechanisms.rng`): exact laws up to the
resolution of 53-bit uniforms, not protected against floating-point attacks.
"""

from __future__ import annotations

from optmech.errors import SpecError
from optmech.mechanisms.base import REGISTRY, Mechanism
from optmech.mechanisms.solved.cells import CUBE_QUADRATURE_NODES, CellPMFND, CubePMFND
from optmech.mechanisms.solved.common import (  # noqa: F401  (constants kept importable from here)
    BLOCK_PAIRS,
    GROUPS,
    MAJORANT_SLACK,
    MAX_PAIRS,
    TAIL_TOL,
    SolvedMechanism,
)
from optmech.mechanisms.solved.lattice_nd import FiniteLatticePMFND, LatticePMFND, MajorantLatticePMFND
from optmech.mechanisms.solved.lipschitz import (
    LipschitzCells,
    LipschitzPoints,
    LipschitzProduct,
    LipschitzRadial,
    LipschitzShells,
)
from optmech.mechanisms.solved.majorant import MajorantExactLaw, MajorantExactValues, MajorantExtension  # noqa: F401
from optmech.mechanisms.solved.points import PointIndex, canonical_points, orbit_sizes, uniform_lattice_l1_sphere
from optmech.mechanisms.solved.radial_shells import RadialShellDensityND
from optmech.mechanisms.solved.shells import ShellDensityND

__all__ = [
    "SOLVER_KINDS",
    "SolvedMechanism",
    "LatticePMFND",
    "FiniteLatticePMFND",
    "MajorantLatticePMFND",
    "CellPMFND",
    "ShellDensityND",
    "RadialShellDensityND",
    "LipschitzPoints",
    "LipschitzCells",
    "LipschitzRadial",
    "LipschitzShells",
    "LipschitzProduct",
    "mechanism_from_solver_dict",
    "CubePMFND",
    "CUBE_QUADRATURE_NODES",
    "PointIndex",
    "canonical_points",
    "orbit_sizes",
    "uniform_lattice_l1_sphere",
]

#: Most point pairs (or cube × shift terms) ``privacy()`` audits when a law is loaded; a larger law
#: states the audit recorded by its solve, saying that it was not re-audited.  Every kind reads it
#: here at call time (:func:`optmech.mechanisms.solved.common.load_audit_limit`).
LOAD_AUDIT_PAIRS = 20_000_000

#: The reader (the class whose ``from_dict`` reads the kind) of each solver ``kind``.
READERS: dict[str, type[SolvedMechanism]] = {
    "lattice_pmf_nd": LatticePMFND,
    "cell_pmf_nd": CellPMFND,
    "l1_shell_density_nd": ShellDensityND,
    "lipschitz_points": LipschitzPoints,
    "lipschitz_cells": LipschitzCells,
    "lipschitz_radial": LipschitzRadial,
    "lipschitz_shells": LipschitzShells,
    "cube_pmf_nd": CubePMFND,
    "radial_shell_density_nd": RadialShellDensityND,
}
#: The ``kind`` values :func:`mechanism_from_solver_dict` accepts.
SOLVER_KINDS = tuple(READERS)


def mechanism_from_solver_dict(d: dict, *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
    """The library :class:`Mechanism` of a solver's ``mechanism`` dict (module docstring): the kinds
    of :data:`SOLVER_KINDS`, each read by its own class's ``from_dict`` (:data:`READERS`), and a library
    mechanism's own ``to_dict()`` (a ``name`` registered with :meth:`Mechanism.from_dict` and no
    ``kind``: the closed-form references a family may return).

    Parameters
    ----------
    d : dict
        The solver dict (``result.to_dict(include_mechanism=True)["mechanism"]``), with a ``kind``
        in :data:`SOLVER_KINDS` (a ``name`` key equal to ``kind`` is accepted and dropped).
    epsilon, delta : float, optional
        The privacy parameters the law was audited for, where the dict lacks ``epsilon``/``delta``
        (solver kinds only; a library mechanism's dict carries its own parameters).

    Raises
    ------
    SpecError
        An unknown kind or a malformed dict (one line).
    """
    if not isinstance(d, dict):
        raise SpecError("a solver mechanism must be a dict")
    kind = d.get("kind", d.get("name"))
    if "kind" not in d and kind not in SOLVER_KINDS and kind in REGISTRY:
        return Mechanism.from_dict(d)
    reader = READERS.get(kind)
    if reader is None:
        raise SpecError(f"unknown solver mechanism kind {kind!r} (known: {', '.join(SOLVER_KINDS)})")
    return reader.from_dict(d, epsilon=epsilon, delta=delta)
