"""Base objects of the mechanism library: :class:`Reference`, :class:`Privacy`, :class:`Mechanism`.

:class:`Mechanism` follows the scipy.stats model in miniature: scalar keyword-only
parameters validated in ``__init__`` (a one-line :class:`~optmech.errors.SpecError` naming the
bad value), public ``pdf``/``pmf``/``cdf``/``sf``/``sample``/``expected_cost``/``to_dict`` on the
base class, private ``_pdf``/``_pmf``/``_cdf``/``_sf``/``_sample``/``_expected_cost`` formulas in
each subclass.  Tails come from ``_sf`` formulas, never from ``1 - cdf``.

Every concrete subclass registers itself under its ``name``; :meth:`Mechanism.from_dict`
rebuilds any of them from :meth:`Mechanism.to_dict`.  Multi-dimensional mechanisms
(``dim > 1``) take points as arrays whose last axis has length ``dim`` and sample arrays of
shape ``(*size, dim)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from optmech.mechanisms import numerics as nx


@dataclass(frozen=True)
class Reference:
    """A reference value of the optimal (or a baseline) expected cost.

    Attributes
    ----------
    name : str
        Mechanism family: ``staircase``, ``discrete_staircase``, ``geometric``, ``laplace``,
        ``discrete_laplace``.
    value : float
        Expected cost of that mechanism (``inf`` when the cost series diverges).
    parameters : dict
        The mechanism's free parameters (e.g. ``{"gamma": ..., "gamma_heuristic": ...}``).
    exact : bool
        True for a closed form, False for a numeric route (quadrature / truncated series;
        ``note`` then states the method and its accuracy).
    note : str
        Provenance: the theorem used, whether the value is the optimum V* or an upper bound, and
        for numeric routes the method and estimated error.
    """

    name: str
    value: float
    parameters: dict = field(default_factory=dict)
    exact: bool = True
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict (±inf and NaN encoded as strings)."""

        def enc(v):
            if isinstance(v, float) and not math.isfinite(v):
                return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
            if isinstance(v, (np.floating, np.integer)):
                return enc(v.item())
            return v

        return {
            "name": self.name,
            "value": enc(float(self.value)),
            "parameters": {k: enc(v) for k, v in self.parameters.items()},
            "exact": bool(self.exact),
            "note": self.note,
        }


@dataclass(frozen=True)
class Privacy:
    """What a mechanism guarantees for neighbouring query values at distance <= ``sensitivity``.

    Attributes
    ----------
    notion : {"pure", "approx", "lipschitz"}
        ε-DP, (ε, δ)-DP, or Lipschitz privacy (|ln P(u∈S) − ln P(u'∈S)| <= ε‖u − u'‖, [KHP15]).
    epsilon, delta : float
        The guarantee (δ = 0 for pure DP; for Lipschitz privacy ε is per unit distance).
    sensitivity : float
        Δ, measured in ``norm`` (None for Lipschitz privacy, which has no Δ).
    norm : str
        The distance between neighbouring query values: ``"abs"`` in 1-D, ``"l1"``, ``"l2"`` or
        ``"linf"`` in d-D.
    note : str
        Where the guarantee comes from (theorem) and its side conditions.
    """

    notion: str
    epsilon: float
    delta: float
    sensitivity: float | int | None
    norm: str = "abs"
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "notion": self.notion,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sensitivity": self.sensitivity,
            "norm": self.norm,
            "note": self.note,
        }


#: name -> Mechanism subclass, filled by ``Mechanism.__init_subclass__``.
REGISTRY: dict[str, type["Mechanism"]] = {}


