"""The mechanism library: every noise law optmech prices, samples, audits or returns, laid out by law.

One base class (:class:`Mechanism`, :mod:`~optmech.mechanisms.base`: ``pdf``/``pmf``, ``cdf``,
``sample``, ``expected_cost``, ``privacy()``, ``to_dict``/``from_dict``) and one registry
(:data:`REGISTRY`, by each law's ``name``; saved JSON names a law by it).  Where each law lives:

=====================================  ====================================================================
closed forms, 1-D pure ε-DP            :mod:`~optmech.mechanisms.staircase` (``staircase`` [Geng13, (2.13),
                                       Thm 2.4]), :mod:`~optmech.mechanisms.discrete_staircase`
                                       (``discrete_staircase`` [Geng13, (2.17), Thm 2.13], ``geometric``
                                       [Geng13, Thm 2.12]), :mod:`~optmech.mechanisms.laplace` (``laplace``
                                       [Geng13, §2.6], ``discrete_laplace`` [GV13, Thm 10]),
                                       :mod:`~optmech.mechanisms.uniform` (uniform (0, δ) noise [GV13, (30)])
closed forms, d dimensions             :mod:`~optmech.mechanisms.staircase_nd` (``staircase_nd`` in ℓ1, ℓ2,
                                       ℓ∞, ℓp [GKOV15]), :mod:`~optmech.mechanisms.laplace_nd` (i.i.d.
                                       Laplace, discrete Laplace, ℓ2-Laplace),
                                       :mod:`~optmech.mechanisms.discrete_staircase_nd` (the ℓ1 discrete
                                       staircase on ℤ^d); their shared base :mod:`~optmech.mechanisms.base_nd`
geometry of norm balls                 :mod:`~optmech.mechanisms.geometry` (volumes, cone measures and
                                       their samplers, cross-norm moments), used by the d-D laws and families
(ε, δ) references and calibrations     :mod:`optmech.mechanisms.approx` (Gaussian and analytic Gaussian,
                                       discrete Gaussian, truncated Laplace and truncated discrete Laplace,
                                       the deployed integer laws, the papers' bounds in
                                       :mod:`~optmech.mechanisms.approx.bounds`, the reference sets)
the laws solvers produce               :mod:`~optmech.mechanisms.tabulated` (1-D: ``lattice_pmf``,
                                       ``piecewise_constant_density``), :mod:`optmech.mechanisms.solved`
                                       (d-D lattice pmfs and their majorant extensions, cells, shells,
                                       cubes, the Lipschitz laws: one module per kind)
references beside a bracket            :mod:`~optmech.mechanisms.references` (:func:`references_for`,
                                       1-D pure DP) and :mod:`~optmech.mechanisms.shifts` (every reference
                                       at its best shift, one rule for every family)
building, releasing, sampling          :mod:`~optmech.mechanisms.factory` (:func:`make_mechanism`),
                                       :mod:`~optmech.mechanisms.lattice_release` (continuous laws released on
                                       a grid), :mod:`~optmech.mechanisms.rng` (seeded and secure generators),
                                       :mod:`~optmech.mechanisms.numerics` (series, quadrature, checks),
                                       :mod:`~optmech.mechanisms.display`, :mod:`~optmech.mechanisms.files`
=====================================  ====================================================================

The modules ``multidim``, ``gaussian``, ``approx_references``, ``approx_bounds``,
``deployed_integer`` and ``truncated_discrete_laplace`` are kept so existing imports work: each
re-exports its names from the homes above.

>>> from optmech.mechanisms import Mechanism, Staircase
>>> law = Mechanism.from_dict(Staircase(epsilon=1, sensitivity=1, gamma=0.3).to_dict())
>>> law.name, sorted(n for n in ("staircase", "gaussian", "lattice_pmf_nd") if n in REGISTRY)
('staircase', ['gaussian', 'lattice_pmf_nd', 'staircase'])
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
from optmech.mechanisms.base_nd import COSTS_ND
from optmech.mechanisms.laplace_nd import (
    DiscreteLaplaceND,
    L2Laplace,
    LaplaceND,
    ProductLaplace,
    discrete_laplace_nd_cost,
    l2_laplace_cost,
    laplace_nd_cost,
)
from optmech.mechanisms.staircase_nd import (
    StaircaseND,
    optimal_gamma_nd,
    staircase_nd_cost,
    staircase_nd_moment,
    staircase_nd_normaliser,
    staircase_nd_optimal_cost,
)
from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND, discrete_staircase_nd_costs
from optmech.mechanisms.tabulated import LatticePMF, PiecewiseConstantDensity, Tabulated
from optmech.mechanisms.uniform import Uniform, UniformContinuous
from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian
from optmech.mechanisms.approx.gaussian import Gaussian
from optmech.mechanisms.approx.gaussian_nd import GaussianND
from optmech.mechanisms.approx.truncated import TruncatedDiscreteLaplace, TruncatedLaplace
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
    "TruncatedLaplace",
    "Gaussian",
    "GaussianND",
    "DiscreteGaussian",
    "StaircaseND",
    "DiscreteStaircaseND",
    "LatticeRelease",
    "discrete_staircase_nd_costs",
    "LaplaceND",
    "ProductLaplace",
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
