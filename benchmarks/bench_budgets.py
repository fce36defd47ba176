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

Run ``python benchmarks/bench_budgets.py`` (≈6 min; ``--quick`` ≈1 min); writes
``benchmarks/results/budgets.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS_DIR, fmt, markdown_table, run_measured, write_json  # noqa: E402

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


def memory_rows(cases, env) -> list[dict]:
    rows = []
    for label, args, limit in cases:
        r = run_child([*args, "--time-limit", str(limit)], env)
        res = r["result"] or {}
        lp = res.get("lp", {})
        budget = lp.get("budget", {})
        big = max(res.get("history", []), key=lambda h: h["lp"]["nonzeros"], default={"lp": lp})["lp"]
        est = budget.get("estimated_peak_bytes")
        rows.append({"case": label, "args": args, "time_limit": limit, "rc": r["rc"], "status": res.get("status"),
                     "builder_estimated": budget.get("builder"), "builder_ran": lp.get("builder"),
                     "rows": big.get("rows"), "cols": big.get("cols"), "nonzeros": big.get("nonzeros"),
                     "estimate_bytes": est, "peak_bytes": r["peak_bytes"], "wall": r["wall"],
                     "ratio": r["peak_bytes"] / est if est else None, "stderr": r["stderr"][:200]})
        print(f"  {label}: peak {r['peak_bytes'] / 2**20:.0f} MiB, estimate "
              f"{(est or 0) / 2**20:.0f} MiB, {r['wall']:.1f} s", flush=True)
    return rows


def time_rows(cases, env, startup: float) -> list[dict]:
    rows = []
    for label, args, limit in cases:
        e = dict(env or os.environ)
        if label.endswith("*"):  # past the default memory budget: the time limit is what is measured
            e["OPTMECH_MAX_MEMORY_GB"] = "1000"
        r = run_child([*args, "--time-limit", str(limit)], e)
        res = r["result"]
        margin = max(1.0, 0.1 * limit)
        rows.append({"case": label, "time_limit": limit, "wall": r["wall"], "over": r["wall"] - limit - startup,
                     "ratio": r["wall"] / limit, "margin": margin, "within": r["wall"] <= limit + margin + startup,
                     "rc": r["rc"], "status": res.get("status") if res else None,
                     "outcome": (f"[{fmt(res['lower_bound'], '.4g')}, {fmt(res['upper_bound'], '.4g')}] {res['status']}"
                                 if res else r["stderr"][:90]),
                     "seconds_in_solve": res.get("seconds") if res else None})
        print(f"  {label} T={limit}: wall {r['wall']:.1f} s, exit {r['rc']}", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few cases of each table (≈1 min)")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-time", action="store_true")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "budgets.json")
    a = ap.parse_args(argv)
    startup = min(startup_seconds() for _ in range(3))
    print(f"interpreter start-up, imports and output (a tiny solve's wall minus its seconds): {startup:.2f} s")
    payload: dict = {"startup_seconds": startup}
    if not a.skip_memory:
        mem = memory_rows(QUICK_MEMORY if a.quick else MEMORY, None)
        payload["memory"] = mem
        print("\nMemory: estimated peak (lp.budget) against the measured peak RSS of the child\n")
        print(markdown_table(
            ["case", "builder (est / ran)", "rows", "nonzeros", "estimate MiB", "peak MiB", "peak/est", "exit", "status"],
            [[m["case"], f"{m['builder_estimated']} / {m['builder_ran']}", m["rows"], m["nonzeros"],
              fmt((m["estimate_bytes"] or 0) / 2**20, ".0f"), fmt(m["peak_bytes"] / 2**20, ".0f"),
              fmt(m["ratio"], ".2f"), m["rc"], m["status"]] for m in mem]))
    if not a.skip_time:
        tim = time_rows(QUICK_TIME if a.quick else TIME, None, startup)
        payload["time"] = tim
        print(f"\nTime: --time-limit T against the child's wall time (start-up {startup:.2f} s included; over = "
              "wall − T − start-up; * = OPTMECH_MAX_MEMORY_GB=1000)\n")
        print(markdown_table(
            ["case", "limit s", "wall s", "wall/limit", "over s", "within T + max(1 s, 10%) + start-up", "exit",
             "outcome"],
            [[t["case"], fmt(t["time_limit"], "g"), fmt(t["wall"], ".2f"), fmt(t["ratio"], ".2f"),
              fmt(t["over"], "+.2f"), "yes" if t["within"] else "NO", t["rc"], t["outcome"]] for t in tim]))
    path = write_json(a.json, payload)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
