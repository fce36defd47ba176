"""The result of a solve: certified bracket, mechanism, references, timings, LP size."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from optmech.certify import relative_gap  # relative_gap: re-exported

__all__ = ["Result", "Status", "ReferenceValue", "HistoryRecord", "mechanism_from_dict", "solver_dict", "problem_label",
           "bracket_text"]


class Status(str, Enum):
    """How a solve ended; a ``str``, so ``result.status == "optimal"`` and JSON output are unchanged.

    ``OPTIMAL``: certified, gap within the target.  ``GAP_NOT_REACHED``: certified bracket wider
    than the target (the message says why the loop stopped).  ``UNCERTIFIED``: a half of the
    bracket could not be certified.  ``INFIMUM_AT_INFINITY``: V* is an infimum approached by noise
    centred ever farther from 0; the bracket is [the cost's proven floor, that noise's cost].
    ``INTERRUPTED``: a signal (Ctrl-C, SIGTERM) stopped the solve; the bracket is the best certified
    one found before it.

    >>> Status("optimal") is Status.OPTIMAL, Status.OPTIMAL == "optimal", str(Status.GAP_NOT_REACHED)
    (True, True, 'gap_not_reached')
    """

    OPTIMAL = "optimal"
    GAP_NOT_REACHED = "gap_not_reached"
    UNCERTIFIED = "uncertified"
    INFIMUM_AT_INFINITY = "infimum_at_infinity"
    INTERRUPTED = "interrupted"

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
    """A closed-form reference compared with the bracket.

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
    >>> geo = next(ref for ref in r.references if ref.name == "geometric")
    >>> geo.exact, geo.inside_bracket, round(geo.value, 6)      # 2b/(1 - b²), b = 1/e
    (True, True, 0.850918)
    """

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

    ``Result.history`` holds them as dicts (``to_dict``):

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
    >>> step = r.history[-1]
    >>> step["lower_bound"] <= step["upper_bound"], sorted(step["lp"])[:2]
    (True, ['cols', 'nonzeros'])
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


def problem_label(problem: dict) -> str:
    """A one-line description of a Result's ``problem`` dict: privacy, ε, δ, Δ, dimension, domain, cost.

    >>> problem_label({"privacy": "pure", "epsilon": 1.0, "sensitivity": 1.0, "domain": "integer", "cost": "abs"})
    'pure ε=1 Δ=1 integer cost=abs'
    """
    from optmech.mechanisms.display import fmt_number

    p = problem or {}
    parts = [str(p.get("privacy", "?")), f"ε={fmt_number(p.get('epsilon'))}"]
    if p.get("delta"):
        parts.append(f"δ={fmt_number(p['delta'])}")
    if "sensitivity" in p and p.get("privacy") != "lipschitz":
        parts.append(f"Δ={fmt_number(p['sensitivity'])}")
    if (p.get("dim") or 1) > 1:
        parts.append(f"d={p['dim']}" + (f" {p['norm']}" if p.get("norm") else ""))
    if p.get("domain"):
        parts.append(str(p["domain"]))
    if p.get("kind") == "wasserstein":
        parts.append(f"utility={p.get('utility')}")
    elif p.get("cost") is not None:
        parts.append(f"cost={p['cost']}")
    return " ".join(" ".join(str(x).split()) for x in parts)  # one line, whatever the cost text holds


def bracket_text(lower: float, upper: float) -> str:
    """``[lower, upper]`` with enough significant digits to tell the ends apart (4 to 15).

    >>> bracket_text(0.8509181282342898, 0.8509181282520423)
    '[0.8509181282343, 0.850918128252]'
    >>> bracket_text(0.93, 0.97)
    '[0.93, 0.97]'
    """
    gap = relative_gap(lower, upper)
    digits = 6
    if math.isfinite(gap) and gap > 0:
        digits = min(max(4, math.ceil(-math.log10(gap)) + 2), 15)
    elif gap == 0:
        digits = 15

    def f(x: float) -> str:
        return f"{x:.{digits}g}" if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))

    return f"[{f(lower)}, {f(upper)}]"


@dataclass(frozen=True)
class Result:
    """Everything a solve established.

    ``lower_bound`` and ``upper_bound`` are certified when ``certified`` is true: the lower bound
    from a repaired dual of a relaxation, the upper bound from an exactly audited mechanism.
    When ``certified`` is false, ``message`` says which half failed and the values must not be
    read as an optimum.  ``repr`` is one line; in Jupyter the result renders as HTML tables.

    Examples
    --------
    The optimal noise for a counting query (Δ = 1, ε = 1, cost |x|) is the geometric law, with
    E|X| = 2b/(1 − b²), b = e^{-1} [Geng13, Thm 2.12]; the certified bracket contains it:

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs",
    ...                                   domain=optmech.IntegerLattice()))
    >>> b = math.exp(-1)
    >>> r.certified, r.lower_bound <= 2 * b / (1 - b * b) <= r.upper_bound, r.relative_gap < 1e-9
    (True, True, True)
    >>> r
    <Result pure ε=1 Δ=1 integer cost=abs: [0.85091812823..., 0.85091812825...] optimal, certified, gap ...>
    >>> noisy = r.mechanism(np.array([10, 20, 30]), rng=0)      # the optimal noise, applied
    >>> noisy.shape
    (3,)
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
        return (f"<Result {problem_label(self.problem)}: {bracket_text(self.lower_bound, self.upper_bound)} "
                f"{self.status}, {tag}, gap {self.relative_gap:.2g}>")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: bracket, gap, status and certified flag, then the problem's
        parameters, the solve's numbers, the references and the mechanism (all escaped)."""
        from optmech.mechanisms.display import html_card, html_grid, html_table

        tag = "certified" if self.certified else "NOT certified"
        lines = [f"[lower, upper] = {bracket_text(self.lower_bound, self.upper_bound)}",
                 f"relative gap {self.relative_gap:.3g}, status {self.status}, {tag}"]
        if self.message:
            lines.append(" ".join(str(self.message).split()))
        problem_rows = [(k, v if not isinstance(v, (dict, list)) else json.dumps(v)[:200])
                        for k, v in (self.problem or {}).items()]
        solve_rows = [("lower bound", repr(float(self.lower_bound))), ("upper bound", repr(float(self.upper_bound))),
                      ("relative gap", self.relative_gap), ("status", str(self.status)),
                      ("certified", "yes" if self.certified else "no"), ("seconds", self.seconds)]
        for key in ("rows", "cols", "nonzeros", "solver", "builder"):
            if key in (self.lp or {}):
                solve_rows.append((f"LP {key}", self.lp[key]))
        if self.mechanism is not None:
            solve_rows.append(("mechanism", repr(self.mechanism)))
        tables = [html_table(problem_rows, "problem"), html_table(solve_rows, "solve")]
        if self.references:
            tables.append(html_grid(["reference", "value", "inside bracket", "exact"],
                                    [[r.name, r.value, "yes" if r.inside_bracket else "no", "yes" if r.exact else "no"]
                                     for r in self.references], "references"))
        return html_card(f"optmech Result: {problem_label(self.problem)}", lines, tables)

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
        if isinstance(mech, dict) and mech.get("kind") in ("lattice_pmf", "piecewise_constant_density"):
            # the ε (and δ) at which the law's privacy() re-audits it: the saved problem's, where the
            # mechanism's own dict does not record them (files written before it did)
            prob = d["problem"] if isinstance(d["problem"], dict) else {}
            for key in ("epsilon", "delta"):
                v = prob.get(key)
                if key not in mech and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                    mech = {**mech, key: float(v)}
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
    """Rebuild the mechanism saved by ``--save`` (the ``mechanism`` field) as a library Mechanism.

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
    >>> again = mechanism_from_dict(r.mechanism_dict())
    >>> again == r.mechanism, float(again.pmf(0)) == float(r.mechanism.pmf(0))
    (True, True)
    """
    from optmech.mechanisms.tabulated import Tabulated

    if d.get("kind") in ("lattice_pmf", "piecewise_constant_density"):
        return Tabulated.from_dict(d)
    from optmech.mechanisms.solved import mechanism_from_solver_dict

    return mechanism_from_solver_dict(d)


def solver_dict(mechanism) -> dict:
    """The solver's JSON form of a result's mechanism: the dict without the library's ``name`` key
    (the ``kind`` key names it), so that ``--save`` files keep their format.

    >>> from optmech.mechanisms import Laplace
    >>> solver_dict(Laplace(epsilon=1, sensitivity=1))       # library laws keep their name
    {'name': 'laplace', 'epsilon': 1.0, 'sensitivity': 1.0}
    """
    d = dict(mechanism.to_dict())
    if "kind" in d:
        d.pop("name", None)
    return d
