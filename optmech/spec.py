"""Problem specifications: privacy notion, sensitivity, domain and cost.

Specs are frozen and validated on construction; every invalid value raises
:class:`optmech.errors.SpecError` with a one-line message naming the value.

The 1-D pure ε-DP problem is [Geng13, (2.10)–(2.11) continuous, (2.15)–(2.16) integer]:
minimise E L(X) over noise laws P with P(S) <= e^ε P(S + d) for all S and |d| <= Δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from optmech.costs import Cost, as_cost
from optmech.errors import SpecError

#: ε outside this range is refused: below it the window would be astronomically long, above it
#: the ratio coefficients e^ε leave double precision's comfortable range.
EPSILON_RANGE = (1e-6, 30.0)


def _finite_positive(name: str, value: object) -> float:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise SpecError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(v) or math.isinf(v):
        raise SpecError(f"{name} must be finite, got {v}")
    if v <= 0:
        raise SpecError(f"{name} must be positive, got {v:g}")
    return v


@dataclass(frozen=True)
class PureDP:
    """Pure ε-differential privacy, ε > 0 [Geng13, Def 2.1]."""

    epsilon: float

    def __post_init__(self) -> None:
        eps = _finite_positive("epsilon", self.epsilon)
        lo, hi = EPSILON_RANGE
        if not lo <= eps <= hi:
            raise SpecError(f"epsilon={eps:g} is outside the supported range [{lo:g}, {hi:g}]")
        object.__setattr__(self, "epsilon", eps)

    name = "pure"


@dataclass(frozen=True)
class ApproxDP:
    """(ε, δ)-differential privacy [GV13, (3); Geng13, Ch. 4]: P(S) <= e^ε P(S + v) + δ.

    ε >= 0 (ε = 0 is (0, δ)-DP), 0 <= δ < 1, not both 0.  δ = 0 is pure ε-DP and is solved by the
    pure-DP machinery (1-D).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        try:
            eps, dl = float(self.epsilon), float(self.delta)
        except (TypeError, ValueError):
            raise SpecError(f"epsilon and delta must be numbers, got {self.epsilon!r}, {self.delta!r}") from None
        if math.isnan(eps) or math.isinf(eps) or eps < 0:
            raise SpecError(f"epsilon must be finite and >= 0 for (epsilon, delta)-DP, got {self.epsilon!r}")
        if math.isnan(dl) or not 0.0 <= dl < 1.0:
            raise SpecError(f"delta must be in [0, 1), got {self.delta!r}")
        if eps == 0.0 and dl == 0.0:
            raise SpecError("epsilon = delta = 0 admits no noise distribution (perfect privacy)")
        if eps > EPSILON_RANGE[1]:
            raise SpecError(f"epsilon={eps:g} is outside the supported range [0, {EPSILON_RANGE[1]:g}]")
        if 0 < dl < 1e-6:
            raise SpecError(f"delta={dl:g} is below the supported 1e-6 (the support grows like 1/delta)")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", dl)

    name = "approx"


@dataclass(frozen=True)
class IntegerLattice:
    """Noise on ℤ for an integer-valued query with integer sensitivity Δ [Geng13, §2.8]."""

    name = "integer"


@dataclass(frozen=True)
class Continuous:
    """Noise on ℝ, discretised into cells of width Δ/resolution [Geng13, App. A, Lemma A.6].

    ``resolution=None`` lets :func:`optmech.solve` choose it from the target gap.
    """

    resolution: int | None = None

    def __post_init__(self) -> None:
        if self.resolution is None:
            return
        r = self.resolution
        if isinstance(r, bool) or not isinstance(r, (int, float)) or isinstance(r, float) and (
            math.isnan(r) or math.isinf(r) or r != int(r)
        ):
            raise SpecError(f"resolution must be a positive integer, got {r!r}")
        if int(r) < 1:
            raise SpecError(f"resolution must be at least 1, got {int(r)}")
        object.__setattr__(self, "resolution", int(r))

    name = "continuous"


Domain = Union[IntegerLattice, Continuous]


