"""optmech on the continuous domain: certified gap and time for |x| and x² at Δ = 1.

For each cost in {abs, square} and ε in {0.1, 1, 5, 10}, solve with ``Continuous()`` (automatic
resolution) and ``target_gap=1e-4``, no ``time_limit`` (the natural time is measured); the target
is a certified relative gap <= 1e-4 within 10 s per case.  The closed-form staircase value
[Geng13, Thm 2.5, 2.7] from ``r.references`` is reported with optmech's ``inside_bracket`` flag
and a recomputed side (it is the true optimum, so it must lie inside).

No baseline; through the harness (``benchmarks/harness.py``: an untimed warm-up solve, then the
timed ``optmech.solve`` in a fresh process per repeat, the median of ``--repeats``)::

    python -m benchmarks.harness run benchmarks/bench_continuous.py [--repeats 3] [--only "abs, ε 1"]
    python benchmarks/bench_continuous.py [same options]                  # the same

Cases ``<cost>, ε <ε>``.  Parameters (``--set KEY=VALUE``): ``delta`` (1), ``target_gap`` (1e-4),
``resolution`` (null: automatic), ``time_limit`` (null), ``limit`` (10 s, the target).  Results:
``benchmarks/results/bench_continuous.jsonl``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import rel_distance_to_bracket, result_summary  # noqa: E402
from harness import add_case, main  # noqa: E402

COSTS = ["abs", "square"]
EPSILONS = [0.1, 1.0, 5.0, 10.0]


def warm() -> None:
    """Untimed: a small integer solve (loads the solver)."""
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import IntegerLattice, Problem, PureDP

    optmech.solve(Problem(privacy=PureDP(1.0), cost=parse_cost("abs"), sensitivity=2, domain=IntegerLattice()))


def continuous_case(cost: str, epsilon: float, delta: float, target_gap: float, resolution: int | None,
                    time_limit: float | None, limit: float) -> dict:
    """One continuous solve: bracket, gap, LP, the staircase reference and the targets."""
    import optmech
    from optmech.costs import parse_cost
    from optmech.spec import Continuous, Problem, PureDP

    problem = Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=delta,
                      domain=Continuous(resolution=resolution), target_gap=target_gap)
    r = optmech.solve(problem, time_limit=time_limit)
    out = result_summary(r)
    refs = [{"name": ref.name, "value": float(ref.value), "inside_bracket": bool(ref.inside_bracket),
             "exact": bool(getattr(ref, "exact", True))} for ref in r.references]
    stair = next((dict(ref) for ref in refs if ref["name"] == "staircase"), None)
    if stair is not None:
        stair["rel_distance"], stair["side"] = rel_distance_to_bracket(stair["value"], out["lower_bound"],
                                                                       out["upper_bound"])
    pass_gap = bool(out["certified"]) and out["relative_gap"] <= target_gap
    pass_time = out["seconds"] <= limit
    note = f"gap ≤ {target_gap:g} ({'met' if pass_gap else 'NOT met'}) in ≤ {limit:g} s " \
        f"({'met' if pass_time else 'NOT met'})"
    if stair is not None:
        note += f"; staircase {stair['value']:.10g} {stair['side']}" + \
            ("" if stair["inside_bracket"] else " (optmech: OUTSIDE)")
    return {**out, "references": refs, "staircase": stair, "pass_gap": pass_gap, "pass_time": pass_time,
            "passed": pass_gap and pass_time, "note": note}


for _cost in COSTS:
    for _eps in EPSILONS:
        add_case(continuous_case, f"{_cost}, ε {_eps:g}", warmup=warm, timeout=300.0,
                 params={"cost": _cost, "epsilon": _eps, "delta": 1.0, "target_gap": 1e-4, "resolution": None,
                         "time_limit": None, "limit": 10.0})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
