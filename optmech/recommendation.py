"""Which noise should I add?  The certified optimum beside every deployable mechanism, ranked.

:func:`recommend` answers a practitioner's question in one call: given the query (integer or real
answers, dimension, the sensitivity's norm and Δ), the guarantee (ε, or (ε, δ)) and the utility (a
cost of the noise: |x| in 1-D and ‖x‖ in d-D by default), it

1. solves the optimal-noise problem with :func:`optmech.drive.solve`, which certifies the optimum V*
   as a bracket [lower, upper] (a dual certificate below, an audited mechanism above);
2. lists the standard mechanisms calibrated *exactly* to the same guarantee, each with its exact
   expected cost: Laplace / discrete Laplace, the classic, analytic and discrete Gaussians, the
   truncated Laplace and the truncated discrete Laplace (double geometric) with an exact δ, the
   staircase and the discrete staircase, the rounded Tulap on ℤ, and the optimum itself;
3. gives each one's ratio to V*, *certified* from the bracket: a mechanism of cost C has
   C / upper <= C / V* <= C / lower;
4. recommends one: the optimum, unless a standard mechanism is provably within the user's tolerance
   of V* (``prefer_standard``: C <= (1 + tol) · lower, so C / V* <= 1 + tol) or costs no more than the
   optimum's own mechanism (C <= upper, so nothing is lost by deploying it).  Standard mechanisms are
   easier to audit and ship in the libraries practitioners use.

What is certified and what is not
---------------------------------
- The bracket is the solve's: both ends certified when ``certified`` is true (exit status 3 and the
  label UNCERTIFIED otherwise).
- A candidate's cost is the exact value of a closed form (or a certified enclosure: the deployed
  integer laws of :mod:`optmech.mechanisms.approx.deployed_integer`, the discrete Gaussian's tail-bounded
  sum), evaluated in floating point; the ratios widen it by ``COST_MARGIN`` (relative) on each side
  and divide with outward rounding, so ``ratio_low <= C / V* <= ratio_high`` holds whenever the
  closed form is accurate to that margin (``ratio_certified``; a reference computed numerically, such
  as a quadrature, is listed with ``ratio_certified = False``).
- Every candidate is private at the stated guarantee: references whose side conditions fail (the
  classic Gaussian's ε < 1) are left out, and each row says where its guarantee comes from.
- Single-release optimality does not imply optimality under composition: see
  :func:`recommend`'s ``compositions``.

References: [Geng13] (staircase), [GV13] (discrete and (ε, δ) laws), [BW18] (analytic Gaussian),
[CKS20] (discrete Gaussian), [GDGK20] (truncated Laplace), [AV23] (Tulap); full citations in the
README's References.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterator

from optmech.errors import SpecError
from optmech.mechanisms.base import json_value

__all__ = ["Recommendation", "recommend", "problem_for", "add_compositions", "check_compositions", "CATALOGUE", "COLUMNS", "COST_MARGIN"]

#: The finest default target gap of the V* bracket (a family's own default when coarser): a choice of
#: noise needs the ratios to about 4 digits, and on ℤ the coarse levels reach 1e-4 in under a second at
#: Δ = 100 where the exact LP (1e-9, the family's default) takes about a minute.  --target-gap asks for more.
RECOMMEND_GAP = 1e-4

#: Relative widening of a closed form's floating-point value in the certified ratios.
COST_MARGIN = 1e-12

#: The table's columns, in order (``to_frame``, ``--format csv``, the JSON rows).
COLUMNS = ("rank", "mechanism", "label", "expected_cost", "ratio_low", "ratio_high", "ratio_certified", "standard",
           "recommended", "sampler", "opendp", "guarantee", "parameters", "note")


@dataclass(frozen=True)
class Entry:
    """How a mechanism family is presented: its label, what OpenDP ships, optmech's sampler."""

    label: str
    opendp: str
    sampler: str


