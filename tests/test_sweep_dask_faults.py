"""A real Dask scheduler and workers started from the command line (issue 19): losing the scheduler
mid-sweep, or a scheduler with no workers, ends ``optmech run`` with one line, "N of M stored", exit 3,
and the unfinished problems are not recorded as failures; ``--resume`` then completes the sweep."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed")

SPEC = """name = "dask faults"
[problem]
domain = "integer"
cost = "abs(x-3)+0.1*x**2"
[grid]
epsilon = [0.5, 0.7, 0.9, 1.1, 1.3, 1.5]
sensitivity = [300, 500]
"""


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=_env(), start_new_session=True)


def _wait_up(port: int, limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    pytest.fail("the Dask scheduler did not start")


def _kill(p: subprocess.Popen) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)


def _rows(path) -> int:
    if not os.path.exists(path):
        return 0
    c = sqlite3.connect(path)
    try:
        return c.execute("SELECT count(*) FROM results").fetchone()[0]
    finally:
        c.close()


def _run(tmp_path, address: str, *extra) -> subprocess.Popen:
    (tmp_path / "s.toml").write_text(SPEC)
    return subprocess.Popen([sys.executable, "-m", "optmech", "run", "s.toml", "--scheduler", address, "--json",
                             "--store", "s.sqlite", *extra], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())


def test_losing_the_scheduler_mid_sweep(tmp_path):
    port = _port()
    address = f"tcp://127.0.0.1:{port}"
    sched = _start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    worker = None
    try:
        _wait_up(port)
        worker = _start("distributed.cli.dask_worker", address, "--nworkers", "2", "--nthreads", "1",
                        "--no-dashboard")
        run = _run(tmp_path, address)
        deadline = time.monotonic() + 120
        while _rows(tmp_path / "s.sqlite") < 2 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert run.poll() is None, "the sweep ended before the scheduler could be killed"
        _kill(sched)
        t0 = time.monotonic()
        out, err = run.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        for p in (sched, worker):
            if p is not None:
                _kill(p)
    summary = json.loads(out)
    stored = _rows(tmp_path / "s.sqlite")
    assert run.returncode == 3, err
    assert took < 20, f"{took:.1f} s to notice the lost scheduler"
    assert summary["lost"] and "scheduler" in summary["lost"] and summary["failed"] == 0 and summary["errors"] == []
    assert summary["stored"] == stored and 2 <= stored < 12
    assert err.strip().splitlines() == [f"optmech: the Dask scheduler at {address} was lost: {stored} of 12 stored"
                                        + (f", {summary['abandoned']} in flight abandoned" if summary["abandoned"]
                                           else "") + "; rerun with --resume to compute the rest"]
    # the rest computes locally with --resume
    p = subprocess.run([sys.executable, "-m", "optmech", "run", "s.toml", "--store", "s.sqlite", "--resume",
                        "--workers", "2", "--json"], cwd=tmp_path, capture_output=True, text=True, env=_env(),
                       timeout=300)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["skipped"] == stored and s["computed"] == 12 - stored and _rows(tmp_path / "s.sqlite") == 12


def test_a_scheduler_without_workers_is_reported_and_times_out(tmp_path):
    port = _port()
    sched = _start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    try:
        _wait_up(port)
        t0 = time.monotonic()
        run = _run(tmp_path, f"tcp://127.0.0.1:{port}", "--worker-timeout", "7")
        out, err = run.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        _kill(sched)
    assert run.returncode == 3, err
    assert took < 25
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "no Dask workers have joined" in lines[0]
    assert "no Dask worker joined the scheduler" in lines[1] and "within 7 s: 0 of 12 stored" in lines[1]
    summary = json.loads(out)
    assert summary["failed"] == 0 and summary["stored"] == 0
