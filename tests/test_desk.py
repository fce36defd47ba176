"""The researcher's desk: browsing a store (``store ls/export`` with the swept parameters, status,
certified flag and LP size, ``--where``/``--sort``), the pandas readers (``optmech.store.read``,
``build_table(...).to_frame()``), the default store named after the spec, and library calls from a
plain script with no ``if __name__ == "__main__"`` guard."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest
from test_cli import run_cli

import optmech
from optmech.store import ResultStore

SPEC = """name = "desk demo"
[problem]
domain = "integer"
[grid]
epsilon = [2.0, 0.5, 1.0]
sensitivity = [2, 1]
cost = ["square", "abs"]
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A 12-problem sweep run with the default store: NAME.sqlite in the current folder."""
    tmp = tmp_path_factory.mktemp("desk")
    (tmp / "spec.toml").write_text(SPEC)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, "-m", "optmech", "run", "spec.toml", "--workers", "2", "--json"], cwd=tmp,
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["store"] == "desk-demo.sqlite" and out["stored"] == 12
    assert (tmp / "desk-demo.sqlite").is_file() and not (tmp / "spec.sqlite").exists()
    return tmp / "desk-demo.sqlite"


def _export(store, *args) -> list[dict]:
    p = run_cli("store", "export", str(store), *args)
    assert p.returncode == 0, p.stderr
    return list(csv.DictReader(io.StringIO(p.stdout)))


def test_export_has_status_certified_lp_size_sorted_by_the_swept_parameters(store):
    rows = _export(store)
    assert len(rows) == 12
    for col in ("status", "certified", "lp_rows", "lp_cols", "lp_nonzeros"):
        assert col in rows[0]
    assert {r["status"] for r in rows} == {"optimal"} and {r["certified"] for r in rows} == {"true"}
    with ResultStore(store) as st:  # the LP size is the result's own record
        for r in rows:
            assert int(r["lp_rows"]) == st.get(r["key"])["lp"]["rows"] >= 1
    # sorted by the swept parameters in the documented order: cost, then sensitivity, then epsilon
    order = [(r["cost"], float(r["sensitivity"]), float(r["epsilon"])) for r in rows]
    assert order == sorted(order)
    js = json.loads(run_cli("store", "export", str(store), "--format", "json").stdout)
    assert [r["key"] for r in js] == [r["key"] for r in rows] and js[0]["certified"] is True


def test_ls_shows_the_varying_parameters_status_and_certified(store):
    p = run_cli("store", "ls", str(store))
    assert p.returncode == 0, p.stderr
    head, columns, *lines = p.stdout.splitlines()
    assert head.startswith("12 problem(s)") and "domain=integer" in head and "privacy=pure" in head
    assert columns.split()[:4] == ["key", "cost", "sensitivity", "epsilon"]
    assert "status" in columns and "certified" in columns and len(lines) == 12
    assert all(" optimal " in ln and " yes " in ln for ln in lines)
    # a key prefix as ls prints it is enough for show
    prefix = lines[0].split()[0]
    shown = json.loads(run_cli("store", "show", str(store), prefix).stdout)
    assert shown["key"].startswith(prefix) and shown["problem"]["cost"] == "abs"


@pytest.mark.slow  # a long solve: the default suite keeps to its time budget
def test_ls_where_and_sort(store):
    p = run_cli("store", "ls", str(store), "--where", "epsilon=0.5", "--where", "cost=abs", "--json")
    rows = json.loads(p.stdout)
    assert [(r["cost"], r["epsilon"], r["sensitivity"]) for r in rows] == [("abs", 0.5, 1.0), ("abs", 0.5, 2.0)]
    rows = json.loads(run_cli("store", "ls", str(store), "--where", "sensitivity>=2", "--sort=-epsilon,cost",
                              "--json").stdout)
    assert [(r["epsilon"], r["cost"]) for r in rows] == [(2.0, "abs"), (2.0, "square"), (1.0, "abs"),
                                                         (1.0, "square"), (0.5, "abs"), (0.5, "square")]
    text = run_cli("store", "ls", str(store), "--where", "epsilon!=1", "--where", "status=optimal").stdout
    assert text.startswith("8 of 12 problem(s)")
    for bad, what in ((["--where", "foo=1"], "no column"), (["--where", "epsilon"], "NAME=VALUE"),
                      (["--sort", "bogus"], "no column")):
        p = run_cli("store", "ls", str(store), *bad)
        assert p.returncode == 2 and p.stdout == "" and what in p.stderr and len(p.stderr.splitlines()) == 1


def test_read_returns_the_export_as_a_dataframe(store):
    pd = pytest.importorskip("pandas")
    df = optmech.store.read(store)
    rows = _export(store)
    assert isinstance(df, pd.DataFrame) and list(df.columns) == list(rows[0]) and len(df) == 12
    assert list(df.key) == [r["key"] for r in rows]
    assert df.lower_bound.tolist() == [float(r["lower_bound"]) for r in rows]
    assert df.certified.tolist() == [True] * 12
    sub = optmech.store.read(store, where=["cost=square", "epsilon<1"])
    assert sorted(sub.sensitivity.tolist()) == [1.0, 2.0] and set(sub.epsilon) == {0.5}


def test_read_refuses_a_missing_store(tmp_path):
    with pytest.raises(optmech.SpecError, match="no such store"):
        optmech.store.read(tmp_path / "nope.sqlite")


def test_table_to_frame():
    pd = pytest.importorskip("pandas")
    from optmech.table import PURE_COLUMNS, build_table

    t = build_table("pure", cost="abs", sensitivities=[1, 2], epsilons=[1.0], domain="integer", workers=1)
    df = t.to_frame()
    assert isinstance(df, pd.DataFrame) and tuple(df.columns[:len(PURE_COLUMNS)]) == PURE_COLUMNS
    assert df.sensitivity.tolist() == [1, 2] and len(t) == 2 and t[0] == df.iloc[0][list(t[0])].to_dict()
    assert all(lo <= up for lo, up in zip(df.v_star_lower, df.v_star_upper))


UNGUARDED = """
import optmech
from optmech.table import build_table
print("top level", flush=True)
t = build_table("pure", cost="abs", sensitivities=[1, 2], epsilons=[1.0, 2.0], domain="integer", workers=2)
print(len(t), all(r["certified"] for r in t), flush=True)
"""


def test_build_table_from_a_script_without_a_main_guard(tmp_path):
    """spawn would re-run this script in every worker (recursively starting pools): the workers must not."""
    script = tmp_path / "plain.py"
    script.write_text(UNGUARDED)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=180)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["top level", "4 True"], p.stdout
    assert "Traceback" not in p.stderr and "BrokenProcessPool" not in p.stderr


def test_cli_plot_draws_1d_lipschitz_and_refuses_dd_before_solving(tmp_path):
    png = tmp_path / "l.png"
    p = run_cli("solve", "--privacy", "lipschitz", "--epsilon", "1", "--cost", "abs", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = run_cli("solve", "--privacy", "lipschitz", "--epsilon", "1", "--cost", "l1", "--dim", "2",
                "--plot", str(tmp_path / "d.png"))
    assert p.returncode == 2 and p.stdout == "" and "1-D only" in p.stderr
    assert not (tmp_path / "d.png").exists()
