"""Problem specifications: privacy notion, sensitivity, domain and cost.

Specs are frozen and validated on construction; every invalid value raises
:class:`optmech.errors.SpecError` with a one-line message naming the value.

The 1-D pure ε-DP problem is [seed 000 (2.10)–(2.11) continuous, (2.15)–(2.16) integer]:
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
    """Pure ε-differential privacy, ε > 0 [seed 000 Def 2.1]."""

    epsilon: float

    def __post_init__(self) -> None:
        eps = _finite_positive("epsilon", self.epsilon)
        lo, hi = EPSILON_RANGE
        if not lo <= eps <= hi:
            raise SpecError(f"epsilon={eps:g} is outside the supported range [{lo:g}, {hi:g}]")
        object.__setattr__(self, "epsilon", eps)

    name = "pure"


@dataclass(frozen=True)
class IntegerLattice:
    """Noise on ℤ for an integer-valued query with integer sensitivity Δ [seed 000 §2.8]."""

    name = "integer"


@dataclass(frozen=True)
class Continuous:
    """Noise on ℝ, discretised into cells of width Δ/resolution [seed 000 App. A Lemma A.6].

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
    privacy : PureDP
        The privacy notion.
    cost : Cost or str
        Cost of the added noise, e.g. ``"abs"``, ``"square"``, ``"pow:1.5"`` or an expression in x.
    sensitivity : float
        Δ > 0; a positive integer on the integer domain.
    domain : IntegerLattice or Continuous
    target_gap : float, optional
        Relative gap (upper − lower)/upper at which the adaptive solve stops.  Defaults to 1e-9 on
        the integer domain and 1e-4 on the continuous one.
    symmetry : {"auto", "off"}
        ``"auto"`` uses the symmetric monotone fast path when the cost is checked to be symmetric
        and nondecreasing in |x|; ``"off"`` always uses the general builder.
    """

    privacy: PureDP
    cost: Cost
    sensitivity: float = 1.0
    domain: Domain = field(default_factory=Continuous)
    target_gap: float | None = None
    symmetry: str = "auto"

    def __post_init__(self) -> None:
        if not isinstance(self.privacy, PureDP):
            raise SpecError(f"privacy must be PureDP(epsilon), got {self.privacy!r}")
        if not isinstance(self.domain, (IntegerLattice, Continuous)):
            raise SpecError(f"domain must be IntegerLattice() or Continuous(resolution), got {self.domain!r}")
        object.__setattr__(self, "cost", as_cost(self.cost))
        delta = _finite_positive("sensitivity", self.sensitivity)
        if isinstance(self.domain, IntegerLattice):
            if delta != int(delta):
                raise SpecError(f"sensitivity must be a positive integer on the integer domain, got {delta:g}")
            if delta > 10**7:
                raise SpecError(f"sensitivity={int(delta)} is too large for the integer domain (at most 1e7)")
        object.__setattr__(self, "sensitivity", delta)
        gap = self.target_gap
        if gap is None:
            gap = 1e-9 if isinstance(self.domain, IntegerLattice) else 1e-4
        gap = _finite_positive("target_gap", gap)
        if gap >= 1:
            raise SpecError(f"target_gap must be below 1, got {gap:g}")
        object.__setattr__(self, "target_gap", gap)
        if self.symmetry not in ("auto", "off"):
            raise SpecError(f"symmetry must be 'auto' or 'off', got {self.symmetry!r}")

    @property
    def epsilon(self) -> float:
        return self.privacy.epsilon

    def to_dict(self) -> dict:
        d = {
            "privacy": self.privacy.name,
            "epsilon": self.epsilon,
            "sensitivity": self.sensitivity,
            "domain": self.domain.name,
            "cost": self.cost.spec,
            "target_gap": self.target_gap,
            "symmetry": self.symmetry,
        }
        if isinstance(self.domain, Continuous):
            d["resolution"] = self.domain.resolution
        return d
