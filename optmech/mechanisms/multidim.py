"""Multi-dimensional additive noise for pure ε-DP on ℝ^d and ℤ^d (the d-D staircase [GKOV15, §II],
i.i.d. Laplace [GKOV15, Def. 3], discrete Laplace [GV13, (120)], ℓ2 Laplace [KHP15, Thm 8]).

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.base_nd`
(:class:`NDMechanism`, :data:`COSTS_ND`, :func:`check_dim`), :mod:`optmech.mechanisms.geometry`
(norm balls: volumes, cone measures, cross-norm moments), :mod:`optmech.mechanisms.staircase_nd`
(:class:`StaircaseND` and its normaliser, moments, costs, optimal γ, sampler) and
:mod:`optmech.mechanisms.laplace_nd` (:class:`LaplaceND`, :class:`DiscreteLaplaceND`,
:class:`L2Laplace` and their costs).  Import from those modules in new code.

Besides the public names, the helpers this module used to define under private names and that
tests reach through it (``_exp_l2_mean``, ``_gamma_mp``, ``_StaircaseSampler``, …) are aliases of
their public names in the new homes (table ``_MOVED``).  Assigning one of the moved names here
(``monkeypatch.setattr(multidim, "MAX_TABLE_SHELLS", 0)``, as the tests do) also assigns it in its
home module, so the code that reads it there sees the change, exactly as when the code lived here.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass  # noqa: F401  (was importable from here)

from optmech.errors import SpecError  # noqa: F401  (was importable from here)
from optmech.mechanisms import base_nd as _base_nd
from optmech.mechanisms import geometry as _geometry
from optmech.mechanisms import laplace_nd as _laplace_nd
from optmech.mechanisms import staircase_nd as _staircase_nd
from optmech.mechanisms.base import Mechanism, Privacy  # noqa: F401  (was importable from here)
from optmech.mechanisms.base_nd import COSTS_ND, MAX_DIM, NDMechanism, check_dim
from optmech.mechanisms.geometry import exp_l2_mean as _exp_l2_mean  # noqa: F401
from optmech.mechanisms.geometry import harmonic as _harmonic  # noqa: F401
from optmech.mechanisms.geometry import l1_directions_scaled as _l1_directions_scaled  # noqa: F401
from optmech.mechanisms.geometry import normal_linf_mean as _normal_linf_mean  # noqa: F401
from optmech.mechanisms.geometry import omphi_exp as _omphi_exp  # noqa: F401
from optmech.mechanisms.laplace_nd import (
    DiscreteLaplaceND,
    L2Laplace,
    LaplaceND,
    discrete_laplace_nd_cost,
    l2_laplace_cost,
    laplace_nd_cost,
)
from optmech.mechanisms.laplace_nd import dlap_linf_mean as _dlap_linf_mean  # noqa: F401
from optmech.mechanisms.laplace_nd import omphi_dlap as _omphi_dlap  # noqa: F401
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
from optmech.mechanisms.staircase_nd import StaircaseSampler as _StaircaseSampler  # noqa: F401
from optmech.mechanisms.staircase_nd import gamma_mp as _gamma_mp  # noqa: F401
from optmech.mechanisms.staircase_nd import gamma_mp_digits as _mp_digits  # noqa: F401
from optmech.mechanisms.staircase_nd import gamma_quartic as _gamma_quartic  # noqa: F401

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

#: name here -> (home module, name there), for every name this shim takes from the new modules.
_MOVED: dict[str, tuple[types.ModuleType, str]] = {
    **{n: (_base_nd, n) for n in ("COSTS_ND", "MAX_DIM", "NDMechanism", "check_dim")},
    **{n: (_laplace_nd, n) for n in ("DiscreteLaplaceND", "L2Laplace", "LaplaceND", "discrete_laplace_nd_cost",
                                     "l2_laplace_cost", "laplace_nd_cost")},
    **{n: (_staircase_nd, n) for n in ("MAX_MOMENT", "MAX_TABLE_SHELLS", "StaircaseND", "optimal_gamma_nd",
                                       "staircase_nd_cost", "staircase_nd_moment", "staircase_nd_normaliser",
                                       "staircase_nd_optimal_cost")},
    "_exp_l2_mean": (_geometry, "exp_l2_mean"),
    "_harmonic": (_geometry, "harmonic"),
    "_l1_directions_scaled": (_geometry, "l1_directions_scaled"),
    "_normal_linf_mean": (_geometry, "normal_linf_mean"),
    "_omphi_exp": (_geometry, "omphi_exp"),
    "_dlap_linf_mean": (_laplace_nd, "dlap_linf_mean"),
    "_omphi_dlap": (_laplace_nd, "omphi_dlap"),
    "_StaircaseSampler": (_staircase_nd, "StaircaseSampler"),
    "_gamma_mp": (_staircase_nd, "gamma_mp"),
    "_mp_digits": (_staircase_nd, "gamma_mp_digits"),
    "_gamma_quartic": (_staircase_nd, "gamma_quartic"),
}


class _ForwardingModule(types.ModuleType):
    """This module, with assignments to a moved name made in its home module too."""

    def __setattr__(self, name: str, value) -> None:
        moved = _MOVED.get(name)
        if moved is not None:
            setattr(moved[0], moved[1], value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ForwardingModule
