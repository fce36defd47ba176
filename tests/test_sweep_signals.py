"""Ctrl-C and SIGTERM on ``optmech run``: the first signal stops handing out problems and stores those in
flight that finish within the grace period, a second one abandons them; the run says "N of M stored",
exits 128 + signal, leaves only complete rows, and ``--resume`` completes it to exactly the rows of an
uninterrupted run.  Workers never outlive the run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; POSIX signals")

#: problems of at least DELAY seconds each on any machine: each sleeps DELAY seconds before its solve (the sweep's
#: test-only hook), so one signal always finds problems in flight and others not yet started
DELAY = 0.5
#: small solves (general cost on a lattice of Δ 150-250), each made to last DELAY seconds or more
MEDIUM = """name = "medium"
[problem]
domain = "integer"
cost = "abs(x-3)+0.1*x**2"
[grid]
epsilon = [0.5, 0.7, 0.9, 1.1]
sensitivity = [150, 250]
"""
#: problems of far more than the test's patience on any machine: an asymmetric cost on the real line to a
#: relative gap of 1e-12, which needs LPs of millions of columns (the third LP, 2e5 columns, takes ~30 s on
#: 2 cores and reaches only 3e-9); each runs to its default time limit of 300 s
HEAVY = """name = "heavy"
[problem]
domain = "continuous"
cost = "where(x > 0, x, 2*abs(x))"
target_gap = 1e-12
[grid]
epsilon = [0.5, 0.6, 0.7]
"""


def _start(tmp_path, text: str, store, *extra: str) -> subprocess.Popen:
    from optmech.sweep import TEST_DELAY_VARIABLE

    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), **{TEST_DELAY_VARIABLE: str(DELAY)})
    return subprocess.Popen([sys.executable, "-m", "optmech", "run", str(spec), "--store", str(store), "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)


def _children(pid: int) -> set[int]:
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.add(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _rows(path) -> dict:
    if not os.path.exists(path):
        return {}
    with sqlite3.connect(path) as c:
        keys = [k for (k,) in c.execute("SELECT key FROM results")]
        assert len(keys) == len(set(keys)), "duplicated rows"
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = {k: (lo, up, json.loads(res)["status"]) for k, lo, up, res in
                c.execute("SELECT key, lower_bound, upper_bound, result FROM results")}
    assert all(lo is not None and up is not None and lo <= up for lo, up, _ in rows.values()), "a partial row"
    return rows


def _wait_rows(store, n: int, proc: subprocess.Popen, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if len(_rows(store)) >= n:
                return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)


def _finish(proc: subprocess.Popen, limit: float) -> tuple[dict, str, float]:
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the run did not stop within {limit} s of the signal")
    assert out.strip(), f"no JSON summary on stdout; stderr: {err!r}"
    return json.loads(out), err, time.monotonic() - t0


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The rows of the MEDIUM sweep run to the end."""
    tmp = tmp_path_factory.mktemp("full")
    store = tmp / "full.sqlite"
    p = _start(tmp, MEDIUM, store, "--workers", "2")
    summary, err, _ = _finish(p, 300)
    assert p.returncode == 0, err
    assert summary["computed"] == summary["stored"] == 8
    return _rows(store)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130),
                                       pytest.param(signal.SIGTERM, 143, marks=pytest.mark.slow)])  # SIGTERM: test_interrupts
