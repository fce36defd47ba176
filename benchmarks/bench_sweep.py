"""``optmech run`` sweeps: serial, local processes and a Dask cluster on the same 48 problems.

The sweep is 3 asymmetric costs × 4 ε × 4 Δ on the integer domain (pure DP, general builder;
each problem takes ≈0.1–1 s serially).  It is run three ways through
:func:`optmech.sweep.run_sweep`, each into a fresh temporary SQLite store:

* ``serial``: ``workers=1`` (in this process, no pool);
* ``processes``: ``workers=N`` (a ``ProcessPoolExecutor`` with the spawn start method);
* ``dask``: ``scheduler=`` the address of a ``LocalCluster`` with N worker processes (one thread
  each) on 127.0.0.1.

Times are wall time around ``run_sweep``: worker start-up (spawn + importing optmech) is included
for ``processes``; for ``dask`` the client's connection and the workers' first import are
included but the cluster's own start-up is not (it is reported separately: a cluster is started
once and serves many sweeps).  The serial run follows an untimed warm-up solve, so it does not
pay the import.  The three stores must hold the same keys with identical brackets.

Run ``python benchmarks/bench_sweep.py``; writes ``benchmarks/results/sweep.json``.  Not run in
a child process per case like the other benchmarks: both pools start processes of their own,
which a daemonic child may not.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST, RESULTS_DIR, fmt, markdown_table, write_json  # noqa: E402

COSTS = [ASYMMETRIC_COST, "where(x > 0, x, 3*abs(x))", "where(x > 0, x**2, 2*x**2)"]
EPSILONS = [0.5, 1.0, 1.5, 2.0]
SENSITIVITIES = [100, 150, 200, 300]


def spec_dict() -> dict:
    return {
        "name": "bench-sweep",
        "description": "48 integer-domain pure-DP problems with asymmetric costs",
        "problem": {"privacy": "pure", "domain": "integer"},
        "grid": {"cost": COSTS, "epsilon": EPSILONS, "sensitivity": SENSITIVITIES},
    }


def store_rows(path: Path) -> dict:
    """key -> (lower_bound, upper_bound, certified, seconds) of every stored problem."""
    with sqlite3.connect(path) as c:
        return {k: (lo, up, cert, sec) for k, lo, up, cert, sec in
                c.execute("SELECT key, lower_bound, upper_bound, certified, seconds FROM results")}


def run_mode(mode: str, spec, store: Path, workers: int, scheduler: str | None) -> dict:
    from optmech.sweep import run_sweep

    t0 = time.perf_counter()
    if mode == "serial":
        out = run_sweep(spec, str(store), workers=1)
    elif mode == "processes":
        out = run_sweep(spec, str(store), workers=workers)
    else:
        out = run_sweep(spec, str(store), scheduler=scheduler)
    wall = time.perf_counter() - t0
    rows = store_rows(store)
    return {"mode": mode, "wall_s": wall, "computed": out.computed, "failed": out.failed,
            "errors": out.errors[:5], "stored": len(rows),
            "solve_seconds_sum": sum(r[3] or 0.0 for r in rows.values()),
            "solve_seconds_min": min((r[3] for r in rows.values() if r[3] is not None), default=None),
            "solve_seconds_max": max((r[3] for r in rows.values() if r[3] is not None), default=None),
            "certified": sum(1 for r in rows.values() if r[2]), "_rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--workers", type=int, default=2, help="local processes / Dask worker processes")
    ap.add_argument("--repeats", type=int, default=1, help="runs per mode (fresh store each); the median is reported")
    ap.add_argument("--modes", default="serial,processes,dask", help="comma-separated subset of the modes")
    ap.add_argument("--json", type=Path, default=RESULTS_DIR / "sweep.json")
    args = ap.parse_args(argv)

    __import__("optmech.drive")  # warm the imports before timing
    from optmech.sweep import parse_spec, run_job

    spec = parse_spec(spec_dict())
    assert len(spec.problems) == 48, len(spec.problems)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    run_job({"epsilon": 1.0, "domain": "integer", "cost": ASYMMETRIC_COST, "sensitivity": 2})  # warm-up

    cluster = None
    cluster_start_s = None
    if "dask" in modes:
        try:
            from dask.distributed import LocalCluster
        except ImportError:
            print("dask.distributed is not installed: skipping the dask mode (pip install 'optmech[dask]')")
            modes.remove("dask")
        else:
            t0 = time.perf_counter()
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None)
            cluster_start_s = time.perf_counter() - t0

    runs: dict[str, list[dict]] = {m: [] for m in modes}
    try:
        with tempfile.TemporaryDirectory(prefix="optmech-bench-sweep-") as tmp:
            for rep in range(args.repeats):
                for mode in modes:
                    store = Path(tmp) / f"{mode}-{rep}.sqlite"
                    print(f"  {mode} (run {rep + 1}/{args.repeats}) …", end="", flush=True)
                    try:
                        res = run_mode(mode, spec, store, args.workers,
                                       cluster.scheduler_address if cluster is not None else None)
                        res["ok"] = res["failed"] == 0 and res["stored"] == len(spec.problems)
                        print(f" {res['wall_s']:.2f} s")
                    except Exception as exc:  # noqa: BLE001 - reported, the other modes carry on
                        res = {"mode": mode, "ok": False, "error": f"{type(exc).__name__}: {exc}", "_rows": {}}
                        print(f" failed: {res['error']}")
                    runs[mode].append(res)
    finally:
        if cluster is not None:
            cluster.close()

    # agreement: same keys and identical brackets in every store
    ref_rows = next((r["_rows"] for m in modes for r in runs[m] if r["_rows"]), {})
    agreement = []
    for m in modes:
        for r in runs[m]:
            rows = r["_rows"]
            same_keys = set(rows) == set(ref_rows)
            diff = max((max(abs(rows[k][0] - ref_rows[k][0]), abs(rows[k][1] - ref_rows[k][1]))
                        for k in set(rows) & set(ref_rows)), default=float("nan"))
            agreement.append({"mode": m, "same_keys": same_keys, "max_abs_bound_diff": diff})
    all_agree = bool(agreement) and all(a["same_keys"] and a["max_abs_bound_diff"] == 0.0 for a in agreement)

    def median_wall(m: str) -> float | None:
        ws = [r["wall_s"] for r in runs[m] if r.get("ok")]
        return statistics.median(ws) if ws else None

    serial = median_wall("serial") if "serial" in modes else None
    n = len(spec.problems)
    table_rows, summary = [], []
    for m in modes:
        w = median_wall(m)
        ok_runs = [r for r in runs[m] if r.get("ok")]
        solve_sum = statistics.median(r["solve_seconds_sum"] for r in ok_runs) if ok_runs else None
        speedup = serial / w if (serial and w) else None
        label = {"serial": "serial (workers=1)", "processes": f"local processes (workers={args.workers})",
                 "dask": f"Dask LocalCluster ({args.workers} worker processes)"}[m]
        table_rows.append([label, fmt(w, ".2f"), fmt(n / w if w else None, ".2f"), fmt(speedup, ".2f"),
                           fmt(solve_sum, ".2f"), f"{ok_runs[0]['certified']}/{n}" if ok_runs else "—",
                           "yes" if ok_runs else (runs[m][0].get("error") or "failed")])
        summary.append({"mode": m, "label": label, "wall_s_median": w, "throughput_per_s": n / w if w else None,
                        "speedup_vs_serial": speedup, "solve_seconds_sum": solve_sum})

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print()
    print(f"48-problem sweep ({len(COSTS)} costs × {len(EPSILONS)} ε × {len(SENSITIVITIES)} Δ), "
          f"cpu_count={os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in load) if load else '—'}")
    if cluster_start_s is not None:
        print(f"Dask LocalCluster start-up (not in the dask time): {cluster_start_s:.2f} s")
    print()
    print(markdown_table(["mode", "wall s", "problems/s", "speedup vs serial", "Σ solve s", "certified", "ok"],
                         table_rows))
    print()
    for m in modes:
        ok_runs = [r for r in runs[m] if r.get("ok")]
        if ok_runs:
            print(f"{m}: per-problem solve time {ok_runs[0]['solve_seconds_min']:.3f}–"
                  f"{ok_runs[0]['solve_seconds_max']:.3f} s")
    print(f"stores agree (same keys, identical lower/upper bounds): {'yes' if all_agree else 'NO'}")

    for m in modes:
        for r in runs[m]:
            r.pop("_rows", None)
    path = write_json(args.json, {
        "benchmark": "sweep", "problems": n, "costs": COSTS, "epsilons": EPSILONS, "sensitivities": SENSITIVITIES,
        "workers": args.workers, "repeats": args.repeats, "dask_cluster_start_s": cluster_start_s,
        "summary": summary, "runs": runs, "agreement": agreement, "all_agree": all_agree,
    })
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
