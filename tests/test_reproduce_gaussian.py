"""The catalogue entry "How far from optimal is the Gaussian?" (problems/comparison-gaussian-gap.toml) and its report
(optmech/reproduce/gaussian.py): the spec in quick and full form, the certified ratio intervals on real solves
(δ = 0.01, ε ∈ {0.5, 1}, target gap 1e-3: a few seconds), the heatmap, and the handling of wide and failed rows;
the ℓ2 panel in d = 2 on the spec's d = 2 problems at δ = 0.01, ε ∈ {0.5, 1} with a 2 s time limit (no LP fits it:
the fallback bracket [0, best reference], under a second in all), its unbounded ratio intervals and per-panel findings.
"""

from __future__ import annotations

import copy
import math
import re

import pytest

from optmech.reproduce import REPORTS, load_catalogue
from optmech.reproduce.gaussian import AG, CG, TL, Ratio, analytic_sigma, draw_heatmap, gap_rows, interval_text
from optmech.reproduce.report import Context
from optmech.reproduce.scope import spec_scope
from optmech.sweep import normalised, run_job

NAME = "comparison-gaussian-gap"
TITLE = "How far from optimal is the Gaussian?"


def _spec(quick: bool):
    return next(s for s in load_catalogue(quick=quick) if s.name == NAME)


def _ag_cost(eps: float, delta: float, cost: str) -> float:
    """E|Z| = σ√(2/π) or E Z² = σ² with σ of optmech.mechanisms.gaussian (the report recomputes σ its own way)."""
    from optmech.mechanisms.gaussian import analytic_gaussian_sigma

    s = analytic_gaussian_sigma(eps, delta, 1.0)
    return s * math.sqrt(2 / math.pi) if cost == "abs" else s * s


# -- the spec ---------------------------------------------------------------------------------------

def test_spec_validates_in_full_and_quick_form():
    from optmech.sources import section_tags

    full, quick = _spec(False), _spec(True)
    assert full.reproduce == {"seed": "comparison", "item": full.reproduce["item"], "report": "gaussian_gap",
                              "title": TITLE}
    assert full.reproduce["report"] in REPORTS
    grid = {(p["epsilon"], p["delta"], p["dim"], p["norm"], p["cost"], p["time_limit"]) for p in full.problems}
    rows = ((1, "l1", "abs", 300), (1, "l1", "square", 300),
            *((dim, "l2", c, 60) for dim in (2, 3, 5, 10, 30, 100) for c in ("l2", "l2sq")))
    assert grid == {(e, d, *r) for e in (0.1, 0.5, 1.0, 2.0, 5.0) for d in (1e-6, 1e-4, 1e-2) for r in rows}
    assert len(full.problems) == 210
    for p in full.problems + quick.problems:
        assert (p["privacy"], p["domain"], p["sensitivity"]) == ("approx", "continuous", 1)
    assert {p["target_gap"] for p in full.problems} == {1e-4}
    # quick mode: the 1-D rows only, with the solver's default time limit written out
    assert {(p["epsilon"], p["delta"], p["dim"], p["norm"], p["cost"], p["target_gap"], p["time_limit"])
            for p in quick.problems} == {(e, 0.01, 1, "l1", c, 1e-3, 300) for e in (0.5, 1.0) for c in ("abs", "square")}
    from optmech.budget import DEFAULT_TIME_LIMIT
    assert DEFAULT_TIME_LIMIT == 300
    # every problem is one the solver accepts (time_limit goes to optmech.solve, not to the problem)
    from optmech.spec import Problem
    for p in full.problems:
        Problem.from_params({k: v for k, v in p.items() if k != "time_limit"})
    assert section_tags("comparison", full.reproduce["item"])[:2] == ["BW18", "GDGK20"]


def test_scope_sentence_names_what_quick_leaves_out():
    from optmech.reproduce import catalogue_paths

    path = next(p for p in catalogue_paths() if p.stem == NAME)
    line = spec_scope(path)
    assert line.startswith("Quick mode: 4 of 210 problems (ε ∈ {0.5, 1}, δ = 0.01")
    assert "adds ε ∈ {0.1, 2, 5}, δ ∈ {1e-06, 0.0001}" in line and "target gap 0.0001 instead of 0.001" in line
    assert "d ∈ {2, 3, 5, 10, 30, 100}, cost ∈ {l2, l2sq} and (norm, time limit (s)) = (l2, 60)" in line