#: Every deployable family :func:`recommend` lists, by the reference name the solve reports.
#: ``opendp`` names the OpenDP constructor that samples this law, or says that none does (OpenDP 0.16).
CATALOGUE: dict[str, Entry] = {
    "laplace": Entry("Laplace", "make_laplace (float input)", "float"),
    "discrete_laplace": Entry("discrete Laplace (two-sided geometric)", "make_laplace (integer input)", "exact"),
    "geometric": Entry("geometric (discrete Laplace at Δ = 1)", "make_laplace (integer input)", "exact"),
    "gaussian": Entry("Gaussian, classic calibration [DR14]", "make_gaussian (float input, zCDP)", "float"),
    "analytic_gaussian": Entry("analytic Gaussian [BW18]", "make_gaussian (float input, zCDP)", "float"),
    "discrete_gaussian": Entry("discrete Gaussian [CKS20]", "make_gaussian (integer input, zCDP)", "exact"),
    "truncated_laplace": Entry("truncated Laplace, exact δ [GDGK20]", "no", "float"),
    "truncated_geometric": Entry("truncated discrete Laplace (double geometric), exact δ",
                                 "no (OpenDP issue 2375; optmech.interop.opendp.make_measurement wraps it)", "exact"),
    "truncated_geometric_nonnegative": Entry("truncated discrete Laplace moved onto ℕ, exact δ", "no", "none"),
    "rounded_tulap": Entry("rounded Tulap [AV23]", "no (make_canonical_noise is the Tulap on floats)", "none"),
    "staircase": Entry("staircase [Geng13]", "no", "float"),
    "discrete_staircase": Entry("discrete staircase [Geng13]", "no", "exact"),
    "l2_laplace": Entry("ℓ2-Laplace (density ∝ e^(-ε‖x‖₂/Δ))", "no", "float"),
    "uniform": Entry("uniform (0, δ) noise [GV13]", "no", "exact"),
}

#: The (ε, δ) integer laws of :mod:`optmech.mechanisms.approx.deployed_integer` added on ℤ in 1-D (abs, square).
#: The discrete Gaussian is among them for Δ beyond what the solve prices (its family skips it above Δ = 64).
_DEPLOYED = ("truncated_geometric", "rounded_tulap", "discrete_gaussian")


@dataclass
class Recommendation:
    """What :func:`recommend` returns: the certified bracket, the ranked candidates, the choice.

    ``rows`` are dicts with the keys of :data:`COLUMNS`, cheapest first; ``to_frame()`` gives them
    as a pandas DataFrame, ``to_dict()`` / ``to_json()`` / ``to_csv()`` as one document.
    ``mechanisms`` maps a row's ``mechanism`` name to its :class:`~optmech.mechanisms.Mechanism`
    where optmech has one (the optimum always), ready for ``sample`` or
    :func:`optmech.interop.opendp.make_measurement`.

    >>> rec = recommend(1.0, 1e-3, sensitivity=2)              # (1, 1e-3)-DP counts of sensitivity 2
    >>> rec.rows[0]["mechanism"], rec.rows[0]["ratio_low"]    # the cheapest is the optimum itself
    ('optimum', 1.0)
    >>> sorted(rec.to_dict())
    ['columns', 'notes', 'problem', 'reason', 'recommended', 'rows', 'v_star']
    >>> rec.mechanism.sample(3, rng=0).dtype.kind              # the recommended law, ready to sample
    'i'
    """

    problem: dict
    lower: float
    upper: float
    certified: bool
    status: str
    rows: list[dict]
    choice: str
    reason: str
    notes: list[str] = field(default_factory=list)
    mechanisms: dict = field(default_factory=dict, repr=False)
    result: Any = field(default=None, repr=False)
    compositions: dict | None = None
    #: what :func:`recommend` was called with (for :func:`add_compositions`)
    settings: dict = field(default_factory=dict, repr=False)

    def __iter__(self) -> Iterator[dict]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def mechanism(self):
        """The recommended mechanism's object (None when optmech has none for it)."""
        return self.mechanisms.get(self.choice)

    def to_frame(self):
        """The ranked table as a pandas DataFrame (columns :data:`COLUMNS`)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is in the test extra
            raise SpecError("to_frame() needs pandas (pip install pandas)") from exc
        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def to_dict(self) -> dict[str, Any]:
        """One JSON-safe document: problem, bracket, rows, choice, notes (and compositions)."""
        d = {
            "problem": dict(self.problem),
            "v_star": {"lower": json_value(float(self.lower)), "upper": json_value(float(self.upper)),
                       "certified": bool(self.certified), "status": self.status},
            "recommended": self.choice,
            "reason": self.reason,
            "columns": list(COLUMNS),
            "rows": [{k: _json_value(r[k]) for k in COLUMNS} for r in self.rows],
            "notes": list(self.notes),
        }
        if self.compositions is not None:
            d["compositions"] = _json_value(self.compositions)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, allow_nan=False)

    def to_csv(self) -> str:
        """The ranked table as CSV, the bracket on every row (``v_star_lower``, ``v_star_upper``)."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([*COLUMNS, "v_star_lower", "v_star_upper", "v_star_certified"])
        for r in self.rows:
            w.writerow([_csv_value(r[k]) for k in COLUMNS]
                       + [repr(float(self.lower)), repr(float(self.upper)), self.certified])
        return buf.getvalue()

    def __str__(self) -> str:
        return format_recommendation(self)


