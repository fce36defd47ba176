"""Multi-dimensional additive noise for pure ε-DP on ℝ^d and ℤ^d (the d-D staircase [GKOV15, §II],
i.i.d. Laplace [GKOV15, Def. 3], discrete Laplace [GV13, (120)], ℓ2 Laplace [KHP15, Thm 8]).

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.base_nd`
(:class:`NDMechanism`, :data:`COSTS_ND`, :func:`check_dim`), :mod:`optmech.mechanisms.geometry`
(norm balls: volumes, cone measures, cross-norm moments), :mod:`optmech.mechanisms.staircase_nd`
(:class:`StaircaseND` and its normaliser, moments, costs, optimal γ, sampler) and
:mod:`optmech.mechanisms.laplace_nd` (:class:`LaplaceND`, :class:`DiscreteLaplaceND`,
:class:`L2Laplace` and their costs).  Import from those modules in new code; settings such as
``MAX_TABLE_SHELLS`` are read where the code lives (``optmech.mechanisms.staircase_nd``).
"""

from __future__ import annotations

from optmech.mechanisms.base_nd import COSTS_ND, MAX_DIM, NDMechanism, check_dim
from optmech.mechanisms.laplace_nd import (
    DiscreteLaplaceND,
    L2Laplace,
    LaplaceND,
    discrete_laplace_nd_cost,
    l2_laplace_cost,
    laplace_nd_cost,
)
from optmech.mechanisms.staircase_nd import (
    MAX_MOMENT,
    MAX_TABLE_SHELLS,
    StaircaseND,
    optimal_gamma_nd,
    staircase_nd_cost,
    staircase_nd_moment,
    staircase_nd_normaliser,
    staircase_nd_optimal_cost,
)

__all__ = [
    "COSTS_ND",
    "StaircaseND",
    "LaplaceND",
    "DiscreteLaplaceND",
    "L2Laplace",
    "staircase_nd_normaliser",
    "staircase_nd_moment",
    "staircase_nd_cost",
    "optimal_gamma_nd",
    "staircase_nd_optimal_cost",
    "laplace_nd_cost",
    "discrete_laplace_nd_cost",
    "l2_laplace_cost",
    "NDMechanism",
    "check_dim",
    "MAX_DIM",
    "MAX_MOMENT",
    "MAX_TABLE_SHELLS",
]
