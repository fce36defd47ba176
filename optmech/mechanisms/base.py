"""Base objects of the mechanism library: :class:`Reference` and :class:`Mechanism`.

:class:`Mechanism` follows the scipy.stats model in miniature: scalar keyword-only
parameters validated in ``__init__`` (a one-line :class:`~optmech.errors.SpecError` naming the
bad value), public ``pdf``/``pmf``/``cdf``/``sf``/``sample``/``expected_cost``/``to_dict`` on the
base class, private ``_pdf``/``_pmf``/``_cdf``/``_sf``/``_sample``/``_expected_cost`` formulas in
each subclass.  Tails come from ``_sf`` formulas, never from ``1 - cdf``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from optmech.mechanisms import _numerics as nx


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


def _scalar_out(x: np.ndarray, y: np.ndarray):
    return y[()] if np.ndim(x) == 0 else y


class Mechanism:
    """Additive noise mechanism for a 1-D query under pure ε-DP (base class).

    Subclasses set ``name``, ``lattice`` and ``_param_names`` and supply the private formulas.
    Parameters are scalars, validated on construction; instances are immutable by convention.
    """

    name: ClassVar[str] = ""
    lattice: ClassVar[bool] = False
    _param_names: ClassVar[tuple[str, ...]] = ()

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
        """Draw samples (floating-point sampler: not exactly DP, see pure-dp.md §6).

        Parameters
        ----------
        size : int or tuple, optional
        rng : numpy.random.Generator or seed, optional
        """
        rng = np.random.default_rng(rng)
        n = 1 if size is None else int(np.prod(size))
        out = self._sample(n, rng)
        return out[0] if size is None else out.reshape(size)

    def expected_cost(self, cost) -> float:
        """``E[L(X)]`` for a cost object (``kind``, ``power``, ``__call__``); see the subclass."""
        return float(self._expected_cost(cost))

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "epsilon": self.epsilon, "sensitivity": self.sensitivity, **self.parameters}

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