def recommend(epsilon: float, delta: float = 0.0, *, sensitivity: float = 1, domain: str | None = None,
              dim: int = 1, norm: str = "l1", cost: str | None = None, prefer_standard: float = 0.0,
              compositions: int = 1, time_limit: float | None = None, solver: str | None = None,
              target_gap: float | None = None) -> Recommendation:
    """The certified optimum and every deployable mechanism for one release, ranked by expected cost.

    Parameters
    ----------
    epsilon, delta : float
        The guarantee: ε-DP when ``delta`` is 0, (ε, δ)-DP otherwise.
    sensitivity : float
        Δ of the query in ``norm`` (an integer for integer queries).
    domain : {"integer", "nonnegative", "continuous"}, optional
        What the noise (and so the released value) takes: integers, non-negative integers ((ε, δ)
        in 1-D), or reals.  Default as ``optmech solve``: the reals for ε-DP, the integers for (ε, δ).
    dim, norm : int, str
        The query's dimension and the sensitivity's norm (``l1``, ``l2``, ``linf``) when ``dim > 1``.
    cost : str, optional
        The utility: ``abs`` (default in 1-D), ``square``, ``pow:P``, an expression; ``l1``, ``l2``,
        ``l2sq`` ... in d-D (default: the sensitivity's norm).
    prefer_standard : float
        Relative tolerance (0.01 = 1 %): recommend the cheapest standard mechanism whose cost is
        certified within ``1 + prefer_standard`` of V*.  At 0 a standard mechanism is still preferred
        when it costs no more than the optimum's own mechanism.
    compositions : int
        k > 1: also calibrate each candidate for k identical releases under the total (ε, δ), by
        privacy-loss-distribution accounting (dp_accounting; see ``Recommendation.compositions``).
    time_limit, solver, target_gap
        Passed to :func:`optmech.drive.solve`.

    Examples
    --------
    Integer counts of sensitivity 1 under ε = 1: the geometric law (= the discrete staircase at Δ = 1)
    is the optimum for |x|, so a standard mechanism is recommended:

    >>> rec = recommend(1.0, domain="integer")
    >>> rec.certified, rec.choice in ("geometric", "discrete_staircase", "discrete_laplace")
    (True, True)
    >>> round(rec.rows[0]["expected_cost"], 6)        # 2b/(1 - b²), b = 1/e
    0.850918
    """
    from optmech.drive import solve

    tol = _number("prefer_standard", prefer_standard)
    if not (0 <= tol < 10):
        raise SpecError(f"prefer_standard must be a relative tolerance in [0, 10), got {prefer_standard!r}")
    if isinstance(compositions, bool) or int(compositions) != compositions or int(compositions) < 1:
        raise SpecError(f"compositions must be a positive integer, got {compositions!r}")
    k = int(compositions)
    problem = problem_for(epsilon, delta, sensitivity=sensitivity, domain=domain, dim=dim, norm=norm, cost=cost,
                          target_gap=target_gap)
    if k > 1:
        check_compositions(problem, k)
    result = solve(problem, solver=solver, time_limit=time_limit)
    rec = _rank(problem, result, tol)
    rec.settings = {"problem": problem, "prefer_standard": tol, "solver": solver, "time_limit": time_limit, "target_gap": target_gap,
                    "domain": domain, "norm": norm, "cost": cost}
    if k > 1 and rec.status != "interrupted":
        add_compositions(rec, k)
    return rec


def problem_for(epsilon: float, delta: float = 0.0, *, sensitivity: float = 1, domain: str | None = None,
                dim: int = 1, norm: str = "l1", cost: str | None = None, target_gap: float | None = None):
    """The :class:`~optmech.spec.Problem` that :func:`recommend` solves: ε-DP when δ is 0, (ε, δ)-DP
    otherwise, with the target gap no finer than :data:`RECOMMEND_GAP` unless one is given.

    >>> problem_for(1.0, 1e-6, sensitivity=10).to_params()["privacy"], problem_for(1.0).target_gap
    ('approx', 0.0001)
    """
    from optmech.spec import Problem

    eps, dlt = _number("epsilon", epsilon), _number("delta", delta)
    privacy = "approx" if dlt > 0 else "pure"
    problem = Problem.from_params({"privacy": privacy, "epsilon": eps, "delta": dlt if privacy == "approx" else None,
                                   "sensitivity": sensitivity, "domain": domain, "dim": dim, "norm": norm,
                                   "cost": cost, "target_gap": target_gap})
    if target_gap is None and problem.target_gap < RECOMMEND_GAP:  # a choice of noise needs about 4 digits
        problem = dataclasses.replace(problem, target_gap=RECOMMEND_GAP)
    return problem


def add_compositions(rec: Recommendation, compositions: int) -> Recommendation:
    """Fill ``rec.compositions``: each candidate calibrated for ``compositions`` releases under the total
    guarantee (:mod:`optmech.recommendation_composed`).  ``recommend(..., compositions=k)`` calls it; the
    command line calls it apart, so that an interrupt during these solves keeps the finished table.

    >>> rec = recommend(1.0, sensitivity=1, domain="continuous")
    >>> rows = add_compositions(rec, 4).compositions["rows"]       # pure DP: each release at ε/4
    >>> next(r["per_release"] for r in rows if r["mechanism"] == "staircase")
    'ε_i = 0.25'
    """
    from optmech.recommendation_composed import compose_candidates

    if isinstance(compositions, bool) or int(compositions) != compositions or int(compositions) < 1:
        raise SpecError(f"compositions must be a positive integer, got {compositions!r}")
    k = int(compositions)
    problem = rec.settings.get("problem")
    if problem is None:
        raise SpecError("add_compositions needs the Recommendation returned by recommend()")
    check_compositions(problem, k)
    cfg = rec.settings
    share = None
    if rec.problem["privacy"] == "pure":  # pure ε-DP composes exactly: each release at ε/k
        share = recommend(rec.problem["epsilon"] / k, 0.0, sensitivity=problem.sensitivity, domain=cfg["domain"],
                          dim=problem.dim, norm=cfg["norm"], cost=cfg["cost"], prefer_standard=cfg["prefer_standard"],
                          time_limit=cfg["time_limit"], solver=cfg["solver"], target_gap=cfg["target_gap"])
    rec.compositions = compose_candidates(problem, rec, k, solver=cfg["solver"], time_limit=cfg["time_limit"],
                                          at_share=share)
    rec.notes = [n for n in rec.notes if "(see --compositions)" not in n]  # the table's own note says it
    return rec


# ---------------------------------------------------------------------------------------------------------
# the ranking


