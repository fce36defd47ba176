"""Reading a mechanism back from the JSON that optmech writes (``solve --save``, ``to_dict()``)."""

from __future__ import annotations

import json

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.solved import mechanism_from_solver_dict
from optmech.mechanisms.tabulated import ND_KINDS, SavedND, Tabulated


def load_mechanism_file(path: str, *, sampler: bool = False):
    """A mechanism from JSON: the output of ``optmech solve --save``, of ``optmech mechanism --json``
    (its ``definition``), or a ``to_dict()``.  A saved d-D solver output is a :class:`SavedND`
    (a conjecture-mode candidate) unless ``sampler`` is set: then the solver mechanism itself,
    with the problem's ε and δ (its exact sampler re-audits the law)."""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except FileNotFoundError:
        raise SpecError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"cannot read {path} as JSON: {exc}") from None
    if isinstance(d, dict) and isinstance(d.get("definition"), dict) and isinstance(d.get("mechanism"), str):
        d = d["definition"]  # the whole output of `optmech mechanism --json`: its definition rebuilds it
    if isinstance(d, dict) and isinstance(d.get("mechanism"), dict) and d["mechanism"].get("kind") in ND_KINDS:
        if not sampler:
            return SavedND(d, path)
        problem = d.get("problem") or {}
        eps, dlt = problem.get("epsilon"), problem.get("delta")
        return mechanism_from_solver_dict(d["mechanism"], epsilon=eps if isinstance(eps, (int, float)) else None,
                                          delta=dlt if isinstance(dlt, (int, float)) and dlt > 0 else None)
    if isinstance(d, dict) and isinstance(d.get("mechanism"), dict) and (
            d["mechanism"].get("kind") == "cube_pmf_nd" or "kind" not in d["mechanism"]):
        # the (ε, δ) ℝ^d density, or a library law a family returned (a closed-form reference)
        problem = d.get("problem") or {}
        eps, dlt = problem.get("epsilon"), problem.get("delta")
        return mechanism_from_solver_dict(d["mechanism"], epsilon=eps if isinstance(eps, (int, float)) else None,
                                          delta=dlt if isinstance(dlt, (int, float)) else None)
    if isinstance(d, dict) and isinstance(d.get("mechanism"), dict):
        eps = (d.get("problem") or {}).get("epsilon")
        law = Tabulated.from_dict(d["mechanism"])
        return Tabulated.from_law(law.law, eps if isinstance(eps, (int, float)) else None)
    if isinstance(d, dict):
        return Mechanism.from_dict(d)
    raise SpecError(f"{path} does not hold a mechanism (a JSON object is expected)")
