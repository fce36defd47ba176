"""Reference mechanisms for 1-D pure ε-DP: closed forms, numeric costs, samplers.

Families (names follow the papers): ``staircase`` [Geng13, (2.13), Thm 2.4], ``discrete_staircase``
[Geng13, (2.17), Thm 2.13], ``geometric`` [Geng13, Thm 2.12], ``laplace`` [Geng13, §2.6],
``discrete_laplace`` [GV13, Thm 10].  :func:`references_for` collects the values the LP bracket
is checked against.
"""

from optmech.mechanisms.base import REGISTRY, Mechanism, Privacy, Reference
from optmech.mechanisms.discrete_staircase import (
    DiscreteStaircase,
    Geometric,
    discrete_staircase_cost,
    discrete_staircase_normaliser,
    discrete_staircase_reference,
    geometric_cost,
    geometric_reference,
    optimal_r,
)
from optmech.mechanisms.laplace import (
    DiscreteLaplace,
    Laplace,
    discrete_laplace_cost,
    discrete_laplace_cost_abs,
    discrete_laplace_cost_square,
    discrete_laplace_reference,
    laplace_cost,
    laplace_cost_abs,
    laplace_cost_square,
    laplace_reference,
)
from optmech.mechanisms.references import references_for
from optmech.mechanisms.staircase import (
    Staircase,
    gamma_heuristic,
    optimal_gamma,
    staircase_cost,
    staircase_cost_abs,
    staircase_cost_moment,
    staircase_cost_square,
    staircase_normaliser,
    staircase_optimal_cost_abs,
    staircase_optimal_cost_square,
    staircase_reference,
)
from optmech.mechanisms.multidim import (
    COSTS_ND,
    DiscreteLaplaceND,
    L2Laplace,
    LaplaceND,
    StaircaseND,
    discrete_laplace_nd_cost,
    l2_laplace_cost,
    laplace_nd_cost,
    optimal_gamma_nd,
    staircase_nd_cost,
    staircase_nd_moment,
    staircase_nd_normaliser,
    staircase_nd_optimal_cost,
)
from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND, discrete_staircase_nd_costs
from optmech.mechanisms.tabulated import LatticePMF, PiecewiseConstantDensity, Tabulated
from optmech.mechanisms.uniform import Uniform, UniformContinuous
from optmech.mechanisms.truncated_discrete_laplace import TruncatedDiscreteLaplace
from optmech.mechanisms.factory import FAMILIES, make_mechanism
from optmech.mechanisms.lattice_release import LatticeRelease
from optmech.mechanisms.rng import as_generator, secure_generator
from optmech.mechanisms import solved  # noqa: F401  (registers the solvers' output kinds with Mechanism.from_dict)

__all__ = [
    "Mechanism",
    "Privacy",
    "REGISTRY",
    "Reference",
    "Uniform",
    "UniformContinuous",
    "TruncatedDiscreteLaplace",
    "StaircaseND",
    "DiscreteStaircaseND",
    "LatticeRelease",
    "discrete_staircase_nd_costs",
    "LaplaceND",
    "DiscreteLaplaceND",
    "L2Laplace",
    "COSTS_ND",
    "staircase_nd_normaliser",
    "staircase_nd_moment",
    "staircase_nd_cost",
    "staircase_nd_optimal_cost",
    "optimal_gamma_nd",
    "laplace_nd_cost",
    "discrete_laplace_nd_cost",
    "l2_laplace_cost",
    "Tabulated",
    "LatticePMF",
    "PiecewiseConstantDensity",
    "FAMILIES",
    "make_mechanism",
    "as_generator",
    "secure_generator",
    "gamma_heuristic",
    "Staircase",
    "DiscreteStaircase",
    "Geometric",
    "Laplace",
    "DiscreteLaplace",
    "references_for",
    "staircase_normaliser",
    "staircase_cost",
    "staircase_cost_abs",
    "staircase_cost_square",
    "staircase_cost_moment",
    "staircase_optimal_cost_abs",
    "staircase_optimal_cost_square",
    "optimal_gamma",
    "staircase_reference",
    "discrete_staircase_normaliser",
    "discrete_staircase_cost",
    "optimal_r",
    "discrete_staircase_reference",
    "geometric_cost",
    "geometric_reference",
    "laplace_cost",
    "laplace_cost_abs",
    "laplace_cost_square",
    "laplace_reference",
    "discrete_laplace_cost",
    "discrete_laplace_cost_abs",
    "discrete_laplace_cost_square",
    "discrete_laplace_reference",
]
