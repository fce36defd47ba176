"""Additive noise for approximate (ε, δ)-DP: one module per law, plus the papers' bounds and the reference sets.

=========================================================  ====================================================
module                                                     what it holds
=========================================================  ====================================================
:mod:`~optmech.mechanisms.approx.gaussian`                 N(0, σ²I_d) on ℝ^d: the exact δ(ε) [BW18, Thm 8], the
                                                           classic [DR14, Thm A.1] and analytic [BW18] σ, costs,
                                                           :class:`Gaussian`
:mod:`~optmech.mechanisms.approx.gaussian_nd`              N(0, σ²I_d) as a d-dimensional mechanism for ℓ2 (and ℓ1)
                                                           sensitivity: :class:`GaussianND`
:mod:`~optmech.mechanisms.approx.discrete_gaussian`        the discrete Gaussian on ℤ [CKS20]: normaliser, δ(ε)
                                                           with a rigorous tail, σ, costs, :class:`DiscreteGaussian`
:mod:`~optmech.mechanisms.approx.truncated`                the truncated Laplace on ℝ [GDGK20]
                                                           (:class:`TruncatedLaplace`) and the truncated discrete
                                                           Laplace on ℤ with an exact δ
                                                           (:class:`TruncatedDiscreteLaplace`)
:mod:`~optmech.mechanisms.approx.deployed_integer`         the integer laws deployed in practice (discrete
                                                           Laplace, truncated geometric, discrete Gaussian,
                                                           rounded Tulap [AV23]) calibrated, audited, with
                                                           certified cost enclosures (:class:`IntegerLaw`)
:mod:`~optmech.mechanisms.approx.bounds`                   the [GV13] theorem lower bounds and the closed-form
                                                           upper bounds on ℤ and ℤ^d, as :class:`Bound` objects
:mod:`~optmech.mechanisms.approx.references`               the reference sets: one upper :class:`Bound` per law on
                                                           ℝ, ℝ^d (:func:`continuous_approx_references`) and ℤ
                                                           (:func:`discrete_approx_references`)
=========================================================  ====================================================

The main public names are re-exported here and imported on first use (``from
optmech.mechanisms.approx import Gaussian``), so that importing one law does not import the others
(nor mpmath, which :mod:`~optmech.mechanisms.approx.deployed_integer` needs).  The modules that held
this code before (``optmech.mechanisms.gaussian``, ``.approx_references``, ``.approx_bounds``,
``.deployed_integer``, ``.truncated_discrete_laplace``) re-export their names from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below, for static tools; at run time __getattr__ imports them on first use
    from optmech.mechanisms.approx.bounds import (Bound, laplace_upper_bound, staircase_upper_bound,
                                                  theorem_lower_bound, uniform_upper_bound)
    from optmech.mechanisms.approx.deployed_integer import IntegerLaw, LAW_NAMES, deployed_laws, window_delta
    from optmech.mechanisms.approx.discrete_gaussian import (DiscreteGaussian, discrete_gaussian_cost,
                                                             discrete_gaussian_delta, discrete_gaussian_reference,
                                                             discrete_gaussian_sigma)
    from optmech.mechanisms.approx.gaussian import (Gaussian, analytic_gaussian_sigma, classic_gaussian_sigma,
                                                    gaussian_cost, gaussian_delta, gaussian_reference)
    from optmech.mechanisms.approx.gaussian_nd import GaussianND
    from optmech.mechanisms.approx.references import continuous_approx_references, discrete_approx_references
    from optmech.mechanisms.approx.truncated import (TruncatedDiscreteLaplace, TruncatedLaplace, truncated_laplace,
                                                     truncated_laplace_cost, truncated_laplace_reference)

#: submodule -> the public names re-exported from it
_HOMES = {
    "gaussian": ("Gaussian", "analytic_gaussian_sigma", "classic_gaussian_sigma", "gaussian_delta", "gaussian_cost",
                 "gaussian_reference"),
    "gaussian_nd": ("GaussianND",),
    "discrete_gaussian": ("DiscreteGaussian", "discrete_gaussian_sigma", "discrete_gaussian_delta",
                          "discrete_gaussian_cost", "discrete_gaussian_reference"),
    "truncated": ("TruncatedLaplace", "TruncatedDiscreteLaplace", "truncated_laplace", "truncated_laplace_cost",
                  "truncated_laplace_reference"),
    "deployed_integer": ("IntegerLaw", "deployed_laws", "window_delta", "LAW_NAMES"),
    "bounds": ("Bound", "theorem_lower_bound", "uniform_upper_bound", "laplace_upper_bound", "staircase_upper_bound"),
    "references": ("continuous_approx_references", "discrete_approx_references"),
}
_LAZY = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [name for names in _HOMES.values() for name in names]


def __getattr__(name: str):
    """A re-exported name, read from its module on first use; a submodule by its name."""
    import importlib

    if name in _HOMES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    """The re-exported names and the submodules, for tab completion."""
    return sorted(set(__all__) | set(_HOMES) | {n for n in globals() if n.startswith("__")})
