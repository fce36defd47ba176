"""The one engine against the code it replaced: every README benchmark's optmech solves, timed on
this tree and on a baseline checkout in the same run.

Each case is one ``optmech.solve`` (or, for the baseline's Lipschitz and Wasserstein families, the
old ``solve_lipschitz``/``solve_wasserstein``) in a fresh ``python`` subprocess with ``PYTHONPATH``
pointing at the tree being measured; the two trees alternate and each case is repeated
``--repeats`` times (median).  Reported: seconds on each tree, the ratio new/baseline, and both
certified brackets (they must agree to the target gap).  Target: no case slower than 1.10×.

    git worktree add /tmp/optmech-base <commit>
    .venv/bin/python benchmarks/bench_engine.py --baseline /tmp/optmech-base
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO_ROOT, RESULTS_DIR, markdown_table, metadata, write_json  # noqa: E402

ASYM = "where(x > 0, x, 2*abs(x))"

#: name -> (kind, parameters): the optmech solves behind the README's benchmark table
CASES: dict[str, tuple[str, dict]] = {
    "naive: Δ 50, asymmetric, ℤ": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=50, domain="integer")),
    "naive: Δ 50, |x|, ℤ": ("cost", dict(privacy="pure", epsilon=1.0, cost="abs", sensitivity=50, domain="integer")),
    "scale: Δ 1000, general": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=1000, domain="integer",
                                            target_gap=1e-8, symmetry="off")),
    "scale: Δ 3000, general": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=3000, domain="integer",
                                            target_gap=1e-8, symmetry="off")),
    "scale: Δ 1e6, |x|": ("cost", dict(privacy="pure", epsilon=1.0, cost="abs", sensitivity=10**6, domain="integer",
                                       target_gap=1e-8)),
    "continuous: |x|, ε 0.1": ("cost", dict(privacy="pure", epsilon=0.1, cost="abs", domain="continuous")),
    "continuous: x², ε 10": ("cost", dict(privacy="pure", epsilon=10.0, cost="square", domain="continuous")),
    "continuous: asymmetric, ε 1, gap 1e-3": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, domain="continuous",
                                                          target_gap=1e-3)),
    "(ε,δ): Δ 16, ε 0.1, δ 0.01": ("cost", dict(privacy="approx", epsilon=0.1, delta=0.01, cost="abs", sensitivity=16,
                                                 domain="integer")),
    "(ε,δ): Δ 5, ε 1, δ 0.05, ℓ2": ("cost", dict(privacy="approx", epsilon=1.0, delta=0.05, cost="square", sensitivity=5,
                                                 domain="integer")),
    "(ε,δ): ℤ², Δ 2, ε 0.5, δ 0.05": ("cost", dict(privacy="approx", epsilon=0.5, delta=0.05, cost="l1", sensitivity=2,
                                                    domain="integer", dim=2)),
    "ℤ³, ℓ1, Δ 4, ε 2": ("cost", dict(privacy="pure", epsilon=2.0, cost="l1", sensitivity=4, domain="integer", dim=3)),
    "ℝ², ℓ1, n 4, ε 1": ("cost", dict(privacy="pure", epsilon=1.0, cost="l1", sensitivity=1, domain="continuous", dim=2,
                                      resolution=4)),
    "W1: Poisson(5), m 15, ε 2": ("wasserstein", dict(input="poisson:5:0:30", epsilon=2.0, sensitivity=15)),
    "W1: Poisson(20), m 30, ε 1": ("wasserstein", dict(input="poisson:20:0:60", epsilon=1.0, sensitivity=30)),
    "Lipschitz: ℝ, |x|": ("lipschitz", dict(epsilon=1.0, cost="abs", domain="continuous")),
    "Lipschitz: ℝ², l2sq radial, n 40": ("lipschitz", dict(epsilon=1.0, cost="l2sq", dim=2, norm="l2",
                                                           domain="continuous", resolution=40)),
}

CHILD = r"""
import json, sys, time
kind, params = sys.argv[1], json.loads(sys.argv[2])
import optmech
t0 = time.perf_counter()
if kind == "cost":
    from optmech.spec import Problem, PureDP, ApproxDP, IntegerLattice, Continuous
    p = dict(params)
    privacy = ApproxDP(p.pop("epsilon"), p.pop("delta")) if p.pop("privacy") == "approx" else PureDP(p.pop("epsilon"))
    dom = p.pop("domain")
    domain = IntegerLattice() if dom == "integer" else Continuous(p.pop("resolution", None))
    problem = Problem(privacy=privacy, cost=p.pop("cost"), domain=domain, **p)
    optmech.solve(Problem(privacy=privacy, cost="abs", sensitivity=1, domain=IntegerLattice()))  # warm the imports
    t0 = time.perf_counter()
    r = optmech.solve(problem)
