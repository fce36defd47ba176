"""``optmech run``: spec validation, resumable sweeps into the store, SIGKILL safety."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from test_cli import run_cli

SPEC = """name = "demo"
[problem]
domain = "integer"
cost = "abs"
[grid]
epsilon = [0.5, 1.0, 2.0]
sensitivity = [1, 2]
"""


def _rows(path) -> dict:
    with sqlite3.connect(path) as c:
        return {k: (lo, up) for k, lo, up in c.execute("SELECT key, lower_bound, upper_bound FROM results")}


def test_resume_computes_nothing_the_second_time(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    store = tmp_path / "s.sqlite"
    p = run_cli("run", str(spec), "--workers", "2", "--store", str(store), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) | {"errors": []} == {"computed": 6, "skipped": 0, "failed": 0, "problems": 6,
                                                   "store": str(store), "errors": [], "stored": 6,
                                                   "interrupted": None, "abandoned": 0, "lost": None}
    p = run_cli("run", str(spec), "--store", str(store), "--resume", "--json")
    s = json.loads(p.stdout)
    assert (s["computed"], s["skipped"], s["failed"]) == (0, 6, 0)
    p = run_cli("store", "export", str(store), "--format", "json")
    rows = json.loads(p.stdout)
    assert len(rows) == 6 and all(r["lower_bound"] <= r["upper_bound"] for r in rows)
    assert {r["epsilon"] for r in rows} == {0.5, 1.0, 2.0} and {r["sensitivity"] for r in rows} == {1.0, 2.0}


def test_sigkill_then_resume_gives_the_uninterrupted_rows(tmp_path):
    """A sweep killed mid-run (SIGKILL) keeps every finished row; --resume completes it, and the rows are
    exactly those of an uninterrupted run (the solves are deterministic)."""
    spec = tmp_path / "k.toml"
    spec.write_text('name = "kill"\n[problem]\ndomain = "continuous"\ncost = "square"\ntarget_gap = 1e-5\n'
                    "[grid]\nepsilon = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.1, 1.3, 1.5]\n")
    full, cut = tmp_path / "full.sqlite", tmp_path / "cut.sqlite"
    assert run_cli("run", str(spec), "--workers", "1", "--store", str(full)).returncode == 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-m", "optmech", "run", str(spec), "--workers", "1", "--store", str(cut)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        if cut.exists():
            try:
                if len(_rows(cut)) >= 2:
                    break
            except sqlite3.OperationalError:
                pass
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _rows(cut)
    assert 2 <= len(partial) < 10
    with sqlite3.connect(cut) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    p = run_cli("run", str(spec), "--workers", "1", "--store", str(cut), "--resume", "--json")
    s = json.loads(p.stdout)
    assert s["skipped"] == len(partial) and s["computed"] == 10 - len(partial)
    assert _rows(cut) == _rows(full)


@pytest.mark.parametrize("text", [
    'name = "x"\nfoo = 1\n[grid]\nepsilon = [1.0]\n',
    'name = "x"\n[problem]\nepsilon = 1.0\nwidth = 3\n',
    'name = "x"\n[problem]\nepsilon = "one"\n',
    'name = "x"\n[grid]\nepsilon = []\n',
    'name = "x"\n[problem]\nepsilon = 1.0\n[grid]\nepsilon = [1.0, 2.0]\n',
    'name = "x"\n[problem]\ncost = "abs"\n',
    'name = "x"\n[problem]\nepsilon = 1.0\nprivacy = "renyi"\n',
    'name = "x"\n[grid]\nepsilon = [1.0]\nsensitivity = 1\n',
    '[grid]\nepsilon = [1.0]\n',
    'name = "x"\n[grid\nepsilon = [1.0]\n',
    'name = "x"\n[problem]\nepsilon = ' + "[" * 1000 + "]" * 1000 + "\n",  # RecursionError in the TOML parser
    'name = "x"\na = ' + "{b = " * 1000 + "1" + "}" * 1000 + "\n",
    'name = "x"\n[grid]\n' + "epsilon = [" + ", ".join(f"{0.01 * i:.2f}" for i in range(1, 30)) + "]\n"
    + "sensitivity = [" + ", ".join(str(i) for i in range(1, 30)) + "]\n",
])
def test_bad_specs_leave_no_store(tmp_path, text):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    store = tmp_path / "bad.sqlite"
    p = run_cli("run", str(spec), "--store", str(store))
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not store.exists()


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    t0 = time.time()
    p = run_cli("run", str(spec), "--scheduler", "tcp://127.0.0.1:9", "--store", str(tmp_path / "s.sqlite"),
                "--worker-timeout", "2")  # the connection is given at most --worker-timeout seconds
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "scheduler" in p.stderr.lower() + "dask"
    if "needs dask.distributed" not in p.stderr:  # with Dask installed: the connection gave up after 2 s
        assert "within 2 s" in p.stderr
    assert time.time() - t0 < 60
