"""Closed-form (or numeric) reference values to compare with the LP bracket.

:func:`references_for` lists, for a 1-D pure ε-DP problem, the optimal mechanism's cost V*
where a theorem of the papers gives it, plus the standard baselines:

=============  =================================================  ==========================================
domain         symmetric nondecreasing cost                       any cost
=============  =================================================  ==========================================
continuous     ``staircase`` (V*, [Geng13, Thm 2.4])              ``staircase`` (best γ, upper bound),
                                                                  ``laplace`` (upper bound)
integer        ``discrete_staircase`` (V*, [Geng13, Thm 2.13]),   ``discrete_staircase`` (best r, upper
               ``geometric`` if Δ = 1 (V*, Thm 2.12)              bound), ``discrete_laplace`` (upper bound)
=============  =================================================  ==========================================

"Symmetric nondecreasing" is ``cost.is_symmetric_nondecreasing(integer=...)``: proven on the
whole domain (by construction for named costs, by interval arithmetic for expressions); a cost
for which no proof is found gets upper bounds only, never a value labelled V*.
The V* values are optimal among output-independent noise laws ([Geng13] Thm 2.3/2.11 reduce to
those under a periodicity assumption).  Closed forms are accurate to a few ulp; numeric routes
state their method and estimated error in ``note``.

Each reference is listed at its best shift (:mod:`optmech.mechanisms.shifts`, one rule for every
family); the shift rule's names stay importable from here.
"""

from __future__ import annotations

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Reference
from optmech.mechanisms.discrete_staircase import best_discrete_staircase_reference, geometric_reference
from optmech.mechanisms.laplace import discrete_laplace_reference, laplace_reference
from optmech.mechanisms.shifts import (CONVEX_EVEN_ND, PRICE_POINTS_ND, SHIFT_GRID, SHIFT_MASS, SHIFT_NODES,
                                       SHIFT_POINTS_ND, SHIFT_SWEEPS_ND, Price, at_best_shift, at_best_shift_nd,
                                       centre_is_best_nd, product_discrete_laplace_price, reference_law,
                                       reference_price, search_shift, search_shift_nd, shift_references,
                                       shift_references_nd, shifted_cost, shifted_cost_nd)
from optmech.mechanisms.staircase import best_staircase_reference

__all__ = ["references_for", "DOMAINS", "best_staircase_reference", "best_discrete_staircase_reference",
           "shifted_cost", "search_shift", "Price", "at_best_shift", "reference_law", "reference_price",
           "shift_references", "SHIFT_NODES", "SHIFT_GRID", "SHIFT_MASS", "CONVEX_EVEN_ND", "SHIFT_POINTS_ND",
           "SHIFT_SWEEPS_ND", "PRICE_POINTS_ND", "centre_is_best_nd", "shifted_cost_nd", "search_shift_nd",
           "at_best_shift_nd", "shift_references_nd", "product_discrete_laplace_price"]

DOMAINS = ("integer", "continuous")


# --------------------------------------------------------------------------------------------
# the pure references


def references_for(cost, epsilon, sensitivity, domain: str) -> list[Reference]:
    """Reference mechanisms and their expected costs for a 1-D pure ε-DP problem, each at its best
    shift (``parameters["shift"]``, :func:`shift_references`).

    Parameters
    ----------
    cost : Cost or its text (or an object with ``kind``, ``power``, ``spec``, ``__call__`` and
        ``is_symmetric_nondecreasing``; such a cost is listed centred, not shifted)
    epsilon : float in (0, 700]
    sensitivity : float > 0 (an integer >= 1 when ``domain == "integer"``)
    domain : {"integer", "continuous"}

    Returns
    -------
    list of Reference
        The (discrete) staircase first (V* when the cost is symmetric nondecreasing, else the best
        one, an upper bound), the geometric law when Δ = 1 and it is V*, then the (discrete) Laplace.

    Raises
    ------
    SpecError
        Bad ε, Δ or domain.

    >>> import math
    >>> from optmech.costs import parse_cost
    >>> refs = references_for(parse_cost("abs"), 1, 1, "continuous")
    >>> [r.name for r in refs], math.isclose(refs[0].value, 1 / (2 * math.sinh(0.5))), refs[1].value
    (['staircase', 'laplace'], True, 1.0)
    """
    from optmech.costs import parse_cost

    if domain not in DOMAINS:
        raise SpecError(f"domain must be one of {', '.join(DOMAINS)}, got {domain!r}")
    cost = parse_cost(cost) if isinstance(cost, str) else cost
    eps = nx.check_epsilon(epsilon)
    delta = nx.check_sensitivity(sensitivity, integer=(domain == "integer"))
    refs: list[Reference | None]
    if domain == "continuous":
        refs = [best_staircase_reference(cost, eps, delta), laplace_reference(cost, eps, delta)]
    else:
        refs = [
            best_discrete_staircase_reference(cost, eps, delta),
            geometric_reference(cost, eps, delta) if delta == 1 else None,
            discrete_laplace_reference(cost, eps, delta),
        ]
    return shift_references([r for r in refs if r is not None], cost, epsilon=eps, sensitivity=delta,
                            integer=(domain == "integer"))