elif kind == "wasserstein":
    from optmech.inputs import parse_input_spec
    try:
        from optmech.drive import solve_wasserstein
    except ImportError:
        from optmech.solve_wasserstein import solve_wasserstein
    inp = parse_input_spec(params["input"])
    solve_wasserstein(inp, params["epsilon"], 2, target_gap=1e-3)
    t0 = time.perf_counter()
    r = solve_wasserstein(inp, params["epsilon"], params["sensitivity"])
else:
    try:
        from optmech.drive import solve_lipschitz
    except ImportError:
        from optmech.solve_lipschitz import solve_lipschitz
    p = dict(params)
    solve_lipschitz(1.0, "abs")
    t0 = time.perf_counter()
    r = solve_lipschitz(p.pop("epsilon"), p.pop("cost"), **p)
print(json.dumps({"seconds": time.perf_counter() - t0, "lower": r.lower_bound, "upper": r.upper_bound,
                  "certified": r.certified, "status": str(r.status), "gap": r.relative_gap}))
"""


def run_case(tree: Path, kind: str, params: dict, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, kind, json.dumps(params)], capture_output=True, text=True,
                             env=env, timeout=timeout, cwd=str(tree))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:g} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="a checkout of the code to compare with (e.g. a git worktree)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cases", default=None, help="comma-separated substrings of case names")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--json", default=str(RESULTS_DIR / "engine.json"))
    args = ap.parse_args()
    base = Path(args.baseline).resolve()
    cases = {k: v for k, v in CASES.items()
             if args.cases is None or any(s.strip() in k for s in args.cases.split(","))}
    rows, records = [], []
    for name, (kind, params) in cases.items():
        times: dict[str, list[float]] = {"new": [], "base": []}
        last: dict[str, dict] = {}
        for i in range(args.repeats):
            order = (("new", REPO_ROOT), ("base", base)) if i % 2 == 0 else (("base", base), ("new", REPO_ROOT))
            for tag, tree in order:
                res = run_case(tree, kind, params, args.timeout)
                last[tag] = res
                if "seconds" in res:
                    times[tag].append(res["seconds"])
        tn = statistics.median(times["new"]) if times["new"] else float("nan")
        tb = statistics.median(times["base"]) if times["base"] else float("nan")
        ratio = tn / tb if tb > 0 else float("nan")
        n, b = last.get("new", {}), last.get("base", {})
        rows.append([name, f"{tb:.3g}", f"{tn:.3g}", f"{ratio:.2f}",
                     f"[{b.get('lower', float('nan')):.10g}, {b.get('upper', float('nan')):.10g}]" if "lower" in b
                     else b.get("error", "?"),
                     f"[{n.get('lower', float('nan')):.10g}, {n.get('upper', float('nan')):.10g}]" if "lower" in n
                     else n.get("error", "?")])
        records.append({"case": name, "kind": kind, "params": params, "seconds_baseline": times["base"],
                        "seconds_new": times["new"], "ratio_new_over_baseline": ratio, "baseline": b, "new": n})
        print(f"{name}: baseline {tb:.3g} s, new {tn:.3g} s, ratio {ratio:.2f}", flush=True)
    print()
    print(markdown_table(["case", "baseline s", "new s", "new/baseline", "baseline bracket", "new bracket"], rows))
    write_json(Path(args.json), {"meta": metadata(), "baseline": str(base), "cases": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
