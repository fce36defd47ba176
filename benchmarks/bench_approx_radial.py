"""(ε, δ) on ℝ^d with ℓ2 sensitivity and the costs l2, l2sq (issue 38): the radial path against the baseline.

Each case is ``optmech.solve`` under a 60 s time limit (the issue's budget) by this checkout and, against
:data:`harness.COMMIT` (``--baseline-commit SHA``), by that tree in the same run: before the radial path the
baseline ran the cube-cell LPs for d <= 3, answered [0, the best closed form] beyond, and refused d > 8.
Recorded: the certified bracket, its relative gap (the table's gap column), the seconds, and in the note the
analytic Gaussian's cost against the bracket, i.e. the certified range of its ratio to V*
(cost/upper <= cost/V* <= cost/lower).

Cases: d ∈ {2, 3, 5, 10, 100} × {l2, l2sq} × δ ∈ {1e-3, 1e-6} at ε = 1, and ε ∈ {0.5, 2, 4} at d = 10, l2,
δ = 1e-3.  Results: ``benchmarks/results/bench_approx_radial.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_approx_radial.py --baseline-commit <sha> --repeats 1   # ≈20 min
    python -m benchmarks.harness run benchmarks/bench_approx_radial.py --repeats 1 --only "d 10 l2 ε 1 δ 0.001"
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import result_summary  # noqa: E402
from harness import COMMIT, add_case, main  # noqa: E402

#: (d, cost, ε, δ)
CASES = ([(d, cost, 1.0, delta) for d in (2, 3, 5, 10, 100) for cost in ("l2", "l2sq") for delta in (1e-3, 1e-6)]
         + [(10, "l2", eps, 1e-3) for eps in (0.5, 2.0, 4.0)])
TIME_LIMIT = 60.0


def solve(dim: int, cost: str, epsilon: float, delta: float, time_limit: float = TIME_LIMIT) -> dict:
    import optmech
    from optmech.spec import Problem

    p = Problem.from_params({"privacy": "approx", "epsilon": epsilon, "delta": delta, "sensitivity": 1, "dim": dim,
                             "norm": "l2", "domain": "continuous", "cost": cost})
    r = optmech.solve(p, time_limit=time_limit)
    out = result_summary(r)
    out.update(lower_bound=r.lower_bound, upper_bound=r.upper_bound)
    gauss = next((x.value for x in r.references if x.name == "analytic_gaussian" and x.valid), math.nan)
    lo_ratio = gauss / r.upper_bound if r.upper_bound > 0 else math.nan
    hi_ratio = gauss / r.lower_bound if r.lower_bound > 0 else math.inf
    out.update(gaussian=gauss, gaussian_ratio_low=lo_ratio, gaussian_ratio_high=hi_ratio)
    out["note"] = (f"[{r.lower_bound:.5g}, {r.upper_bound:.5g}] {r.status} in {r.seconds:.3g} s; analytic Gaussian "
                   f"{gauss:.5g}: {lo_ratio:.4g} <= Gaussian/V* <= {hi_ratio:.4g}")
    return out


def warmup(**_) -> None:
    solve(2, "l2", 1.0, 1e-2, time_limit=5.0)


for _d, _cost, _eps, _delta in CASES:
    add_case(solve, f"d {_d} {_cost} ε {_eps:g} δ {_delta:g}",
             params=dict(dim=_d, cost=_cost, epsilon=_eps, delta=_delta), baseline=COMMIT, warmup=warmup,
             timeout=TIME_LIMIT + 240)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
