"""optmech reproduce: the catalogue, its spec features ([zip], [quick], [reproduce]), the seed-000/002
reports, and the end-to-end quick run with its report."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from optmech.errors import SpecError
from optmech.reproduce import REPORTS, catalogue_paths, load_catalogue
from optmech.reproduce.report import Context
from optmech.reproduce import seed000, seed002
from optmech.sources import TAGS
from optmech.sweep import parse_spec, normalised, run_job

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, CI="1")
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=env)


# -- the catalogue -------------------------------------------------------------------------------

def test_catalogue_is_the_problems_folder_and_every_spec_validates():
    paths = catalogue_paths()
    assert {p.name for p in paths} == {p.name for p in (ROOT / "problems").glob("*.toml")}
    names = set()
    for quick in (False, True):
        for spec in load_catalogue(quick=quick):
            assert spec.reproduce["report"] in REPORTS
            assert spec.reproduce["seed"] in {"000", "001", "002", "003", "004", "conjecture"}
            assert spec.problems
            names.add(spec.name)
    assert {p.stem for p in paths} == names          # a spec's name is its file name
    full = {s.name: len(s.problems) for s in load_catalogue()}
    quick = {s.name: len(s.problems) for s in load_catalogue(quick=True)}
    assert all(quick[n] <= full[n] for n in full)
    for item in ("000-fig2.5", "000-fig2.7", "000-fig3.2", "002-bound", "002-cor4.12", "002-thm4.25", "003-fig7",
                 "003-fig8", "003-fig9", "004-mse", "conjecture"):
        assert any(n.startswith(item) for n in names), item


def test_only_filters_and_refuses_no_match():
    assert [s.name for s in load_catalogue(only=["fig2.7"])] == ["000-fig2.7-staircase-gain"]
    with pytest.raises(SpecError, match="matches no catalogue spec"):
        load_catalogue(only=["no-such-experiment"])


# -- spec features -------------------------------------------------------------------------------

def _spec(**tables) -> dict:
    return {"name": "t", **tables}


def test_zip_steps_axes_together_times_the_grid():
    s = parse_spec(_spec(problem={"privacy": "approx"}, grid={"cost": ["abs", "square"]},
                         zip={"epsilon": [0.1, 0.05], "delta": [0.1, 0.05]}))
    pairs = [(p["cost"], p["epsilon"], p["delta"]) for p in s.problems]
    assert pairs == [("abs", 0.1, 0.1), ("abs", 0.05, 0.05), ("square", 0.1, 0.1), ("square", 0.05, 0.05)]


def test_quick_replaces_grid_and_zip_axes():
    data = _spec(grid={"cost": ["abs", "square"], "epsilon": [1.0, 2.0, 3.0]}, quick={"epsilon": [2.0]})
    assert len(parse_spec(data).problems) == 6
    assert [(p["cost"], p["epsilon"]) for p in parse_spec(data, quick=True).problems] == [("abs", 2.0), ("square", 2.0)]
    z = _spec(zip={"epsilon": [0.1, 0.2], "delta": [0.1, 0.2]}, quick={"epsilon": [0.1], "delta": [0.1]})
    assert len(parse_spec(z, quick=True).problems) == 1


@pytest.mark.parametrize("data, message", [
    (_spec(zip={"epsilon": [0.1, 0.2], "delta": [0.1]}), "one length"),
    (_spec(zip={"epsilon": [0.1, 0.2], "delta": [0.1, 0.2]}, quick={"epsilon": [0.1]}), "one length"),
    (_spec(zip={"epsilon": []}), "empty list"),
    (_spec(grid={"epsilon": [1.0]}, zip={"epsilon": [1.0]}), "swept in both"),
    (_spec(problem={"epsilon": 1.0}, zip={"epsilon": [1.0]}), "fixed in \\[problem\\] and swept in \\[zip\\]"),
    (_spec(problem={"epsilon": 1.0, "cost": "abs"}, quick={"cost": ["abs"]}), "may only shorten"),
    (_spec(grid={"epsilon": [1.0]}, quick={"epsilon": []}), "empty list"),
    (_spec(grid={"epsilon": [1.0]}, quick={"epsilon": ["x"]}), "must be a number"),
    (_spec(problem={"epsilon": 1.0}, reproduce={"seed": "000", "item": "x"}), "needs report"),
    (_spec(problem={"epsilon": 1.0}, reproduce={"seed": "000", "item": "x", "report": "nope"}), "unknown report"),
    (_spec(problem={"epsilon": 1.0}, reproduce={"seed": "000", "item": "x", "report": "gamma_2d", "page": 3}),
     "unknown key"),
    (_spec(problem={"epsilon": 1.0}, reproduce={"seed": 0, "item": "x", "report": "gamma_2d"}), "non-empty string"),
    (_spec(problem={"epsilon": 1.0}, reproduce="000"), "must be a table"),
])
def test_bad_spec_tables_are_one_line_errors(data, message):
    with pytest.raises(SpecError, match=message) as exc:
        parse_spec(data)
    assert "\n" not in str(exc.value)


# -- the seed's formulas, independently ------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 10.0, 25.0])
def test_seed000_closed_forms_are_the_minima_of_the_staircase_costs(eps):
    b = math.exp(-eps)
    # Thm 2.5 and 2.7: closed-form γ* minimises (A.3) / (A.25), and V* is the cost there
    assert seed000.gamma_abs(b) == pytest.approx(seed000.argmin_gamma(seed000.cost_abs, b), abs=1e-6)
    assert seed000.v_star_abs(eps) == pytest.approx(seed000.cost_abs(seed000.gamma_abs(b), b), rel=1e-10)
    assert seed000.gamma_square(b) == pytest.approx(seed000.argmin_gamma(seed000.cost_square, b), abs=1e-6)
    assert seed000.v_star_square(eps) == pytest.approx(seed000.cost_square(seed000.gamma_square(b), b), rel=1e-9)
    # d = 2: the quartic's larger root minimises (3.7)
    assert seed000.gamma_2d(b) == pytest.approx(seed000.argmin_gamma(seed000.cost_2d, b), abs=1e-6)


def test_seed000_2d_cost_reduces_to_the_moment_formula():
    # (3.7) against E‖X‖₁ = Δ(d/(d+1))N_{d+1}/N_d (multidim.md §3), with c_k = Li_{−k}(b), at d = 2
    import mpmath

    for eps, g in ((1.0, 0.3), (2.0, 0.7)):
        b = math.exp(-eps)
        c = [1 / (1 - b)] + [float(mpmath.polylog(-k, b)) for k in range(1, 4)]

        def N(m):
            return sum(math.comb(m, j) * c[m - j] * (b + (1 - b) * g**j) for j in range(1, m + 1))
        assert seed000.cost_2d(g, b) == pytest.approx(2 / 3 * N(3) / N(2), rel=1e-12)


def test_seed002_constants():
    assert seed002.G1 == pytest.approx(1 - 2 * math.log(1.5))
    c = seed002.c289()
    assert 0.0177 == pytest.approx(c, abs=5e-5)          # the printed value, to its 3 digits
    assert seed002._printed_matches(1 / (4 * seed002.G1), 1.32, 3)
    assert not seed002._printed_matches(1 / (12 * seed002.G2), 5 / 3, 3)   # "≈ 5/3" is a coarse rounding


# -- the reports on real results -------------------------------------------------------------------

def _ctx(tmp_path, name: str, quick: bool = True, results=None) -> Context:
    spec = next(s for s in load_catalogue(quick=quick) if s.name == name)
    rows = []
    for p in spec.problems:
        q = normalised(p)
        rows.append((q, results(q) if results else run_job(q)))
    return Context(spec, rows, tmp_path, quick)


def test_staircase_gain_report_agrees_with_the_seed(tmp_path):
    sec = REPORTS["staircase_gain"](_ctx(tmp_path, "000-fig2.7-staircase-gain"))
    assert sec.checks and all(c.ok for c in sec.checks), [(c.claim, c.optmech) for c in sec.checks]
    assert any("15-fold" in c.seed for c in sec.checks) and any("23-fold" in c.seed for c in sec.checks)
    assert (tmp_path / sec.figures[0]).stat().st_size > 10_000


def test_a_bracket_that_excludes_the_closed_form_is_reported_as_a_difference(tmp_path):
    def shifted(q):                       # a wrong certified bracket: 10 % above the truth
        r = run_job(q)
        r["lower_bound"] *= 1.1
        r["upper_bound"] *= 1.1
        return r
    sec = REPORTS["gamma_square"](_ctx(tmp_path, "000-fig2.5-gamma-square", results=shifted))
    bad = [c for c in sec.checks if "optimal" in c.claim]
    assert bad and bad[0].ok is False


def test_failed_problems_are_listed_not_hidden(tmp_path):
    sec = REPORTS["approx_limits"](_ctx(tmp_path, "002-cor4.12-4.15-limits", results=lambda q: None))
    assert sec.failed == len(load_catalogue(quick=True, only=["002-cor4.12"])[0].problems)
    assert "failed" in sec.body[1]
    assert all(c.ok is not True for c in sec.checks if "constant" in c.claim)


def test_bound_tables_flag_the_missing_side_conditions(tmp_path):
    sec = REPORTS["approx_bound_tables"](_ctx(tmp_path, "002-bound-tables"))
    by = {c.claim.split(":")[0]: c for c in sec.checks}
    assert by["Thms 1, 2, 8"].ok and by["Thm 1 (Δ = 1, ε = 0)"].ok
    assert by["Cors 4, 5, 12–15 use the Thm 2/8 formulas without (28)/(61)"].ok is False   # Δ = 1, ε > 0


# -- end to end ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro") / "report"
    p = _cli("reproduce", "--quick", "--out", str(out), "--workers", "2", "--json")
    return out, p


def test_reproduce_quick_writes_its_report(quick_run):
    out, p = quick_run
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["failed"] == 0 and summary["computed"] > 0
    text = (out / "README.md").read_text(encoding="utf-8")
    for spec in load_catalogue(quick=True):
        assert f"## {spec.name}:" in text
    assert "Errata we know of" in text and "15-fold" in text and "23-fold" in text
    assert "## References" in text and all(f"**[{t}]**" in text for t in TAGS.values())
    assert "*Seed " not in text and "| seed |" not in text  # papers are named by tag, not by catalogue code
    pngs = list((out / "figures").glob("*.png"))
    assert len(pngs) >= 5
    for s in summary["sections"]:
        for f in s["figures"]:
            assert (out / f).is_file() and f"({f})" in text
    assert sum(s["agreed"] for s in summary["sections"]) >= 20
    assert not (out / "README.md.part").exists()


def test_reproduce_again_reuses_the_store(quick_run):
    out, _ = quick_run
    p = _cli("reproduce", "--quick", "--out", str(out), "--workers", "1", "--only", "000", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["computed"] == 0 and s["skipped"] > 0


@pytest.mark.parametrize("args, message", [
    (["--only", "nothing-like-this"], "matches no catalogue spec"),
    (["--workers", "0"], "workers must be at least 1"),
    (["--only", ","], "--only needs at least one name"),
])
def test_reproduce_bad_input(tmp_path, args, message):
    p = _cli("reproduce", "--quick", "--out", str(tmp_path / "r"), *args)
    assert p.returncode == 2 and message in p.stderr and p.stderr.count("\n") == 1
    assert not (tmp_path / "r" / "README.md").exists()


def test_reproduce_out_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    p = _cli("reproduce", "--quick", "--out", str(f))
    assert p.returncode == 2 and "not a folder" in p.stderr
    assert f.read_text() == "x"


def test_reproduce_list_and_run_quick_on_a_catalogue_spec(tmp_path):
    p = _cli("reproduce", "--list", "--out", str(tmp_path))
    assert p.returncode == 0 and "000-fig2.7-staircase-gain: [Geng13], Fig. 2.7" in p.stdout
    spec = ROOT / "problems" / "000-fig2.7-staircase-gain.toml"
    p = _cli("run", str(spec), "--quick", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["computed"] == len(load_catalogue(quick=True, only=["fig2.7"])[0].problems)
