"""Budgets that are promises: the memory estimate against the measured peak, the time limit
against the measured wall time.

Every case runs ``python -m optmech solve ... --json`` in a child process, as a user would, and
reads that child's own peak resident set (``_common.run_measured``, through a bare launcher:
``ru_maxrss`` is inherited across ``fork`` and ``exec``) and the wall time around it
(interpreter start-up included).

* **memory**: ``estimate`` is ``lp.budget.estimated_peak_bytes`` of the JSON output (the
  process's estimated peak, imports included, of the largest LP the solve built), ``peak`` the
  measured maximum resident set; ``peak/est`` must stay <= 1.  The builder the estimate named
  (``lp.budget.builder``) is printed beside the builder that ran (``lp.builder``).
* **time**: ``--time-limit T`` on problems that need longer; ``wall`` is the child's wall time,
  ``over`` = wall − T − start-up, and the next column says whether wall <= T + max(1 s, 10 % of T)
  + start-up (the start-up: a tiny solve's wall time minus the seconds it reports).

Through the harness (``benchmarks/harness.py``), no baseline: one case per row, ``memory: <label>``
and ``time: <label>, T <limit>``; the ``--quick`` subsets are the cases whose names the former
``QUICK_*`` lists picked (``--only`` them).  Each time case measures the start-up first (the
minimum over 3 tiny solves, in the same call), then the solve with its limit; its note says
``within`` or ``NOT within``.  A memory case's note gives ``peak/est`` (must stay <= 1).  Results:
``benchmarks/results/bench_budgets.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_budgets.py --repeats 1 [--only memory] [--only time]
    python benchmarks/bench_budgets.py --repeats 1 --only "time: general Δ=2000, T 2"   # ≈10 s
    python benchmarks/bench_budgets.py [same options]            # the same
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, run_measured  # noqa: E402
from harness import add_case, main  # noqa: E402

EXPR = "abs(x-3)+0.1*x**2"  # asymmetric and non-monotone: the general 1-D builder
ASYM = "where(x > 0, x, 2*abs(x))"

#: (label, solve arguments, time limit): memory cases, each a finished solve or one stopped by its limit.
MEMORY = [
    ("general Δ=1000", ["--sensitivity", "1000", "--domain", "integer", "--cost", EXPR], 120),
    ("general Δ=3000", ["--sensitivity", "3000", "--domain", "integer", "--cost", EXPR], 120),
    ("general Δ=4000", ["--sensitivity", "4000", "--domain", "integer", "--cost", EXPR], 150),
    ("general Δ=10000", ["--sensitivity", "10000", "--domain", "integer", "--cost", EXPR], 120),
    ("general cells", ["--sensitivity", "1", "--cost", ASYM], 60),
    ("periodic Δ=10^6", ["--sensitivity", "1000000", "--domain", "integer", "--cost", "abs"], 120),
    ("approx Δ=30 δ=1e-6", ["--privacy", "approx", "--delta", "1e-6", "--sensitivity", "30", "--cost", "abs"], 120),
    ("approx Δ=60 δ=1e-6", ["--privacy", "approx", "--delta", "1e-6", "--sensitivity", "60", "--cost", "abs"], 300),
    ("pure 2-D Δ=4", ["--dim", "2", "--cost", "l1", "--domain", "integer", "--sensitivity", "4"], 120),
    ("approx on ℝ δ=1e-6", ["--privacy", "approx", "--delta", "1e-6", "--domain", "continuous", "--cost", "square"], 60),
    ("approx on ℝ² ℓ2", ["--privacy", "approx", "--delta", "1e-3", "--dim", "2", "--norm", "l2", "--domain",
                         "continuous", "--cost", "l2"], 120),
    ("pure 2-D weighted", ["--dim", "2", "--cost", "abs(x1)+2*abs(x2)", "--domain", "integer", "--sensitivity", "3"], 120),
    ("lipschitz", ["--privacy", "lipschitz", "--cost", "square", "--resolution", "500"], 60),
    ("wasserstein m=4", ["--utility", "wasserstein", "--input", "poisson:20:0:80", "--sensitivity", "4"], 60),
]
QUICK_MEMORY = [MEMORY[0], MEMORY[1], MEMORY[4], MEMORY[6], MEMORY[8], MEMORY[10], MEMORY[13]]

#: (label, solve arguments, time limit): problems that need longer than their limit.
TIME = [
    ("general Δ=10000", ["--sensitivity", "10000", "--domain", "integer", "--cost", EXPR], 5),
    ("general Δ=10000", ["--sensitivity", "10000", "--domain", "integer", "--cost", EXPR], 20),
    ("general Δ=2000", ["--sensitivity", "2000", "--domain", "integer", "--cost", EXPR], 2),
    ("general Δ=2000", ["--sensitivity", "2000", "--domain", "integer", "--cost", EXPR], 5),
    ("general Δ=3000", ["--sensitivity", "3000", "--domain", "integer", "--cost", EXPR], 10),
    ("general Δ=100000*", ["--sensitivity", "100000", "--domain", "integer", "--cost", EXPR], 1),
    ("general Δ=100000*", ["--sensitivity", "100000", "--domain", "integer", "--cost", EXPR], 5),
    ("general Δ=100000*", ["--sensitivity", "100000", "--domain", "integer", "--cost", EXPR], 60),
    ("general cells", ["--sensitivity", "1", "--cost", ASYM], 3),
    ("general cells", ["--sensitivity", "1", "--cost", ASYM], 10),
    ("general cells", ["--sensitivity", "1", "--cost", ASYM], 30),
    ("approx Δ=20 δ=1e-4", ["--privacy", "approx", "--delta", "1e-4", "--sensitivity", "20", "--cost", "abs"], 2),
    ("approx Δ=20 δ=1e-4", ["--privacy", "approx", "--delta", "1e-4", "--sensitivity", "20", "--cost", "abs"], 5),
    ("approx Δ=60 δ=1e-6", ["--privacy", "approx", "--delta", "1e-6", "--sensitivity", "60", "--cost", "abs"], 30),
    ("pure 2-D Δ=4", ["--dim", "2", "--cost", "l1", "--domain", "integer", "--sensitivity", "4"], 5),
    ("pure 2-D Δ=4", ["--dim", "2", "--cost", "l1", "--domain", "integer", "--sensitivity", "4"], 10),
    ("pure 3-D Δ=3", ["--dim", "3", "--cost", "l1", "--domain", "integer", "--sensitivity", "3"], 10),
    ("approx on ℝ² ℓ2", ["--privacy", "approx", "--delta", "1e-3", "--dim", "2", "--norm", "l2", "--domain",
                         "continuous", "--cost", "l2"], 20),
    ("lipschitz", ["--privacy", "lipschitz", "--cost", "square", "--resolution", "500"], 5),
    ("lipschitz", ["--privacy", "lipschitz", "--cost", "square", "--resolution", "500"], 20),
]
QUICK_TIME = [TIME[0], TIME[3], TIME[5], TIME[8], TIME[12]]


def run_child(args: list[str], env: dict | None = None, timeout: float = 900.0) -> dict:
    """``python -m optmech solve ARGS --json`` in a child: exit status, wall time, peak RSS, JSON."""
    r = run_measured(["-m", "optmech", "solve", "--epsilon", "1", *args, "--json"], env, timeout)
    try:
        res = json.loads(r["stdout"]) if r["stdout"].strip() else None
    except json.JSONDecodeError:
        res = None
    return {"rc": r["rc"], "wall": r["wall"], "peak_bytes": r["peak_bytes"], "result": res,
            "stderr": r["stderr"].strip()}


def startup_seconds() -> float:
    """Wall time of a tiny solve minus the time the solve itself reports (``seconds``, from the
    start of the solve to its Result): the interpreter's start-up, the imports and the output."""
    r = run_child(["--sensitivity", "1", "--domain", "integer", "--cost", "abs"])
    return r["wall"] - r["result"]["seconds"]


