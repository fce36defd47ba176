"""Every command that prints a machine format prints exactly that document on standard output.

Each command runs as a user runs it: a fresh ``python -m optmech`` subprocess (so the solver's
first ``Highs()`` of the process, which prints a banner in highspy >= 1.16, happens inside it),
and its whole standard output is parsed: ``json.loads(stdout)`` for JSON, the exact header first
for CSV and Markdown.  Tables and sweeps run with two worker processes, whose solver output must
stay off standard output too.  A profile that asks for HiGHS's log gets it on standard error.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from optmech.table import APPROX_COLUMNS, PURE_COLUMNS


def optmech(*args: str, timeout: float = 240.0) -> subprocess.CompletedProcess:
    try:
        p = subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"optmech {' '.join(args)} did not finish within {timeout:.0f} s")
    assert p.returncode == 0, f"optmech {' '.join(args)} exited {p.returncode}: {p.stderr[-2000:]}"
    return p


def whole_json(stdout: str):
    """The one JSON document that is the whole of stdout (json.loads refuses anything before or after)."""
    return json.loads(stdout)


def whole_csv(stdout: str, header: list[str]) -> list[dict]:
    lines = stdout.splitlines()
    assert lines, "empty CSV"
    assert next(csv.reader([lines[0]])) == header, f"first line is not the header: {lines[0][:200]!r}"
    rows = list(csv.DictReader(io.StringIO(stdout)))
    assert all(None not in r and len(r) == len(header) for r in rows), "a row has the wrong number of fields"
    return rows


SOLVE_JSON = {
    # HiGHS on every path but the chain-solved periodic one
    "general 1-D on R": ["--epsilon", "1", "--cost", "where(x > 0, x, 2*abs(x))", "--target-gap", "1e-3"],
    "general 1-D on Z": ["--epsilon", "1", "--sensitivity", "3", "--domain", "integer", "--cost", "where(x > 0, x, 2*abs(x))"],
    "periodic 1-D on Z": ["--epsilon", "1", "--sensitivity", "3", "--domain", "integer", "--cost", "abs"],
    "(eps,delta)": ["--privacy", "approx", "--epsilon", "1", "--delta", "0.1", "--sensitivity", "2", "--domain", "integer"],
    "(eps,delta) d = 2": ["--privacy", "approx", "--epsilon", "1", "--delta", "0.1", "--dim", "2", "--domain", "integer", "--cost", "l1"],
    "d = 2 lattice": ["--epsilon", "1", "--dim", "2", "--domain", "integer", "--cost", "l1"],
    "d = 2 lattice, candidate": ["--epsilon", "1", "--dim", "2", "--domain", "integer", "--cost", "l1", "--candidate", "staircase"],
    "Lipschitz": ["--privacy", "lipschitz", "--epsilon", "1", "--cost", "square", "--domain", "integer"],
    "Wasserstein": ["--utility", "wasserstein", "--input", "poisson:5:0:30", "--epsilon", "2", "--sensitivity", "3", "--domain", "integer"],
    "surrogate": ["--utility", "surrogate", "--input", "uniform:0:10", "--epsilon", "1", "--sensitivity", "2", "--domain", "integer"],
}


@pytest.mark.parametrize("name", list(SOLVE_JSON))
def test_solve_json_is_the_whole_stdout(name):
    obj = whole_json(optmech("solve", *SOLVE_JSON[name], "--json").stdout)
    assert obj["certified"] is True
    assert float(obj["lower_bound"]) <= float(obj["upper_bound"])


def test_solver_log_goes_to_stderr(tmp_path):
    profile = tmp_path / "log.toml"
    profile.write_text('description = "HiGHS with its log"\n[[attempt]]\nbackend = "highs"\n'
                       '[attempt.options]\nsolver = "simplex"\noutput_flag = true\n')
    p = optmech("solve", *SOLVE_JSON["general 1-D on Z"], "--solver", str(profile), "--json")
    assert whole_json(p.stdout)["certified"] is True
    assert "HiGHS" in p.stderr and "rows" in p.stderr, "the log that output_flag asks for is lost"


def test_compare_json():
    obj = whole_json(optmech("compare", "--epsilon", "1", "--cost", "abs", "--json").stdout)
    assert obj


@pytest.mark.parametrize("kind, fmt", [("pure", "json"), ("approx", "csv"),  # the other four under -m slow
                                       *[pytest.param(k, f, marks=pytest.mark.slow) for k, f in
                                         [("pure", "csv"), ("pure", "markdown"), ("approx", "json"), ("approx", "markdown")]]])
def test_table_formats_with_worker_processes(kind, fmt):
    args = ["table", "--privacy", kind, "--cost", "where(x > 0, x, 2*abs(x))" if kind == "pure" else "abs",
            "--sensitivity", "1,2", "--epsilon", "0.5,1", "--workers", "2", "--format", fmt]
    if kind == "approx":
        args += ["--delta", "0.1"]
    else:
        args += ["--domain", "integer"]  # the lattice table (--domain defaults to continuous, as in solve)
    out = optmech(*args).stdout
    header = list(APPROX_COLUMNS if kind == "approx" else PURE_COLUMNS)
    if fmt == "csv":
        rows = whole_csv(out, whole_csv_header(out, header))
        assert len(rows) == 4
    elif fmt == "json":
        obj = whole_json(out)
        rows = obj["rows"] if isinstance(obj, dict) else obj
        assert len(rows) == 4
    else:
        lines = out.splitlines()
        cells = [c.strip() for c in lines[0].strip().strip("|").split("|")]
        assert cells[:len(header)] == header, lines[0]
        assert set(lines[1].replace("|", "")) <= {"-", ":", " "}
        assert len(lines) == 6 and all(line.startswith("|") for line in lines)


def whole_csv_header(stdout: str, contract: list[str]) -> list[str]:
    """The CSV's header: the contract's columns first, then the extra ones (checked to be a superset)."""
    header = next(csv.reader([stdout.splitlines()[0]]))
    assert header[:len(contract)] == contract, header
    return header


def test_run_and_store_exports(tmp_path):
    spec = tmp_path / "demo.toml"
    spec.write_text('name = "demo"\n[problem]\ndomain = "integer"\ncost = "where(x > 0, x, 2*abs(x))"\n'
                    '[grid]\nepsilon = [0.5, 1.0]\nsensitivity = [1, 2]\n')
    store = tmp_path / "demo.sqlite"
    run = whole_json(optmech("run", str(spec), "--store", str(store), "--workers", "2", "--json").stdout)
    assert run["computed"] == 4 and run["failed"] == 0
    listing = whole_json(optmech("store", "ls", str(store), "--json").stdout)
    keys = [row["key"] for row in (listing["rows"] if isinstance(listing, dict) else listing)]
    assert len(keys) == 4
    shown = optmech("store", "show", str(store), keys[0]).stdout
    assert whole_json(shown)
    rows = whole_csv(optmech("store", "export", str(store)).stdout,
                     whole_csv_header(optmech("store", "export", str(store)).stdout,
                                      ["key", "lower_bound", "upper_bound", "relative_gap"]))
    assert sorted(r["key"] for r in rows) == sorted(keys)
    exported = whole_json(optmech("store", "export", str(store), "--format", "json").stdout)
    assert len(exported) == 4


def test_reproduce_json(tmp_path):
    obj = whole_json(optmech("reproduce", "--quick", "--out", str(tmp_path / "r"), "--only", "conjecture",
                             "--workers", "2", "--json").stdout)
    assert obj


def test_mechanism_sample_audit_json(tmp_path):
    mech = whole_json(optmech("mechanism", "--mechanism", "staircase", "--epsilon", "1", "--sensitivity", "1",
                              "--json").stdout)
    assert mech["expected_cost"] > 0
    out = tmp_path / "s.npy"
    assert whole_json(optmech("sample", "--mechanism", "laplace", "--epsilon", "1", "--sensitivity", "1",
                              "-n", "10", "--seed", "1", "--out", str(out), "--json").stdout)
    saved = tmp_path / "m.json"
    optmech("solve", *SOLVE_JSON["general 1-D on Z"], "--save", str(saved), "--json")
    audit = whole_json(optmech("audit", str(saved), "--sensitivity", "3", "--epsilon", "1", "--json").stdout)
    assert audit["epsilon"] is not None and audit["epsilon"] <= 1 + 1e-9
    assert Path(out).exists()
