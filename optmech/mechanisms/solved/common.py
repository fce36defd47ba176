r"""The common base of the solver-output laws (:mod:`optmech.mechanisms.solved`).

The reading of a solver's ``mechanism`` dict that every kind shares (:func:`solver_dict`, the field
readers :func:`read_number`, :func:`read_array`, :func:`read_optional`), the constants of the series
and audits (:data:`TAIL_TOL`, :data:`MAJORANT_SLACK`, :data:`MAX_PAIRS`, :data:`BLOCK_PAIRS`; the
load-time audit limit is the package's :data:`optmech.mechanisms.solved.LOAD_AUDIT_PAIRS`, read by
:func:`load_audit_limit`), the mixin :class:`SolvedMechanism` (the dict kept and returned by
``to_dict``, each class's ``from_dict``) and the small numerics several kinds use (tail tables,
categorical draws, Gauss-Legendre nodes, the closed-form cost means over cubes).
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any, Callable

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism

#: Symmetry names of the solver dicts → group names of :mod:`optmech.problems.pure_nd`.
GROUPS = {"none": "none", "coordinate signs": "signs", "signed permutations": "signed_permutations"}
#: Truncation of the tail tables and normaliser series: remaining (envelope) mass below this.
TAIL_TOL = 1e-30
#: Relative slack of the majorant audit (the solver's fixed point holds up to float rounding).
MAJORANT_SLACK = 1e-9
#: Most candidate × point pairs one normaliser or cost series may evaluate.
MAX_PAIRS = 10**8
#: Pairs per vectorised block.
BLOCK_PAIRS = 1 << 21


def load_audit_limit() -> int:
    """Most point pairs (or cube × shift terms) ``privacy()`` audits when a law is loaded: the package's
    :data:`optmech.mechanisms.solved.LOAD_AUDIT_PAIRS`, read at call time (setting it there applies to
    every kind); a larger law states the audit recorded by its solve, saying that it was not re-audited."""
    from optmech.mechanisms import solved

    return int(solved.LOAD_AUDIT_PAIRS)


# ------------------------------------------------------------------------------------------------
# field parsing
# ------------------------------------------------------------------------------------------------
def solver_dict(d: Any, *kinds: str) -> dict:
    """The solver dict ``d`` with its ``kind`` checked to be one of ``kinds``.  A dict keyed by ``name``
    only (as a library mechanism's ``to_dict()``) gets ``kind`` = that name and loses ``name``; a ``name``
    beside ``kind`` is kept (:class:`SolvedMechanism` drops it when it equals ``kind``).

    >>> solver_dict({"name": "cell_pmf_nd", "dim": 2}, "cell_pmf_nd")
    {'kind': 'cell_pmf_nd', 'dim': 2}
    """
    if not isinstance(d, dict):
        raise SpecError("a solver mechanism must be a dict")
    kind = d.get("kind", d.get("name"))
    if "kind" not in d and kind is not None:
        d = {"kind": kind, **{k: v for k, v in d.items() if k != "name"}}
    if kind not in kinds:
        raise SpecError(f"expected a solver mechanism of kind {' or '.join(map(repr, kinds))}, got {kind!r}")
    return d


def need_field(d: dict, key: str):
    """``d[key]``; a :class:`SpecError` naming the solver mechanism's kind and the field where it is missing."""
    try:
        return d[key]
    except KeyError:
        raise SpecError(f"solver mechanism {d.get('kind')!r} lacks the field {key!r}") from None


def read_number(d: dict, key: str, *, default=None, positive: bool = False, integer: bool = False) -> float:
    """The field ``key`` of ``d`` as a finite float >= 0 (> 0 with ``positive``; a whole number with
    ``integer``); ``default`` where given and the field is absent; one-line :class:`SpecError` otherwise."""
    v = d.get(key, default) if default is not None else need_field(d, key)
    try:
        if isinstance(v, bool):
            raise TypeError
        f = float(v)
    except (TypeError, ValueError):
        raise SpecError(f"solver mechanism field {key!r} must be a number, got {v!r}") from None
    if not math.isfinite(f) or f < 0 or (positive and f == 0):
        raise SpecError(f"solver mechanism field {key!r} must be finite and {'>' if positive else '>='} 0, got {v!r}")
    if integer and f != int(f):
        raise SpecError(f"solver mechanism field {key!r} must be an integer, got {v!r}")
    return f


def read_array(d: dict, key: str, ndim: int) -> np.ndarray:
    """The field ``key`` of ``d`` as a nonempty ``ndim``-D float array of finite numbers (else :class:`SpecError`)."""
    try:
        a = np.asarray(need_field(d, key), dtype=float)
    except (TypeError, ValueError):
        raise SpecError(f"solver mechanism field {key!r} must be an array of numbers") from None
    if a.ndim != ndim or a.size == 0 or not np.all(np.isfinite(a)):
        raise SpecError(f"solver mechanism field {key!r} must be a nonempty {ndim}-D array of finite numbers")
    return a


def read_width(d: dict, key: str) -> tuple[float, float, int]:
    """(h, Δ, n): the width ``key`` of a dict's cells or shells, its ``sensitivity`` Δ and n = Δ/h, which
    must be a whole number >= 1 (to a relative 1e-9)."""
    h = read_number(d, key, positive=True)
    delta = read_number(d, "sensitivity", positive=True)
    n = round(delta / h)
    if n < 1 or abs(n * h - delta) > 1e-9 * delta:
        raise SpecError(f"{key} must divide the sensitivity")
    return h, delta, int(n)


def read_optional(d: dict, key: str, given: float | None) -> float | None:
    """The dict's value of ``key`` or the keyword ``given`` (they must agree when both are set)."""
    v = d.get(key)
    if v is None:
        return None if given is None else float(given)
    v = read_number(d, key)
    if given is not None and float(given) != v:
        raise SpecError(f"{key}={given!r} contradicts the solver mechanism's {key} {v!r}")
    return v


# ------------------------------------------------------------------------------------------------
# the common base
# ------------------------------------------------------------------------------------------------
class SolvedMechanism:
    """Mixin of the solver-output mechanisms: keeps the solver dict, which ``to_dict`` returns, and
    reads it back with the class's own :meth:`from_dict`.

    ``epsilon``/``delta`` are the dict's keys of that name or the keywords; they are not added to
    ``to_dict()``.  A ``name`` key equal to ``kind`` (as :meth:`Mechanism.from_dict` adds it) is dropped.
    """

    kind: str = ""
    _source: dict

    def _keep(self, d: dict, epsilon: float | None, delta: float | None = None) -> None:
        if not isinstance(d, dict):
            raise SpecError("a solver mechanism must be a dict")
        self._source = copy.deepcopy({k: v for k, v in d.items() if not (k == "name" and v == d.get("kind"))})
        self.kind = str(d.get("kind"))
        eps = read_optional(d, "epsilon", epsilon)
        self._epsilon = math.nan if eps is None else eps
        dl = read_optional(d, "delta", delta)
        self._delta = math.nan if dl is None else dl
        self._hash: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The solver dict this mechanism was built from (a copy, unchanged)."""
        return copy.deepcopy(self._source)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
        """Rebuild from a solver dict of this class's kind (its ``kind``, or the ``name`` that
        :meth:`Mechanism.from_dict` passes, equal to the class's ``name``; :func:`solver_dict`).
        ``epsilon``/``delta`` fill in what the dict does not record.  A kind read by several classes
        overrides this (``lattice_pmf_nd``: finite or β-majorant; ``per_coordinate`` Lipschitz laws)."""
        return cls(solver_dict(d, cls.name), epsilon=epsilon, delta=delta)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": getattr(self, "dim", 1)}

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((type(self).__name__, json.dumps(self._source, sort_keys=True, default=str)))
        return self._hash

    def __repr__(self) -> str:
        eps = "" if math.isnan(self._epsilon) else f", epsilon={self._epsilon!r}"
        return f"{type(self).__name__}(kind={self.kind!r}, dim={getattr(self, 'dim', 1)}{eps})"

    def _refuse(self, what: str, why: str) -> SpecError:
        return SpecError(f"{what} of the {self.kind} mechanism is not supported: {why}")


def cost_nd(cost, dim: int):
    """``cost`` as a d-D cost (:func:`optmech.costs_nd.as_cost_nd`), imported on use."""
    from optmech.costs_nd import as_cost_nd

    return as_cost_nd(cost, dim)


# ------------------------------------------------------------------------------------------------
# numerics shared by several kinds
# ------------------------------------------------------------------------------------------------
def decaying_table(k0: int, weight: Callable[[np.ndarray], np.ndarray], tol: float,
                    k_end: int = 0, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(k, w) for k = k0, k0+1, ... until the weights, decaying with a decreasing ratio from ``k_end``
    on, leave a remainder <= tol · scale (default scale Σw), bounded by the last term times r/(1 − r),
    r the last ratio; the shortest such prefix."""
    L = max(64, 2 * (k_end - k0 + 2))
    while True:
        k = np.arange(k0, k0 + L, dtype=np.int64)
        w = np.asarray(weight(k), dtype=float)
        total = math.fsum(w)
        if not (total > 0):
            return k, w
        r = w[-1] / w[-2] if len(w) > 1 and w[-2] > 0 else 0.0
        beyond = w[-1] * r / (1 - r) if r < 1 else math.inf
        limit = tol * (total if scale is None else scale)
        if beyond <= limit:  # keep the shortest prefix whose remainder is still <= limit
            rest = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]]) + beyond
            last = int(np.argmax(rest <= limit)) + 1
            last = max(last, int(np.searchsorted(k, k_end, side="right")))
            return k[:last], w[:last]
        if L > 10**8:
            raise SpecError("a tail series of the solver mechanism does not decay")
        L *= 2


def categorical(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n indices drawn with probabilities ∝ weights (inverse cdf)."""
    c = np.cumsum(weights)
    return np.minimum(np.searchsorted(c, rng.random(n) * c[-1], side="right"), len(c) - 1)


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (x + 1.0), 0.5 * w


def cube_means_closed(kind: str, h: float, z: np.ndarray) -> np.ndarray:
    """Mean of L over each cube h(z + [−½, ½)^d) in closed form (``l1``, ``l2sq``)."""
    a, b = h * (z - 0.5), h * (z + 0.5)
    if kind == "l1":  # mean |x| on [a, b]: |midpoint| off 0, (a² + b²)/(2(b − a)) across it
        m = np.where(a >= 0, 0.5 * (a + b), np.where(b <= 0, -0.5 * (a + b), (a * a + b * b) / (2 * (b - a))))
        return m.sum(axis=-1)
    return ((a * a + a * b + b * b) / 3.0).sum(axis=-1)
