"""Problem specifications: privacy notion, sensitivity, domain and objective.

One :class:`Problem` describes every family optmech solves: the privacy notion
(:class:`PureDP`, :class:`ApproxDP`, :class:`Lipschitz`), the sensitivity with its norm and
dimension, the domain (:class:`IntegerLattice`, :class:`Continuous`) and the objective
(:class:`ExpectedCost` of a cost, or the :class:`Wasserstein` distance to an input
distribution).  Specs are frozen and validated on construction; every invalid value or
combination raises :class:`optmech.errors.SpecError` with a one-line message, here and nowhere
else.  :meth:`Problem.from_params` / :meth:`Problem.to_params` are the only mapping between a
problem and flat parameters (the CLI, sweeps, tables, compare and reproduce all use them).

The 1-D pure ε-DP problem is [Geng13, (2.10)–(2.11) continuous, (2.15)–(2.16) integer]:
minimise E L(X) over noise laws P with P(S) <= e^ε P(S + d) for all S and |d| <= Δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

from typing import TYPE_CHECKING

from optmech.costs import Cost, as_cost
from optmech.errors import SpecError

if TYPE_CHECKING:  # scipy-heavy; imported where an input distribution is built
    from optmech.inputs import InputPMF

__all__ = ["Problem", "PureDP", "ApproxDP", "Lipschitz", "IntegerLattice", "NonNegativeIntegers", "Continuous", "ExpectedCost", "Wasserstein",
           "DEFAULT_GAPS", "EPSILON_RANGE", "PARAMS"]

#: ε outside this range is refused: below it the window would be astronomically long, above it
#: the ratio coefficients e^ε leave double precision's comfortable range.
EPSILON_RANGE = (1e-6, 30.0)
#: the smallest δ > 0 accepted for (ε, δ)-DP with ε > 0 (the optimum's support grows like Δ·ln(1/δ)/ε)
DELTA_FLOOR = 1e-10
#: the smallest δ > 0 accepted at ε = 0 (the (0, δ) optimum is uniform of width about Δ/δ)
DELTA_FLOOR_EPSILON_ZERO = 1e-6
#: the largest dimension: 8 in general, this one for (ε, δ)-DP on ℝ^d with ℓ2 sensitivity and the cost l2 or l2sq
MAX_DIM = 128


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
    """Pure ε-differential privacy, ε > 0 [Geng13, Def 2.1].

    >>> PureDP(1).epsilon
    1.0
    >>> PureDP(0)
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: epsilon must be positive, got 0
    """

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

    >>> ApproxDP(0.5, 0.1)
    ApproxDP(epsilon=0.5, delta=0.1)
    >>> ApproxDP(1, 1.0)
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: delta must be in [0, 1), got 1.0
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
        if 0 < dl < DELTA_FLOOR:
            raise SpecError(f"delta={dl:g} is below the supported {DELTA_FLOOR:g} (the support grows like ln(1/delta)/epsilon)")
        if eps == 0.0 and 0 < dl < DELTA_FLOOR_EPSILON_ZERO:
            raise SpecError(f"delta={dl:g} is below the supported {DELTA_FLOOR_EPSILON_ZERO:g} at epsilon = 0 "
                            "(the support grows like 1/delta)")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", dl)

    name = "approx"


@dataclass(frozen=True)
class Lipschitz:
    """ε-Lipschitz privacy [KHP15, Def. 2]: |ln P(u + X ∈ S) − ln P(u' + X ∈ S)| <= ε‖u − u'‖.

    ε is a rate per unit distance, so the problem has no separate sensitivity (it is 1).

    >>> Problem(privacy=Lipschitz(2), cost="abs", domain=IntegerLattice()).sensitivity
    1.0
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _finite_positive("epsilon", self.epsilon))

    name = "lipschitz"


@dataclass(frozen=True)
class IntegerLattice:
    """Noise on ℤ for an integer-valued query with integer sensitivity Δ [Geng13, §2.8].

    >>> Problem(privacy=PureDP(1), cost="abs", domain=IntegerLattice(), sensitivity=3).domain.name
    'integer'
    """

    name = "integer"
    #: whether the noise must be supported on ℕ = {0, 1, 2, ...} (:class:`NonNegativeIntegers`)
    nonnegative = False


@dataclass(frozen=True)
class NonNegativeIntegers(IntegerLattice):
    """Noise on ℕ = {0, 1, 2, ...} (support ⊆ ℕ) for an integer-valued query with integer sensitivity Δ.

    Deployed systems add non-negative truncated noise (a released count never drops below the true
    one).  Solved for (ε, δ)-DP with δ > 0 in 1-D: pure ε-DP noise cannot live on ℕ (p(0) <= e^ε
    p(−1) = 0 for the shift 1).  The optimum over ℕ is at least the optimum over ℤ (a restriction).

    >>> Problem(privacy=ApproxDP(1, 1e-3), cost="abs", domain=NonNegativeIntegers(), sensitivity=2).domain.name
    'nonnegative'
    """

    name = "nonnegative"
    nonnegative = True


@dataclass(frozen=True)
class Continuous:
    """Noise on ℝ, discretised into cells of width Δ/resolution [Geng13, App. A, Lemma A.6].

    ``resolution=None`` lets :func:`optmech.solve` choose it from the target gap (and, on ℝ^d, refine it while the
    finer LP fits the time left); a given resolution is kept.

    >>> Continuous(8).resolution, Continuous().resolution
    (8, None)
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
class ExpectedCost:
    """Minimise E L(X), the expected cost of the noise X [Geng13, (2.10)].

    ``Problem(cost=...)`` is the shorthand; the cost is parsed and validated by the Problem:

    >>> p = Problem(privacy=PureDP(1), objective=ExpectedCost("square"), domain=IntegerLattice())
    >>> p.cost.spec, p.objective.name
    ('square', 'cost')
    """

    cost: Any

    name = "cost"


@dataclass(frozen=True, eq=False)
class Wasserstein:
    """Minimise W1(X, X + θ) for an input distribution X on ℤ [QHFL22, §IV-C]; with
    ``surrogate=True`` the paper's surrogate P2, which equals E|θ| [derived].

    >>> from optmech.inputs import input_from_arrays
    >>> w = Wasserstein(input_from_arrays([0, 1, 2], [0.25, 0.5, 0.25], label="toy"))
    >>> p = Problem(privacy=PureDP(1), objective=w, domain=IntegerLattice())
    >>> p.objective.name, p.family_default_key
    ('wasserstein', 'wasserstein')
    """

    input: "InputPMF"
    surrogate: bool = False

    def __post_init__(self) -> None:
        from optmech.inputs import InputPMF

        if not isinstance(self.input, InputPMF):
            raise SpecError(f"Wasserstein needs an InputPMF (optmech.inputs), got {type(self.input).__name__}")
        if not isinstance(self.surrogate, bool):
            raise SpecError(f"surrogate must be True or False, got {self.surrogate!r}")

    @property
    def name(self) -> str:
        return "surrogate" if self.surrogate else "wasserstein"

    def __eq__(self, other: object) -> bool:  # the input's arrays compared by value
        import numpy as np

        return (isinstance(other, Wasserstein) and self.surrogate == other.surrogate
                and np.array_equal(self.input.k, other.input.k) and np.array_equal(self.input.p, other.input.p))

    def __hash__(self) -> int:
        return hash((self.surrogate, self.input.k.tobytes(), self.input.p.tobytes()))


Objective = Union[ExpectedCost, Wasserstein]
PrivacyNotion = Union[PureDP, ApproxDP, Lipschitz]


#: Default relative target gap per family when the caller gives none (see :class:`Problem`).
DEFAULT_GAPS = {"integer": 1e-9, "continuous": 1e-4, "lattice_nd": 1e-6, "lipschitz": 1e-3, "wasserstein": 1e-6}

_LIPSCHITZ_1D = {"l1": "abs", "l2": "abs", "linf": "abs", "l2sq": "square"}


@dataclass(frozen=True)
class Problem:
    """One optimal-noise problem, of any family optmech solves.

    Parameters
    ----------
    privacy : PureDP, ApproxDP or Lipschitz
        The privacy notion.
    cost : Cost or str, optional
        Cost of the added noise, e.g. ``"abs"``, ``"square"``, ``"pow:1.5"`` or an expression in x;
        in d > 1 dimensions one of ``l1``, ``l2``, ``l2sq``, ``linf`` or an expression in x1..xd
        (``abs`` and ``square`` are read as ``l1`` and ``l2sq``).  Shorthand for
        ``objective=ExpectedCost(cost)``.
    sensitivity : float
        Δ > 0; a positive integer on the integer domain.  Lipschitz privacy has none (ε is per unit
        distance): leave it at 1.
    domain : IntegerLattice or Continuous
    target_gap : float, optional
        Relative gap (upper − lower)/upper at which the adaptive solve stops.  Defaults
        (``DEFAULT_GAPS``): 1e-9 on ℤ, 1e-4 on ℝ, 1e-6 on ℤ^d and ℝ^d (pure DP), 1e-3 for
        Lipschitz privacy, 1e-6 for the Wasserstein objective.
    symmetry : {"auto", "orbits", "off"}
        ``"auto"`` uses every reduction proven for the problem: the radial reduction on ℝ^d when the
        cost is a power of the sensitivity's own norm (:mod:`optmech.problems.radial`), else a
        symmetric reduction where the cost is proven to qualify; ``"orbits"`` only the latter (the
        cell LP on ℝ^d, to compare); ``"off"`` none.
    dim : int
        Dimension d of the query.
    norm : {"l1", "l2", "linf"}
        The norm in which the sensitivity (Lipschitz: the distance) is measured when d > 1.
    objective : ExpectedCost or Wasserstein, optional
        What is minimised; give it instead of ``cost`` for the Wasserstein objective.

    Every invalid value or combination raises :class:`~optmech.errors.SpecError` (one line).

    Examples
    --------
    >>> p = Problem(privacy=PureDP(1), cost="abs", domain=IntegerLattice())
    >>> p.epsilon, p.sensitivity, p.target_gap     # the integer domain's default gap
    (1.0, 1.0, 1e-09)
    >>> Problem.from_params(p.to_params()) == p
    True
    >>> Problem(privacy=PureDP(1), cost="abs", domain=IntegerLattice(), sensitivity=1.5)
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: sensitivity must be a positive integer on the integer domain, got 1.5
    """

    privacy: PrivacyNotion
    cost: Any = None
    sensitivity: float = 1.0
    domain: Domain = field(default_factory=Continuous)
    target_gap: float | None = None
    symmetry: str = "auto"
    dim: int = 1
    norm: str = "l1"
    objective: Objective | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.privacy, (PureDP, ApproxDP, Lipschitz)):
            raise SpecError("privacy must be PureDP(epsilon), ApproxDP(epsilon, delta) or Lipschitz(epsilon), "
                            f"got {self.privacy!r}")
        if not isinstance(self.domain, (IntegerLattice, Continuous)):
            raise SpecError(f"domain must be IntegerLattice() or Continuous(resolution), got {self.domain!r}")
        dim = self.dim
        if isinstance(dim, bool) or not isinstance(dim, (int, float)) or dim != int(dim) or not 1 <= int(dim) <= MAX_DIM:
            raise SpecError(f"dim must be an integer in [1, 8] (up to {MAX_DIM} for (epsilon, delta)-DP on R^d with l2 "
                            f"sensitivity and the cost l2 or l2sq), got {dim!r}")
        object.__setattr__(self, "dim", int(dim))
        if self.symmetry not in ("auto", "orbits", "off"):
            raise SpecError(f"symmetry must be 'auto', 'orbits' or 'off', got {self.symmetry!r}")
        objective = self.objective
        if objective is None:
            if self.cost is None:
                raise SpecError("a problem needs a cost (or objective=Wasserstein(input))")
            objective = ExpectedCost(self.cost)
        elif not isinstance(objective, (ExpectedCost, Wasserstein)):
            raise SpecError(f"objective must be ExpectedCost(cost) or Wasserstein(input), got {objective!r}")
        elif self.cost is not None:
            if not isinstance(objective, ExpectedCost):
                raise SpecError("give the cost or the objective, not both")
            objective = ExpectedCost(self.cost)  # dataclasses.replace(problem, cost=...) passes both
        if getattr(self.domain, "nonnegative", False) and not (
                isinstance(self.privacy, ApproxDP) and self.privacy.delta > 0 and self.dim == 1
                and not isinstance(objective, Wasserstein)):
            raise SpecError("--domain nonnegative (noise on N) is solved for (epsilon, delta)-DP with delta > 0 in 1-D "
                            "with an expected cost (pure DP noise cannot live on N: p(0) <= e^epsilon p(-1) = 0)")
        if isinstance(objective, Wasserstein):
            self._check_wasserstein()
        elif isinstance(self.privacy, Lipschitz):
            objective = ExpectedCost(self._check_lipschitz(objective.cost))
        else:
            objective = ExpectedCost(self._check_dp(objective.cost))
        object.__setattr__(self, "objective", objective)
        object.__setattr__(self, "cost", objective.cost if isinstance(objective, ExpectedCost) else None)
        if self.dim > 8 and not self._radial_approx():
            raise SpecError(f"dim must be an integer in [1, 8] (up to {MAX_DIM} for (epsilon, delta)-DP on R^d with l2 "
                            f"sensitivity and the cost l2 or l2sq), got {self.dim!r}")
        gap = self.target_gap if self.target_gap is not None else DEFAULT_GAPS[self.family_default_key]
        gap = _finite_positive("target_gap", gap)
        if gap >= 1:
            raise SpecError(f"target_gap must be below 1, got {gap:g}")
        object.__setattr__(self, "target_gap", gap)

    # -- validation, one family at a time ----------------------------------------------------
    def _integer_sensitivity(self, what: str) -> None:
        delta = _finite_positive("sensitivity", self.sensitivity)
        if delta != int(delta):
            raise SpecError(f"sensitivity must be a positive integer {what}, got {delta:g}")
        if delta > 10**7:
            raise SpecError(f"sensitivity={int(delta)} is too large for the integer domain (at most 1e7)")
        object.__setattr__(self, "sensitivity", float(delta))

    def _check_wasserstein(self) -> None:
        if isinstance(self.privacy, Lipschitz):
            raise SpecError("the Wasserstein objective takes pure or approx privacy, not lipschitz")
        if not isinstance(self.domain, IntegerLattice) or self.dim != 1:
            raise SpecError("the Wasserstein objective is solved on the 1-D integer lattice (--domain integer, --dim 1)")
        if self.privacy.epsilon <= 0:
            raise SpecError(f"the Wasserstein objective needs epsilon > 0, got {self.privacy.epsilon:g}")
        self._integer_sensitivity("(the adjacency m) for the Wasserstein objective")

    def _check_lipschitz(self, cost: Any) -> Any:
        """The cost in the form the Lipschitz family reads: a 1-D Cost, or a d-D cost's name."""
        if self.sensitivity != 1.0 and _finite_positive("sensitivity", self.sensitivity) != 1.0:
            raise SpecError("Lipschitz privacy has no sensitivity (epsilon is per unit distance): leave it at 1")
        object.__setattr__(self, "sensitivity", 1.0)
        if self.norm not in ("l1", "l2", "abs"):
            raise SpecError(f"lipschitz privacy supports the norms l1 and l2, got {self.norm!r}")
        if self.norm == "abs":
            object.__setattr__(self, "norm", "l1")
        if self.dim == 1:
            if isinstance(cost, Cost):
                return cost
            text = str(getattr(cost, "spec", cost))
            return as_cost(_LIPSCHITZ_1D.get(text.strip().lower(), text))
        name = str(getattr(cost, "spec", cost)).strip().lower()
        name = {"abs": "l1", "square": "l2sq"}.get(name, name)
        if self.norm == "l1":
            if name not in ("l1", "l2sq"):
                raise SpecError(f"lipschitz privacy in {self.dim}-D with the l1 norm supports the separable costs l1 "
                                f"and l2sq, got {name!r}")
        else:
            if not isinstance(self.domain, Continuous):
                raise SpecError("lipschitz privacy with the l2 norm in d > 1 is supported on the continuous domain only "
                                "(radial reduction)")
            if name not in ("l2", "l2sq", "l1"):
                raise SpecError(f"lipschitz privacy with the l2 norm supports the costs l2, l2sq (radial) and l1, "
                                f"got {name!r}")
        return name

    def _radial_approx(self) -> bool:
        """(ε, δ)-DP (δ > 0) on ℝ^d with ℓ2 sensitivity and the cost ``l2`` or ``l2sq``: the radial path, the one
        solved beyond d = 8 (:mod:`optmech.families.approx_radial`)."""
        if not (isinstance(self.privacy, ApproxDP) and self.privacy.delta > 0 and isinstance(self.domain, Continuous)
                and self.norm == "l2" and isinstance(self.objective, ExpectedCost)):
            return False
        from optmech.costs_nd import as_cost_nd

        cost = self.cost
        return as_cost_nd(getattr(cost, "spec", cost) if not hasattr(cost, "dim") else cost, self.dim).kind in (
            "l2", "l2sq")

    def _check_dp(self, cost: Any) -> Any:
        """Pure or (ε, δ)-DP with an expected cost: the cost as the builders read it."""
        if isinstance(self.privacy, ApproxDP):
            if not isinstance(self.domain, IntegerLattice) and self.dim > 1:
                from optmech.costs_nd import as_cost_nd

                kind = as_cost_nd(getattr(cost, "spec", cost) if not hasattr(cost, "dim") else cost, self.dim).kind
                if kind not in ("l1", "l2", "l2sq", "expr"):
                    raise SpecError(f"(epsilon, delta)-DP on R^d supports the costs l1, l2, l2sq and expressions in "
                                    f"x1..x{self.dim}, got {cost}")
                if self.norm not in ("l1", "l2"):
                    raise SpecError(f"(epsilon, delta)-DP on R^d supports l1 and l2 sensitivity, got {self.norm!r}")
            if not isinstance(self.domain, IntegerLattice) and self.privacy.delta == 0.0:
                raise SpecError("delta = 0 on the real line is pure DP: use --privacy pure")
            if self.privacy.delta == 0.0 and self.dim > 1:
                raise SpecError("delta = 0 in d > 1 dimensions is pure DP on a lattice, not supported yet")
        if self.norm not in ("l1", "l2", "linf"):
            raise SpecError(f"norm must be one of l1, l2, linf, got {self.norm!r}")
        if isinstance(self.privacy, ApproxDP) and self.norm != "l1" and not (
                self.norm == "l2" and self.dim > 1 and not isinstance(self.domain, IntegerLattice)):
            raise SpecError("(epsilon, delta)-DP is solved for l1 sensitivity (--norm l1), and for l2 on R^d "
                            "(--domain continuous)")
        if self.dim > 1:
            from optmech.costs_nd import as_cost_nd

            cost_nd = as_cost_nd(getattr(cost, "spec", cost) if not hasattr(cost, "dim") else cost, self.dim)
            own = {"l1sq": "l1", "linfsq": "linf"}.get(cost_nd.kind)
            if own is not None and not (isinstance(self.privacy, PureDP) and isinstance(self.domain, Continuous)
                                        and self.norm == own):
                raise SpecError(f"the cost {cost_nd.kind} is solved for pure epsilon-DP on R^d with {own} sensitivity "
                                f"(--domain continuous --norm {own}); elsewhere write it as an expression, e.g. "
                                + ("(abs(x1) + abs(x2))**2" if own == "l1" else "max(abs(x1), abs(x2))**2"))
            if cost_nd.kind == "expr" and isinstance(self.privacy, ApproxDP) and isinstance(self.domain, IntegerLattice):
                raise SpecError(f"(epsilon, delta)-DP on Z^{self.dim} takes the costs l1, l2, l2sq, linf; got the "
                                f"expression {cost_nd.spec!r} (expressions are solved on R^d: --domain continuous)")
            cost = cost_nd.spec if cost_nd.kind != "expr" else cost_nd  # named costs travel as their name
        else:
            cost = as_cost(cost)
        delta = _finite_positive("sensitivity", self.sensitivity)
        if isinstance(self.domain, IntegerLattice):
            self._integer_sensitivity("on the integer domain")
        else:
            object.__setattr__(self, "sensitivity", delta)
        if not isinstance(cost, str):
            cost.check_rewards_spread(delta, integer=isinstance(self.domain, IntegerLattice))
        return cost

    # -- what the problem is ------------------------------------------------------------------
    @property
    def family_default_key(self) -> str:
        if isinstance(self.objective, Wasserstein):
            return "wasserstein"
        if isinstance(self.privacy, Lipschitz):
            return "lipschitz"
        if self.dim > 1 and isinstance(self.privacy, PureDP):
            return "lattice_nd"
        return "integer" if isinstance(self.domain, IntegerLattice) else "continuous"

    @property
    def epsilon(self) -> float:
        return self.privacy.epsilon

    @property
    def delta(self) -> float:
        """δ (0 for pure DP and Lipschitz privacy)."""
        return getattr(self.privacy, "delta", 0.0)

    @property
    def resolution(self) -> int | None:
        return self.domain.resolution if isinstance(self.domain, Continuous) else None

    def to_dict(self) -> dict:
        """The ``problem`` field of a Result (JSON)."""
        if isinstance(self.objective, Wasserstein):
            return {"kind": "wasserstein", "privacy": "approx" if self.delta > 0 else "pure", "domain": "integer",
                    "input": self.objective.input.to_dict(), "epsilon": self.epsilon,
                    "sensitivity": int(self.sensitivity), "delta": self.delta, "utility": self.objective.name,
                    "target_gap": self.target_gap}
        if isinstance(self.privacy, Lipschitz):
            d = {"privacy": "lipschitz", "epsilon": self.epsilon,
                 "cost": self.cost if isinstance(self.cost, str) else self.cost.spec, "dim": self.dim,
                 "norm": self.norm, "domain": self.domain.name}
            if isinstance(self.domain, Continuous):
                d["resolution"] = self.domain.resolution
            d["target_gap"] = self.target_gap
            return d
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
            if self.norm != "l1":  # (ε, δ) on ℝ^d with ℓ2 sensitivity (ℓ1 elsewhere, as stores have always keyed it)
                d["norm"] = self.norm
        elif self.dim > 1:
            d["dim"] = self.dim
            d["norm"] = self.norm
        if isinstance(self.domain, Continuous):
            d["resolution"] = self.domain.resolution
        return d

    # -- flat parameters ----------------------------------------------------------------------
    def to_params(self) -> dict:
        """Flat parameters (:data:`PARAMS`) that :meth:`from_params` maps back to this problem.

        Values equal to the defaults are included, so the dict is complete; an input distribution
        read from a file or arrays travels as ``{"k": [...], "p": [...]}``.
        """
        out: dict[str, Any] = {"privacy": self.privacy.name, "epsilon": self.epsilon}
        if isinstance(self.privacy, ApproxDP):
            out["delta"] = self.delta
        out |= {"sensitivity": self.sensitivity, "domain": self.domain.name}
        if isinstance(self.domain, Continuous) and self.domain.resolution is not None:
            out["resolution"] = self.domain.resolution
        if isinstance(self.objective, Wasserstein):
            inp = self.objective.input
            out["utility"] = self.objective.name
            out["input"] = inp.label if _is_input_spec(inp.label) else {"k": inp.k.tolist(), "p": inp.p.tolist()}
        else:
            out["utility"] = "cost"
            out["cost"] = self.cost if isinstance(self.cost, str) else self.cost.spec
        out |= {"dim": self.dim, "norm": self.norm, "target_gap": self.target_gap, "symmetry": self.symmetry}
        return out

    @classmethod
    def from_params(cls, params: dict) -> "Problem":
        """The problem described by flat parameters (see :data:`PARAMS` for the keys and defaults).

        Numbers may be given as strings (``"0.5"``).  Keys that do not apply to the problem
        (``delta`` without approx privacy, ``resolution`` on the integer domain, ``cost`` with the
        Wasserstein objective, …) are refused with one line, as are unknown keys; the messages
        spell the keys as the command line's flags (``--delta``), which map onto them one to one.
        """
        if not isinstance(params, dict):
            raise SpecError(f"problem parameters must be a mapping, got {type(params).__name__}")
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise SpecError(f"unknown problem parameter {unknown[0]!r} (known: {', '.join(PARAMS)})")
        p = {k: v for k, v in params.items() if v is not None}
        privacy_name = str(p.get("privacy", "pure"))
        utility = str(p.get("utility", "cost"))
        if utility not in ("cost", "wasserstein", "surrogate"):
            raise SpecError(f"utility must be cost, wasserstein or surrogate, got {utility!r}")
        if "epsilon" not in p:
            raise SpecError("epsilon is required")
        eps = _number(p["epsilon"], "epsilon")
        if privacy_name == "approx":
            if "delta" not in p:
                raise SpecError("--privacy approx needs --delta")
            privacy: PrivacyNotion = ApproxDP(eps, _number(p["delta"], "delta"))
        elif privacy_name in ("pure", "lipschitz"):
            if "delta" in p:
                raise SpecError("--delta applies only to --privacy approx" + (
                    " (Lipschitz privacy has no delta)" if privacy_name == "lipschitz" else ""))
            privacy = PureDP(eps) if privacy_name == "pure" else Lipschitz(eps)
        else:
            raise SpecError(f"privacy must be pure, approx or lipschitz, got {privacy_name!r}")
        # the default domain: ℝ, except for the problems optmech solves on ℤ only ((ε, δ), Wasserstein)
        domain_name = str(p.get("domain", "integer" if utility != "cost" or privacy_name == "approx" else "continuous"))
        if domain_name in ("integer", "nonnegative"):
            if "resolution" in p:
                raise SpecError("--resolution applies only to --domain continuous")
            domain: Domain = IntegerLattice() if domain_name == "integer" else NonNegativeIntegers()
        elif domain_name == "continuous":
            res = p.get("resolution")
            domain = Continuous(_number(res, "resolution", integer=True) if res is not None else None)
        else:
            raise SpecError(f"domain must be integer, nonnegative or continuous, got {domain_name!r}")
        common = dict(privacy=privacy, domain=domain,
                      sensitivity=_number(p.get("sensitivity", 1.0), "sensitivity"),
                      target_gap=_number(p["target_gap"], "target_gap") if "target_gap" in p else None,
                      symmetry=str(p.get("symmetry", "auto")),
                      dim=_number(p.get("dim", 1), "dim", integer=True), norm=str(p.get("norm", "l1")))
        if utility != "cost":
            if "cost" in p:
                raise SpecError(f"--cost does not apply to --utility {utility} (it minimises a distance to the input)")
            return cls(objective=Wasserstein(_input_from_param(p, utility), surrogate=utility == "surrogate"),
                       **common)
        if "input" in p or "input_pmf" in p:
            raise SpecError("--input-pmf/--input apply to --utility wasserstein|surrogate")
        return cls(cost=p.get("cost", "abs"), **common)