def _rank(problem, result, tol: float) -> Recommendation:
    lower, upper = float(result.lower_bound), float(result.upper_bound)
    rows: list[dict] = []
    mechanisms: dict = {}
    notes: list[str] = []
    spec = problem.to_params()
    integer = spec["domain"] != "continuous"
    seen: set[str] = set()
    for ref in result.references:
        if ref.name not in CATALOGUE or ref.kind == "lower" or ref.valid is False or ref.name in seen:
            continue
        if ref.name == "uniform" and problem.epsilon > 0:  # (0, δ) noise is listed where ε = 0 only
            continue
        value = float(ref.value)
        if not math.isfinite(value):
            continue
        seen.add(ref.name)
        parameters = {k: v for k, v in ref.parameters.items() if isinstance(v, (int, float, str, bool))}
        mech = _reference_mechanism(problem, ref.name, parameters)
        if mech is not None:
            mechanisms[ref.name] = mech
        rows.append(_row(ref.name, CATALOGUE[ref.name], value, value, bool(ref.exact), parameters,
                         _guarantee(problem), ref.note, lower, upper, mech))
    if spec["privacy"] == "approx" and problem.dim == 1 and spec["domain"] == "integer":
        added = _deployed_rows(problem, lower, upper, seen, mechanisms)
        if added is None:
            notes.append("the truncated discrete Laplace and the rounded Tulap are costed for |x| and x² only: "
                         "not listed for this cost")
        else:
            rows.extend(added)
    opt = result.mechanism
    if opt is not None and math.isfinite(upper):
        mechanisms["optimum"] = opt
        rows.append({
            "mechanism": "optimum", "label": "the optimum (optmech's audited LP mechanism)",
            "expected_cost": upper, "ratio_low": 1.0,
            "ratio_high": _div_up(upper, lower) if lower > 0 else math.inf,
            "ratio_certified": bool(result.certified), "standard": False,
            "sampler": _sampler_kind(opt),
            "opendp": "optmech.interop.opendp.make_measurement (user measurement)",
            "guarantee": _optimum_guarantee(opt, problem), "parameters": {"kind": opt.name},
            "note": "the upper end of the certified bracket: its cost is certified, its privacy audited",
        })
    rows.sort(key=lambda r: (r["expected_cost"], not r["standard"]))
    for i, r in enumerate(rows, 1):
        r["rank"] = i
    choice, reason = _choose(rows, lower, upper, tol, bool(result.certified))
    for r in rows:
        r["recommended"] = r["mechanism"] == choice
    if not integer:
        notes.append("real-valued noise: release the float; OpenDP's make_laplace/make_gaussian sample a discretised "
                     "law on a grid whose step you choose, and optmech's exact samplers draw cell masses exactly")
    notes.append("single-release optimality does not imply optimality under composition (see --compositions)")
    summary = {"privacy": spec["privacy"], "epsilon": problem.epsilon, "delta": spec.get("delta") or 0.0,
               "sensitivity": problem.sensitivity, "domain": spec["domain"], "dim": problem.dim,
               "norm": problem.norm if problem.dim > 1 else "abs", "cost": str(spec.get("cost"))}
    return Recommendation(summary, lower, upper, bool(result.certified), str(getattr(result.status, "value",
                          result.status)), rows, choice, reason, notes, mechanisms, result)


def _choose(rows: list[dict], lower: float, upper: float, tol: float, certified: bool) -> tuple[str, str]:
    """The optimum unless a standard mechanism is certified within ``tol`` of V* or costs no more than it."""
    bound = max((1.0 + tol) * lower, upper) if certified else -math.inf
    for r in rows:
        if r["standard"] and r["ratio_certified"] and r["expected_cost"] <= bound * (1 + COST_MARGIN):
            if r["expected_cost"] <= upper * (1 + COST_MARGIN):  # no more, up to the closed form's rounding
                why = (f"{r['mechanism']} costs no more than the optimum's mechanism ({_g(r['expected_cost'])} <= "
                       f"{_g(upper)}), and standard mechanisms are easier to audit")
            else:
                why = (f"{r['mechanism']} is certified within {_pct(tol)} of V* (ratio <= {_g(r['ratio_high'])}); "
                       f"--prefer-standard {_pct(tol)} prefers it to the optimum")
            return r["mechanism"], why
    if not certified:
        return "optimum", "the optimum's mechanism (the bracket is NOT certified: read the status)"
    best_std = next((r for r in rows if r["standard"]), None)
    if best_std is None:
        return "optimum", "no standard mechanism applies to this problem"
    return "optimum", (f"the best standard mechanism ({best_std['mechanism']}) costs {_g(best_std['ratio_low'])}x "
                       f"V* or more; raise --prefer-standard to accept a standard mechanism within a tolerance")


