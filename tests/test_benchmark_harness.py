"""The benchmark harness (``benchmarks/harness.py``): results format, table, README markers, failures.

Fast (a few seconds): a tiny bench file written to a temporary folder, whose cases sleep or raise;
no optmech solve runs.  The timing assertions compare against what the fake cases do (a baseline
that sleeps 50 ms must be timed at >= 50 ms, a case that returns at once well under that), not
against numbers the harness printed before.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import harness  # noqa: E402

FAKE = '''
import sys, time
sys.path.insert(0, {bench!r})
from harness import case, against

def sleepy(n: int) -> dict:
    time.sleep(0.05)
    return {{"value": n}}

@case(name="quick |x|", baseline=sleepy, params={{"n": 3}})
def quick(n: int) -> dict:
    return {{"lower": 1.0, "upper": 1.0 + 2e-9, "gap": 2e-9, "certified": True, "note": "n=" + str(n)}}

@case(name="raises", baseline=sleepy, params={{"n": 1}})
def raises(n: int) -> dict:
    raise RuntimeError("deliberate failure")

def sees(n, ours):
    return {{"ours_value": ours["value"], "n": n}}

@case(name="needs ours", baseline=against(sees, label="uses ours"), params={{"n": 2}})
def mine(n):
    return {{"value": 10 * n}}

@case(name="no baseline")
def alone():
    return {{"lower": 0.5, "upper": 0.75, "gap": 0.25, "certified": False}}
'''


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict]]:
    """One run of the fake bench file (repeats 1): its file, its results file and its records."""
    d = tmp_path_factory.mktemp("bench")
    bench = d / "bench_fake.py"
    bench.write_text(FAKE.format(bench=str(ROOT / "benchmarks")))
    results = d / "fake.jsonl"
    records = harness.run_file(bench, repeats=1, timeout=60, results=results, echo=lambda s: None)
    return bench, results, records


def test_discover_in_source_order_and_duplicates_refused(ran: tuple) -> None:
    bench, _, _ = ran
    names = [c.name for c in harness.discover(harness.load_bench(bench))]
    assert names == ["quick |x|", "raises", "needs ours", "no baseline"]

    class M:  # a module-like object with two cases of the same name
        pass

    def f() -> dict:
        return {}

    harness.add_case(f, "same")
    harness.add_case(f, "same")
    M.f = f
    with pytest.raises(ValueError, match="duplicate"):
        harness.discover(M)


def test_results_round_trip(ran: tuple) -> None:
    _, results, records = ran
    back = harness.read_records([results])
    assert back == records
    assert len(back) == 4
    for rec in back:
        assert rec["schema"] == harness.SCHEMA
        for key in ("run_id", "date", "file", "case", "params", "repeats", "status", "ours", "baseline", "ratio",
                    "machine", "versions"):
            assert key in rec
        assert rec["machine"]["cores"] >= 1
        assert rec["ours"]["commit"] is None or len(rec["ours"]["commit"]) == 40
    assert len({r["run_id"] for r in back}) == 1
    # non-finite floats survive as strings, and a record with them round-trips through a file
    rec = dict(records[0], ratio=math.inf, params={"x": math.nan})
    path = results.with_name("nonfinite.jsonl")
    harness.append_record(path, rec)
    again = harness.read_records([path])[0]
    assert again["ratio"] == "inf" and again["params"] == {"x": "nan"}


def test_timing_and_ratio(ran: tuple) -> None:
    recs = {r["case"]: r for r in ran[2]}
    q = recs["quick |x|"]
    assert q["status"] == "ok"
    assert q["baseline"]["seconds_median"] >= 0.05  # the baseline sleeps 50 ms
    assert q["ours"]["seconds_median"] < 0.05
    assert q["ratio"] == pytest.approx(q["ours"]["seconds_median"] / q["baseline"]["seconds_median"])
    assert q["ours"]["lower"] == 1.0 and q["ours"]["certified"] is True and q["ours"]["gap"] == 2e-9
    assert q["ours"]["peak_rss_bytes"] is None or q["ours"]["peak_rss_bytes"] > 1 << 20
    # the callable baseline received optmech's side's result
    assert recs["needs ours"]["baseline"]["result"] == {"ours_value": 20, "n": 2}
    nb = recs["no baseline"]
    assert nb["baseline"]["kind"] == "none" and nb["ratio"] is None and nb["status"] == "ok"


def test_failing_case_recorded_not_raised(ran: tuple) -> None:
    recs = {r["case"]: r for r in ran[2]}
    bad = recs["raises"]
    assert bad["status"] == "failed"
    assert bad["ours"]["ok"] is False
    assert bad["ours"]["error"]["type"] == "RuntimeError"
    assert "deliberate failure" in bad["ours"]["error"]["message"]
    assert bad["ratio"] is None
    # the cases after it ran
    assert recs["needs ours"]["status"] == "ok"


def test_table_from_results_file(ran: tuple) -> None:
    _, results, _ = ran
    table = harness.render_table(harness.read_records([results]))
    lines = table.splitlines()
    row = next(ln for ln in lines if ln.startswith("| quick"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[0] == "quick \\|x\\|"  # a | in a case name is escaped
    rec = next(r for r in harness.read_records([results]) if r["case"] == "quick |x|")
    assert float(cells[2]) == pytest.approx(rec["ours"]["seconds_median"], rel=5e-3)
    assert float(cells[4]) == pytest.approx(rec["ratio"], rel=5e-3)
    assert cells[5] == "2e-09" and cells[6] == "n=3"
    assert any("failed: RuntimeError: deliberate failure" in ln for ln in lines)
    assert any(ln.startswith("| no baseline") and "(uncertified)" in ln for ln in lines)
    # the latest record of a case wins
    newer = dict(rec, date="9999-01-01T00:00:00+00:00", ratio=0.5)
    harness.append_record(results.with_name("newer.jsonl"), newer)
    t2 = harness.render_table(harness.read_records([results, results.with_name("newer.jsonl")]))
    row2 = next(ln for ln in t2.splitlines() if ln.startswith("| quick"))
    assert [c.strip() for c in row2.strip("|").split(" | ")][4] == "0.5"


def test_readme_markers_replaced_idempotently(tmp_path: Path, ran: tuple) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{harness.BEGIN}\nold table\n{harness.END}\nafter\n")
    block = harness.render_table(harness.read_records([ran[1]]))
    assert harness.write_readme(block, readme) is True
    once = readme.read_text()
    assert "old table" not in once and "| quick" in once
    assert once.startswith("# title\n\nbefore\n") and once.endswith(f"{harness.END}\nafter\n")
    assert harness.write_readme(block, readme) is False
    assert readme.read_text() == once
    with pytest.raises(ValueError, match="markers"):
        harness.replace_block("no markers here", block)


def test_project_readme_has_markers() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert text.count(harness.BEGIN) == 1 and text.count(harness.END) == 1
    assert text.index(harness.BEGIN) < text.index(harness.END)


def test_cli_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture, ran: tuple) -> None:
    assert harness.main(["run", str(tmp_path / "missing.py")]) == 2
    assert "no such bench file" in capsys.readouterr().err
    assert harness.main(["run", str(ran[0]), "--only", "nonexistent-case"]) == 2
    assert "matches" in capsys.readouterr().err
    assert harness.main(["run", str(ran[0]), "--repeats", "0"]) == 2
    assert harness.main(["run", str(ran[0]), "--baseline-commit", "not-a-commit-zzz"]) == 2
    assert "not a commit" in capsys.readouterr().err
    assert harness.main(["run", str(ran[0]), "--set", "novalue"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert harness.main(["table", "--results", str(ran[1])]) == 0
    assert "| quick" in capsys.readouterr().out
    assert json.loads(ran[1].read_text().splitlines()[0])["schema"] == 1


# -- per-side timeouts and the compared figure ------------------------------------------------------------

FAKE2 = '''
import os, sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
from harness import COMMIT, case, against, peer

TREE = {tree!r}

def forever() -> dict:
    time.sleep(30)
    return {{}}

def fast() -> dict:
    return {{"rate": 100.0, "cost": 8.0}}

def no_rate() -> dict:
    return {{"cost": 1.0}}

@case(name="baseline own timeout", baseline=against(forever, timeout=1.0))
def c1() -> dict:
    return {{}}

@case(name="baseline default timeout", baseline=forever, timeout=1.0)
def c2() -> dict:
    return {{}}

@case(name="baseline longer timeout", baseline=peer("numpy", fast, timeout=30.0), timeout=20.0)
def c3() -> dict:
    return {{}}

@case(name="commit baseline timeout", baseline=COMMIT, baseline_timeout=1.0)
def c4() -> dict:
    if Path.cwd().resolve() == Path(TREE).resolve():  # the baseline tree's side only
        time.sleep(30)
    return {{}}

@case(name="rate higher", baseline=fast, metric=("rate", "higher"))
def c5() -> dict:
    time.sleep(0.05)  # slower in seconds, faster by its own rate
    return {{"rate": 300.0}}

@case(name="cost lower", baseline=fast, metric=("cost", "lower"))
def c6() -> dict:
    return {{"cost": 2.0}}

@case(name="metric missing", baseline=no_rate, metric=("rate", "higher"))
def c7() -> dict:
    return {{"rate": 5.0}}
'''


@pytest.fixture(scope="module")
def ran2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The second fake bench file, run once against a fake baseline tree (an empty ``optmech/``)."""
    d = tmp_path_factory.mktemp("bench2")
    tree = d / "tree"
    (tree / "optmech").mkdir(parents=True)
    (tree / "optmech" / "__init__.py").write_text("")
    bench = d / "bench_fake2.py"
    bench.write_text(FAKE2.format(bench=str(ROOT / "benchmarks"), tree=str(tree)))
    results = d / "fake2.jsonl"
    records = harness.run_file(bench, repeats=1, timeout=60, baseline_tree=tree, results=results,
                               echo=lambda s: None)
    return results, {r["case"]: r for r in records}


def test_baseline_timeouts(ran2: tuple) -> None:
    recs = ran2[1]
    own = recs["baseline own timeout"]
    assert own["status"] == "baseline_failed" and own["ours"]["ok"] is True
    assert own["baseline"]["error"]["type"] == "Timeout" and "killed after 1 s" in own["baseline"]["error"]["message"]
    assert own["baseline"]["timeout_s"] == 1.0 and own["ours"]["timeout_s"] == 60.0
    dflt = recs["baseline default timeout"]  # no baseline timeout: the case's
    assert dflt["baseline"]["timeout_s"] == 1.0 and dflt["ours"]["timeout_s"] == 1.0
    assert dflt["baseline"]["error"]["type"] == "Timeout" and dflt["ours"]["ok"] is True
    longer = recs["baseline longer timeout"]  # a peer's own timeout wins over the case's
    assert longer["status"] == "ok" and longer["baseline"]["timeout_s"] == 30.0 and longer["ours"]["timeout_s"] == 20.0
    com = recs["commit baseline timeout"]
    assert com["baseline"]["kind"] == "commit" and com["baseline"]["timeout_s"] == 1.0
    assert com["status"] == "baseline_failed" and com["baseline"]["error"]["type"] == "Timeout"
    assert com["ours"]["ok"] is True and com["ours"]["timeout_s"] == 60.0


