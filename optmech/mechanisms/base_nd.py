r"""Shared base of the d-dimensional pure ε-DP mechanisms on ℝ^d and ℤ^d: :class:`NDMechanism`,
the dimension check, and the d-D cost names.

Every d-D mechanism (:mod:`~optmech.mechanisms.staircase_nd`, :mod:`~optmech.mechanisms.laplace_nd`,
:mod:`~optmech.mechanisms.discrete_staircase_nd`, the solvers' d-D outputs) is a
:class:`~optmech.mechanisms.base.Mechanism` with an instance attribute ``dim`` = d (1 <= d <= 64).
Points are arrays whose last axis has length d; ``sample`` returns arrays of shape ``(*size, d)``;
``mean()``/``var()`` are per-coordinate arrays of length d.

Costs (:data:`COSTS_ND`): ``l1`` = ‖x‖₁, ``l2`` = ‖x‖₂, ``l2sq`` = ‖x‖₂², ``linf`` = ‖x‖∞, and
``pow:M`` = ‖x‖₁^M (staircase: integer M; Laplace: any M > 0).  For d = 1 any 1-D cost is
passed on to the equivalent 1-D mechanism.  :data:`COSTS_ND` lives here, beside
:meth:`NDMechanism.expected_cost` which dispatches on it, and not in
:mod:`~optmech.mechanisms.geometry`: it is the list of cost names that the closed forms of every
d-D mechanism answer (a contract of the mechanisms, not a fact about norm balls).  The general d-D
cost of a problem (names and expressions) is :mod:`optmech.costs_nd`.

Tested by: tests/test_mechanisms_multidim.py.
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base import Mechanism, Privacy

__all__ = ["COSTS_ND", "MAX_DIM", "NDMechanism", "check_dim", "parse_nd_cost", "nd_cost_error"]

#: The d-dimensional cost names: ‖x‖₁, ‖x‖₂, ‖x‖₂², ‖x‖∞ (plus ``pow:M`` = ‖x‖₁^M where supported).
COSTS_ND = ("l1", "l2", "l2sq", "linf")

#: Largest dimension accepted (the (epsilon, delta) radial path on R^d is solved up to it).
MAX_DIM = 128


# --------------------------------------------------------------------------------------------
# validation and cost names


def check_dim(dim) -> int:
    """``dim`` as an int in [1, MAX_DIM], else SpecError.

    >>> check_dim(3)
    3
    """
    return nx.check_int_range(dim, "dim", 1, MAX_DIM)


def parse_nd_cost(cost) -> tuple[str, float | None] | None:
    """('l1' | 'l2' | 'l2sq' | 'linf', None) or ('pow', M); None if not a d-D cost name.

    >>> parse_nd_cost(" L2sq "), parse_nd_cost("pow:3"), parse_nd_cost("abs")
    (('l2sq', None), ('pow', 3.0), None)
    """
    if not isinstance(cost, str):
        return None
    s = cost.strip().lower()
    if s in COSTS_ND:
        return s, None
    if s.startswith("pow:"):
        try:
            m = float(s[4:])
        except ValueError:
            raise SpecError(f"cost {cost!r}: the power in pow:M must be a number") from None
        if not (math.isfinite(m) and m >= 0.0):
            raise SpecError(f"cost {cost!r}: the power in pow:M must be finite and >= 0")
        return "pow", m
    return None


def nd_cost_error(cost, extra: str = "pow:M") -> SpecError:
    """The SpecError for an unknown d-D cost name (``extra``: the further names the caller accepts).

    >>> str(nd_cost_error("l3", extra=""))
    "unknown d-dimensional cost 'l3'; known: l1, l2, l2sq, linf"
    """
    names = ", ".join(COSTS_ND) + (f", {extra}" if extra else "")
    return SpecError(f"unknown d-dimensional cost {cost!r}; known: {names}")


# --------------------------------------------------------------------------------------------
# mechanisms


class NDMechanism(Mechanism):
    """Shared machinery of the d-dimensional mechanisms (not registered: no ``name``)."""

    _norm = "l1"

    def _init_dim(self, dim) -> None:
        self.dim = check_dim(dim)
        self._cached_1d = None

    # points ---------------------------------------------------------------------------------
    def _points(self, x) -> np.ndarray:
        """Points of shape (..., d); for d = 1 a bare array of numbers is taken elementwise."""
        x = np.asarray(x, dtype=float)
        if self.dim == 1 and (x.ndim == 0 or x.shape[-1] != 1):
            return x[..., None]
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise SpecError(f"points must have a last axis of length dim = {self.dim}, got shape {x.shape}")
        return x

    @staticmethod
    def _out(y: np.ndarray):
        return y[()] if np.ndim(y) == 0 else y

    def pdf(self, x):
        """Density at points ``x`` (last axis of length ``dim``; for d = 1 also bare numbers)."""
        if self.lattice:
            raise TypeError(f"{type(self).__name__} is a lattice mechanism: use pmf(k)")
        return self._out(self._pdf_nd(self._points(x)))

    def pmf(self, k):
        """Mass at integer points ``k`` (last axis of length ``dim``); 0 off the lattice."""
        if not self.lattice:
            raise TypeError(f"{type(self).__name__} is a continuous mechanism: use pdf(x)")
        k = self._points(k)
        integral = np.all(np.floor(k) == k, axis=-1)
        y = np.where(integral, self._pmf_nd(np.where(integral[..., None], k, 0.0)), 0.0)
        return self._out(y)

    def cdf(self, x):
        if self.dim > 1:
            raise TypeError(f"cdf is defined for dim = 1 only ({type(self).__name__} has dim = {self.dim})")
        return super().cdf(x)

    def sf(self, x):
        if self.dim > 1:
            raise TypeError(f"sf is defined for dim = 1 only ({type(self).__name__} has dim = {self.dim})")
        return super().sf(x)

    def _logpdf(self, x):
        return self._logpdf_nd(self._points(x))

    def _logpmf(self, k):
        k = self._points(k)
        integral = np.all(np.floor(k) == k, axis=-1)
        return np.where(integral, self._logpmf_nd(np.where(integral[..., None], k, 0.0)), -np.inf)

    def _logpdf_nd(self, x):
        with np.errstate(divide="ignore"):
            return np.log(self._pdf_nd(x))

    def _logpmf_nd(self, k):
        with np.errstate(divide="ignore"):
            return np.log(self._pmf_nd(k))

    def _ppf(self, q):
        return self._one_d()._ppf(q)

    def _entropy(self):
        if self.dim == 1:
            return self._one_d().entropy()
        return super()._entropy()

    def _sf(self, x):
        return self._one_d()._sf(x)

    def _one_d(self) -> Mechanism:
        if self._cached_1d is None:
            self._cached_1d = self._make_1d()
        return self._cached_1d

    # moments and costs ----------------------------------------------------------------------
    def mean(self) -> np.ndarray:
        """E X = 0 (per coordinate, length ``dim``)."""
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        """Per-coordinate variance E X_j² (length ``dim``, closed form)."""
        return np.full(self.dim, self.expected_cost("l2sq") / self.dim)

    def std(self) -> np.ndarray:
        return np.sqrt(self.var())

    def expected_cost(self, cost) -> float:
        """E L(X) for ``cost`` in COSTS_ND (``l1``, ``l2``, ``l2sq``, ``linf``) or ``pow:M``
        where supported; for d = 1 any 1-D cost is passed to the equivalent 1-D mechanism."""
        parsed = parse_nd_cost(cost)
        if self.dim == 1 and (parsed is None or parsed[0] == "pow"):  # ‖x‖₁^M = |x|^M
            return self._one_d().expected_cost(cost)
        if parsed is None:
            raise nd_cost_error(cost, extra=self._pow_help)
        return float(self._cost_nd(parsed[0], parsed[1], cost))

    _pow_help = ""

    def privacy(self) -> Privacy:
        norm = "abs" if self.dim == 1 else self._norm
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, norm, self._privacy_note())

    # supplied by subclasses -------------------------------------------------------------------
    def _pdf_nd(self, x):  # pragma: no cover - abstract
        raise NotImplementedError

    def _pmf_nd(self, k):  # pragma: no cover - abstract
        raise NotImplementedError

    def _cost_nd(self, name, m, cost):  # pragma: no cover - abstract
        raise NotImplementedError

    def _make_1d(self) -> Mechanism:  # pragma: no cover - abstract
        raise NotImplementedError

    def _privacy_note(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError
