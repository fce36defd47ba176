"""``run_sweep`` on a Dask cluster (``--scheduler``) stores exactly what local processes store."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("dask.distributed")

from optmech.sweep import parse_spec, run_sweep  # noqa: E402

SPEC = {
    "name": "dask-demo",
    "problem": {"domain": "integer", "cost": "abs"},
    "grid": {"epsilon": [0.5, 1.0, 2.0], "sensitivity": [1, 2]},
}


def _bounds(path) -> dict:
    with sqlite3.connect(path) as c:
        return {k: (lo, up) for k, lo, up in c.execute("SELECT key, lower_bound, upper_bound FROM results")}


def test_dask_cluster_and_local_processes_store_the_same_rows(tmp_path):
    from dask.distributed import LocalCluster

    spec = parse_spec(SPEC)
    dask_store, local_store = tmp_path / "dask.sqlite", tmp_path / "local.sqlite"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        out = run_sweep(spec, str(dask_store), scheduler=cluster.scheduler_address)
    assert (out.computed, out.skipped, out.failed, out.problems) == (6, 0, 0, 6), out.errors
    out = run_sweep(spec, str(local_store), workers=2)
    assert (out.computed, out.skipped, out.failed) == (6, 0, 0), out.errors

    on_dask, local = _bounds(dask_store), _bounds(local_store)
    assert len(on_dask) == 6
    assert set(on_dask) == set(local)
    assert on_dask == local  # deterministic solves: identical brackets, not merely close
    assert all(lo <= up for lo, up in on_dask.values())