#: The flat parameters of :meth:`Problem.from_params`, with their defaults (None: required or unset).
PARAMS: dict[str, Any] = {
    "privacy": "pure", "epsilon": None, "delta": None, "sensitivity": 1.0,
    "domain": "continuous (integer for privacy approx and for utility wasserstein|surrogate)",
    "resolution": None,
    "cost": "abs", "utility": "cost", "input": None, "input_pmf": None,
    "dim": 1, "norm": "l1", "target_gap": None, "symmetry": "auto",
}


def _number(value: Any, name: str, *, integer: bool = False) -> float | int:
    if isinstance(value, bool):
        raise SpecError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{name} must be a number, got {value!r}") from None
    if integer:
        if not math.isfinite(v) or v != int(v):
            raise SpecError(f"{name} must be an integer, got {value!r}")
        return int(v)
    return v


def _is_input_spec(label: str) -> bool:
    return isinstance(label, str) and label.split(":", 1)[0].strip().lower() in ("poisson", "gaussian", "uniform")


def _input_from_param(p: dict, utility: str) -> "InputPMF":
    from optmech.inputs import input_from_arrays, parse_input_spec, read_input_pmf

    if ("input" in p) == ("input_pmf" in p):
        raise SpecError(f"--utility {utility} needs exactly one of --input-pmf FILE and --input SPEC "
                        "(e.g. poisson:5:0:30)")
    if "input_pmf" in p:
        return read_input_pmf(str(p["input_pmf"]))
    inp = p["input"]
    if isinstance(inp, dict):
        if set(inp) != {"k", "p"}:
            raise SpecError("an input given as a mapping needs exactly the keys k and p")
        return input_from_arrays(inp["k"], inp["p"], label="arrays")
    return parse_input_spec(str(inp))
