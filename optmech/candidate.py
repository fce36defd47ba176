"""Conjecture mode: a candidate mechanism's exact cost against the certified lower bound.

``optmech solve ... --candidate staircase|layered|laplace|FILE.json`` answers "is this mechanism optimal for
my cost and sensitivity?": the certified lower bound of the full LP (no radial or other assumption)
is set against the candidate's exact expected cost.  The candidate must itself be feasible (its
``privacy()`` must cover the problem's ε, Δ and norm); its cost comes from closed forms or exact
series of :mod:`optmech.mechanisms`.

* ``staircase``: the best member of the staircase family for the cost (continuous staircase [Geng13,
  Thm 2.4], discrete staircase [Geng13, Thm 2.13], the ℓ1 lattice staircase on ℤ^d, and on ℝ^d the
  staircase in the sensitivity's own norm, :class:`~optmech.mechanisms.staircase_nd.StaircaseND`);
* ``layered``: the best mechanism constant on ℓ1 shells (lattice spheres, or shells of width
  Δ/resolution), from the shell LP of :mod:`optmech.problems.pure_nd`: its value is the audited
  upper end of that LP's own certified bracket;
* ``laplace``: Laplace / discrete Laplace (i.i.d. per coordinate in d-D);
* ``FILE.json``: a mechanism written by ``optmech solve --save`` or ``Mechanism.to_dict()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optmech.errors import SpecError

__all__ = ["prepare_candidate", "evaluate_candidate", "CANDIDATES"]

CANDIDATES = ("staircase", "laplace")


def _mechanism(problem, spec: str):
    from optmech.mechanisms.factory import make_mechanism
    from optmech.spec import IntegerLattice

    integer = isinstance(problem.domain, IntegerLattice)
    d, norm, eps = problem.dim, problem.norm, problem.epsilon
    if spec == "layered":
        if d < 2 or norm != "l1":
            raise SpecError("the layered candidate (the l1-shell LP) needs --dim >= 2 and --norm l1")
        if not integer and getattr(problem.cost, "kind", problem.cost) not in ("l1", "l2sq"):
            raise SpecError("the layered candidate on the continuous domain takes the costs l1 and l2sq")
        return None  # solved after the main LP (see evaluate_candidate)
    if spec in CANDIDATES:
        if d > 1 and norm != "l1":
            if spec == "staircase" and not integer:  # the staircase in the sensitivity's own norm
                from optmech.mechanisms.staircase_nd import StaircaseND

                cost = problem.cost if isinstance(problem.cost, str) else problem.cost.spec
                return StaircaseND.optimal(cost, epsilon=eps, sensitivity=problem.sensitivity, dim=d, norm=norm)
            if spec == "staircase":
                raise SpecError(f"the lattice staircase candidate is defined for l1 sensitivity, not {norm} (on R^d "
                                "the staircase in any norm is: --domain continuous)")
            c = d if norm == "linf" else math.sqrt(d)
            return make_mechanism("discrete_laplace", epsilon=eps / c, sensitivity=int(problem.sensitivity), dim=d)[0]
        fam = {"staircase": "discrete_staircase" if integer else "staircase",
               "laplace": "discrete_laplace" if integer else "laplace"}[spec]
        cost = problem.cost if isinstance(problem.cost, str) else problem.cost.spec
        return make_mechanism(fam, epsilon=eps, sensitivity=problem.sensitivity, dim=d,
                              cost=cost if fam in ("staircase", "discrete_staircase") else None)[0]
    if not spec.lower().endswith(".json"):
        raise SpecError(f"--candidate must be staircase, laplace, layered or a FILE.json, got {spec!r}")
    from optmech.mechanisms.files import load_mechanism_file

    mech = load_mechanism_file(spec)
    if mech.dim != d:
        raise SpecError(f"the candidate in {spec} has dim {mech.dim}, the problem has dim {d}")
    if mech.lattice != integer:
        raise SpecError(f"the candidate in {spec} is {'a lattice' if mech.lattice else 'a continuous'} law; the problem is not")
    return mech


def prepare_candidate(problem, spec: str):
    """The candidate mechanism, checked to be feasible for ``problem`` (SpecError otherwise)."""
    mech = _mechanism(problem, spec)
    if mech is None:
        return None
    priv = mech.privacy()
    norm_ok = priv.norm in ("abs", problem.norm) or problem.dim == 1
    if priv.notion != "pure" or not (priv.epsilon <= problem.epsilon * (1 + 1e-12)) or not norm_ok \
            or not (float(priv.sensitivity) >= float(problem.sensitivity)):
        raise SpecError(f"the candidate {mech.name} guarantees {priv.notion} DP with epsilon={priv.epsilon:.12g}, sensitivity "
                        f"{priv.sensitivity} ({priv.norm}); the problem needs pure epsilon={problem.epsilon:.12g}, sensitivity "
                        f"{problem.sensitivity:g} ({problem.norm})")
    return mech


def evaluate_candidate(problem, result, spec: str, mech=None) -> dict:
    """``{name, value, gap_to_lower_bound, optimal_within_certificate, ...}`` for ``spec``."""
    if spec == "layered":
        return _layered(problem, result)
    mech = prepare_candidate(problem, spec) if mech is None else mech
    cost = problem.cost
    value = float(mech.expected_cost(cost if isinstance(cost, str) else cost))
    lo = result.lower_bound
    gap = (value - lo) / value if value > 0 and math.isfinite(lo) else math.inf
    return {
        "name": mech.name if spec in CANDIDATES else spec,
        "value": value,
        "gap_to_lower_bound": max(gap, 0.0) if math.isfinite(gap) else None,
        "optimal_within_certificate": bool(result.certified and gap <= problem.target_gap),
        "inside_bracket": bool(result.certified and lo * (1 - 1e-12) <= value <= result.upper_bound * (1 + 1e-9)),
        "parameters": {k: v for k, v in mech.to_dict().items() if k not in ("name",) and not isinstance(v, list)},
        "note": ("the candidate's exact cost against the certified lower bound of the full LP: optimal within the "
                 f"certificate when (value - lower_bound)/value <= target gap {problem.target_gap:g}"),
    }


def _layered(problem, result) -> dict:
    """The layered candidate: the shell LP's certified bracket; its value is the audited mechanism's cost."""
    lb = solve_layered(problem)
    value, lo = lb.upper, result.lower_bound
    gap = (value - lo) / value if value > 0 and math.isfinite(lo) and math.isfinite(value) else math.inf
    return {
        "name": "layered",
        "value": value,
        "gap_to_lower_bound": max(gap, 0.0) if math.isfinite(gap) else None,
        "optimal_within_certificate": bool(result.certified and lb.certified and gap <= problem.target_gap),
        "inside_bracket": bool(result.certified and lb.certified and lo * (1 - 1e-12) <= value <= result.upper_bound * (1 + 1e-9)),
        "parameters": {"shells": lb.shells, "shell_width": lb.cell_width, "layered_lower_bound": lb.lower,
                       "layered_status": lb.status, "seconds": lb.seconds},
        "note": ("the best density constant on l1 shells (the shell LP [Geng13, §3.2]); value = the "
                 "audited upper end of its certified bracket [layered_lower_bound, value], set against the certified "
                 "lower bound of the full LP"),
    }


@dataclass(frozen=True)
class LayeredBracket:
    """The best layered (ℓ1-shell) mechanism: its certified bracket and the audited mechanism."""

    lower: float
    upper: float
    certified: bool
    status: str
    message: str
    shells: int
    masses: np.ndarray | None  # per point of each shell (lattice) or per unit h^d (continuous)
    cell_width: float
    seconds: float


def solve_layered(problem, *, solver: str | None = None, time_limit: float | None = None) -> LayeredBracket:
    """The ℓ1-layer LP [Geng13, §3.2]: the best layered mechanism, certified both ways, through the
    one loop (:func:`optmech.loop.run`) with the pure d-D family in its layered variant.

    Its upper end is the exact, audited cost of a layered ε-DP mechanism, hence an upper bound on
    the problem's optimum; the lower end bounds every layered mechanism (not V* itself).
    """
    from optmech.families.pure_nd import PureNDFamily
    from optmech.loop import make_context, run

    ctx = make_context(solver, time_limit)
    family = PureNDFamily(problem, ctx, layered=True)
    r = run(family, ctx, family.s.gap)
    up = r.best.upper
    return LayeredBracket(r.best.lower, r.best.upper_value, r.best.certified, r.status, r.message,
                          r.last.built.model.support.R + 1, up.masses if up is not None else None, family.s.h,
                          r.seconds)