def test_one_signal_stores_what_is_in_flight_then_resume_completes(tmp_path, uninterrupted, sig, code):
    store = tmp_path / "cut.sqlite"
    p = _start(tmp_path, MEDIUM, store, "--workers", "2")
    _wait_rows(store, 1, p)
    time.sleep(0.3)  # problems are in flight now (each lasts DELAY s at least): 2 stored at most before the signal
    kids = _children(p.pid)
    p.send_signal(sig)
    summary, err, took = _finish(p, 30)
    assert p.returncode == code, err
    rows = _rows(store)
    assert summary["interrupted"] == sig.name and summary["stored"] == len(rows) and summary["problems"] == 8
    assert summary["abandoned"] == 0  # a second's problems finish within the 10 s grace
    assert f"{len(rows)} of 8 stored" in err and "--resume" in err
    assert len(err.strip().splitlines()) == 2, err  # what it does on the signal, then the summary line
    assert "Traceback" not in err
    assert 1 <= len(rows) < 8, "the signal stopped nothing"
    time.sleep(1.5)
    assert not any(_alive(k) for k in kids), "workers outlived the run"
    # the rows kept are exactly those of the uninterrupted run, and --resume completes it
    assert all(rows[k] == uninterrupted[k] for k in rows)
    p = _start(tmp_path, MEDIUM, store, "--workers", "2", "--resume")
    summary, err, _ = _finish(p, 300)
    assert p.returncode == 0, err
    assert summary["skipped"] == len(rows) and summary["computed"] == 8 - len(rows)
    assert _rows(store) == uninterrupted


def test_signal_before_anything_finishes(tmp_path, uninterrupted):
    """A signal while the workers are still starting: nothing half-done, "0 of 8 stored" or what finished."""
    store = tmp_path / "early.sqlite"
    p = _start(tmp_path, MEDIUM, store, "--workers", "2")
    deadline = time.monotonic() + 60
    while not store.exists() and time.monotonic() < deadline:  # the sweep has begun: its workers are starting
        time.sleep(0.02)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    summary, err, _ = _finish(p, 30)
    assert p.returncode == 130, err
    rows = _rows(store)
    assert summary["stored"] == len(rows) and f"{len(rows)} of 8 stored" in err
    assert all(rows[k] == uninterrupted[k] for k in rows)


def test_second_signal_abandons_heavy_problems_at_once(tmp_path, workers="1"):
    """(test_grace_period_ends_a_heavy_run abandons a pool of two workers)"""
    store = tmp_path / "heavy.sqlite"
    p = _start(tmp_path, HEAVY, store, "--workers", workers)
    time.sleep(3)  # the workers are inside their solves
    kids = _children(p.pid)
    p.send_signal(signal.SIGINT)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    summary, err, took = _finish(p, 30)
    assert took < 5, f"the second Ctrl-C took {took:.1f} s"
    assert p.returncode == 130, err
    assert summary["abandoned"] == int(workers) and summary["stored"] == 0 and summary["failed"] == 0
    assert "abandon" in err and "0 of 3 stored" in err and "Traceback" not in err
    assert _rows(store) == {}
    time.sleep(1.5)
    assert not any(_alive(k) for k in kids), "abandoned workers kept computing"


def test_grace_period_ends_a_heavy_run(tmp_path):
    """One Ctrl-C on problems that need far longer than --grace: the run ends soon after the grace period."""
    store = tmp_path / "heavy.sqlite"
    p = _start(tmp_path, HEAVY, store, "--workers", "2", "--grace", "1")
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    summary, err, took = _finish(p, 30)
    assert took < 5, f"one Ctrl-C with --grace 1 took {took:.1f} s"
    assert p.returncode == 130 and summary["abandoned"] == 2 and "grace period" in err
    assert _rows(store) == {}


def test_reproduce_interrupted_keeps_its_store_and_writes_no_half_report(tmp_path):
    out = tmp_path / "report"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-m", "optmech", "reproduce", "--quick", "--out", str(out), "--workers", "2",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _wait_rows(out / "results.sqlite", 3, p)
    p.send_signal(signal.SIGINT)
    summary, err, _ = _finish(p, 30)
    assert p.returncode == 130, err
    rows = _rows(out / "results.sqlite")
    assert summary["interrupted"] == "SIGINT" and summary["stored"] == len(rows) >= 3
    assert f"{len(rows)} of {summary['problems']} stored" in err and "no report written" in err
    assert not (out / "README.md").exists()