def _row(name: str, entry: Entry, cost_lo: float, cost_hi: float, exact: bool, parameters: dict, guarantee: str,
         note: str, lower: float, upper: float, mech) -> dict:
    sampler = entry.sampler
    if mech is not None and entry.sampler != "none":
        sampler = _sampler_kind(mech)
    lo_c = cost_lo * (1 - COST_MARGIN)
    hi_c = cost_hi * (1 + COST_MARGIN)
    return {
        "mechanism": name, "label": entry.label, "expected_cost": cost_hi,
        "ratio_low": max(1.0, _div_down(lo_c, upper)) if upper > 0 else math.inf,
        "ratio_high": _div_up(hi_c, lower) if lower > 0 else math.inf,
        "ratio_certified": bool(exact), "standard": True, "sampler": sampler, "opendp": entry.opendp,
        "guarantee": guarantee, "parameters": parameters, "note": note,
    }


def _deployed_rows(problem, lower: float, upper: float, seen: set[str], mechanisms: dict) -> list[dict] | None:
    """The truncated discrete Laplace and the rounded Tulap, calibrated to (ε, δ) exactly, with their
    certified cost enclosures (:mod:`optmech.mechanisms.approx.deployed_integer`)."""
    from optmech.mechanisms.approx.deployed_integer import deployed_laws

    cost = problem.cost.canonical if hasattr(problem.cost, "canonical") else None
    if cost not in ("abs", "square") or not float(problem.sensitivity).is_integer():
        return None
    if not 0.0 < problem.epsilon <= 30.0 or not 0.0 < problem.privacy.delta < 0.5:
        return []  # the deployed laws are calibrated for 0 < ε <= 30 and 0 < δ < 1/2 (at ε = 0 only (0, δ) laws apply)
    names = tuple(n for n in _DEPLOYED if n not in seen)
    laws = deployed_laws(problem.epsilon, problem.privacy.delta, int(problem.sensitivity), names=names)
    out = []
    for name, law in laws.items():
        if not law.private:
            continue
        lo, hi = law.cost(cost)
        parameters = {k: v for k, v in law.parameters.items() if isinstance(v, (int, float))}
        guarantee = f"({_g(problem.epsilon)}, {_g(problem.privacy.delta)})-DP; δ(ε) <= {_g(law.delta_bound)} certified"
        mech = None
        if name == "truncated_geometric":
            from optmech.mechanisms import TruncatedDiscreteLaplace

            mech = TruncatedDiscreteLaplace(epsilon=problem.epsilon, sensitivity=int(problem.sensitivity),
                                            half_width=int(law.parameters["T"]))
            mechanisms[name] = mech
        elif name == "discrete_gaussian":
            from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian

            try:
                mech = DiscreteGaussian(sigma=law.parameters["sigma"], epsilon=problem.epsilon,
                                        sensitivity=int(problem.sensitivity))
                mechanisms[name] = mech
            except SpecError:
                mech = None
        out.append(_row(name, CATALOGUE[name], lo, hi, True, parameters, guarantee, law.note, lower, upper, mech))
    return out