@dataclass(frozen=True)
class Problem:
    """A 1-D optimal-noise problem.

    Parameters
    ----------
    privacy : PureDP or ApproxDP
        The privacy notion.
    cost : Cost or str
        Cost of the added noise, e.g. ``"abs"``, ``"square"``, ``"pow:1.5"`` or an expression in x;
        in d > 1 dimensions one of ``l1``, ``l2``, ``l2sq``, ``linf`` (``abs`` and ``square`` are
        read as ``l1`` and ``l2sq``).
    sensitivity : float
        Δ > 0; a positive integer on the integer domain.
    domain : IntegerLattice or Continuous
    target_gap : float, optional
        Relative gap (upper − lower)/upper at which the adaptive solve stops.  Defaults to 1e-9 on
        the integer domain and 1e-4 on the continuous one.
    symmetry : {"auto", "off"}
        ``"auto"`` uses the symmetric fast path when the cost is checked to qualify (pure DP:
        symmetric and nondecreasing in |x|; (ε, δ): even); ``"off"`` always uses the general builder.
    dim : int
        Dimension d of the query (d > 1: noise on ℤ^d, integer domain).
    norm : {"l1", "l2", "linf"}
        The norm in which the sensitivity is measured when d > 1 (default ℓ1; (ε, δ) uses ℓ1).
    """

    privacy: PureDP | ApproxDP
    cost: Cost
    sensitivity: float = 1.0
    domain: Domain = field(default_factory=Continuous)
    target_gap: float | None = None
    symmetry: str = "auto"
    dim: int = 1
    norm: str = "l1"

    def __post_init__(self) -> None:
        if not isinstance(self.privacy, (PureDP, ApproxDP)):
            raise SpecError(f"privacy must be PureDP(epsilon) or ApproxDP(epsilon, delta), got {self.privacy!r}")
        if not isinstance(self.domain, (IntegerLattice, Continuous)):
            raise SpecError(f"domain must be IntegerLattice() or Continuous(resolution), got {self.domain!r}")
        dim = self.dim
        if isinstance(dim, bool) or not isinstance(dim, (int, float)) or dim != int(dim) or not 1 <= int(dim) <= 8:
            raise SpecError(f"dim must be an integer in [1, 8], got {dim!r}")
        object.__setattr__(self, "dim", int(dim))
        if isinstance(self.privacy, ApproxDP):
            if not isinstance(self.domain, IntegerLattice):
                raise SpecError("(epsilon, delta)-DP is solved on the integer domain (--domain integer)")
            if self.privacy.delta == 0.0 and self.dim > 1:
                raise SpecError("delta = 0 in d > 1 dimensions is pure DP on a lattice, not supported yet")
        if self.norm not in ("l1", "l2", "linf"):
            raise SpecError(f"norm must be one of l1, l2, linf, got {self.norm!r}")
        if isinstance(self.privacy, ApproxDP) and self.norm != "l1":
            raise SpecError("(epsilon, delta)-DP is solved for l1 sensitivity (--norm l1)")
        if self.dim > 1:
            from optmech.costs_nd import as_cost_nd

            cost = as_cost_nd(getattr(self.cost, "spec", self.cost), self.dim) if not hasattr(self.cost, "dim") \
                else as_cost_nd(self.cost, self.dim)
            if cost.kind == "expr" and isinstance(self.privacy, ApproxDP):
                raise SpecError(f"(epsilon, delta)-DP in {self.dim} dimensions takes the costs l1, l2, l2sq, linf; "
                                f"got the expression {cost.spec!r}")
            # named costs travel as their name; expressions as the parsed CostND
            object.__setattr__(self, "cost", cost.spec if cost.kind != "expr" else cost)
        else:
            object.__setattr__(self, "cost", as_cost(self.cost))
        delta = _finite_positive("sensitivity", self.sensitivity)
        if isinstance(self.domain, IntegerLattice):
            if delta != int(delta):
                raise SpecError(f"sensitivity must be a positive integer on the integer domain, got {delta:g}")
            if delta > 10**7:
                raise SpecError(f"sensitivity={int(delta)} is too large for the integer domain (at most 1e7)")
        object.__setattr__(self, "sensitivity", delta)
        if not isinstance(self.cost, str):
            self.cost.check_rewards_spread(delta, integer=isinstance(self.domain, IntegerLattice))
        gap = self.target_gap
        if gap is None:
            gap = 1e-9 if isinstance(self.domain, IntegerLattice) else 1e-4
            if self.dim > 1 and isinstance(self.privacy, PureDP):
                gap = 1e-6  # the d-D lattice LP's truncation costs a cube of half-width ~ log(1/gap)
        gap = _finite_positive("target_gap", gap)
        if gap >= 1:
            raise SpecError(f"target_gap must be below 1, got {gap:g}")
        object.__setattr__(self, "target_gap", gap)
        if self.symmetry not in ("auto", "off"):
            raise SpecError(f"symmetry must be 'auto' or 'off', got {self.symmetry!r}")

    @property
    def epsilon(self) -> float:
        return self.privacy.epsilon

    @property
    def delta(self) -> float:
        """δ (0 for pure DP)."""
        return getattr(self.privacy, "delta", 0.0)

    def to_dict(self) -> dict:
        d = {
            "privacy": self.privacy.name,
            "epsilon": self.epsilon,
            "sensitivity": self.sensitivity,
            "domain": self.domain.name,
            "cost": self.cost if isinstance(self.cost, str) else self.cost.spec,
            "target_gap": self.target_gap,
            "symmetry": self.symmetry,
        }
        if isinstance(self.privacy, ApproxDP):
            d["delta"] = self.delta
            d["dim"] = self.dim
        elif self.dim > 1:
            d["dim"] = self.dim
            d["norm"] = self.norm
        if isinstance(self.domain, Continuous):
            d["resolution"] = self.domain.resolution
        return d
