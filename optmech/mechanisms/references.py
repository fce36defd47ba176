"""Closed-form (or numeric) reference values to compare with the LP bracket.

:func:`references_for` lists, for a 1-D pure ε-DP problem, the optimal mechanism's cost V*
where a theorem of the papers gives it, plus the standard baselines:

=============  =================================================  ==========================================
domain         symmetric nondecreasing cost                       any cost
=============  =================================================  ==========================================
continuous     ``staircase`` (V*, [Geng13, Thm 2.4])              ``laplace`` (upper bound)
integer        ``discrete_staircase`` (V*, [Geng13, Thm 2.13]),   ``discrete_laplace`` (upper bound)
               ``geometric`` if Δ = 1 (V*, Thm 2.12)
=============  =================================================  ==========================================

"Symmetric nondecreasing" is ``cost.is_symmetric_nondecreasing(integer=...)``: proven on the
whole domain (by construction for named costs, by interval arithmetic for expressions); a cost
for which no proof is found gets the baselines only, never a value labelled V*.
The V* values are optimal among output-independent noise laws ([Geng13] Thm 2.3/2.11 reduce to
those under a periodicity assumption).  Closed forms are accurate to a few ulp; numeric routes
state their method and estimated error in ``note``.
"""

from __future__ import annotations

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Reference
from optmech.mechanisms.discrete_staircase import discrete_staircase_reference, geometric_reference
from optmech.mechanisms.laplace import discrete_laplace_reference, laplace_reference
from optmech.mechanisms.staircase import staircase_reference

__all__ = ["references_for", "DOMAINS"]

DOMAINS = ("integer", "continuous")


def references_for(cost, epsilon, sensitivity, domain: str) -> list[Reference]:
    """Reference mechanisms and their expected costs for a 1-D pure ε-DP problem.

    Parameters
    ----------
    cost : object with ``kind``, ``power``, ``spec``, ``__call__`` and ``is_symmetric_nondecreasing``
    epsilon : float in (0, 700]
    sensitivity : float > 0 (an integer >= 1 when ``domain == "integer"``)
    domain : {"integer", "continuous"}

    Returns
    -------
    list of Reference
        Optimal mechanism(s) first (when the cost is symmetric nondecreasing), then the baseline.

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
    if domain not in DOMAINS:
        raise SpecError(f"domain must be one of {', '.join(DOMAINS)}, got {domain!r}")
    eps = nx.check_epsilon(epsilon)
    delta = nx.check_sensitivity(sensitivity, integer=(domain == "integer"))
    refs: list[Reference | None]
    if domain == "continuous":
        refs = [staircase_reference(cost, eps, delta), laplace_reference(cost, eps, delta)]
    else:
        refs = [
            discrete_staircase_reference(cost, eps, delta),
            geometric_reference(cost, eps, delta) if delta == 1 else None,
            discrete_laplace_reference(cost, eps, delta),
        ]
    return [r for r in refs if r is not None]
