"""The structured interior-point method (optmech.solvers.hockey_ipm) against HiGHS on the same (ε, δ) LPs on ℤ.

Two kinds of cases:

* ``LP ε E δ D Δ K``: the per-point LP with edge rows and every shift (window Δ(n + 1) + Δ, as the loop's
  first exact step), solved by ``hockey_ipm`` against HiGHS's dual simplex at tight tolerances (the default
  profile's attempt for this LP) in the same run; each side reports the objective and the *certified* lower
  bound of its duals (:func:`optmech.certify.dual_lower_bound`);
* ``solve ε E δ D Δ K (structured)``: ``optmech.solve`` with the profile ``structured`` against the profile
  ``default`` (same tree, same run) under a time limit: the certified gap reached and the time taken.

    python -m benchmarks.harness run benchmarks/bench_hockey_ipm.py --repeats 1                 # ≈15 min
    python -m benchmarks.harness run benchmarks/bench_hockey_ipm.py --repeats 1 --only "LP ε 1 δ 0.01 Δ 32"
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import result_summary  # noqa: E402
from harness import add_case, against, main  # noqa: E402

#: (ε, δ, Δ) of the LP cases
LP_CASES = [(1.0, 0.01, 32), (1.0, 0.01, 64), (0.1, 0.01, 32), (0.1, 0.01, 64), (1.0, 1e-6, 32)]
#: (ε, δ, Δ, time limit) of the solve cases
SOLVE_CASES = [(1.0, 0.01, 64, 120.0), (1.0, 0.01, 128, 150.0), (1.0, 1e-6, 100, 120.0), (0.1, 0.01, 64, 120.0)]


def _lp(epsilon: float, delta: float, sensitivity: int):
    import numpy as np

    from optmech.costs import as_cost
    from optmech.mechanisms.approx.bounds import thm8_n
    from optmech.problems.approx import build_approx

    n = thm8_n(epsilon, delta)
    N = int(math.ceil(sensitivity * (n + 1))) + sensitivity
    alp = build_approx(as_cost("abs"), epsilon, delta, sensitivity, N,
                       keep_shifts=np.arange(1, sensitivity + 1)[:, None], edge_rows=True)
    scale = 2.0 ** math.ceil(math.log2(2 * alp.R + 1))
    lp = dataclasses.replace(alp.lp, meta=dict(alp.lp.meta, solve_scale=scale, builder="hockey_stick"))
    return lp


def _lp_result(lp, sol) -> dict:
    from optmech.certify import dual_lower_bound

    lower = dual_lower_bound(lp, sol.row_dual).value
    gap = (sol.objective - lower) / abs(sol.objective)
    return {"objective": sol.objective, "certified_lower": lower, "relative_gap": gap, "iterations": sol.iterations,
            "rows": lp.rows, "cols": lp.cols,
            "note": f"{sol.backend}: objective {sol.objective:.12g}, duals certify {lower:.12g} (gap {gap:.1e}), "
                    f"{sol.iterations} iterations, {lp.rows} rows"}


def lp_ipm(epsilon: float, delta: float, sensitivity: int) -> dict:
    from optmech.solvers import get_backend

    lp = _lp(epsilon, delta, sensitivity)
    return _lp_result(lp, get_backend("hockey_ipm").solve(lp, {}))


def lp_simplex(epsilon: float, delta: float, sensitivity: int) -> dict:
    from optmech.solvers import get_backend

    lp = _lp(epsilon, delta, sensitivity)
    sol = get_backend("highs").solve(lp, {"solver": "simplex", "presolve": "on", "primal_feasibility_tolerance": 1e-10,
                                          "dual_feasibility_tolerance": 1e-10})
    return _lp_result(lp, sol)


def _solve(epsilon: float, delta: float, sensitivity: int, time_limit: float, solver: str) -> dict:
    import optmech
    from optmech.spec import Problem

    p = Problem.from_params({"privacy": "approx", "epsilon": epsilon, "delta": delta, "sensitivity": sensitivity,
                             "domain": "integer", "cost": "abs", "target_gap": 1e-8})
    r = optmech.solve(p, time_limit=time_limit, solver=solver)
    out = result_summary(r)
    out["note"] = f"{r.status}, gap {r.relative_gap:.2g} in {r.seconds:.3g} s ({r.lp.get('solver')})"
    return out


def solve_structured(epsilon: float, delta: float, sensitivity: int, time_limit: float) -> dict:
    return _solve(epsilon, delta, sensitivity, time_limit, "structured")


def solve_default(epsilon: float, delta: float, sensitivity: int, time_limit: float) -> dict:
    return _solve(epsilon, delta, sensitivity, time_limit, "default")


def warmup(**_) -> None:
    lp_ipm(1.0, 0.01, 4)
    lp_simplex(1.0, 0.01, 4)


for _eps, _dlt, _D in LP_CASES:
    add_case(lp_ipm, f"LP ε {_eps:g} δ {_dlt:g} Δ {_D}", params=dict(epsilon=_eps, delta=_dlt, sensitivity=_D),
             baseline=against(lp_simplex, label="HiGHS dual simplex", warmup=warmup), warmup=warmup, timeout=900)
for _eps, _dlt, _D, _limit in SOLVE_CASES:
    add_case(solve_structured, f"solve ε {_eps:g} δ {_dlt:g} Δ {_D}, {_limit:g} s (structured)",
             params=dict(epsilon=_eps, delta=_dlt, sensitivity=_D, time_limit=_limit),
             baseline=against(solve_default, label="profile default", warmup=warmup), warmup=warmup,
             timeout=_limit + 240)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