def _reference_mechanism(problem, name: str, parameters: dict):
    """The mechanism object of a reference where optmech has one (None otherwise, or when shifted)."""
    if parameters.get("shift", 0) not in (0, 0.0):
        return None
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase, Geometric, Laplace, Staircase

    eps, sens = problem.epsilon, problem.sensitivity
    delta = getattr(problem.privacy, "delta", 0.0)
    try:
        if problem.dim == 1:
            if name == "laplace":
                return Laplace(epsilon=eps, sensitivity=sens)
            if name == "discrete_laplace":
                return DiscreteLaplace(epsilon=eps, sensitivity=int(sens))
            if name == "geometric":
                return Geometric(epsilon=eps)
            if name == "staircase" and "gamma" in parameters:
                return Staircase(epsilon=eps, sensitivity=sens, gamma=parameters["gamma"])
            if name == "discrete_staircase" and "r" in parameters:
                return DiscreteStaircase(epsilon=eps, sensitivity=int(sens), r=int(parameters["r"]))
            if name in ("gaussian", "analytic_gaussian") and "sigma" in parameters:
                from optmech.mechanisms.approx.gaussian import Gaussian

                return Gaussian(sigma=parameters["sigma"], epsilon=eps, delta=delta, sensitivity=sens)
            if name == "discrete_gaussian" and "sigma" in parameters:
                from optmech.mechanisms.approx.discrete_gaussian import DiscreteGaussian

                return DiscreteGaussian(sigma=parameters["sigma"], epsilon=eps, delta=delta, sensitivity=int(sens))
            if name == "uniform":
                from optmech.mechanisms import Uniform, UniformContinuous

                if problem.to_params()["domain"] == "continuous":
                    return UniformContinuous(delta=delta, sensitivity=sens)
                return Uniform(delta=delta, sensitivity=int(sens))
            if name == "truncated_laplace":
                from optmech.mechanisms.approx.truncated import TruncatedLaplace

                return TruncatedLaplace(epsilon=eps, delta=delta, sensitivity=sens)
        elif name == "l2_laplace":
            from optmech.mechanisms import L2Laplace

            return L2Laplace(epsilon=eps, sensitivity=sens, dim=problem.dim)
        elif name in ("gaussian", "analytic_gaussian") and "sigma" in parameters:
            from optmech.mechanisms import GaussianND

            return GaussianND(sigma=parameters["sigma"], epsilon=eps,
                              sensitivity=parameters.get("l2_sensitivity", sens), dim=problem.dim)
    except (SpecError, ValueError, TypeError):
        return None
    return None


# ---------------------------------------------------------------------------------------------------------
# compositions


def check_compositions(problem, k: int) -> None:
    """Refuse, with one line, a composition table this module cannot account (before any solve).

    >>> from optmech.spec import Problem
    >>> check_compositions(Problem.from_params({"privacy": "pure", "epsilon": 1}), 3) is None
    True
    """
    if problem.dim != 1:
        raise SpecError("--compositions is accounted in 1-D only (dp_accounting's privacy loss distributions)")
    if k > 10_000:
        raise SpecError(f"--compositions must be at most 10000, got {k}")
    import importlib.util

    if importlib.util.find_spec("dp_accounting") is None:
        raise SpecError("--compositions needs dp_accounting (pip install optmech[interop])")


# ---------------------------------------------------------------------------------------------------------
# text


