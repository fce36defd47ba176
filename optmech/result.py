"""The result of a solve: certified bracket, mechanism, references, timings, LP size."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optmech.certify import LatticeMechanism


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


@dataclass(frozen=True)
class ReferenceValue:
    """A closed-form reference compared with the bracket."""

    name: str
    value: float
    parameters: dict
    inside_bracket: bool
    exact: bool = True
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "value": _json_float(self.value),
            "parameters": {k: _json_float(v) if isinstance(v, float) else v for k, v in self.parameters.items()},
            "inside_bracket": self.inside_bracket,
            "exact": self.exact,
            "note": self.note,
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
    mechanism: LatticeMechanism | None
    audit: dict
    truncation: dict
    history: list[dict] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)

    @property
    def relative_gap(self) -> float:
        lo, up = self.lower_bound, self.upper_bound
        if not (math.isfinite(lo) and math.isfinite(up)) or up <= 0:
            return math.inf if up != lo else 0.0
        return max(0.0, (up - lo) / abs(up))

    def __repr__(self) -> str:
        tag = "certified" if self.certified else "UNCERTIFIED"
        return (
            f"Result({self.status}, {tag}, lower={self.lower_bound:.12g}, upper={self.upper_bound:.12g}, "
            f"gap={self.relative_gap:.3g})"
        )

    # -- serialisation ---------------------------------------------------------------------------
    def mechanism_dict(self) -> dict | None:
        m = self.mechanism
        if m is None:
            return None
        g = m.grid
        return {
            "kind": "lattice_pmf" if g.kind == "integer" else "piecewise_constant_density",
            "sensitivity": g.period,
            "steps_per_period": g.W,
            "edges": None if g.edges is None else g.edges.tolist(),
            "k_lo": m.k_lo,
            "weights": m.weights.tolist(),
            "beta": m.beta,
            "left_tail": m.left_gen.tolist(),
            "right_tail": m.right_gen.tolist(),
            "total": m.total,
            "tail_rule": (
                "index k lies in period q = k // steps_per_period at offset r = k % steps_per_period: the point k "
                "(lattice_pmf) or the cell [q*sensitivity + edges[r], q*sensitivity + edges[r+1]). "
                "weight(k) = weights[k-k_lo] inside the window; right_tail[r]*beta^m at "
                "k = k_lo+len(weights)-steps_per_period+r+m*steps_per_period and left_tail[r]*beta^m at "
                "k = k_lo+r-m*steps_per_period (m>=1); the probability of point k, or the density on cell k, "
                "is weight(k)/total"
            ),
        }

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
        if include_mechanism:
            d["mechanism"] = self.mechanism_dict()
        return d

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(**kw), indent=2)


def mechanism_from_dict(d: dict) -> LatticeMechanism:
    """Rebuild the mechanism saved by ``--save`` (the ``mechanism`` field)."""
    from optmech.problems.lattice import Grid1D

    if d["kind"] == "lattice_pmf":
        grid = Grid1D.integer(int(d["steps_per_period"]))
    else:
        grid = Grid1D("cells", float(d["sensitivity"]), int(d["steps_per_period"]),
                      np.asarray(d["edges"], dtype=float))
    return LatticeMechanism(
        grid=grid,
        k_lo=int(d["k_lo"]),
        weights=np.asarray(d["weights"], dtype=float),
        beta=float(d["beta"]),
        left_gen=np.asarray(d["left_tail"], dtype=float),
        right_gen=np.asarray(d["right_tail"], dtype=float),
        total=_parse_float(d["total"]),
    )