def test_the_independent_sigma_agrees_with_optmech():
    from optmech.mechanisms.gaussian import analytic_gaussian_sigma

    for eps, delta in ((0.1, 1e-6), (0.5, 1e-4), (1.0, 1e-2), (2.0, 1e-6), (5.0, 1e-6), (5.0, 1e-2)):
        assert analytic_sigma(eps, delta) == pytest.approx(analytic_gaussian_sigma(eps, delta, 1.0), rel=1e-11)


def test_intervals_are_rounded_outward_and_points_only_when_narrow():
    assert interval_text(1.4241234, 1.4242876) == "[1.4241, 1.4243]"
    assert interval_text(2.0, 2.0) == "[2.0000, 2.0000]"
    assert interval_text(1.2, 1.3) == "[1.1999, 1.3001]"              # the doubles 1.2 < 1.2 and 1.3 > 1.3
    r = Ratio(1.25, 1.375)
    assert r.wide and r.text() == "[1.2500, 1.3750]" and "≈" not in r.text()
    assert Ratio(1.0, 1.0005).text() == "≈1.000 [1.0000, 1.0005]"
    assert Ratio.of(2.0, {"certified": True, "lower_bound": 1.0, "upper_bound": 1.25}) == Ratio(1.6, 2.0)
    assert Ratio.of(2.0, {"certified": False, "lower_bound": 1.0, "upper_bound": 1.25}) is None


# -- the report on real solves ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def solved():
    """The quick spec's four problems (δ = 0.01, ε ∈ {0.5, 1}, |x| and x², target gap 1e-3), solved once."""
    spec = _spec(True)
    return spec, [(normalised(p), run_job(normalised(p))) for p in spec.problems]


def report_section(tmp_path, solved, name: str, change=None):
    """(context, section) of the report ``name`` on solved rows, each row first passed through ``change``."""
    spec, rows = solved
    rows = copy.deepcopy(rows)
    if change:
        rows = [(p, change(p, r)) for p, r in rows]
    ctx = Context(spec, rows, tmp_path, True)
    return ctx, REPORTS[name](ctx)


def _report(tmp_path, solved, change=None):
    return report_section(tmp_path, solved, "gaussian_gap", change)


def _ratio_cells(text: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in re.findall(r"\[(\d+\.\d+), (\d+\.\d+)\]", text)]


def test_report_on_real_solves(tmp_path, solved):
    ctx, sec = _report(tmp_path, solved)
    assert sec.title == TITLE and sec.name == NAME and sec.failed == 0
    text = "\n".join(sec.body)
    assert "**|x|, d = 1**" in text and "**x², d = 1**" in text
    assert "This run has d = 1 rows only (quick mode leaves out the spec's ℓ2 panel in d = 2)." in text
    assert "invalid (ε ≥ 1)" in text                             # the classic Gaussian at ε = 1
    for tag in ("BW18", "GDGK20", "DR14", "SLW25"):
        from optmech.sources import citation
        assert citation(tag) in text, tag
    # every ratio interval contains V_ref/V for V at both ends of the certified bracket (computed here)
    rows = gap_rows(ctx)
    assert len(rows) == 4
    for row in rows:
        r = row.result
        assert r["certified"] and r["relative_gap"] <= 1e-3
        v = _ag_cost(row.epsilon, row.delta, row.cost)
        q = row.ratios[AG]
        for x in (v / r["upper_bound"], v / r["lower_bound"]):
            assert q.lo * (1 - 1e-12) <= x <= q.hi * (1 + 1e-12)
        # and so does the interval printed in the row's table cell (rounded outward)
        head = next(i for i, b in enumerate(sec.body) if b.startswith("**|x|, d = 1**" if row.cost == "abs" else "**x², d = 1**"))
        line = next(ln for ln in sec.body[head + 1].splitlines() if ln.startswith(f"| {row.epsilon:g} | {row.delta:g} |"))
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        lo, hi = _ratio_cells(cells[5])[0]
        assert lo <= v / r["upper_bound"] and v / r["lower_bound"] <= hi, (cells[5], v)
        assert row.ratios[TL] and row.ratios[TL].lo > 1            # the truncated Laplace is not optimal here
    # the statements: none differs on certified results
    assert sec.checks and not any(c.ok is False for c in sec.checks), [(c.claim, c.optmech) for c in sec.checks]
    assert any("[BW18]" in c.claim for c in sec.checks) and any("[GDGK20]" in c.claim for c in sec.checks)
    # the findings are computed: the worst analytic-Gaussian cell for x² is named with its certified lower end
    sq = [row for row in rows if row.cost == "square"]
    worst = max(sq, key=lambda row: row.ratios[AG].lo)
    assert (f"costs at least {worst.ratios[AG].lo:.3g} times the optimum at ε = {worst.epsilon:g}, "
            f"δ = {worst.delta:g}") in text
    # the heatmap
    assert sec.figures == [f"figures/{NAME}.png"]
    assert (tmp_path / sec.figures[0]).stat().st_size > 10_000


