"""Guarded closed forms and certified relaxations for (ε, δ)-DP additive noise on ℤ and ℤ^d [GV13].

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.bounds`.
"""

import optmech.mechanisms.approx.bounds as _bounds
from optmech.mechanisms.approx.bounds import (
    EPS_MAX,
    INTEGER_RTOL,
    LP_IMPROVEMENT_RTOL,
    MAX_DIM,
    MAX_DOUBLINGS,
    MAX_TERMS,
    MAX_WINDOW,
    RELAXED_VARIANTS,
    SEPARABLE,
    Bound,
    check_all,
    check_delta,
    check_dim,
    check_epsilon,
    cost_symmetric,
    laplace_upper_bound,
    make_bound,
    resolve_cost,
    staircase_upper_bound,
    theorem_lower_bound,
    thm8_n,
    uniform_upper_bound,
)

__all__ = [*_bounds.__all__, "EPS_MAX", "MAX_TERMS", "check_dim"]
