"""The result of a solve: certified bracket, mechanism, references, timings, LP size."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from optmech.certify import relative_gap  # relative_gap: re-exported


class Status(str, Enum):
    """How a solve ended; a ``str``, so ``result.status == "optimal"`` and JSON output are unchanged.

    ``OPTIMAL``: certified, gap within the target.  ``GAP_NOT_REACHED``: certified bracket wider
    than the target (the message says why the loop stopped).  ``UNCERTIFIED``: a half of the
    bracket could not be certified.  ``INFIMUM_AT_INFINITY``: V* is an infimum approached by noise
    centred ever farther from 0; the bracket is [the cost's proven floor, that noise's cost].
    """

    OPTIMAL = "optimal"
    GAP_NOT_REACHED = "gap_not_reached"
    UNCERTIFIED = "uncertified"
    INFIMUM_AT_INFINITY = "infimum_at_infinity"

    def __str__(self) -> str:
        return self.value


def _json_float(x: float) -> float | str | None:
    """JSON-safe float: ±inf encoded as the strings "inf"/"-inf", NaN as null."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _parse_float(x: Any) -> float:
    if x is None:
        return math.nan
    if isinstance(x, str):
        return float(x)
    return float(x)


def solver_info(raw, profile) -> dict:
    """The ``solver`` field of a Result: the backend's answer to the last LP."""
    return {
        "backend": raw.backend,
        "method": raw.method,
        "version": raw.version,
        "status": str(raw.status.value if hasattr(raw.status, "value") else raw.status),
        "objective": raw.objective,
        "profile": profile.name,
        "options": {k: v for k, v in raw.options.items() if k != "failed_attempts"},
        "failed_attempts": raw.options.get("failed_attempts", []),
    }


@dataclass(frozen=True)
class ReferenceValue:
    """A closed-form reference compared with the bracket."""

    name: str
    value: float
    parameters: dict
    inside_bracket: bool
    exact: bool = True
    note: str = ""
    #: For bounds with side conditions ((ε, δ) theorems): whether they hold; None otherwise.
    valid: bool | None = None
    #: "lower" or "upper" for bounds, None for mechanisms' costs.
    kind: str | None = None
    conditions: dict | None = None

    def to_dict(self) -> dict:
        d = {
            "name": self.name,
            "value": _json_float(self.value),
            "parameters": {k: _json_float(v) if isinstance(v, float) else v for k, v in self.parameters.items()},
            "inside_bracket": self.inside_bracket,
            "exact": self.exact,
            "note": self.note,
        }
        if self.valid is not None:
            d["valid"] = bool(self.valid)
        if self.kind is not None:
            d["kind"] = self.kind
        if self.conditions is not None:
            d["conditions"] = {k: bool(v) for k, v in self.conditions.items()}
        return d


@dataclass(frozen=True)
class HistoryRecord:
    """One step of a solve, the same keys for every family.

    ``size`` describes the LP (window, half-width, resolution: the family's own terms),
    ``lp`` its rows/cols/nonzeros, ``diagnostics`` the family's numbers (e.g. the mass the
    relaxation parks outside the window).  ``lower_bound``/``upper_bound`` are this step's own
    bounds; ``relative_gap`` is the gap of the best bracket after it.
    """

    iteration: int
    size: dict
    lp: dict
    solver_objective: float
    lower_bound: float
    upper_bound: float
    upper_certified: bool
    relative_gap: float
    seconds: float
    diagnostics: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "iteration": self.iteration, "size": dict(self.size), "lp": dict(self.lp),
            "solver_objective": _json_float(self.solver_objective), "lower_bound": _json_float(self.lower_bound),
            "upper_bound": _json_float(self.upper_bound), "upper_certified": bool(self.upper_certified),
            "relative_gap": _json_float(self.relative_gap), "seconds": float(self.seconds),
            "diagnostics": {k: _json_float(v) if isinstance(v, float) else v for k, v in self.diagnostics.items()},
        }