def format_recommendation(rec: Recommendation) -> str:
    """The readable report: the problem, the bracket, the ranked table, the recommendation."""
    p = rec.problem
    guarantee = (f"ε = {_g(p['epsilon'])}" if p["privacy"] == "pure"
                 else f"(ε, δ) = ({_g(p['epsilon'])}, {_g(p['delta'])})")
    where = {"integer": "ℤ", "nonnegative": "ℕ", "continuous": "ℝ"}[p["domain"]]
    if p["dim"] > 1:
        where += f"^{p['dim']} (sensitivity in {p['norm']})"
    label = "certified" if rec.certified else "UNCERTIFIED"
    lines = [f"optmech recommend — {guarantee}, Δ = {_g(p['sensitivity'])}, noise on {where}, cost {p['cost']}",
             f"  V* bracket ({label})  [{_g(rec.lower, 12)}, {_g(rec.upper, 12)}]   status {rec.status}",
             f"  recommended          {rec.choice}: {rec.reason}", ""]
    head = ("#", "mechanism", "E cost", "ratio to V*", "sampler", "OpenDP", "parameters")
    body = []
    for r in rec.rows:
        ratio = (f"[{_g(r['ratio_low'], 6)}, {_g(r['ratio_high'], 6)}]" if r["ratio_certified"]
                 else f"~{_g(r['ratio_high'], 6)} (not certified)")
        params = ", ".join(f"{k}={_g(v, 6) if isinstance(v, float) else v}" for k, v in r["parameters"].items()
                           if k not in ("shift",) or v)
        mark = "*" if r["recommended"] else " "
        body.append((f"{r['rank']}{mark}", r["mechanism"], _g(r["expected_cost"], 10), ratio, r["sampler"],
                     r["opendp"].split(" (")[0], params))
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    widths[-1] = len(head[-1])
    lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
    for b in body:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(b, widths)).rstrip())
    lines.append("  (* = recommended; ratio to V*: certified interval from the bracket)")
    if rec.compositions is not None:
        lines.append("")
        lines.extend(format_compositions(rec.compositions))
    lines.append("")
    lines.extend(f"  note: {n}" for n in rec.notes)
    return "\n".join(lines)


def format_compositions(comp: dict) -> list[str]:
    """The composition table's lines (``Recommendation.compositions``)."""
    how = ("each release at ε/k (pure DP composes exactly)" if comp["delta"] == 0 else
           "accounted with privacy loss distributions (dp_accounting, pessimistic)")
    out = [f"  {comp['compositions']} compositions under a total (ε, δ) = ({_g(comp['epsilon'])}, "
           f"{_g(comp['delta'])}), {how}:"]
    for r in comp["rows"]:
        if r.get("error"):
            out.append(f"    {r['mechanism']:<22} {r['error']}")
            continue
        out.append(f"    {r['mechanism']:<22} per release {r['per_release']:<28} E cost {_g(r['expected_cost'], 8):<14} "
                   f"composed δ {_g(r['composed_delta'], 4)}")
    out.append(f"  best under composition: {comp['best']}")
    out.extend(f"  note: {n}" for n in comp.get("notes", []))
    return out


# ---------------------------------------------------------------------------------------------------------
# small helpers


def _sampler_kind(mech) -> str:
    """``exact`` when the law's class supplies an exact sampler (the base class refuses), else ``float``."""
    from optmech.mechanisms.base import Mechanism

    return "exact" if type(mech)._exact_sampler is not Mechanism._exact_sampler else "float"


def _guarantee(problem) -> str:
    if not getattr(problem.privacy, "delta", 0):
        return f"{_g(problem.epsilon)}-DP"
    return f"({_g(problem.epsilon)}, {_g(problem.privacy.delta)})-DP"


def _optimum_guarantee(mech, problem) -> str:
    try:
        p = mech.privacy()
    except Exception:  # noqa: BLE001 - a law without an audit record still has the solve's guarantee
        return _guarantee(problem) + " (audited by the solve)"
    if p.notion == "pure":
        return f"{_g(p.epsilon)}-DP (audited)"
    return f"({_g(p.epsilon)}, {_g(p.delta)})-DP (audited)"


def _number(name: str, value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise SpecError(f"{name} must be finite, got {value!r}")
    return x


def _div_up(a: float, b: float) -> float:
    return math.nextafter(a / b, math.inf)


def _div_down(a: float, b: float) -> float:
    return math.nextafter(a / b, -math.inf)


def _g(x, digits: int = 6) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    return f"{x:.{digits}g}"


def _pct(tol: float) -> str:
    return f"{tol * 100:g}%"


def _json_value(v):
    """JSON-safe nested values: dicts and lists recursively, scalars by :func:`optmech.mechanisms.base.json_value`."""
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if v is None or isinstance(v, (bool, str, int, float)) or hasattr(v, "item"):
        return json_value(v)
    return str(v)


def _csv_value(v) -> str:
    if isinstance(v, dict):
        return json.dumps(_json_value(v), sort_keys=True)
    if isinstance(v, float):
        return repr(v)
    return str(v)
