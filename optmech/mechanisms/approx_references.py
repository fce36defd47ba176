"""Reference mechanisms for (ε, δ)-DP on ℝ, ℝ^d and ℤ: upper bounds on the optimal cost V*
[DR14, BW18, CKS20, GDGK20].

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.truncated` (the truncated
Laplace mechanism [GDGK20]), :mod:`optmech.mechanisms.approx.references` (the reference sets
:func:`continuous_approx_references`, :func:`discrete_approx_references`) and
:mod:`optmech.mechanisms.approx.bounds` (:class:`Bound` and the argument checks).
"""

import optmech.mechanisms.approx.truncated as _truncated
import optmech.mechanisms.approx.references as _references
from optmech.mechanisms.approx.bounds import Bound, check_delta, check_dim, check_epsilon, make_bound, resolve_cost
from optmech.mechanisms.approx.references import NORMS, continuous_approx_references, discrete_approx_references
from optmech.mechanisms.approx.truncated import (
    TruncatedDiscreteLaplace,
    TruncatedLaplace,
    TruncatedLaplaceParameters,
    truncated_laplace,
    truncated_laplace_cost,
    truncated_laplace_reference,
    truncated_laplace_shift_delta,
)

__all__ = [*_truncated.__all__, *_references.__all__, "Bound", "check_delta", "check_dim", "check_epsilon", "make_bound",
           "resolve_cost"]