def test_a_wide_bracket_gives_an_interval_not_a_point(tmp_path, solved):
    def widen(p, r):          # a certified but wide bracket, as the solver returns at ε = 5
        if p["epsilon"] == 1.0 and p["cost"] == "abs":
            r["lower_bound"] *= 0.9
            r["relative_gap"] = (r["upper_bound"] - r["lower_bound"]) / r["upper_bound"]
            r["status"] = "gap_not_reached"
        return r
    ctx, sec = _report(tmp_path, solved, widen)
    row = next(row for row in gap_rows(ctx) if row.epsilon == 1.0 and row.cost == "abs")
    q = row.ratios[AG]
    assert q.wide and q.hi / q.lo == pytest.approx(row.result["upper_bound"] / row.result["lower_bound"], rel=1e-12)
    text = "\n".join(sec.body)
    line = next(ln for ln in text.splitlines() if ln.startswith("| 1 | 0.01 |") and "gap not reached" in ln)
    cell = [c.strip() for c in line.strip("|").split(" | ")][5]
    assert "≈" not in cell and cell == interval_text(q.lo, q.hi)
    assert "3 of 4 brackets reached the solver's target gap; the other 1 stopped short (status gap_not_reached)" in text
    assert "1 cell of the heatmap has a ratio interval wider than 1% (marked ≥ and hatched)" in text
    assert not any(c.ok is False for c in sec.checks)


def test_failed_problems_are_listed_not_fatal(tmp_path, solved):
    ctx, sec = _report(tmp_path, solved, lambda p, r: None if p["epsilon"] == 0.5 else r)
    assert sec.failed == 2
    assert "2 problems failed and are missing from this section" in "\n".join(sec.body)
    assert "failed" in "\n".join(sec.body) and sec.figures        # the rest is still reported and drawn
    ctx, sec = _report(tmp_path, solved, lambda p, r: None)
    assert sec.failed == 4 and not sec.figures


# -- the ℓ2 panel in d = 2 ------------------------------------------------------------------------------

def test_a_zero_lower_bound_gives_an_unbounded_interval():
    q = Ratio.of(2.0, {"certified": True, "lower_bound": 0.0, "upper_bound": 1.25})
    assert q == Ratio(1.6, math.inf) and not q.bounded and q.wide and q.width == math.inf
    assert q.text() == "≥ 1.6000" and interval_text(1.6, math.inf, 4) == "≥ 1.600"
    assert interval_text(1.2, math.inf) == "≥ 1.1999"                    # the lower end rounded down
    assert Ratio.of(2.0, {"certified": True, "lower_bound": 0.0, "upper_bound": 0.0}) is None      # no 0/0
    assert Ratio.of(0.0, {"certified": True, "lower_bound": 0.0, "upper_bound": 1.0}) is None
    assert Ratio.of(2.0, {"certified": True, "lower_bound": 1.0, "upper_bound": math.inf}) is None


def test_the_sweep_passes_time_limit_to_the_solve():
    from optmech.errors import SpecError
    from optmech.sweep import parse_spec

    with pytest.raises(SpecError, match="time_limit must be positive"):
        parse_spec({"name": "t", "problem": {"epsilon": 1.0, "time_limit": 0}})
    spec = parse_spec({"name": "t", "problem": {"epsilon": 1.0, "domain": "integer", "time_limit": 7}})
    assert normalised(spec.problems[0])["time_limit"] == 7.0
    assert run_job(spec.problems[0])["lp"]["budget"]["time_limit_s"] == 7.0


