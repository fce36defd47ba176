"""The plotting API (optmech.plots, including plot_compare): figures without pyplot state,
drawn ranges that hold the mechanism's mass, closed forms where they compete, readable labels,
brackets as intervals."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # the test module's choice; the library never switches backends

from matplotlib.container import ErrorbarContainer  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

import optmech  # noqa: E402
from optmech.plots import plot_compare  # noqa: E402
from optmech.errors import SpecError  # noqa: E402
from optmech.plots import FLOOR, mass_region, plot_nd, plot_result  # noqa: E402

ASYM = "where(x > 0, x, 2*abs(x))"


def solve(eps, cost, delta, domain, **kw):
    problem = optmech.Problem(privacy=optmech.PureDP(eps), cost=cost, sensitivity=delta, domain=domain, **kw)
    return optmech.solve(problem)


@pytest.fixture(scope="module")
def int3():
    return solve(1.0, "abs", 3, optmech.IntegerLattice())


@pytest.fixture(scope="module")
def asym20():
    """The asymmetric optimum of issue 18 (about 1 s): its LP window holds only ~72 % of the mass."""
    return solve(0.5, ASYM, 20, optmech.IntegerLattice())


@pytest.fixture(scope="module")
def cont1():
    return solve(1.0, "abs", 1.0, optmech.Continuous(resolution=8))


@pytest.fixture(scope="module")
def two_d():
    # the full lattice LP's audited pmf (symmetry "orbits"; with "auto" the lattice staircase is the mechanism)
    return solve(2.0, "l1", 1, optmech.IntegerLattice(), dim=2, symmetry="orbits")


def mech_line(ax):
    """The Line2D of the certified mechanism."""
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith("optmech")]
    return line


def legend_texts(fig) -> list[str]:
    return [t.get_text() for a in fig.axes if a.get_legend() for t in a.get_legend().get_texts()]


def drawn_y(ax) -> np.ndarray:
    ys = [np.asarray(ln.get_ydata(), dtype=float) for ln in ax.lines]
    return np.concatenate(ys) if ys else np.array([])


# ------------------------------------------------------------------------------------------------
# figures for notebooks: Figure returned, ax= honoured, no pyplot state, no backend switch
# ------------------------------------------------------------------------------------------------
def test_returns_figure_without_pyplot_or_backend_switch(int3, monkeypatch):
    import matplotlib.pyplot as plt

    def refuse(*a, **k):
        raise AssertionError("a library plot function called matplotlib.use (it breaks inline display)")

    monkeypatch.setattr(matplotlib, "use", refuse)
    before = plt.get_fignums()
    fig = plot_result(int3)
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before, "plot_result left a pyplot figure behind"
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "noise x"


def test_draws_into_given_ax(int3):
    fig = Figure()
    ax1, ax2 = fig.subplots(1, 2)
    out = plot_result(int3, ax=ax2)
    assert out is fig
    assert not ax1.lines and len(ax2.lines) >= 2
    fig2 = Figure()
    assert plot_result(int3, fig=fig2) is fig2 and len(fig2.axes) == 1


def test_path_writes_a_png_matplotlib_reads_back(int3, tmp_path):
    import matplotlib.image as mpimg

    png = tmp_path / "r.png"
    fig = plot_result(int3, str(png))
    assert isinstance(fig, Figure)
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100


# ------------------------------------------------------------------------------------------------
# the drawn range holds the mass, tails included
# ------------------------------------------------------------------------------------------------
def test_asymmetric_optimum_drawn_over_all_but_1e6_of_its_mass(asym20):
    mech = asym20.mechanism
    law = mech.law
    window = mech.pmf(np.arange(law.k_lo, law.k_hi + 1)).sum()
    assert window < 0.9, "the test needs a law with much mass outside its LP window"
    x = np.asarray(mech_line(plot_result(asym20).axes[0]).get_xdata())
    lo, hi = int(x.min()), int(x.max())
    assert np.array_equal(x, np.arange(lo, hi + 1)), "every integer of the drawn range is drawn"
    # independent: the library pmf summed over the drawn range, and each side's tail mass
    assert math.fsum(mech.pmf(np.arange(lo, hi + 1))) >= 1 - 1e-6
    assert math.fsum(mech.pmf(np.arange(lo - 5000, lo))) <= 0.5e-6 + 1e-15
    assert math.fsum(mech.pmf(np.arange(hi + 1, hi + 5001))) <= 0.5e-6 + 1e-15
    # and not wastefully wide: one period less on either side loses more than 1e-6
    D = int(asym20.problem["sensitivity"])
    assert math.fsum(mech.pmf(np.arange(lo + D, hi + 1))) < 1 - 0.5e-6
    assert math.fsum(mech.pmf(np.arange(lo, hi + 1 - D))) < 1 - 0.5e-6


def test_mass_region_against_closed_form_quantiles():
    from optmech.mechanisms import DiscreteLaplace, Laplace

    m = DiscreteLaplace(epsilon=0.5, sensitivity=2)
    lam = math.exp(-0.25)
    lo, hi = mass_region(m, 1e-6)
    # P(X > n) = λ^{n+1}/(1+λ): hi is the least n with that <= 5e-7
    n = next(n for n in range(10**4) if lam ** (n + 1) / (1 + lam) <= 5e-7)
    assert (lo, hi) == (-n, n)
    lo, hi = mass_region(Laplace(epsilon=1.0, sensitivity=2.0), 1e-6)
    assert hi == pytest.approx(2.0 * math.log(1e6), rel=1e-8) and lo == pytest.approx(-hi, rel=1e-8)
    with pytest.raises(SpecError):
        mass_region(m, 0.0)


def test_continuous_density_covers_the_mass(cont1):
    mech = cont1.mechanism
    x = np.asarray(mech_line(plot_result(cont1).axes[0]).get_xdata())
    lo, hi = float(x.min()), float(x.max())
    assert mech.cdf(lo) <= 0.5e-6 + 1e-15 and 1 - mech.cdf(hi) <= 0.5e-6 + 1e-12
    g = mech.law.grid
    assert lo < g.left(np.array([mech.law.k_lo]))[0], "the tails beyond the LP window are drawn"


# ------------------------------------------------------------------------------------------------
# the closed form where it competes, formatted labels
# ------------------------------------------------------------------------------------------------
def test_asymmetric_reference_is_shifted_to_its_cheapest_place(asym20):
    from optmech.costs import parse_cost
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase

    L = parse_cost(ASYM)
    kk = np.arange(-4000, 4001)
    refs = {r.name: r for r in asym20.references}
    # the drawn closed form is the cheapest listed one, drawn at the shift it is listed with
    drawn = min((r for r in refs.values() if r.name in ("discrete_laplace", "discrete_staircase")), key=lambda r: r.value)
    ax = plot_result(asym20).axes[0]
    (line,) = [ln for ln in ax.lines if ln.get_label().startswith(drawn.name.replace("_", " ").replace("laplace", "Laplace"))]
    label = line.get_label()
    c = int(re.search(r"shifted by ([+-]?\d+)", label).group(1))
    assert c != 0 and c == drawn.parameters["shift"]
    law = (DiscreteLaplace(epsilon=0.5, sensitivity=20) if drawn.name == "discrete_laplace" else
           DiscreteStaircase(epsilon=0.5, sensitivity=20, r=drawn.parameters["r"]))
    k = np.asarray(line.get_xdata())
    y = np.asarray(line.get_ydata(), dtype=float)
    ok = np.isfinite(y)
    assert np.allclose(y[ok], law.pmf(k[ok] - c), rtol=1e-12, atol=0)  # drawn where it is placed
    # its cost there, summed independently, is the listed value and the label's, and no better than the optimum
    shifted = math.fsum(law.pmf(kk) * L(kk + c))
    assert drawn.value == pytest.approx(shifted, rel=1e-9)
    assert float(re.search(r"cost ([0-9.e+-]+)", label).group(1)) == pytest.approx(shifted, rel=1e-5)
    assert asym20.lower_bound <= shifted
    # the discrete Laplace is listed at the cheapest integer shift: below its centred cost, neighbours cost more
    dl = DiscreteLaplace(epsilon=0.5, sensitivity=20)
    c = refs["discrete_laplace"].parameters["shift"]
    shifted = math.fsum(dl.pmf(kk) * L(kk + c))
    assert refs["discrete_laplace"].value == pytest.approx(shifted, rel=1e-9)
    assert shifted < math.fsum(dl.pmf(kk) * L(kk))
    for d in (-1, 1):
        assert math.fsum(dl.pmf(kk) * L(kk + c + d)) >= shifted * (1 - 1e-12)


def test_symmetric_reference_not_shifted_and_legends_formatted(int3, cont1, two_d):
    texts = legend_texts(plot_result(int3)) + legend_texts(plot_result(cont1)) + legend_texts(plot_result(two_d))
    assert texts and not any("{" in t or "}" in t for t in texts), texts
    assert not any("shifted" in t for t in texts)
    assert any(re.search(r"discrete staircase, r = 2, cost 2\.86", t) for t in texts), texts
    assert any(re.search(r"staircase, γ = 0\.\d{4}, cost", t) for t in texts), texts
    fig = plot_result(two_d)
    assert any("r = 1" in a.get_title() for a in fig.axes), [a.get_title() for a in fig.axes]


def test_title_formats_problem_bracket_and_label(asym20):
    title = plot_result(asym20).axes[0].get_title()
    for part in ("ε = 0.5", "Δ = 20", f"cost {ASYM}", "on ℤ", "certified", f"{asym20.lower_bound:.7g}"):
        assert part in title, (part, title)
    bad = dataclasses.replace(asym20, certified=False)
    assert "UNCERTIFIED" in plot_result(bad).axes[0].get_title()


# ------------------------------------------------------------------------------------------------
# no rounding-level masses stretching the log axis; integer ticks; legends off the data
# ------------------------------------------------------------------------------------------------
def test_masses_below_the_floor_are_not_drawn(int3):
    from optmech.mechanisms.tabulated import LatticePMF
    from optmech.problems.lattice import LatticeMechanism

    law = int3.mechanism.law
    w = np.array(law.weights, dtype=float)
    i = int(np.argmax(w)) + 2
    w[i] = 1e-18 * w.max()  # a repair-sized mass inside the window
    tiny = LatticeMechanism(law.grid, law.k_lo, w, law.beta, law.left_gen, law.right_gen)
    res = dataclasses.replace(int3, mechanism=LatticePMF(tiny, 1.0))
    ax = plot_result(res).axes[0]
    line = mech_line(ax)
    y = np.asarray(line.get_ydata(), dtype=float)
    assert np.isnan(y[np.asarray(line.get_xdata()) == law.k_lo + i]).all()
    top = np.nanmax(drawn_y(ax))
    finite = drawn_y(ax)[np.isfinite(drawn_y(ax))]
    assert finite.min() >= FLOOR * top
    assert ax.get_ylim()[0] >= FLOOR * top / 10


def test_integer_axes_have_integer_ticks(int3, two_d, cont1):
    ax = plot_result(int3).axes[0]
    assert isinstance(ax.xaxis.get_major_locator(), MaxNLocator) and ax.xaxis.get_major_locator()._integer
    assert np.all(np.mod(ax.get_xticks(), 1) == 0)
    fig = plot_result(two_d)
    for a in fig.axes[:2]:
        for axis in (a.xaxis, a.yaxis):
            assert isinstance(axis.get_major_locator(), MaxNLocator) and axis.get_major_locator()._integer
    assert not getattr(plot_result(cont1).axes[0].xaxis.get_major_locator(), "_integer", False)


def test_legend_sits_inside_the_axes(int3):
    """Issue 36: the legend lies inside its Axes (it was below them, cut from figures without a layout
    engine), so a panel of any grid keeps it."""
    fig = plot_result(int3)
    ax = fig.axes[0]
    fig.canvas.draw()
    leg, box = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert box.x0 - 1 <= leg.x0 and leg.x1 <= box.x1 + 1 and box.y0 - 1 <= leg.y0 and leg.y1 <= box.y1 + 1


# ------------------------------------------------------------------------------------------------
# d-D and Lipschitz results
# ------------------------------------------------------------------------------------------------
def test_nd_panels_ax_and_fig(two_d, tmp_path):
    fig = Figure()
    axes = fig.subplots(1, 2)
    assert plot_nd(two_d, ax=axes) is fig and all(a.images for a in axes)
    one = Figure()
    a = one.add_subplot()
    assert plot_result(two_d, ax=a) is one and len(a.images) == 1
    fig3 = Figure()
    out = plot_nd(two_d, tmp_path / "nd.png", fig=fig3)
    assert out is fig3 and (tmp_path / "nd.png").read_bytes()[:4] == b"\x89PNG"
    r3 = solve(2.0, "l1", 1, optmech.IntegerLattice(), dim=3, symmetry="orbits")
    ax = plot_result(r3).axes[0]
    top = np.nanmax(drawn_y(ax))
    assert np.nanmin(drawn_y(ax)) >= FLOOR * top and ax.get_xlabel() == "‖x‖₁"
    assert ax.xaxis.get_major_locator()._integer


def test_lipschitz_1d_pmf_is_drawn():
    r = optmech.solve(optmech.Problem(privacy=optmech.Lipschitz(1.0), cost="abs", domain=optmech.IntegerLattice()))
    x = np.asarray(mech_line(plot_result(r).axes[0]).get_xdata())
    assert math.fsum(r.mechanism.pmf(np.arange(x.min(), x.max() + 1))) >= 1 - 1e-6


def test_no_mechanism_is_refused(int3):
    with pytest.raises(SpecError):
        plot_result(dataclasses.replace(int3, mechanism=None))


# ------------------------------------------------------------------------------------------------
# compare: brackets as intervals
# ------------------------------------------------------------------------------------------------
FAKE_2D = {"epsilon": 1.0, "cost": "l2sq", "dim": 2, "norm": "l2", "dp_gain_over_laplace": 6 / 8.3, "rows": [
    {"name": "dp_optimum", "lower_bound": 4.4273, "upper_bound": 8.3027, "certified": True},
    {"name": "lipschitz_optimum", "lower_bound": 5.9969, "upper_bound": 6.0003, "certified": False},
    {"name": "laplace", "lower_bound": 6.0, "upper_bound": 6.0, "certified": True}]}


def bracket_extents(ax) -> list[tuple[float, float]]:
    out = []
    for cont in ax.containers:
        assert isinstance(cont, ErrorbarContainer)
        (segs,) = [lc.get_segments() for lc in cont.lines[2]]
        (seg,) = segs
        out.append((float(min(seg[:, 1])), float(max(seg[:, 1]))))
    return out


def test_compare_brackets_are_errorbars_with_the_brackets_extents(tmp_path):
    fig = plot_compare(FAKE_2D, tmp_path / "c.png")
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert len(ax.containers) == 3
    for (lo, up), row in zip(bracket_extents(ax), FAKE_2D["rows"]):
        assert lo == pytest.approx(row["lower_bound"], rel=1e-12) and up == pytest.approx(row["upper_bound"], rel=1e-12)
    texts = legend_texts(fig)
    assert any("UNCERTIFIED" in t for t in texts) and not any("{" in t for t in texts)
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_compare_1d_two_panels_and_ax():
    from optmech.compare import compare

    c = compare(1.0, "abs")
    fig = plot_compare(c)
    assert len(fig.axes) == 2
    for (lo, up), row in zip(bracket_extents(fig.axes[0]), c["rows"]):
        assert (lo, up) == pytest.approx((row["lower_bound"], row["upper_bound"]), rel=1e-12)
    dens = fig.axes[1]
    assert dens.get_yscale() == "log" and any("γ = " in t for t in legend_texts(fig))
    lo, hi = dens.get_xlim()
    # P(Laplace(1) > x) = e^{-x}/2 reaches 5e-7 at x = ln(1e6)
    assert hi >= math.log(1e6) * (1 - 1e-6), "drawn range too short"
    mine = Figure()
    a = mine.add_subplot()
    assert plot_compare(c, ax=a) is mine and len(a.containers) == 3


def test_a_library_law_at_the_upper_end_is_drawn(tmp_path):
    """The default ℤ² solve ends at the lattice staircase and the ℝ² ℓ2 one at the ℓ2 staircase (library
    laws): d = 2 draws its pmf or pdf as one heatmap, d = 3 its radial profile (issue 36: it drew one line
    along x1): the density on the shells of the norm the law is radial in, and the law of the radius."""
    from optmech.plots import plot_nd

    for r in (solve(2.0, "l1", 2, optmech.IntegerLattice(), dim=2),
              solve(1.0, "l2", 1.0, optmech.Continuous(), dim=2, norm="l2", target_gap=1e-4)):
        assert "kind" not in r.mechanism_dict()
        fig = plot_nd(r, tmp_path / "lib.png")
        assert (tmp_path / "lib.png").read_bytes()[:4] == b"\x89PNG" and len(fig.axes[0].images) == 1
        img = fig.axes[0].images[0].get_array()
        assert np.nanmax(img) == pytest.approx(float(r.mechanism.pmf(np.zeros(2)) if r.mechanism.lattice
                                                     else r.mechanism.pdf(np.zeros(2))), rel=1e-12)
    r3 = solve(2.0, "l1", 1.0, optmech.Continuous(), dim=3, target_gap=1e-4)
    ax = plot_nd(r3).axes[0]
    assert ax.get_xlabel() == "shell radius r = ‖x‖₁" and len(ax.lines) == 2
