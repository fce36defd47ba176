"""Reading a mechanism back from the JSON that optmech writes (``solve --save``, ``to_dict()``)."""

from __future__ import annotations

import json

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism
from optmech.mechanisms.solved import mechanism_from_solver_dict
from optmech.mechanisms.tabulated import ND_KINDS, SavedND, Tabulated


def load_mechanism_file(path: str, *, sampler: bool = False):
    """A mechanism from JSON: the output of ``optmech solve --save``, of ``optmech mechanism --json``
    (its ``definition``), or a ``to_dict()``.  A saved result's law is rebuilt with the problem's ε
    and δ, at which its ``privacy()`` re-audits it (:func:`saved_result_mechanism`).  A saved pure
    d-D solver output is a :class:`SavedND` (a conjecture-mode candidate, stating the audit of its
    masses) unless ``sampler`` is set: then the solver mechanism itself (``optmech sample``/``mechanism
    --from`` set it)."""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except FileNotFoundError:
        raise SpecError(f"no such file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SpecError(f"cannot read {path} as JSON: {exc}") from None
    if isinstance(d, dict) and isinstance(d.get("definition"), dict) and isinstance(d.get("mechanism"), str):
        d = d["definition"]  # the whole output of `optmech mechanism --json`: its definition rebuilds it
    if isinstance(d, dict) and "mechanism" in d and isinstance(d.get("problem"), dict):
        return saved_result_mechanism(d, path, sampler=sampler)
    if isinstance(d, dict) and isinstance(d.get("mechanism"), dict):  # a solver mechanism without its problem
        m = d["mechanism"]
        if m.get("kind") in ("lattice_pmf", "piecewise_constant_density"):
            return Tabulated.from_dict(m)
        return mechanism_from_solver_dict(m)
    if isinstance(d, dict):
        return Mechanism.from_dict(d)
    raise SpecError(f"{path} does not hold a mechanism (a JSON object is expected)")


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def saved_result_mechanism(d: dict, path: str = "", *, sampler: bool = False):
    """The mechanism of a saved result (``optmech solve --save``, ``Result.to_dict(include_mechanism=True)``).

    The law is rebuilt with the ε (and δ) of the saved problem, the parameters at which its
    ``privacy()`` re-audits it: a pmf on ℤ or a density on cells by the exact audit of its masses
    (:meth:`~optmech.mechanisms.tabulated.Tabulated.privacy`), a closed form by its own proof, a
    d-D or Lipschitz solver law by the audit of its loaded masses as its class states
    (:mod:`optmech.mechanisms.solved`: the pure d-D laws' exact one-move or shell audit, the (ε, δ)
    laws' hockey-stick sums; a law above the load-time audit limit states the solve's record and
    says so).  A pure d-D solver output is a :class:`SavedND` (a conjecture-mode candidate, stating
    that same audit) unless ``sampler`` is set.  A result saved without a mechanism is refused in
    one line that says why it has none.
    """
    where = f"{path}: " if path else ""
    m, problem = d.get("mechanism"), d.get("problem") or {}
    if m is None:
        method = (d.get("audit") or {}).get("method")
        why = f" (its upper bound: {method})" if isinstance(method, str) and method else ""
        raise SpecError(f"{where}the saved result holds no mechanism{why}; solve again, or sample a library "
                        "mechanism with --mechanism")
    if not isinstance(m, dict):
        raise SpecError(f"{where}the saved result's 'mechanism' must be a JSON object, got {type(m).__name__}")
    eps, dlt = _number(problem.get("epsilon")), _number(problem.get("delta"))
    if dlt is None:
        dlt = _number(m.get("delta"))
    kind = m.get("kind")
    if kind in ("lattice_pmf", "piecewise_constant_density"):
        law = Tabulated.from_dict(m)
        if eps is None:
            eps = _number(m.get("epsilon"))
        return Tabulated.from_law(law.law, eps, dlt if dlt is not None and dlt > 0 else 0.0)
    if kind in ND_KINDS and not sampler:  # the record, with the guarantee its masses have
        SavedND(d, path)  # the record's own checks (one line each) before the audit
        return SavedND(d, path, privacy=mechanism_from_solver_dict(m, epsilon=eps).privacy())
    return mechanism_from_solver_dict(m, epsilon=eps, delta=dlt if dlt is not None and dlt > 0 else None)
