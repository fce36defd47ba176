"""Issue 36, item 7: tables and output.

* ``optmech table`` covers pure ε-DP on ℤ^d and ℝ^d (it refused d > 1), parsed as a user reads it.
* Text output: reference notes are wrapped at word boundaries, never cut; a missing value is ``—``,
  never ``nan``; one renderer gives every family the same references table; one name per law
  (the ℓ2-Laplace is ``l2_laplace`` in pure and (ε,δ) ℝ²).
* Plots: ``plot_result(r, ax=axes[i])`` in a 1×2 grid keeps titles apart and legends inside the
  figure without ``bbox_inches="tight"``; d >= 3 draws the radial profile.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import optmech
from optmech.render import MISSING, format_result


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, timeout=300)


def flat(text: str) -> str:
    return " ".join(text.split())


# -- pure d-D tables --------------------------------------------------------------------------------
def test_pure_table_on_z2_parses_as_csv_with_certified_rows():
    p = run("table", "--epsilon", "0.5,1", "--dim", "2", "--domain", "integer", "--cost", "l1", "--format", "csv",
            "--workers", "1")
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [r["epsilon"] for r in rows] == ["0.5", "1.0"]
    for r in rows:
        eps = float(r["epsilon"])
        assert r["certified"] == "true" and (r["dim"], r["norm"], r["status"]) == ("2", "l1", "optimal")
        lo, up = float(r["v_star_lower"]), float(r["v_star_upper"])
        b = math.exp(-eps)  # i.i.d. two-sided geometric: E|X_i| = 2b/(1 - b²), ε-DP for l1 sensitivity 1
        assert float(r["laplace"]) == pytest.approx(2 * 2 * b / (1 - b * b), rel=1e-12)
        assert 0 < lo <= up <= float(r["laplace"]) * (1 + 1e-9)
        assert r["l2_laplace"] == ""  # no l2-Laplace on the lattice


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_pure_table_on_r2_parses_as_json_with_certified_rows(norm):
    p = run("table", "--epsilon", "1", "--sensitivity", "1", "--dim", "2", "--domain", "continuous", "--cost", norm,
            "--norm", norm, "--format", "json", "--workers", "1")
    assert p.returncode == 0, p.stderr
    (r,) = json.loads(p.stdout)
    assert r["certified"] is True and (r["dim"], r["norm"]) == (2, norm)
    assert 0 < r["v_star_lower"] <= r["v_star_upper"] <= r["staircase"] * (1 + 1e-9)
    if norm == "l1":  # i.i.d. Laplace(1): E‖X‖₁ = 2
        assert r["laplace"] == pytest.approx(2.0, rel=1e-12) and r["l2_laplace"] is None
    else:  # ℓ2-Laplace: ‖X‖₂ ~ Gamma(2, 1), E‖X‖₂ = 2
        assert r["l2_laplace"] == pytest.approx(2.0, rel=1e-12)
        assert r["ratio_laplace_to_v_star"] == pytest.approx(r["laplace"] / r["v_star_upper"], rel=1e-12)


def test_pure_table_text_uses_the_renderer_and_dash_for_missing():
    p = run("table", "--epsilon", "1", "--dim", "2", "--domain", "integer", "--cost", "l1", "--workers", "1")
    assert p.returncode == 0, p.stderr
    head, row = p.stdout.splitlines()
    assert head.split()[-4:] == ["l2_laplace", "dim", "norm", "status"]
    assert row.split()[-4:] == [MISSING, "2", "l1", "optimal"]
    assert not re.search(r"\bnan\b", p.stdout)


def test_lipschitz_tables_are_refused_naming_what_works():
    from optmech.errors import SpecError
    from optmech.table import build_table

    with pytest.raises(SpecError, match="pure and approx.*optmech solve"):
        build_table("lipschitz", cost="abs", sensitivities=[1], epsilons=[1.0], workers=1)
    p = run("table", "--privacy", "lipschitz", "--epsilon", "1")
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith("optmech: ") and "pure" in p.stderr and "approx" in p.stderr


# -- text output --------------------------------------------------------------------------------------
SOLVES = {
    "approx_z": ("--privacy", "approx", "--epsilon", "1", "--delta", "0.1", "--sensitivity", "2", "--domain", "integer",
                 "--cost", "abs"),
    "approx_r2": ("--privacy", "approx", "--epsilon", "2", "--delta", "0.01", "--dim", "2", "--norm", "l2", "--domain",
                  "continuous", "--cost", "l2", "--resolution", "2", "--target-gap", "0.9", "--time-limit", "30"),
    "pure_r2": ("--epsilon", "2", "--dim", "2", "--norm", "l2", "--domain", "continuous", "--cost", "l2"),
}


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> dict:
    """{name: (text stdout, the --save JSON of the same run)} of each solve in SOLVES."""
    out = {}
    for name, args in SOLVES.items():
        save = tmp_path_factory.mktemp(name) / "r.json"
        p = run("solve", *args, "--save", str(save))
        assert p.returncode == 0, (name, p.stderr)
        out[name] = (p.stdout, json.loads(save.read_text()))
    return out


@pytest.mark.parametrize("name", list(SOLVES))
def test_every_family_prints_the_same_references_table_with_whole_notes(solved, name):
    text, j = solved[name]
    lines = text.splitlines()
    assert "  references (closed forms and bounds)" in lines
    header = lines[lines.index("  references (closed forms and bounds)") + 1].split()
    assert header == ["name", "kind", "value", "inside", "bracket", "valid", "parameters"]
    assert j["references"]
    for ref in j["references"]:
        assert any(ln.split()[:1] == [ref["name"]] for ln in lines), ref["name"]
        # the note is all there, wrapped only at spaces: joining the lines gives it back word for word
        assert flat(ref["note"]) in flat(text), ref["name"]


def test_one_name_for_the_l2_laplace_in_pure_and_approx(solved):
    approx = {r["name"]: r for r in solved["approx_r2"][1]["references"]}
    pure = {r["name"]: r for r in solved["pure_r2"][1]["references"]}
    assert "l2_laplace" in approx and "laplace" not in approx  # the ℓ2 sensitivity's Laplace is the ℓ2-Laplace
    assert "l2_laplace" in pure
    # the same law at the same ε = 2 and Δ = 1: E‖X‖₂ = d Δ/ε = 1
    assert approx["l2_laplace"]["value"] == pytest.approx(1.0, rel=1e-12)
    assert pure["l2_laplace"]["value"] == pytest.approx(1.0, rel=1e-12)
    assert approx["l2_laplace"]["parameters"]["scale"] == pure["l2_laplace"]["parameters"]["scale"] == 0.5


def test_missing_values_are_a_dash_never_nan(solved):
    for text, _ in solved.values():
        assert not re.search(r"\bnan\b", text)
    r = optmech.solve(optmech.Problem.from_params({"privacy": "pure", "epsilon": 1, "cost": "abs",
                                                   "domain": "integer"}))
    ref = dataclasses.replace(r.references[0], value=math.nan)
    bad = dataclasses.replace(r, lower_bound=math.nan, seconds=math.nan, references=[ref, *r.references[1:]])
    text = format_result(bad)
    assert not re.search(r"\bnan\b", text)
    assert f"[{MISSING}, " in text and f"time              {MISSING} s" in text
    assert re.search(rf"^\s+{ref.name}\s+\S+\s+{MISSING}\s", text, re.M)


# -- plots ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def one_d():
    return (optmech.solve(optmech.Problem.from_params({"privacy": "pure", "epsilon": 1, "cost": "abs"})),
            optmech.solve(optmech.Problem.from_params({"privacy": "pure", "epsilon": 1, "cost": "square",
                                                       "sensitivity": 3, "domain": "integer"})))


def test_plot_result_into_a_1x2_grid_keeps_titles_apart_and_legends_inside(one_d, tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from optmech.plots import plot_result

    fig = Figure()  # matplotlib's default size, no layout engine: as plt.subplots(1, 2) gives
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for r, ax in zip(one_d, axes):
        assert plot_result(r, ax=ax) is fig
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    titles = [a.title.get_window_extent(renderer) for a in axes]
    assert titles[0].x1 <= titles[1].x0, "the two panels' titles overlap"
    for t in titles:
        assert box.x0 <= t.x0 and t.x1 <= box.x1 and t.y1 <= box.y1, "a title leaves the figure"
    for a in axes:
        leg = a.get_legend().get_window_extent(renderer)
        ab = a.get_window_extent(renderer)
        assert box.x0 <= leg.x0 and leg.x1 <= box.x1 and box.y0 <= leg.y0 and leg.y1 <= box.y1
        assert ab.x0 - 1 <= leg.x0 and leg.x1 <= ab.x1 + 1, "the legend sits inside its Axes"
    assert axes[0].get_title().startswith("ε = 1, Δ = 1, cost |x| on ℝ")
    assert axes[1].get_title().startswith("ε = 1, Δ = 3, cost x² on ℤ")
    fig.savefig(tmp_path / "grid.png")  # no bbox_inches="tight" needed
    assert (tmp_path / "grid.png").read_bytes()[:4] == b"\x89PNG"


def test_d3_plots_draw_the_radial_profile():
    pytest.importorskip("matplotlib")
    from optmech.plots import plot_result

    r = optmech.solve(optmech.Problem.from_params({"privacy": "pure", "epsilon": 1, "cost": "l1", "dim": 3,
                                                   "domain": "integer"}))
    ax = plot_result(r).axes[0]
    assert ax.get_xlabel() == "shell radius r = ‖x‖₁"
    per_point, shell = ax.lines
    k = np.asarray(shell.get_xdata())
    # the mass of the ℓ1 shell of radius k is the pmf on it times its 4k² + 2 points (d = 3): it sums to 1
    m = r.mechanism
    pts = np.zeros((len(k), 3))
    pts[:, 0] = k
    sizes = np.where(k == 0, 1, 4 * k * k + 2)
    y = np.asarray(per_point.get_ydata(), float)
    ok = np.isfinite(y)  # values below FLOOR × the top are not drawn
    assert ok[:20].all() and np.allclose(y[ok], m.pmf(pts.astype(int))[ok], rtol=1e-12)
    drawn = np.nan_to_num(np.asarray(shell.get_ydata(), float))
    assert np.allclose(drawn[drawn > 0], (m.pmf(pts.astype(int)) * sizes)[drawn > 0], rtol=1e-12)
    assert math.fsum(drawn) == pytest.approx(1.0, abs=1e-9)
