"""Build a mechanism by family name, choosing its shape parameter optimally when it is omitted.

This is what ``optmech sample`` and ``optmech mechanism`` call; it is also the shortest route from
Python::

    from optmech.mechanisms import make_mechanism
    mech, info = make_mechanism("staircase", epsilon=1.0, sensitivity=1.0, cost="square")
    mech.sample(10, rng=0)

Families (``--mechanism``): staircase, discrete_staircase, geometric, laplace, discrete_laplace,
uniform, l2_laplace.  With ``dim > 1`` they map to the d-D laws: the ℓ1 staircase
(:class:`StaircaseND`), the ℓ1 discrete staircase on ℤ^d (:class:`DiscreteStaircaseND`), i.i.d.
Laplace / discrete Laplace / geometric products, the product uniform [Geng13, (4.28)] and the ℓ2-Laplace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.base_nd import COSTS_ND, MAX_DIM

__all__ = ["FAMILIES", "COSTS_ND", "MechanismChoice", "make_mechanism", "parse_cost_for"]

FAMILIES = ("staircase", "discrete_staircase", "geometric", "laplace", "discrete_laplace", "uniform", "l2_laplace")
_ND_ALIASES = {"abs": "l1", "square": "l2sq"}


@dataclass(frozen=True)
class MechanismChoice:
    """How the shape parameter was chosen: ``given``, ``optimal`` (for ``cost``) or ``none``."""

    shape: str
    cost: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"shape_parameter": self.shape, "cost": self.cost, "notes": list(self.notes)}


def parse_cost_for(cost: str | None, dim: int):
    """A 1-D cost object (``abs`` by default) or a d-D cost name (``l1`` by default)."""
    if dim == 1:
        from optmech.costs import parse_cost

        return parse_cost("abs" if cost is None else cost)
    name = "l1" if cost is None else _ND_ALIASES.get(cost, cost)
    if name not in COSTS_ND:
        raise SpecError(f"costs in {dim} dimensions are {', '.join(COSTS_ND)}; got {cost!r}")
    return name


def _no(flag: str, value, family: str) -> None:
    if value is not None:
        raise SpecError(f"{flag} does not apply to the {family} mechanism")


def make_mechanism(
    family: str,
    *,
    epsilon=None,
    sensitivity=1,
    dim: int = 1,
    delta=None,
    gamma=None,
    r=None,
    cost: str | None = None,
    domain: str | None = None,
    norm: str | None = None,
    weights=None,
) -> tuple[Mechanism, MechanismChoice]:
    """The mechanism ``family`` with the given parameters (see the module docstring).

    Shape parameters (γ for the staircase, r for the discrete staircase) are validated when
    given and chosen optimally for ``cost`` otherwise (default cost: ``abs`` in 1-D, ``l1`` in d-D).
    Raises SpecError for unknown families, out-of-range values and flags that do not apply.

    >>> import math
    >>> mech, choice = make_mechanism("staircase", epsilon=1, sensitivity=1, cost="abs")
    >>> choice.shape, math.isclose(mech.gamma, 1 / (1 + math.exp(0.5)))      # γ* [Geng13, Thm 2.5]
    ('optimal', True)
    >>> make_mechanism("geometric", epsilon=1)[0]
    Geometric(epsilon=1.0, sensitivity=1)
    >>> make_mechanism("laplace", epsilon=1, dim=3)[0].dim
    3
    >>> make_mechanism("staircase", epsilon=1, dim=2, norm="l2", cost="l2")[0].norm   # the staircase in any norm
    'l2'
    """
    if family not in FAMILIES:
        raise SpecError(f"unknown mechanism {family!r} (choose from {', '.join(FAMILIES)})")
    dim = nx.check_int_range(dim, "dim", 1, MAX_DIM)
    costobj = parse_cost_for(cost, dim)
    cost_text = str(costobj)
    if family != "staircase":
        _no("--gamma", gamma, family)
    if family != "discrete_staircase":
        _no("--r", r, family)
    if norm not in (None, "l1"):  # the sensitivity's norm: the d-D staircase takes any, l2_laplace is l2
        if dim == 1:
            raise SpecError("--norm applies in d > 1 dimensions (every norm is |x| in 1-D)")
        if family not in ("staircase", "l2_laplace") or (family == "l2_laplace" and norm != "l2"):
            raise SpecError(f"--norm {norm} does not apply to the {family} mechanism (the staircase takes l1, l2, linf "
                            "or lp:P)")
    if weights is not None and (family != "staircase" or dim == 1):
        raise SpecError("--weights applies to the d-D staircase (weighted l1, l2 or lp:P sensitivity ball)")
    if family != "uniform":
        _no("--delta", delta, family)
        if domain is not None:
            lattice = family in ("discrete_staircase", "geometric", "discrete_laplace")
            if domain != ("integer" if lattice else "continuous"):
                raise SpecError(f"the {family} mechanism lives on the {'integer' if lattice else 'continuous'} domain, not {domain!r}")
        if epsilon is None:
            raise SpecError(f"--epsilon is required for the {family} mechanism")
        epsilon = nx.check_epsilon(epsilon)

    if family == "staircase":
        if dim == 1:
            from optmech.mechanisms.staircase import Staircase, optimal_gamma

            if gamma is None:
                g = optimal_gamma(costobj, epsilon, sensitivity)
                return Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=g), MechanismChoice("optimal", cost_text)
            return Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma), MechanismChoice("given", cost_text)
        from optmech.mechanisms.staircase_nd import StaircaseND

        nrm = norm or "l1"
        if gamma is None:
            mech = StaircaseND.optimal(costobj, epsilon=epsilon, sensitivity=sensitivity, dim=dim, norm=nrm,
                                       weights=weights)
            return mech, MechanismChoice("optimal", cost_text)
        return (StaircaseND(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma, dim=dim, norm=nrm, weights=weights),
                MechanismChoice("given", cost_text))

    if family == "discrete_staircase":
        from optmech.mechanisms.discrete_staircase import DiscreteStaircase, optimal_r

        if dim != 1:
            from optmech.mechanisms.discrete_staircase_nd import DiscreteStaircaseND

            if costobj not in ("l1", "l2sq") and r is None:
                raise SpecError("the d-D discrete staircase optimises r for the l1 or l2sq cost; give --r or one of those costs")
            if r is None:
                m = DiscreteStaircaseND.optimal(costobj, epsilon=epsilon, sensitivity=sensitivity, dim=dim)
                return m, MechanismChoice("optimal", cost_text)
            return DiscreteStaircaseND(epsilon=epsilon, sensitivity=sensitivity, r=r, dim=dim), MechanismChoice("given", cost_text)
        if r is None:
            rr = optimal_r(costobj, epsilon, sensitivity)[0]
            return DiscreteStaircase(epsilon=epsilon, sensitivity=sensitivity, r=rr), MechanismChoice("optimal", cost_text)
        return DiscreteStaircase(epsilon=epsilon, sensitivity=sensitivity, r=r), MechanismChoice("given", cost_text)

    if family in ("geometric", "discrete_laplace"):
        if family == "geometric" and sensitivity not in (1, 1.0, "1"):
            raise SpecError(f"the geometric mechanism is for sensitivity 1, got {sensitivity!r}; use discrete_laplace or discrete_staircase")
        if dim == 1:
            from optmech.mechanisms.discrete_staircase import Geometric
            from optmech.mechanisms.laplace import DiscreteLaplace

            cls = Geometric if family == "geometric" else DiscreteLaplace
            return cls(epsilon=epsilon, sensitivity=sensitivity), MechanismChoice("none", cost_text)
        from optmech.mechanisms.laplace_nd import DiscreteLaplaceND

        return DiscreteLaplaceND(epsilon=epsilon, sensitivity=sensitivity, dim=dim), MechanismChoice("none", cost_text)

    if family == "laplace":
        if dim == 1:
            from optmech.mechanisms.laplace import Laplace

            return Laplace(epsilon=epsilon, sensitivity=sensitivity), MechanismChoice("none", cost_text)
        from optmech.mechanisms.laplace_nd import LaplaceND

        return LaplaceND(epsilon=epsilon, sensitivity=sensitivity, dim=dim), MechanismChoice("none", cost_text)

    if family == "l2_laplace":
        from optmech.mechanisms.laplace_nd import L2Laplace

        return L2Laplace(epsilon=epsilon, sensitivity=sensitivity, dim=dim), MechanismChoice("none", cost_text)

    # uniform: (0, δ)-DP; ε (if given) is only validated, the guarantee holds for every ε >= 0
    from optmech.mechanisms.uniform import Uniform, UniformContinuous

    if delta is None:
        raise SpecError("--delta is required for the uniform mechanism ((0, delta)-DP)")
    if epsilon is not None:
        nx.check_epsilon(epsilon)
    cls = UniformContinuous if domain == "continuous" else Uniform
    if domain not in (None, "integer", "continuous"):
        raise SpecError(f"domain must be integer or continuous, got {domain!r}")
    notes = ["uniform noise is (0, delta)-DP, hence (epsilon, delta)-DP for every epsilon >= 0"]
    return cls(delta=delta, sensitivity=sensitivity, dim=dim), MechanismChoice("none", cost_text, notes)
