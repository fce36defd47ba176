"""General costs on ℝ (asymmetric, non-monotone, ε = 1): the certified gap reached within 10 s.

Each cost is solved with ``Continuous()`` (automatic resolution), ``target_gap=1e-6`` and
``time_limit=10``, after an untimed warm-up solve at gap 1e-2, on this tree and on a baseline
commit in the same run (``benchmarks/harness.py``: a fresh process per repeat, the trees
alternating, the median of ``--repeats``).  Target (issue 23): a certified relative gap <= 1e-6
within 10 s.  The |x| row (``symmetry="off"``, the general path) must contain the closed-form
staircase value [Geng13, Thm 2.4] (its note says whether it does).

    python -m benchmarks.harness run benchmarks/bench_general_real.py --baseline-commit <sha> [--repeats 3]
    python benchmarks/bench_general_real.py [same options]          # the same

Parameters (``--set KEY=VALUE``): ``epsilon`` (1), ``target_gap`` (1e-6), ``time_limit`` (10 s).
Results: ``benchmarks/results/bench_general_real.jsonl``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import COMMIT, add_case, main  # noqa: E402

COSTS = {
    "asymmetric": "where(x > 0, x, 2*abs(x))",
    "asymmetric square": "where(x > 0, x*x, 2*x*x)",
    "non-monotone (two basins)": "min(abs(x), 0.5*abs(x - 3) + 1)",
    "non-monotone (smooth)": "exp(-x*x) + 0.1*abs(x)",
    "|x| (general path)": "abs",
}


def _problem(cost: str, epsilon: float, gap: float) -> object:
    from optmech.costs import parse_cost
    from optmech.spec import Continuous, Problem, PureDP

    return Problem(privacy=PureDP(epsilon), cost=parse_cost(cost), sensitivity=1.0, domain=Continuous(),
                   target_gap=gap, symmetry="off")


def warm(cost: str, epsilon: float) -> None:
    """Untimed: the same cost at gap 1e-2 (imports, solver start-up)."""
    import optmech

    optmech.solve(_problem(cost, epsilon, 1e-2))


def general_real(cost: str, epsilon: float, target_gap: float, time_limit: float) -> dict:
    """The timed solve: bracket, gap, cells per period of each LP, the solver, the staircase check."""
    import optmech

    r = optmech.solve(_problem(cost, epsilon, target_gap), time_limit=time_limit)
    stair = [ref for ref in r.references if ref.name == "staircase" and getattr(ref, "exact", True)]
    cells = [h["size"].get("cells_per_period") for h in r.history]
    met = bool(r.certified) and r.relative_gap <= target_gap and r.seconds <= time_limit
    note = f"gap ≤ {target_gap:g} in ≤ {time_limit:g} s: {'met' if met else 'NOT met'}; cells " + \
        "→".join(str(c) for c in cells)
    if stair:
        note += f"; staircase V* {stair[0].value:.9g} " + ("inside" if stair[0].inside_bracket else "OUTSIDE")
    return {"lower": r.lower_bound, "upper": r.upper_bound, "gap": r.relative_gap, "certified": bool(r.certified),
            "status": str(r.status), "solve_seconds": r.seconds, "cells_per_period": cells,
            "solver": r.lp.get("solver"), "lps": len(r.history),
            "staircase": stair[0].value if stair else None,
            "staircase_inside": stair[0].inside_bracket if stair else None, "passed": met, "note": note}


for _name, _cost in COSTS.items():
    add_case(general_real, _name, baseline=COMMIT, warmup=warm,
             params={"cost": _cost, "epsilon": 1.0, "target_gap": 1e-6, "time_limit": 10.0})


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
