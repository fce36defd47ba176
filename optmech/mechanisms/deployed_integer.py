"""Deployed integer-valued (ε, δ)-DP noise on ℤ, calibrated, audited and with certified costs [CKS20, AS18, AV23].

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.deployed_integer` (the
discrete Gaussian's own δ and costs in :mod:`optmech.mechanisms.approx.discrete_gaussian`).
"""

import optmech.mechanisms.approx.deployed_integer as _deployed_integer
from optmech.mechanisms.approx.deployed_integer import (
    FULL_AUDIT_LIMIT,
    LAW_NAMES,
    SUBSAMPLE,
    TAIL_TARGET,
    U,
    IntegerLaw,
    deployed_laws,
    discrete_gaussian_law,
    discrete_laplace_law,
    enclose_moments,
    rounded_tulap_at,
    rounded_tulap_law,
    truncated_geometric_delta,
    truncated_geometric_law,
    truncated_geometric_nonneg_law,
    window_delta,
)
from optmech.mechanisms.approx.discrete_gaussian import (
    discrete_gaussian_cost,
    discrete_gaussian_delta,
    discrete_gaussian_log_normaliser,
)

__all__ = [*_deployed_integer.__all__, "TAIL_TARGET", "U", "discrete_gaussian_cost", "discrete_gaussian_delta",
           "discrete_gaussian_log_normaliser"]
