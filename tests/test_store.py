"""The SQLite result store: round trip, keys, export columns, rejections that leave files untouched,
and crash safety under SIGKILL."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import optmech
from optmech.costs import parse_cost
from optmech.errors import SpecError
from optmech.spec import IntegerLattice, Problem, PureDP
from optmech.store import SCHEMA_VERSION, ResultStore, problem_key


def fake_result(problem: dict, lo: float = 1.0, up: float = 1.5) -> dict:
    return {"problem": problem, "status": "optimal", "message": "", "lower_bound": lo, "upper_bound": up,
            "relative_gap": (up - lo) / up, "certified": True, "seconds": 0.25, "references": [],
            "lp": {"rows": 3}, "history": [{"a": [1, 2]}]}


P1 = {"privacy": "pure", "epsilon": 1.0, "sensitivity": 1.0, "domain": "integer", "cost": "abs"}
P2 = {"privacy": "approx", "epsilon": 0.5, "delta": 1e-6, "sensitivity": 2.0, "domain": "integer", "cost": "sq",
      "dim": 2}


def test_round_trip_real_solve(tmp_path):
    r = optmech.solve(Problem(privacy=PureDP(1.0), cost=parse_cost("abs"), sensitivity=1, domain=IntegerLattice()))
    d = r.to_dict()
    key = problem_key(d["problem"])
    path = tmp_path / "s.sqlite"
    with ResultStore(path) as st:
        assert not st.has(key) and st.keys() == []
        st.put(key, d["problem"], d, "sweep-a")
    with ResultStore(path) as st:  # reopen: persisted
        assert st.has(key) and key in st and len(st) == 1
        assert st.keys() == [key]
        assert st.get(key) == json.loads(json.dumps(d))
        rec = st.record(key)
        assert rec["spec"] == "sweep-a" and rec["certified"] == 1 and rec["status"] == d["status"]
        assert rec["lower_bound"] == d["lower_bound"] and rec["upper_bound"] == d["upper_bound"]
        assert rec["problem"] == json.loads(json.dumps(d["problem"]))
        assert st.meta() == {"schema_version": str(SCHEMA_VERSION), "optmech_version": optmech.__version__}
        with pytest.raises(KeyError):
            st.get("nope")
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_put_replaces_and_infinite_bounds(tmp_path):
    k = problem_key(P1)
    with ResultStore(tmp_path / "s.sqlite") as st:
        st.put(k, P1, fake_result(P1, 1.0, 2.0))
        st.put(k, P1, {**fake_result(P1), "upper_bound": "inf", "relative_gap": "inf", "certified": False})
        assert st.keys() == [k]
        row = st.rows()[0]
        assert row["upper_bound"] == float("inf") and row["lower_bound"] == 1.0
        assert st.record(k)["certified"] == 0
        out = json.loads(st.export("json"))
        assert out[0]["upper_bound"] == "inf"


def test_keys_stable_and_distinct(monkeypatch):
    k1 = problem_key(P1)
    assert len(k1) == 32 and int(k1, 16) >= 0
    assert problem_key(dict(reversed(list(P1.items())))) == k1  # key order irrelevant
    assert problem_key(json.loads(json.dumps(P1))) == k1
    assert problem_key(P2) != k1
    assert problem_key({**P1, "epsilon": 1.0000000000000002}) != k1  # floats by repr
    monkeypatch.setattr(optmech, "__version__", "9.9.9")
    assert problem_key(P1) != k1


def test_export_columns(tmp_path):
    with ResultStore(tmp_path / "s.sqlite") as st:
        assert st.export("csv").splitlines() == ["key,lower_bound,upper_bound,relative_gap,certified,status,"
                                                 "lp_rows,lp_cols,lp_nonzeros,seconds"]
        st.put(problem_key(P1), P1, fake_result(P1), "s")
        st.put(problem_key(P2), P2, fake_result(P2, 2.0, 3.0), "s")
        params = sorted(set(P1) | set(P2))
        expected = ["key", "lower_bound", "upper_bound", "relative_gap", "certified", "status", *params,
                    "lp_rows", "lp_cols", "lp_nonzeros", "seconds"]
        buf = io.StringIO()
        st.export("csv", out=buf)
        rows = list(csv.reader(io.StringIO(buf.getvalue())))
        assert rows[0] == expected and len(rows) == 3
        by_key = {r[0]: dict(zip(expected, r)) for r in rows[1:]}
        assert by_key[problem_key(P1)]["delta"] == "" and by_key[problem_key(P2)]["delta"] == "1e-06"
        assert float(by_key[problem_key(P2)]["upper_bound"]) == 3.0
        assert by_key[problem_key(P1)]["certified"] == "true" and by_key[problem_key(P1)]["lp_rows"] == "3"
        assert by_key[problem_key(P1)]["status"] == "optimal" and by_key[problem_key(P1)]["lp_cols"] == ""
        js = json.loads(st.export("json", sort=["dim"]))
        assert [list(o) for o in js] == [expected, expected]
        assert js[0]["dim"] == 2 and js[1]["dim"] is None and js[1]["seconds"] == 0.25  # absent values sort last
        assert [list(r) for r in st.rows()] == [expected, expected]
        with pytest.raises(SpecError):
            st.export("xml")


def _assert_rejected(path, match):
    before = path.read_bytes()
    listing = sorted(os.listdir(path.parent))
    with pytest.raises(SpecError, match=match) as e:
        ResultStore(path)
    assert "\n" not in str(e.value)
    assert path.read_bytes() == before  # store untouched
    assert sorted(os.listdir(path.parent)) == listing


def test_rejects_text_file(tmp_path):
    p = tmp_path / "notes.sqlite"
    p.write_text("hello, not a database\n" * 10)
    _assert_rejected(p, "not an optmech store \\(not a SQLite database\\)")


def test_rejects_foreign_sqlite(tmp_path):
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    _assert_rejected(p, "not an optmech store")
    q = tmp_path / "empty.sqlite"
    con = sqlite3.connect(q)
    con.execute("PRAGMA user_version=7")  # a non-empty SQLite file without tables
    con.close()
    _assert_rejected(q, "not an optmech store")


def test_rejects_wrong_schema_and_version(tmp_path):
    p = tmp_path / "s.sqlite"
    with ResultStore(p) as st:
        st.put(problem_key(P1), P1, fake_result(P1))
    con = sqlite3.connect(p)
    with con:
        con.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    _assert_rejected(p, "schema version 99")

    q = tmp_path / "v.sqlite"
    with ResultStore(q) as st:
        st.put(problem_key(P1), P1, fake_result(P1))
    con = sqlite3.connect(q)
    with con:
        con.execute("UPDATE meta SET value='0.0.7' WHERE key='optmech_version'")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    mm = ".".join(optmech.__version__.split(".")[:2])
    _assert_rejected(q, f"written by optmech 0.0; this is optmech {mm}: use a new store or --force")
    with ResultStore(q, force=True) as st:  # --force accepts it and records this version
        assert st.meta()["optmech_version"] == optmech.__version__ and len(st) == 1


def test_same_minor_version_accepted(tmp_path, monkeypatch):
    p = tmp_path / "s.sqlite"
    ResultStore(p).close()
    major, minor = optmech.__version__.split(".")[:2]
    monkeypatch.setattr(optmech, "__version__", f"{major}.{minor}.999")
    with ResultStore(p) as st:
        assert st.keys() == []


def test_missing_directory_and_directory_path(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        ResultStore(tmp_path / "no" / "such" / "s.sqlite")
    assert not (tmp_path / "no").exists()
    with pytest.raises(SpecError, match="not a regular file"):
        ResultStore(tmp_path)


def test_empty_file_is_refused_untouched(tmp_path):
    """A zero-byte file is not silently turned into a store (issue 19): neither by a writer nor by ls."""
    p = tmp_path / "s.sqlite"
    p.write_bytes(b"")
    for readonly in (False, True):
        with pytest.raises(SpecError, match="empty file"):
            ResultStore(p, readonly=readonly)
        assert p.read_bytes() == b"" and sorted(os.listdir(tmp_path)) == ["s.sqlite"]


WRITER = r"""
import sys
from optmech.store import ResultStore, problem_key
st = ResultStore(sys.argv[1])
big = "x" * 20000  # rows spanning several pages
i = 0
while True:
    p = {"epsilon": 1.0 + i, "sensitivity": 1.0, "cost": "abs"}
    st.put(problem_key(p), p, {"problem": p, "lower_bound": float(i), "upper_bound": i + 1.0,
           "relative_gap": 0.5, "certified": True, "status": "optimal", "seconds": 0.1, "pad": big}, "crash")
    print(i, flush=True)
    i += 1
