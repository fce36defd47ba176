"""``optmech run`` sweeps: serial, local processes and a Dask cluster on the same 48 problems.

The sweep is 3 asymmetric costs × 4 ε × 4 Δ on the integer domain (pure DP, general builder;
each problem takes ≈0.1–1 s serially).  It is run three ways through
:func:`optmech.sweep.run_sweep`, each into a fresh temporary SQLite store:

* ``serial``: ``workers=1`` (in the timed process, no pool);
* ``processes``: ``workers=N`` (a ``ProcessPoolExecutor`` with the spawn start method);
* ``dask``: ``scheduler=`` the address of a ``LocalCluster`` with N worker processes (one thread
  each) on 127.0.0.1.

Through the harness (``benchmarks/harness.py``): each repeat of each side runs in a fresh
process (a plain subprocess, not a daemonic one, so both pools may start processes of their own)
after an untimed warm-up (the imports and one solve at Δ = 2; for ``dask`` also the start of the
``LocalCluster``, whose seconds are recorded as ``cluster_start_s`` and not timed: a cluster is
started once and serves many sweeps).  The timed call is ``run_sweep`` (plus reading the store
back): worker start-up (spawn + importing optmech) is included for ``processes``; for ``dask`` the
client's connection and the workers' first import are included.  Cases:

* ``serial``: no baseline;
* ``processes (workers=N)`` and ``dask (N workers)``: the serial sweep as the callable baseline,
  timed in the same run, so the ratio is parallel/serial (the inverse of the former "speedup vs
  serial").  The baseline also checks that the two stores hold the same keys with identical
  brackets (the solves are deterministic) and says so in the note.

``--set workers=N`` (default 2) sets the pool size; ``--repeats`` as for every harness file (the
former default was 1).  Without ``dask.distributed`` installed (``pip install 'optmech[dask]'``)
the ``dask`` case is recorded as failed with the ``ImportError`` (the former runner skipped it).
Results: ``benchmarks/results/bench_sweep.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_sweep.py --repeats 3 [--only processes]
    python benchmarks/bench_sweep.py [same options]              # the same
"""

from __future__ import annotations

import atexit
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ASYMMETRIC_COST  # noqa: E402
from harness import against, case, main  # noqa: E402

COSTS = [ASYMMETRIC_COST, "where(x > 0, x, 3*abs(x))", "where(x > 0, x**2, 2*x**2)"]
EPSILONS = [0.5, 1.0, 1.5, 2.0]
SENSITIVITIES = [100, 150, 200, 300]
WORKERS = 2

#: The Dask cluster the warm-up started (one per process; closed when the process exits).
_CLUSTER: dict = {}


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


def run_mode(mode: str, workers: int = WORKERS, scheduler: str | None = None) -> dict:
    """One sweep of the 48 problems into a fresh temporary store; what the store holds afterwards."""
    from optmech.sweep import parse_spec, run_sweep

    spec = parse_spec(spec_dict())
    with tempfile.TemporaryDirectory(prefix="optmech-bench-sweep-") as tmp:
        store = Path(tmp) / f"{mode}.sqlite"
        t0 = time.perf_counter()
        if mode == "serial":
            out = run_sweep(spec, str(store), workers=1)
        elif mode == "processes":
            out = run_sweep(spec, str(store), workers=workers)
        else:
            out = run_sweep(spec, str(store), scheduler=scheduler)
        wall = time.perf_counter() - t0
        rows = store_rows(store)
    n = len(spec.problems)
    secs = [r[3] for r in rows.values() if r[3] is not None]
    certified = sum(1 for r in rows.values() if r[2])
    ok = out.failed == 0 and len(rows) == n
    res = {"mode": mode, "wall_s": wall, "problems": n, "computed": out.computed, "failed": out.failed,
           "errors": [str(e) for e in out.errors[:5]], "stored": len(rows), "ok": ok,
           "solve_seconds_sum": sum(secs), "solve_seconds_min": min(secs, default=None),
           "solve_seconds_max": max(secs, default=None), "certified": certified,
           "throughput_per_s": n / wall if wall > 0 else None,
           "bounds": {k: [r[0], r[1]] for k, r in sorted(rows.items())}}
    res["note"] = (f"{mode}: {certified}/{n} certified, {n / wall:.2f} problems/s, Σ solve {sum(secs):.2f} s"
                   + ("" if ok else f"; NOT ok ({out.failed} failed, {len(rows)} stored)"))
    return res


def sweep_warmup() -> None:
    """Untimed: import optmech's sweep and solve one small problem."""
    __import__("optmech.drive")
    from optmech.sweep import run_job

    run_job({"epsilon": 1.0, "domain": "integer", "cost": ASYMMETRIC_COST, "sensitivity": 2})


def dask_warmup(workers: int = WORKERS) -> None:
    """Untimed: the sweep warm-up, then a ``LocalCluster`` of ``workers`` processes (closed at exit)."""
    sweep_warmup()
    from dask.distributed import LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None)
    _CLUSTER.update(cluster=cluster, start_s=time.perf_counter() - t0)
    atexit.register(cluster.close)


@case(name="serial", warmup=sweep_warmup)
def serial_case() -> dict:
    """``run_sweep(..., workers=1)``."""
    return run_mode("serial")


def serial_baseline(ours: dict) -> dict:
    """The serial sweep as the baseline of a parallel case; the note says whether the stores agree."""
    res = run_mode("serial")
    theirs, mine = ours.get("bounds") or {}, res["bounds"]
    same_keys = set(theirs) == set(mine)
    diff = max((max(abs(theirs[k][0] - mine[k][0]), abs(theirs[k][1] - mine[k][1])) for k in set(theirs) & set(mine)),
               default=float("nan"))
    res.update(same_keys=same_keys, max_abs_bound_diff=diff, stores_agree=same_keys and diff == 0.0)
    res["note"] += f"; stores agree (same keys, identical brackets): {'yes' if res['stores_agree'] else 'NO'}"
    return res


@case(name=f"processes (workers={WORKERS})", warmup=sweep_warmup, params={"workers": WORKERS},
      baseline=against(serial_baseline, label="serial (workers=1)", warmup=sweep_warmup))
def processes_case(workers: int) -> dict:
    """``run_sweep(..., workers=N)``: a spawn ``ProcessPoolExecutor``."""
    return run_mode("processes", workers=workers)


@case(name=f"dask ({WORKERS} workers)", warmup=dask_warmup, params={"workers": WORKERS},
      baseline=against(serial_baseline, label="serial (workers=1)", warmup=sweep_warmup))
def dask_case(workers: int) -> dict:
    """``run_sweep(..., scheduler=<the LocalCluster's address>)``; the cluster was started in the warm-up."""
    cluster = _CLUSTER["cluster"]
    res = run_mode("dask", workers=workers, scheduler=cluster.scheduler_address)
    res["cluster_start_s"] = _CLUSTER["start_s"]
    res["note"] += f"; LocalCluster start-up {_CLUSTER['start_s']:.2f} s (untimed)"
    return res


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
