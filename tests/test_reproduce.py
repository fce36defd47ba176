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
            assert spec.reproduce["seed"] in {"000", "001", "002", "003", "004", "conjecture", "comparison"}
            assert spec.problems
            names.add(spec.name)
    assert {p.stem for p in paths} == names          # a spec's name is its file name
    full = {s.name: len(s.problems) for s in load_catalogue()}
    quick = {s.name: len(s.problems) for s in load_catalogue(quick=True)}
    assert all(quick[n] <= full[n] for n in full)
    for item in ("000-fig2.5", "000-fig2.7", "000-fig3.2", "002-bound", "002-cor4.12", "002-thm4.25", "003-fig7",
                 "003-fig8", "003-fig9", "004-mse", "conjecture", "comparison-gaussian-gap"):
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
    z = _spec(problem={"privacy": "approx"}, zip={"epsilon": [0.1, 0.2], "delta": [0.1, 0.2]},
              quick={"epsilon": [0.1], "delta": [0.1]})  # a valid problem: every row is checked (issue 36)
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
    if (out / "README.md").exists():   # kept: a later test reruns part of the catalogue into the same folder
        (out.parent / "README.quick.md").write_text((out / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    return out, p


def _quick_text(quick_run) -> str:
    """The whole quick report as first written (before any test reran part of the catalogue into its folder)."""
    out, _ = quick_run
    return (out.parent / "README.quick.md").read_text(encoding="utf-8")


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


# -- the report a reviewer can check: citations, paper values, what --quick leaves out (issue 18) ----------

def _sections(text: str) -> dict[str, str]:
    """The report's sections by spec name: from its '## NAME:' heading to the next '## ' heading."""
    out = {}
    for chunk in text.split("\n## ")[1:]:
        head = chunk.split("\n", 1)[0]
        if ":" in head:
            out[head.split(":", 1)[0]] = chunk
    return out


def _header_rows(section: str) -> list[list[str]]:
    """The header rows of the markdown tables in a section, as lists of cells."""
    lines = section.splitlines()
    return [[c.strip() for c in lines[i].strip().strip("|").split(" | ")] for i in range(len(lines) - 1)
            if lines[i].startswith("| ") and lines[i + 1].startswith("|---")]


#: sections whose paper prints numbers (closed forms, constants, bounds); [QHFL22] Figs. 8-10 print curves only
NUMERIC = {"000-fig2.5-gamma-square", "000-fig2.7-staircase-gain", "000-fig3.2-gamma-2d", "002-bound-tables",
           "002-cor4.12-4.15-limits", "002-thm4.25-cor4.28-multid", "003-fig7-optimum", "004-mse",
           "conjecture-staircase-d3-5"}


def test_every_section_cites_its_paper_in_full(quick_run):
    from optmech.sources import REFERENCES

    secs = _sections(_quick_text(quick_run))
    specs = load_catalogue(quick=True)
    assert set(secs) >= {s.name for s in specs}
    for spec in specs:
        seed = spec.reproduce["seed"]
        if seed == "comparison":                # published mechanisms against V*: each work its item names, in full
            from optmech.sources import citation, tags_in
            tags = tags_in(spec.reproduce["item"])
            assert tags and all(citation(t) in secs[spec.name] for t in tags), spec.name
            continue
        tag = TAGS.get(seed, "GKOV15")          # the conjecture checks come from [GKOV15] Thm 2
        assert f"**Paper:** [{tag}] {REFERENCES[tag]}" in secs[spec.name], spec.name
    assert "[GKOV15] (conjecture)" in _quick_text(quick_run)   # the summary table's paper
    # a section that also cites another paper names it in full too
    assert f"**Also cited:** [Geng13] {REFERENCES['Geng13']}" in secs["002-cor4.12-4.15-limits"]


def test_paper_states_stands_beside_the_certified_bracket(quick_run):
    secs = _sections(_quick_text(quick_run))
    for spec in load_catalogue(quick=True):
        heads = _header_rows(secs[spec.name])
        assert any("paper states" in cells for cells in heads), spec.name           # the table of statements
        if spec.name in NUMERIC:
            beside = [(a, b) for cells in heads for a, b in zip(cells, cells[1:])
                      if a.startswith("paper states") and b.startswith("certified bracket")]
            assert beside, (spec.name, heads)
    # a qualitative claim is quoted
    assert '"the Wasserstein distance and the adjacency are positively correlated"' in secs["003-fig9-w-vs-m"]
    assert "| stated |" not in _quick_text(quick_run)


def _fmt_value(v) -> str:
    return f"{float(v):g}" if isinstance(v, (int, float)) else str(v)


def test_each_section_says_what_quick_leaves_out(quick_run):
    from optmech.sweep import load_spec

    _, p = quick_run
    secs = _sections(_quick_text(quick_run))
    scopes = {s["name"]: s["scope"] for s in json.loads(p.stdout)["sections"]}
    for path in catalogue_paths():
        full = load_spec(str(path)).problems
        quick = load_spec(str(path), quick=True).problems
        text = secs[path.stem]
        if len(quick) == len(full):
            assert f"*Quick mode runs the full grid: {len(full)} problems.*" in text, path.stem
            continue
        line = next(ln for ln in text.splitlines() if ln.startswith("*Quick mode:"))
        assert line.startswith(f"*Quick mode: {len(quick)} of {len(full)} problems (") and "the full run " in line
        assert line.strip("*") == scopes[path.stem]
        adds = line.split("the full run ", 1)[1]
        for key in ("epsilon", "delta", "sensitivity", "dim"):
            missing = {p[key] for p in full if key in p} - {p[key] for p in quick if key in p}
            for v in missing:
                assert _fmt_value(v) in adds, (path.stem, key, v, line)
    assert "the full run adds ε ∈ {0.1, 0.25, 1, 3, 5, 7.5, 15}" in secs["000-fig2.5-gamma-square"]
    assert "ε = δ ∈ {0.25, 0.05, 0.01}" in secs["002-cor4.12-4.15-limits"]       # zipped axes named together
    assert "uses resolution 4 instead of 2" in secs["000-fig3.2-gamma-2d"]       # [quick] replaces an axis


def test_errata_in_the_report_read_as_sentences(quick_run):
    from optmech.errata import ERRATA, errata_for

    text = _quick_text(quick_run)
    secs = _sections(text)
    for name, body in secs.items():
        for e in errata_for(name):
            assert f"- {e.sentence()}" in body, (name, e.where)
    for e in ERRATA:
        if e.value is not None:
            # the old template appended " = value" to the correction: "… at m = 15, Δ = 1 = 0.9375"
            assert f"= {e.value_text()}\n" not in text and f"Corrected value: {e.value_text()} (" in text
    assert "Δ = 1 = 0.9375" not in text and "not 5/3 = " not in text and "(printed → corrected)" not in text


def test_quick_mode_sentence_on_synthetic_specs():
    from optmech.reproduce.scope import scope_sentence

    def both(data):
        return parse_spec(data).problems, parse_spec(data, quick=True).problems

    f, q = both(_spec(grid={"epsilon": [1.0, 2.0, 3.0], "cost": ["abs", "square"]}, quick={"epsilon": [2.0]}))
    assert scope_sentence(f, q) == "Quick mode: 2 of 6 problems (ε = 2); the full run adds ε ∈ {1, 3}."
    assert scope_sentence(f, q, quick_run=False) == ("Full run: 6 problems; `--quick` runs 2 of them (ε = 2), "
                                                      "leaving out ε ∈ {1, 3}.")
    f, q = both(_spec(problem={"privacy": "approx"}, zip={"epsilon": [0.1, 0.05, 0.01], "delta": [0.1, 0.05, 0.01]},
                      quick={"epsilon": [0.1], "delta": [0.1]}))
    assert scope_sentence(f, q) == "Quick mode: 1 of 3 problems (ε = δ = 0.1); the full run adds ε = δ ∈ {0.05, 0.01}."
    f, q = both(_spec(grid={"epsilon": [1.0], "resolution": [4]}, quick={"resolution": [2]}))
    assert scope_sentence(f, q) == "Quick mode: 1 of 1 problem (resolution = 2); the full run uses resolution 4 instead of 2."
    f, q = both(_spec(grid={"epsilon": [1.0, 2.0]}))
    assert scope_sentence(f, q) == "Quick mode runs the full grid: 2 problems."


def test_md_table_escapes_pipes_inside_cells():
    from optmech.reproduce.report import md_table

    t = md_table(["a", "b"], [["E|X|", "E\\|θ\\|"]])
    row = t.splitlines()[2]
    assert row == "| E\\|X\\| | E\\|θ\\| |"
    assert len([c for c in row.replace("\\|", "").split("|")]) == 4   # two cells, not four