def memory_case(args: list[str], time_limit: float) -> dict:
    """One memory row: the estimate (``lp.budget``) against the child's measured peak RSS."""
    r = run_child([*args, "--time-limit", str(time_limit)])
    res = r["result"] or {}
    lp = res.get("lp", {})
    budget = lp.get("budget", {})
    big = max(res.get("history", []), key=lambda h: h["lp"]["nonzeros"], default={"lp": lp})["lp"]
    est = budget.get("estimated_peak_bytes")
    ratio = r["peak_bytes"] / est if est else None
    note = (f"peak {r['peak_bytes'] / 2**20:.0f} MiB / est {(est or 0) / 2**20:.0f} MiB = {fmt(ratio, '.2f')}"
            f" ({'<= 1' if ratio is not None and ratio <= 1 else 'OVER the estimate' if ratio else 'no estimate'});"
            f" builder {budget.get('builder')} / {lp.get('builder')}; exit {r['rc']}, {res.get('status')}")
    return {"args": args, "time_limit": time_limit, "rc": r["rc"], "status": res.get("status"),
            "builder_estimated": budget.get("builder"), "builder_ran": lp.get("builder"),
            "rows": big.get("rows"), "cols": big.get("cols"), "nonzeros": big.get("nonzeros"),
            "estimate_bytes": est, "peak_bytes": r["peak_bytes"], "wall": r["wall"],
            "ratio": ratio, "stderr": r["stderr"][:200], "note": note}


def time_case(args: list[str], time_limit: float, label: str) -> dict:
    """One time row: the child's wall time against ``--time-limit`` (+ max(1 s, 10 %) + start-up)."""
    startup = min(startup_seconds() for _ in range(3))
    e = dict(os.environ)
    if label.endswith("*"):  # past the default memory budget: the time limit is what is measured
        e["OPTMECH_MAX_MEMORY_GB"] = "1000"
    r = run_child([*args, "--time-limit", str(time_limit)], e)
    res = r["result"]
    margin = max(1.0, 0.1 * time_limit)
    within = r["wall"] <= time_limit + margin + startup
    outcome = (f"[{fmt(res['lower_bound'], '.4g')}, {fmt(res['upper_bound'], '.4g')}] {res['status']}"
               if res else r["stderr"][:90])
    note = (f"wall {r['wall']:.2f} s, over {r['wall'] - time_limit - startup:+.2f} s (start-up {startup:.2f} s): "
            f"{'within' if within else 'NOT within'} T + max(1 s, 10%) + start-up; exit {r['rc']}; {outcome}")
    return {"time_limit": time_limit, "wall": r["wall"], "startup_seconds": startup,
            "over": r["wall"] - time_limit - startup, "ratio": r["wall"] / time_limit, "margin": margin,
            "within": within, "rc": r["rc"], "status": res.get("status") if res else None, "outcome": outcome,
            "seconds_in_solve": res.get("seconds") if res else None, "note": note}


for _label, _args, _limit in MEMORY:
    add_case(memory_case, f"memory: {_label}", params={"args": _args, "time_limit": _limit}, timeout=900.0)
for _label, _args, _limit in TIME:
    add_case(time_case, f"time: {_label}, T {_limit:g}", params={"args": _args, "time_limit": _limit, "label": _label},
             timeout=900.0)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