@pytest.fixture(scope="module")
def solved2d(solved):
    """The quick rows and the spec's d = 2 problems at δ = 0.01, ε ∈ {0.5, 1} with a 2 s time limit: no LP fits it,
    so each bracket is the fallback [0, best closed-form reference] (under a second for the four)."""
    spec, rows = solved
    d2 = [dict(p, time_limit=2) for p in _spec(False).problems
          if p["dim"] == 2 and p["delta"] == 0.01 and p["epsilon"] in (0.5, 1.0)]
    assert len(d2) == 4
    return spec, rows + [(normalised(p), run_job(normalised(p))) for p in d2]


def _positive_lower(p, r):
    """A positive certified lower bound at ε = 1 for ‖x‖₂ (the one d = 2 solve at 60 s gives such a bracket)."""
    if p["dim"] == 2 and p["epsilon"] == 1.0 and p["cost"] == "l2":
        r["lower_bound"] = 0.9 * r["upper_bound"]
        r["relative_gap"] = 0.1
    return r


def test_d2_rows_in_the_tables_and_the_heatmap(tmp_path, solved2d):
    ctx, sec = _report(tmp_path, solved2d, _positive_lower)
    text = "\n".join(sec.body)
    assert sec.failed == 0 and "This run has d = 1 rows only" not in text
    assert "**The ℓ2 panels in d = 2.**" in text and "time limit of 2 s" in text
    rows = gap_rows(ctx)
    assert {r.group for r in rows} == {(1, "l1", "abs"), (1, "l1", "square"), (2, "l2", "l2"), (2, "l2", "l2sq")}
    for name, cost in (("‖x‖₂", "l2"), ("‖x‖₂²", "l2sq")):
        head = next(i for i, b in enumerate(sec.body)
                    if b.startswith(f"**{name}, d = 2, l2 sensitivity** (2 problems; time limit 2 s per problem)"))
        table = sec.body[head + 1]
        for row in (r for r in rows if r.cost == cost):
            r = row.result
            assert r["certified"] and r["lp"]["budget"]["time_limit_s"] == 2.0
            assert row.values[TL] is None and row.recomputed[TL] is None        # 1-D only
            line = next(ln for ln in table.splitlines() if ln.startswith(f"| {row.epsilon:g} | {row.delta:g} |"))
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            assert cells[7] == "—"
            v, q = row.values[AG], row.ratios[AG]
            assert v == pytest.approx(analytic_sigma(row.epsilon, row.delta) ** 2 * 2 if cost == "l2sq" else
                                      analytic_sigma(row.epsilon, row.delta) * math.sqrt(math.pi / 2), rel=1e-12)
            if r["lower_bound"] == 0:
                assert not q.bounded and cells[5] == f"≥ {interval_text(q.lo, math.inf).split()[1]}"
                assert float(cells[5].split()[1]) <= v / r["upper_bound"] and "lower bound 0" in cells[3]
            else:
                lo, hi = _ratio_cells(cells[5])[0]
                assert lo <= v / r["upper_bound"] and v / r["lower_bound"] <= hi
            if row.epsilon >= 1:
                assert cells[6] == "invalid (ε ≥ 1)" and not row.valid[CG]
    assert not any(c.ok is False for c in sec.checks), [(c.claim, c.optmech) for c in sec.checks]
    assert sec.figures and (tmp_path / sec.figures[0]).stat().st_size > 10_000
    # the heatmap's data: a row of panels per group, the d = 2 cells annotated by their certified lower ends
    from matplotlib.figure import Figure

    from optmech.reproduce.gaussian import excess_text

    fig = Figure()
    draw_heatmap(fig, rows)
    panels = {ax.get_title(): [t.get_text() for t in ax.texts] for ax in fig.axes if ax.images}
    assert len(panels) == 6 and not any("Laplace" in t and "d = 2" in t for t in panels)   # no empty d = 2 panel
    ag = panels["(e) analytic Gaussian, ‖x‖₂, d = 2, l2 sensitivity"]
    assert sorted(ag) == sorted(excess_text(r.ratios[AG]) for r in rows if r.cost == "l2")