def test_metric_ratio(ran2: tuple) -> None:
    results, recs = ran2
    hi = recs["rate higher"]
    assert hi["metric"] == {"key": "rate", "better": "higher"}
    assert hi["ours"]["metric_median"] == 300.0 and hi["baseline"]["metric_median"] == 100.0
    assert hi["ratio"] == pytest.approx(3.0)  # 300/100, not the seconds' ratio
    assert hi["ours"]["seconds_median"] >= 0.05  # the seconds are still recorded
    lo = recs["cost lower"]
    assert lo["metric"] == {"key": "cost", "better": "lower"} and lo["ratio"] == pytest.approx(0.25)
    miss = recs["metric missing"]
    assert miss["status"] == "baseline_failed" and miss["baseline"]["error"]["type"] == "MissingMetric"
    assert miss["ratio"] is None and miss["ours"]["ok"] is True
    secs = recs["baseline longer timeout"]
    assert secs["metric"] == {"key": "seconds", "better": "lower"}
    assert secs["ratio"] == pytest.approx(secs["ours"]["seconds_median"] / secs["baseline"]["seconds_median"])
    table = harness.render_table(harness.read_records([results]))
    row = next(ln for ln in table.splitlines() if ln.startswith("| rate higher"))
    assert [c.strip() for c in row.strip("|").split(" | ")][4] == "3 (rate, higher is better)"


def test_bad_case_options() -> None:
    def f() -> dict:
        return {}

    with pytest.raises(ValueError, match="metric"):
        harness.add_case(f, "bad metric", metric=("rate", "up"))
    with pytest.raises(ValueError, match="metric"):
        harness.add_case(f, "bad seconds", metric=("seconds", "higher"))
    with pytest.raises(ValueError, match="baseline_timeout"):
        harness.add_case(f, "bad timeout", baseline_timeout=-1.0)
    with pytest.raises(ValueError, match="timeout"):
        harness.against(f, timeout=0)
    assert harness.add_case(f, "by name", metric="cost").metric == ("cost", "lower")
