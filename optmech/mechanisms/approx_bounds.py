"""Guarded closed forms and certified relaxations for (ε, δ)-DP additive noise on ℤ and ℤ^d [GV13].

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.bounds`.
"""

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

__all__ = [
    "Bound",
    "theorem_lower_bound",
    "uniform_upper_bound",
    "laplace_upper_bound",
    "staircase_upper_bound",
    "thm8_n",
    "make_bound",
    "check_epsilon",
    "check_delta",
    "check_all",
    "resolve_cost",
    "cost_symmetric",
    "SEPARABLE",
    "RELAXED_VARIANTS",
    "MAX_WINDOW",
    "MAX_DOUBLINGS",
    "LP_IMPROVEMENT_RTOL",
    "INTEGER_RTOL",
    "MAX_DIM",
    "EPS_MAX",
    "MAX_TERMS",
    "check_dim",
]