"""


def test_sigkill_leaves_consistent_store(tmp_path):
    p = tmp_path / "s.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(p)], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(optmech.__file__))))
    acknowledged = -1
    deadline = time.monotonic() + 30
    try:
        while acknowledged < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acknowledged = int(line)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=10)
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert acknowledged >= 40, "the writer did not get going"

    with ResultStore(p) as st:
        assert st.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = st.keys()
        assert len(keys) >= acknowledged + 1  # every committed (acknowledged) put survived
        for k in keys:
            rec = st.record(k)
            assert rec["spec"] == "crash" and rec["status"] == "optimal" and rec["certified"] == 1
            assert rec["result"]["pad"] == "x" * 20000
            assert rec["result"]["problem"] == rec["problem"] and k == problem_key(rec["problem"])
            assert rec["upper_bound"] == rec["lower_bound"] + 1.0 and rec["seconds"] == 0.1
            assert rec["created"]
        assert len(st.rows()) == len(keys)


def test_store_cli_ls_show_export(tmp_path):
    """``optmech store ls|show|export``: read-only browsing; bad stores and keys get one line and exit 2."""
    import optmech
    from optmech.spec import IntegerLattice, Problem, PureDP
    from test_cli import run_cli

    path = tmp_path / "s.sqlite"
    r = optmech.solve(Problem(PureDP(1.0), "abs", 1, IntegerLattice()))
    d = r.to_dict()
    key = problem_key(d["problem"])
    with ResultStore(path) as st:
        st.put(key, d["problem"], d, "demo")
    p = run_cli("store", "ls", str(path), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)[0]["key"] == key
    p = run_cli("store", "show", str(path), key)
    assert p.returncode == 0 and json.loads(p.stdout)["result"]["lower_bound"] == d["lower_bound"]
    p = run_cli("store", "export", str(path), "--format", "csv")
    header = p.stdout.splitlines()[0].split(",")
    assert header[:4] == ["key", "lower_bound", "upper_bound", "relative_gap"] and header[-1] == "seconds"
    text = tmp_path / "t.txt"
    text.write_text("hello\n")
    for args in (["ls", str(tmp_path / "missing.sqlite")], ["show", str(path), "nope"], ["show", str(path)],
                 ["ls", str(text)]):
        p = run_cli("store", *args)
        assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)
    assert text.read_text() == "hello\n" and not (tmp_path / "missing.sqlite").exists()