def _json_value(v):
    if isinstance(v, (np.floating, np.integer)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _scalar_out(x: np.ndarray, y: np.ndarray):
    return y[()] if np.ndim(x) == 0 else y


class Mechanism:
    """Additive noise mechanism for a 1-D query under pure ε-DP (base class).

    Subclasses set ``name``, ``lattice`` and ``_param_names`` and supply the private formulas.
    Parameters are scalars, validated on construction; instances are immutable by convention.
    """

    name: ClassVar[str] = ""
    lattice: ClassVar[bool] = False
    #: True when the law is symmetric about 0 (then ``mean()`` is 0).
    symmetric: ClassVar[bool] = True
    _param_names: ClassVar[tuple[str, ...]] = ()
    dim: int = 1

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name"):
            REGISTRY[cls.name] = cls

    def __init__(self, *, epsilon, sensitivity) -> None:
        self._epsilon = nx.check_epsilon(epsilon)
        self._sensitivity = nx.check_sensitivity(sensitivity, integer=self.lattice)

    # -- parameters -----------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def sensitivity(self):
        return self._sensitivity

    @property
    def parameters(self) -> dict[str, Any]:
        """Family-specific parameters (e.g. ``{"gamma": 0.3}``)."""
        return {p: getattr(self, p) for p in self._param_names}

    # -- distribution -----------------------------------------------------------------------
    def pdf(self, x):
        """Probability density at ``x`` (continuous mechanisms only)."""
        if self.lattice:
            raise TypeError(f"{type(self).__name__} is a lattice mechanism: use pmf(k)")
        x = np.asarray(x, dtype=float)
        return _scalar_out(x, self._pdf(x))

    def pmf(self, k):
        """Probability mass at integer ``k`` (lattice mechanisms only; 0 off the lattice)."""
        if not self.lattice:
            raise TypeError(f"{type(self).__name__} is a continuous mechanism: use pdf(x)")
        k = np.asarray(k, dtype=float)
        integral = np.floor(k) == k
        y = np.where(integral, self._pmf(np.where(integral, k, 0.0)), 0.0)
        return _scalar_out(k, y)

    def sf(self, x):
        """``P(X > x)``, computed from a tail formula (accurate far in the tail)."""
        x = np.asarray(x, dtype=float)
        if self.lattice:
            x = np.floor(x)
        return _scalar_out(x, self._sf(x))

    def cdf(self, x):
        """``P(X <= x)``; by symmetry ``P(X >= -x)``, accurate in the left tail."""
        x = np.asarray(x, dtype=float)
        if self.lattice:  # P(X <= n) = P(X >= -n) = P(X > -n - 1)
            y = self._sf(-np.floor(x) - 1.0)
        else:
            y = self._sf(-x)
        return _scalar_out(x, y)

    def sample(self, size=None, rng=None):
        """Draw samples, vectorised (floating-point sampler: not exactly DP, see :mod:`optmech.mechanisms.rng`).

        Parameters
        ----------
        size : int or tuple, optional
            Output shape (``(*size, dim)`` for d-D mechanisms); None draws one sample.
        rng : seed, numpy.random.Generator or "secure", optional
            A seed or Generator makes the draw reproducible; ``"secure"`` draws from a
            ChaCha20 stream keyed by the OS CSPRNG (:mod:`optmech.mechanisms.rng`).
        """
        from optmech.mechanisms.rng import as_generator

        shape = _check_size(size)
        rng = as_generator(rng)
        n = 1 if shape is None else int(np.prod(shape, dtype=np.int64))
        out = self._sample(n, rng)
        if shape is None:
            return out[0]
        return out.reshape(shape + out.shape[1:])

    def expected_cost(self, cost) -> float:
        """``E[L(X)]`` for a cost: a spec string (``"abs"``, ``"square"``, ``"pow:P"``, an
        expression in x) or a cost object (``kind``, ``power``, ``__call__``)."""
        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        return float(self._expected_cost(cost))

    def mean(self) -> float:
        """E[X] (0 for the symmetric laws)."""
        if self.symmetric:
            return 0.0
        return float(self._mean())

    def var(self) -> float:
        """Var[X] (= E X² for the symmetric laws; ``inf`` when it diverges)."""
        second = self.expected_cost("square")
        m = self.mean()
        return float(second - m * m)

    def std(self) -> float:
        return math.sqrt(self.var())

    def privacy(self) -> Privacy:
        """The guarantee: pure ε-DP for sensitivity Δ unless a subclass says otherwise."""
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, "abs" if self.dim == 1 else "l1",
                       f"{self.name}: density ratio <= e^epsilon for shifts up to the sensitivity")

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe parameters; ``Mechanism.from_dict`` inverts it."""
        d = {"name": self.name, "epsilon": self.epsilon, "sensitivity": self.sensitivity, **self.parameters}
        return {k: _json_value(v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Mechanism":
        """Rebuild a mechanism from :meth:`to_dict` (on the base class, dispatch on ``name``)."""
        from optmech.errors import SpecError

        if isinstance(d, dict) and "name" not in d and "kind" in d:  # the solver's --save field
            d = {"name": d["kind"], **d}
        if not isinstance(d, dict) or "name" not in d:
            raise SpecError("a mechanism dict needs a 'name' field")
        target = REGISTRY.get(d["name"]) if cls is Mechanism else cls
        if target is None:
            raise SpecError(f"unknown mechanism {d['name']!r} (known: {', '.join(sorted(REGISTRY))})")
        if target.name != d["name"]:
            raise SpecError(f"{target.__name__}.from_dict got a {d['name']!r} mechanism")
        if cls is Mechanism and target.from_dict.__func__ is not Mechanism.from_dict.__func__:
            return target.from_dict(d)
        kwargs = {k: v for k, v in d.items() if k != "name"}
        try:
            return target(**kwargs)
        except TypeError as exc:
            raise SpecError(f"bad fields for mechanism {d['name']!r}: {exc}") from None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "name")
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.to_dict().items())))

    # -- formulas supplied by subclasses ----------------------------------------------------
    def _pdf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _pmf(self, k):  # pragma: no cover - abstract
        raise NotImplementedError

    def _sf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _sample(self, n, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def _expected_cost(self, cost):  # pragma: no cover - abstract
        raise NotImplementedError

    def _mean(self):  # pragma: no cover - abstract (asymmetric laws only)
        raise NotImplementedError


def _check_size(size) -> tuple[int, ...] | None:
    """Validate a ``size`` argument: None, a nonnegative int, or a tuple of them."""
    from numbers import Integral

    from optmech.errors import SpecError

    if size is None:
        return None
    dims = size if isinstance(size, tuple) else (size,)
    for n in dims:
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
            raise SpecError(f"sample size must be a nonnegative integer (or a tuple of them), got {size!r}")
    return tuple(int(n) for n in dims)
