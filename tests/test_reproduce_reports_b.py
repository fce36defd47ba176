"""Reports of [QHFL22], [KHP15] and the staircase conjecture, on real results of a few tiny problems."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from optmech.reproduce.report import REPORTS, Context
from optmech.sweep import SweepSpec, normalised, run_job

seed003 = importlib.import_module("optmech.reproduce.seed003")
seed004 = importlib.import_module("optmech.reproduce.seed004")
conjecture = importlib.import_module("optmech.reproduce.conjecture")

GAUSS, POISSON = "gaussian:0:10:-40:40", "poisson:5:0:30"
_CACHE: dict = {}


def _solve(p: dict) -> dict:
    key = tuple(sorted(normalised(p).items()))
    if key not in _CACHE:
        _CACHE[key] = run_job(p)
    return _CACHE[key]


def _ctx(tmp_path, name, seed, item, report, problems, failed=()):
    """A Context from real run_job results; ``failed`` problems get result None."""
    spec = SweepSpec(name, f"test spec {name}", tuple(problems) + tuple(failed),
                     {"seed": seed, "item": item, "report": report})
    rows = [(normalised(p), _solve(p)) for p in problems] + [(normalised(p), None) for p in failed]
    return Context(spec, rows, tmp_path, quick=True)


def _w(**kw):
    return dict(privacy="pure", utility="wasserstein", domain="integer", **kw)


def _by_claim(section, start):
    hits = [c for c in section.checks if c.claim.startswith(start)]
    assert hits, f"no check starting with {start!r}: {[c.claim for c in section.checks]}"
    return hits[0]


def _figures_exist(section, tmp_path):
    assert section.figures
    for f in section.figures:
        assert (tmp_path / f).is_file() and (tmp_path / f).stat().st_size > 1000


# -- [QHFL22] -----------------------------------------------------------------------------------------

def test_reports_registered():
    for name in ("wasserstein_optimum", "wasserstein_vs_epsilon", "wasserstein_vs_m", "lipschitz_mse",
                 "staircase_conjecture"):
        assert name in REPORTS


def test_gkov_pmf_matches_library_and_w1_matches_solver():
    from optmech.mechanisms.discrete_staircase import DiscreteStaircase

    k = np.arange(-60, 61)
    for eps, m, r in ((2.0, 15, 5), (0.7, 4, 1), (3.0, 6, 6)):
        mine = seed003.gkov_pmf(eps, m, r, k)
        lib = DiscreteStaircase(epsilon=eps, sensitivity=m, r=r).pmf(k)
        assert np.allclose(mine, lib, rtol=1e-12, atol=0)
    assert math.isclose(seed003.gkov_pmf(2.0, 1, 1, np.arange(-400, 401)).sum(), 1.0, rel_tol=1e-12)
    res = _solve(_w(input=POISSON, epsilon=2.0, sensitivity=15))
    ref = next(x for x in res["references"] if x["name"] == "discrete_staircase")
    w = seed003.w1_direct(POISSON, lambda kk: seed003.gkov_pmf(2.0, 15, ref["parameters"]["r"], kk), 15 * 25)
    assert math.isclose(w, ref["value"], rel_tol=1e-9)


def test_fig7_report(tmp_path):
    ctx = _ctx(tmp_path, "003-fig7", "003", "Fig. 7", "wasserstein_optimum",
               [_w(input=GAUSS, epsilon=2.0, sensitivity=15), _w(input=POISSON, epsilon=2.0, sensitivity=15)])
    s = REPORTS["wasserstein_optimum"](ctx)
    assert _by_claim(s, "Fig. 7: the optimal noise is staircase-shaped").ok is True
    # the same GKOV member for both inputs: the paper's input dependence is not reproduced
    c = _by_claim(s, "Fig. 7: the height and width")
    assert c.ok is False and "r = 5 (Gaussian), r = 5 (Poisson)" in c.optmech
    _figures_exist(s, tmp_path)
    assert s.failed == 0


def test_fig8_report(tmp_path):
    ctx = _ctx(tmp_path, "003-fig8", "003", "Fig. 8", "wasserstein_vs_epsilon",
               [_w(input=POISSON, epsilon=e, sensitivity=15) for e in (2.0, 4.0)])
    s = REPORTS["wasserstein_vs_epsilon"](ctx)
    for claim in ("W1 falls as ε grows", "The LP optimum beats", "The staircase with a = 20 is the worst",
                  "As ε grows the optimum's advantage grows", "The Laplacian and the staircase a = 5 are comparable"):
        assert _by_claim(s, claim).ok is True, claim
    assert _by_claim(s, "Fig. 10: in the low privacy regime").ok is False  # 2.3× in expectation at ε = 4
    assert _by_claim(s, "Fig. 10: at ε = 0.5").ok is None  # not in this grid
    assert _by_claim(s, "Fig. 10: histograms").ok is None
    _figures_exist(s, tmp_path)


def test_fig9_report(tmp_path):
    ctx = _ctx(tmp_path, "003-fig9", "003", "Fig. 9", "wasserstein_vs_m",
               [_w(input=POISSON, epsilon=2.0, sensitivity=m) for m in (2, 5, 10)])
    s = REPORTS["wasserstein_vs_m"](ctx)
    assert _by_claim(s, "W1 rises with m").ok is True
    assert _by_claim(s, "The LP optimum beats").ok is True
    assert _by_claim(s, "The staircase with a = 20 is the worst").ok is True
    _figures_exist(s, tmp_path)


# -- [KHP15] -----------------------------------------------------------------------------------------

def test_lipschitz_mse_report(tmp_path):
    base = dict(privacy="lipschitz", cost="l2sq", resolution=20, epsilon=1.0)
    ctx = _ctx(tmp_path, "004-mse", "004", "Thms 6-8", "lipschitz_mse",
               [dict(base, dim=1, norm="l1"), dict(base, dim=2, norm="l1"), dict(base, dim=2, norm="l2")])
    s = REPORTS["lipschitz_mse"](ctx)
    for claim in ("Thm 6", "Thm 7", "Thm 8: on ℝⁿ", "Thm 8: density (14)", "Thms 7 vs 8"):
        assert _by_claim(s, claim).ok is True, claim
    assert _by_claim(s, "Thm 9").ok is None
    _figures_exist(s, tmp_path)


def test_mse_formulas_and_density():
    assert seed004.mse_formula(2.0, 1, "l2")[1] == 0.5
    assert seed004.mse_formula(1.0, 3, "l1")[1] == 6.0
    assert seed004.mse_formula(0.5, 3, "l2")[1] == 48.0
    m0, m2 = seed004.thm8_density_moments(4, 2.0)
    assert math.isclose(m0, 1.0, rel_tol=1e-10) and math.isclose(m2, 20 / 4, rel_tol=1e-10)


# -- the conjecture -----------------------------------------------------------------------------------

def test_lattice_staircase_costs_independent():
    # Δ = 1: the staircase is i.i.d. geometric, cost d·2b/(1 − b²)
    for d in (1, 3, 5):
        v = conjecture.lattice_staircase_costs(2.0, 1, d)[1]
        assert math.isclose(v, conjecture.lattice_laplace_cost(2.0, 1, d), rel_tol=1e-12)
    assert conjecture.sphere_sizes(3, 3) == [1, 6, 18, 38]
    res = _solve(dict(privacy="pure", domain="integer", cost="l1", dim=3, sensitivity=2, epsilon=3.0))
    ref = next(x for x in res["references"] if x["name"] == "discrete_staircase")
    fam = conjecture.lattice_staircase_costs(3.0, 2, 3)
    assert math.isclose(fam[ref["parameters"]["r"]], ref["value"], rel_tol=1e-10)


def test_conjecture_report(tmp_path):
    base = dict(privacy="pure", domain="integer", cost="l1", norm="l1", epsilon=3.0, sensitivity=2)
    ctx = _ctx(tmp_path, "conj", "conjecture", "[GKOV15] Thm 2", "staircase_conjecture",
               [dict(base, dim=3), dict(base, dim=4)])
    s = REPORTS["staircase_conjecture"](ctx)
    assert _by_claim(s, "Thm 2 (conjectured").ok is True
    assert _by_claim(s, "The staircase improves on the i.i.d. discrete Laplace").ok is True
    assert _by_claim(s, "Thm 2 on ℝ^d").ok is None
    _figures_exist(s, tmp_path)


# -- failures are reported, not fatal ------------------------------------------------------------------

@pytest.mark.parametrize("report,solved,failed", [
    ("wasserstein_optimum", [_w(input=POISSON, epsilon=2.0, sensitivity=15)],
     [_w(input=GAUSS, epsilon=2.0, sensitivity=15)]),
    ("wasserstein_vs_epsilon", [_w(input=POISSON, epsilon=4.0, sensitivity=15)],
     [_w(input=POISSON, epsilon=0.5, sensitivity=15)]),
    ("wasserstein_vs_m", [], [_w(input=POISSON, epsilon=2.0, sensitivity=3)]),
    ("lipschitz_mse", [], [dict(privacy="lipschitz", cost="l2sq", dim=2, norm="l2", epsilon=1.0)]),
    ("staircase_conjecture", [], [dict(privacy="pure", domain="integer", cost="l1", dim=3, sensitivity=2,
                                       epsilon=3.0)]),
])
def test_failed_problem_is_reported(tmp_path, report, solved, failed):
    ctx = _ctx(tmp_path, f"fail-{report}", "003", "x", report, solved, failed)
    s = REPORTS[report](ctx)
    assert s.failed == len(failed)
    assert any("failed" in b for b in s.body)
    assert s.checks  # the statements are still listed (not compared where nothing was solved)
    assert all(c.ok is not True for c in s.checks if not solved and "density (14)" not in c.claim)


# -- the report's figures (issue 18): panels, legends, ticks, brackets as intervals -----------------------------

def _figure(w=10.0, h=4.2):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=110)
    FigureCanvasAgg(fig)                                     # a real renderer for fig.canvas.draw()
    return fig


def _curves_of(ax) -> set:
    """The (x, y) data of every line an axes draws, rounded, as hashable tuples."""
    return {(tuple(np.round(np.asarray(l.get_xdata(), float), 9)), tuple(np.round(np.asarray(l.get_ydata(), float), 9)))
            for l in ax.lines}


def _has_errorbars(ax) -> bool:
    from matplotlib.container import ErrorbarContainer

    return any(isinstance(c, ErrorbarContainer) and c.has_yerr for c in ax.containers)


def _integer_ticks(ax, axis="x") -> bool:
    from matplotlib.ticker import MaxNLocator

    loc = getattr(ax, f"{axis}axis").get_major_locator()
    return isinstance(loc, MaxNLocator) and loc._integer


def test_fig7_panels_differ_and_show_the_input_dependence():
    found = {}
    for inp in (GAUSS, POISSON):
        p = _w(input=inp, epsilon=2.0, sensitivity=15)
        found[inp] = seed003.fig7_optimum(inp, normalised(p), _solve(p))
    fig = _figure()
    seed003.draw_fig7(fig, found)
    ax1, ax2 = fig.axes
    c1, c2 = _curves_of(ax1), _curves_of(ax2)
    assert c1 and c2 and not (c1 & c2)                       # no curve is in both panels
    assert ax1.get_xlabel() != ax2.get_xlabel()
    # (a): one optimal noise per input; (b): W1 over the staircase family, one curve per input, and they differ
    assert len(ax1.lines) == 2
    w1_curves = [l for l in ax2.lines if len(l.get_xdata()) == 15]
    assert len(w1_curves) == 2 and not np.allclose(w1_curves[0].get_ydata(), w1_curves[1].get_ydata())
    assert _has_errorbars(ax2) and _integer_ticks(ax2, "x")   # brackets as intervals; r is an integer
    assert fig.legends and all(ax.get_legend() is None for ax in fig.axes)   # one legend, outside the panels
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("Gaussian" in t for t in labels) and any("Poisson" in t for t in labels)
    assert not any("{'" in t or "': " in t for t in labels)  # formatted, no raw dicts


def test_fig8_fig9_draw_certified_brackets_as_intervals_with_the_legend_outside():
    pts = [(float(m), None, _solve(_w(input=POISSON, epsilon=2.0, sensitivity=m))) for m in (2, 5)]
    for axis in ("ε", "m"):
        fig = _figure()
        seed003.draw_curves(fig, {POISSON: pts}, axis, "t")
        ax = fig.axes[0]
        assert _has_errorbars(ax)
        assert fig.legends and ax.get_legend() is None
        assert _integer_ticks(ax, "x") == (axis == "m")


def test_mse_figure_is_meaningful_with_one_epsilon():
    base = dict(privacy="lipschitz", cost="l2sq", resolution=20, epsilon=1.0)
    pts = []
    for dim, norm, thm in ((1, "l1", "Thm 6"), (2, "l1", "Thm 7"), (2, "l2", "Thm 8")):
        p = dict(base, dim=dim, norm=norm)
        pts.append((thm, 1.0, dim, norm, seed004.mse_formula(1.0, dim, norm)[1], _solve(p)))
    fig = _figure()
    seed004.draw_mse(fig, pts)
    ax1, ax2 = fig.axes
    # the closed forms are curves over an ε range, not one point each, and the brackets sit on them as intervals
    curves = [l for l in ax1.lines if len(l.get_xdata()) >= 50]
    assert len(curves) == 3 and min(l.get_xdata().min() for l in curves) < 1.0 < max(l.get_xdata().max() for l in curves)
    assert _has_errorbars(ax1) and _has_errorbars(ax2)
    assert _integer_ticks(ax2, "x")
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax1.get_xticklabels() if t.get_text()]
    assert ticks == ["1"]                                    # plain numbers, not 10⁰ and 3×10⁻¹ crowding
    assert fig.legends and all(ax.get_legend() is None for ax in fig.axes)


def _conjecture_cases(n_eps: int):
    cases = []
    for d in (3, 4, 5):
        for delta in (2, 3):
            for eps in (2.5, 3.0, 4.0)[:n_eps]:
                v = conjecture.lattice_staircase_costs(eps, delta, d)
                r = min(v, key=v.get)
                lap = conjecture.lattice_laplace_cost(eps, delta, d)
                cases.append((d, delta, eps, True, 1e-8, lap / v[r], True, r, r, v[r] * (1 - 1e-8), v[r] * (1 + 1e-9), v[r]))
    return cases


def test_conjecture_figure_has_one_legend_entry_per_mechanism_and_readable_ticks():
    for n_eps in (1, 3):                                      # the quick grid (6 cases) and the full one (18)
        cases = _conjecture_cases(n_eps)
        fig = _figure(10.0, 4.4)
        conjecture.draw_conjecture(fig, cases)
        assert fig.legends and all(ax.get_legend() is None for ax in fig.axes)
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        names = (conjecture.STAIRCASE, conjecture.DLAPLACE, conjecture.OPTIMUM)
        assert len(labels) == 3 and all(sum(n in t for t in labels) == 1 for n in names), labels
        ax1 = fig.axes[0]
        assert _has_errorbars(ax1)                            # the certified optimum is an interval
        fig.canvas.draw()
        ticks = ax1.get_xticklabels()
        texts = [t.get_text() for t in ticks]
        assert len(texts) == len(cases) and texts[0] == "d=3, Δ=2, ε=2.5"
        assert not any(".0," in t or t.endswith(".0") for t in texts)
        # rotated, parallel labels do not overlap when the distance between neighbours, measured across the
        # text, exceeds the text height
        rot = math.radians(ticks[0].get_rotation())
        xs = [ax1.transData.transform((i, 0))[0] for i in range(len(cases))]
        spacing = min(b - a for a, b in zip(xs, xs[1:]))
        height = ticks[0].get_fontsize() * fig.dpi / 72
        assert spacing * math.sin(rot) > height, (spacing, rot, height)


def test_conjecture_report_calls_each_mechanism_by_one_name(tmp_path):
    base = dict(privacy="pure", domain="integer", cost="l1", norm="l1", epsilon=3.0, sensitivity=2)
    ctx = _ctx(tmp_path, "conj", "conjecture", "[GKOV15] Thm 2", "staircase_conjecture", [dict(base, dim=3)])
    s = REPORTS["staircase_conjecture"](ctx)
    text = " ".join(s.body + [c.claim + " " + c.optmech + " " + c.note for c in s.checks])
    assert conjecture.DLAPLACE in text and conjecture.STAIRCASE in text
    for other in ("geometric", "V_Laplace", "V_Lap/"):
        assert other not in text, other