@dataclass(frozen=True)
class Result:
    """Everything a solve established.

    ``lower_bound`` and ``upper_bound`` are certified when ``certified`` is true: the lower bound
    from a repaired dual of a relaxation, the upper bound from an exactly audited mechanism.
    When ``certified`` is false, ``message`` says which half failed and the values must not be
    read as an optimum.
    """

    problem: dict
    lower_bound: float
    upper_bound: float
    certified: bool
    status: str
    message: str
    seconds: float
    references: list[ReferenceValue]
    lp: dict
    solver: dict
    #: The audited upper-bound mechanism, a library :class:`~optmech.mechanisms.base.Mechanism`
    #: (1-D: ``LatticePMF``/``PiecewiseConstantDensity``; d-D and Lipschitz: :mod:`optmech.mechanisms.solved`).
    mechanism: Any
    audit: dict
    truncation: dict
    history: list[dict] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    #: Conjecture mode (``--candidate``): the candidate's exact cost against the lower bound.
    candidate: dict | None = None

    @property
    def relative_gap(self) -> float:
        return relative_gap(self.lower_bound, self.upper_bound)

    def __repr__(self) -> str:
        tag = "certified" if self.certified else "UNCERTIFIED"
        return (
            f"Result({self.status}, {tag}, lower={self.lower_bound:.12g}, upper={self.upper_bound:.12g}, "
            f"gap={self.relative_gap:.3g})"
        )

    # -- serialisation ---------------------------------------------------------------------------
    def mechanism_dict(self) -> dict | None:
        """The mechanism's JSON form (the ``mechanism`` field of ``optmech solve --save``)."""
        return None if self.mechanism is None else solver_dict(self.mechanism)

    def to_dict(self, *, include_mechanism: bool = False) -> dict:
        d = {
            "problem": self.problem,
            "status": self.status,
            "message": self.message,
            "lower_bound": _json_float(self.lower_bound),
            "upper_bound": _json_float(self.upper_bound),
            "relative_gap": _json_float(self.relative_gap),
            "certified": self.certified,
            "seconds": self.seconds,
            "references": [r.to_dict() for r in self.references],
            "lp": self.lp,
            "solver": self.solver,
            "audit": self.audit,
            "truncation": self.truncation,
            "history": self.history,
            "claims": self.claims,
        }
        if self.candidate is not None:
            d["candidate"] = {k: _json_float(v) if isinstance(v, float) else v for k, v in self.candidate.items()}
        if include_mechanism:
            d["mechanism"] = self.mechanism_dict()
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(**kw), indent=2)

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        """Rebuild a Result from :meth:`to_dict` (``include_mechanism=True`` keeps the mechanism);
        ``relative_gap`` is recomputed from the bounds."""
        from optmech.errors import SpecError

        if not isinstance(d, dict):
            raise SpecError("a result must be a JSON object")
        missing = [k for k in ("problem", "status", "lower_bound", "upper_bound", "certified") if k not in d]
        if missing:
            raise SpecError(f"not an optmech result: missing {', '.join(missing)}")
        try:
            status = Status(d["status"])
        except ValueError:
            raise SpecError(f"unknown status {d['status']!r} (known: {', '.join(s.value for s in Status)})") from None
        refs = []
        for r in d.get("references", []):
            refs.append(ReferenceValue(
                r["name"], _parse_float(r.get("value")), dict(r.get("parameters", {})), bool(r.get("inside_bracket")),
                bool(r.get("exact", True)), r.get("note", ""), r.get("valid"), r.get("kind"), r.get("conditions")))
        mech = d.get("mechanism")
        return cls(
            problem=d["problem"], lower_bound=_parse_float(d["lower_bound"]), upper_bound=_parse_float(d["upper_bound"]),
            certified=bool(d["certified"]), status=status, message=d.get("message", ""),
            seconds=float(d.get("seconds", math.nan)), references=refs, lp=d.get("lp", {}), solver=d.get("solver", {}),
            mechanism=mechanism_from_dict(mech) if isinstance(mech, dict) else None,
            audit=d.get("audit", {}), truncation=d.get("truncation", {}), history=list(d.get("history", [])),
            claims=list(d.get("claims", [])), candidate=d.get("candidate"),
        )

    @classmethod
    def from_json(cls, text: str) -> "Result":
        """:meth:`from_dict` of a JSON text (the output of ``optmech solve --json`` or ``--save``)."""
        from optmech.errors import SpecError

        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecError(f"not JSON: {exc}") from None
        return cls.from_dict(d)


def mechanism_from_dict(d: dict):
    """Rebuild the mechanism saved by ``--save`` (the ``mechanism`` field) as a library Mechanism."""
    from optmech.mechanisms.tabulated import Tabulated

    if d.get("kind") in ("lattice_pmf", "piecewise_constant_density"):
        return Tabulated.from_dict(d)
    from optmech.mechanisms.solved import mechanism_from_solver_dict

    return mechanism_from_solver_dict(d)


def solver_dict(mechanism) -> dict:
    """The solver's JSON form of a result's mechanism: the dict without the library's ``name`` key
    (the ``kind`` key names it), so that ``--save`` files keep their format."""
    d = dict(mechanism.to_dict())
    if "kind" in d:
        d.pop("name", None)
    return d
