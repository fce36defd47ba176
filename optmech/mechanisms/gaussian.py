"""Gaussian noise for (ε, δ)-DP on ℝ, ℝ^d [DR14, BW18] and the discrete Gaussian on ℤ [CKS20].

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.gaussian` (N(0, σ²I_d): the
exact δ(ε), the classic and analytic σ, costs, :class:`Gaussian`) and
:mod:`optmech.mechanisms.approx.discrete_gaussian` (normaliser, δ(ε), σ, costs, :class:`DiscreteGaussian`).
"""

import optmech.mechanisms.approx.gaussian as _gaussian
import optmech.mechanisms.approx.discrete_gaussian as _discrete_gaussian
from optmech.mechanisms.approx.discrete_gaussian import (
    MAX_TERMS,
    DiscreteGaussian,
    discrete_gaussian_cost,
    discrete_gaussian_delta,
    discrete_gaussian_log_normaliser,
    discrete_gaussian_reference,
    discrete_gaussian_sigma,
)
from optmech.mechanisms.approx.gaussian import (
    MARGIN_DIGITS,
    ClassicSigma,
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    cost_breaks,
    expr_cost_quad,
    gaussian_cost,
    gaussian_delta,
    gaussian_reference,
)

__all__ = [*_gaussian.__all__, *_discrete_gaussian.__all__, "MAX_TERMS", "cost_breaks", "expr_cost_quad"]