def test_findings_are_computed_per_panel(tmp_path, solved2d):
    ctx, sec = _report(tmp_path, solved2d, _positive_lower)
    rows = gap_rows(ctx)
    paras = {p.split(":**")[0].lstrip("*"): p for p in sec.body if p.startswith("**") and ":**" in p}
    one, two, sq2 = paras["|x|, d = 1"], paras["‖x‖₂, d = 2, l2 sensitivity"], paras["‖x‖₂², d = 2, l2 sensitivity"]
    # 1-D: ε = 0.5 and 1 at δ = 0.01, both brackets tight: the ratio's growth with ε is certified there ...
    assert "In this panel the ratio grows with ε at 1 of 1 value of δ" in one
    # ... but not in d = 2, where the ε = 0.5 interval is unbounded: counted over that panel's own rows
    assert "In this panel the ratio grows with ε at 0 of 1 value of δ" in two
    # the worst cell of each d = 2 panel, its lower end certified; the upper end only where the lower bound is positive
    for g, para in (((2, "l2", "l2"), two), ((2, "l2", "l2sq"), sq2)):
        rs = [r for r in rows if r.group == g]
        worst = max(rs, key=lambda r: r.ratios[AG].lo)
        assert f"costs at least {worst.ratios[AG].lo:.3g} times the optimum at ε = {worst.epsilon:g}" in para
        assert "The truncated Laplace [GDGK20] is a 1-D mechanism: it has no cell here." in para
        assert "0 reached the target gap" in para
    best = next(r for r in rows if r.group == (2, "l2", "l2") and r.ratios[AG].bounded)
    assert (f"at most {best.ratios[AG].hi:.3g} times at ε = 1, δ = 0.01 (the smallest certified upper end of the 1 cell "
            "with a positive lower bound)") in two
    assert "1 stopped short with relative gap 0.1; 1 has lower bound 0 (no LP fitted the time limit of 2 s)" in two
    assert "no cell of this panel has a positive certified lower bound, so no ratio here has an upper end" in sq2
    assert "2 have lower bound 0" in sq2
    # the d = 2 upper bounds are the audited radial shell laws, cheaper than every closed-form reference (even
    # within 2 s): the report says so only where a bound is no better than a closed form, which is not the case here
    for row in (r for r in rows if r.group[0] == 2):
        closed = [x["value"] for x in row.result["references"] if x["kind"] == "upper" and x["valid"]]
        assert row.result["upper_bound"] < min(closed)
    assert "certified upper bound is no better" not in sq2 and "certified upper bound is no better" not in one
    assert "All panels: 4 of 8 brackets reached the solver's target gap" in "\n".join(sec.body)


@pytest.fixture(scope="module")
def solved_d(solved2d):
    """solved2d and the ℓ2 rows in d = 5 at δ = 0.01, ε ∈ {0.5, 1} with a 2 s time limit (the radial path: an
    audited radial shell law, refined in the time the lower end leaves, and the marginal bound)."""
    spec, rows = solved2d
    d5 = [dict(p, dim=5, time_limit=2) for p in _spec(False).problems
          if p["dim"] == 2 and p["delta"] == 0.01 and p["epsilon"] in (0.5, 1.0)]
    return spec, rows + [(normalised(p), run_job(normalised(p))) for p in d5]


def test_the_panel_in_d(tmp_path, solved_d):
    """The Gaussian's ratio against d (issue 38): a table with a column per dimension, findings computed from the
    rows' certified intervals, and the figure."""
    from optmech.reproduce.gaussian import d_lines

    ctx, sec = report_section(tmp_path, solved_d, "gaussian_gap")
    text = "\n".join(sec.body)
    lines = d_lines(gap_rows(ctx))
    # |x| and x² at d = 1 join ‖x‖₂ and ‖x‖₂² at d = 2 and 5: four lines (2 costs × 2 values of ε)
    assert set(lines) == {(c, e, 0.01) for c in ("l2", "l2sq") for e in (0.5, 1.0)}
    assert all(set(line) == {1, 2, 5} for line in lines.values())
    assert "**The panel in d.**" in text and "| d = 1 | d = 2 | d = 5 |" in text
    for (c, e, dl), line in lines.items():
        pts = [(d, line[d].ratios[AG]) for d in sorted(line) if line[d].ratios[AG] is not None]
        (d0, q0), (d1, q1) = pts[0], pts[-1]
        # the d = 5 ratio has a lower end: the radial shell law's cost is certified, below the Gaussian's
        assert line[5].certified and q1.lo > 1
        assert f"is {q0.lo:.3g} at d = {d0} and {q1.lo:.3g} at d = {d1}" in text
    assert "**The Gaussian's gap against d.**" in text
    assert any(f.endswith(f"{NAME}-d.png") and (tmp_path / f).is_file() for f in sec.figures)
