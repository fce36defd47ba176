"""``optmech table --privacy approx --domain continuous``: (ε, δ)-DP bound tables on the real line,
and the discrete Gaussian [CKS20] columns of the integer (ε, δ) tables.

Each table runs as a user runs it (a fresh ``python -m optmech`` subprocess) and its whole standard
output is parsed (``json.loads``; the CSV header first).  The reference columns are checked
against independent closed forms: the analytic Gaussian [BW18, Thm 8] through σ from
:func:`optmech.mechanisms.gaussian.analytic_gaussian_sigma` (E|Z| = σ√(2/π), E Z² = σ²), the
classic Gaussian [DR14, Thm A.1] (null unless ε < 1), the truncated Laplace [GDGK20], Laplace and
uniform noise.  Rows use loose δ, ε >= 0.5 and ``--target-gap 1e-3`` (about a second per row).

On ℝ^d (``--dim 2|3``, ``--norm l1|l2``) the rows are bounded by ``--time-limit`` of a few seconds
and a coarse ``--target-gap``: whether the LP finishes in time depends on the machine's load, so
the tests ask only for a certified bracket (status ``optimal`` or ``gap_not_reached``), and check
the reference columns against :func:`optmech.mechanisms.approx_references.continuous_approx_references`
called here with the same cost, dim and norm.
"""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys

import pytest

from optmech.table import (APPROX_COLUMNS, APPROX_CONTINUOUS_COLUMNS, APPROX_EXTRA, APPROX_INTEGER_COLUMNS,
                           APPROX_ND_COLUMNS)

REAL_HEADER = list(APPROX_COLUMNS + APPROX_CONTINUOUS_COLUMNS + APPROX_EXTRA)
ND_HEADER = REAL_HEADER + list(APPROX_ND_COLUMNS)
INTEGER_HEADER = list(APPROX_COLUMNS + APPROX_INTEGER_COLUMNS + APPROX_EXTRA)
REL = 1e-9
UB = ("ub_uniform", "ub_laplace", "ub_staircase", "ub_gaussian", "ub_analytic_gaussian", "ub_truncated_laplace")


def optmech(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optmech", *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def table(*args: str, workers: int = 1) -> str:
    """The stdout of ``optmech table --privacy approx ARGS`` (one worker process is quicker for a few
    rows; the JSON fixture takes two, so that the real-line rows also run in the process pool)."""
    p = optmech("table", "--privacy", "approx", "--workers", str(workers), *args)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def parse_csv(stdout: str) -> list[dict]:
    """Every CSV row, with '' as None and numbers, true/false parsed (the header is checked by the caller)."""
    def value(text: str):
        if text == "":
            return None
        if text in ("true", "false"):
            return text == "true"
        try:
            return float(text)
        except ValueError:
            return text  # lb_theorem_name

    rows = list(csv.DictReader(io.StringIO(stdout)))
    assert all(None not in r for r in rows), "a row has more fields than the header"
    return [{k: value(v) for k, v in r.items()} for r in rows]


@pytest.fixture(scope="module")
def abs_json() -> tuple[str, list[dict]]:
    out = table("--domain", "continuous", "--cost", "abs", "--sensitivity", "1,1.5", "--epsilon", "0.5,1",
                "--delta", "0.05", "--target-gap", "1e-3", "--format", "json", workers=2)
    return out, json.loads(out)


@pytest.fixture(scope="module")
def square_csv() -> tuple[str, list[dict]]:
    out = table("--domain", "continuous", "--cost", "square", "--epsilon", "0.75,1.5", "--delta", "0.02",
                "--target-gap", "1e-3", "--format", "csv")
    return out, parse_csv(out)


@pytest.fixture(scope="module")
def both(abs_json, square_csv) -> list[tuple[str, dict]]:
    return [("abs", r) for r in abs_json[1]] + [("square", r) for r in square_csv[1]]


# -- shape ------------------------------------------------------------------------------------------
def test_the_json_is_the_whole_stdout_with_the_contract_columns_in_order(abs_json):
    _, rows = abs_json
    assert len(rows) == 4
    assert all(list(r) == REAL_HEADER for r in rows)
    assert [(r["sensitivity"], r["epsilon"], r["delta"]) for r in rows] == [
        (1.0, 0.5, 0.05), (1.0, 1.0, 0.05), (1.5, 0.5, 0.05), (1.5, 1.0, 0.05)]
    for name in ("ub_gaussian", "ub_analytic_gaussian", "ub_truncated_laplace", "ratio_gaussian_to_v_star"):
        assert name in REAL_HEADER  # the names issue 20 asks for


def test_the_csv_header_is_the_contract(square_csv):
    out, rows = square_csv
    assert next(csv.reader([out.splitlines()[0]])) == REAL_HEADER
    assert len(rows) == 2 and len(out.splitlines()) == 3


def test_no_theorem_columns_on_the_real_line(both):
    for _, r in both:
        assert r["lb_theorem"] is None and r["lb_theorem_valid"] is None and r["lb_relaxed_lp"] is None
        assert r["lb_theorem_name"] is None


# -- the bracket and the upper bounds ---------------------------------------------------------------
def test_every_row_is_certified_to_the_target_gap(both):
    for _, r in both:
        assert r["certified"] is True
        lo, up = r["v_star_lower"], r["v_star_upper"]
        assert 0 < lo <= up and r["relative_gap"] <= 1e-3
        assert r["relative_gap"] == pytest.approx((up - lo) / up, rel=1e-9)


def test_no_valid_mechanism_beats_the_certified_lower_bound(both):
    for _, r in both:
        for name in UB:
            if r[name] is not None:
                assert r[name] >= r["v_star_lower"] * (1 - REL), (name, r)


def test_the_ratio_columns_are_their_definitions(both):
    for _, r in both:
        up = r["v_star_upper"]
        assert r["ratio_best_simple_to_v_star"] == pytest.approx(min(r["ub_uniform"], r["ub_laplace"]) / up, rel=1e-12)
        gauss = min(v for v in (r["ub_gaussian"], r["ub_analytic_gaussian"]) if v is not None)
        assert gauss == r["ub_analytic_gaussian"]  # the analytic calibration is never worse than the classic
        assert r["ratio_gaussian_to_v_star"] == pytest.approx(r["ub_analytic_gaussian"] / up, rel=1e-12)
        assert r["ratio_truncated_laplace_to_v_star"] == pytest.approx(r["ub_truncated_laplace"] / up, rel=1e-12)
        assert r["ratio_gaussian_to_v_star"] >= 1 - r["relative_gap"]


def test_abs_cost_scales_with_the_sensitivity(abs_json):
    """V*(Δ) = Δ·V*(1) for |x| (noise X for Δ = 1 gives ΔX for Δ): the two brackets must overlap."""
    by = {(r["sensitivity"], r["epsilon"]): r for r in abs_json[1]}
    for eps in (0.5, 1.0):
        a, b = by[(1.0, eps)], by[(1.5, eps)]
        assert b["v_star_lower"] <= 1.5 * a["v_star_upper"] * (1 + REL)
        assert 1.5 * a["v_star_lower"] <= b["v_star_upper"] * (1 + REL)


# -- the references, independently ------------------------------------------------------------------
def moment(cost: str, sigma: float) -> float:
    """E L(σZ), Z standard normal."""
    return sigma * math.sqrt(2 / math.pi) if cost == "abs" else sigma**2


def test_analytic_gaussian_is_the_balle_wang_sigma(both):
    from optmech.mechanisms.gaussian import analytic_gaussian_sigma

    for cost, r in both:
        sigma = analytic_gaussian_sigma(r["epsilon"], r["delta"], r["sensitivity"])
        assert r["ub_analytic_gaussian"] == pytest.approx(moment(cost, sigma), rel=REL)


def test_classic_gaussian_is_null_unless_epsilon_below_one(both):
    seen = set()
    for cost, r in both:
        if r["epsilon"] >= 1:
            assert r["ub_gaussian"] is None, r
        else:
            sigma = r["sensitivity"] * math.sqrt(2 * math.log(1.25 / r["delta"])) / r["epsilon"]  # [DR14, Thm A.1]
            assert r["ub_gaussian"] == pytest.approx(moment(cost, sigma), rel=REL)
            assert r["ub_gaussian"] >= r["ub_analytic_gaussian"]
        seen.add(r["epsilon"] < 1)
    assert seen == {True, False}


def test_truncated_laplace_laplace_and_uniform_closed_forms(both):
    for cost, r in both:
        D, eps, dlt = r["sensitivity"], r["epsilon"], r["delta"]
        lam = D / eps
        a = math.log1p(math.expm1(eps) / (2 * dlt))  # [GDGK20]: A = λ ln(1 + (e^ε − 1)/(2δ))
        A = lam * a
        half = D / (2 * dlt)  # U[−Δ/(2δ), Δ/(2δ)]
        if cost == "abs":
            tl, lap, uni = lam - A / math.expm1(a), lam, half / 2
        else:
            tl, lap, uni = 2 * lam**2 - (A**2 + 2 * A * lam) / math.expm1(a), 2 * lam**2, half**2 / 3
        assert r["ub_truncated_laplace"] == pytest.approx(tl, rel=REL)
        assert r["ub_laplace"] == pytest.approx(lap, rel=REL)
        assert r["ub_uniform"] == pytest.approx(uni, rel=REL)
        assert r["ub_staircase"] <= r["ub_laplace"] * (1 + REL)


# -- the Python API and the other renderings ---------------------------------------------------------
def test_build_table_on_the_real_line_renders_every_format():
    from optmech.table import build_table

    t = build_table("approx", cost="abs", sensitivities=[1], epsilons=[1.0], deltas=[0.1], domain="continuous",
                    target_gap=1e-3, workers=1)
    assert t.domain == "continuous" and t.columns == REAL_HEADER and repr(t) == "<Table approx on the real line: 1 rows>"
    row = t[0]
    assert row["certified"] and row["ub_gaussian"] is None and row["ub_analytic_gaussian"] > row["v_star_upper"]
    assert json.loads(t.render("json"))[0]["ub_truncated_laplace"] == row["ub_truncated_laplace"]
    assert parse_csv(t.render("csv"))[0]["ratio_gaussian_to_v_star"] == row["ratio_gaussian_to_v_star"]
    md = t.render("markdown").splitlines()
    assert [c.strip() for c in md[0].strip("|").split("|")] == REAL_HEADER and len(md) == 3
    text = t.render("text").splitlines()
    assert "ub_analytic_gaussian" in text[0] and "lb_theorem" not in text[0] and len(text) == 2
    pd = pytest.importorskip("pandas")
    df = t.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df.columns) == REAL_HEADER
    assert df.ub_truncated_laplace.iloc[0] == row["ub_truncated_laplace"]


# -- the integer tables' discrete Gaussian ---------------------------------------------------------
def test_integer_table_has_the_discrete_gaussian():
    rows = json.loads(table("--sensitivity", "1,2", "--epsilon", "1", "--delta", "0.05", "--format", "json"))
    assert len(rows) == 2 and all(list(r) == INTEGER_HEADER for r in rows)
    for r in rows:
        assert r["certified"] and r["v_star_lower"] <= r["v_star_upper"]
        assert r["ub_discrete_gaussian"] >= r["v_star_lower"] * (1 - REL)
        assert r["ratio_discrete_gaussian_to_v_star"] == pytest.approx(r["ub_discrete_gaussian"] / r["v_star_upper"],
                                                                       rel=1e-12)
    from optmech.table import build_table

    t = build_table("approx", cost="l1", sensitivities=[1], epsilons=[1.0], deltas=[0.1], dim=2, workers=1)
    assert t.columns == INTEGER_HEADER
    assert t[0]["ub_discrete_gaussian"] is None and t[0]["ratio_discrete_gaussian_to_v_star"] is None  # 1-D only


# -- R^d (d = 2, 3) ----------------------------------------------------------------------------------
def nd_refs(cost: str, r: dict, dim: int, norm: str) -> dict:
    """The valid, finite references of ``continuous_approx_references`` for a row, by name (None otherwise)."""
    from optmech.mechanisms.approx_references import continuous_approx_references

    out = {}
    for b in continuous_approx_references(cost, r["epsilon"], r["delta"], r["sensitivity"], dim=dim, norm=norm):
        out[b.name] = float(b.value) if b.valid and math.isfinite(float(b.value)) else None
    return out


def check_nd_row(r: dict, cost: str, dim: int, norm: str) -> None:
    assert list(r) == ND_HEADER
    assert (r["dim"], r["norm"]) == (dim, norm)
    assert r["certified"] is True and r["status"] in ("optimal", "gap_not_reached")
    lo, up = r["v_star_lower"], r["v_star_upper"]
    assert 0 <= lo <= up and r["relative_gap"] == pytest.approx((up - lo) / up, rel=1e-9)
    refs = nd_refs(cost, r, dim, norm)
    assert "truncated_laplace" not in refs and r["ub_truncated_laplace"] is None  # 1-D only
    assert r["ratio_truncated_laplace_to_v_star"] is None
    for name in ("uniform", "laplace", "staircase", "gaussian", "analytic_gaussian"):
        law = "l2_laplace" if (name, norm) == ("laplace", "l2") else name  # ub_laplace: the l2-Laplace for --norm l2
        assert r[f"ub_{name}"] == refs[law], name  # the same floats, through JSON/CSV
        if refs[law] is not None:  # every valid mechanism is an upper bound on V* >= v_star_lower
            assert refs[law] >= lo * (1 - REL), name
    gauss = min(v for v in (r["ub_gaussian"], r["ub_analytic_gaussian"]) if v is not None)
    assert r["ratio_gaussian_to_v_star"] == pytest.approx(gauss / up, rel=1e-12)
    assert r["ratio_best_simple_to_v_star"] == pytest.approx(min(r["ub_uniform"], r["ub_laplace"]) / up, rel=1e-12)


@pytest.fixture(scope="module")
def l2_plane_json() -> tuple[str, list[dict]]:
    out = table("--domain", "continuous", "--dim", "2", "--norm", "l2", "--cost", "l2", "--epsilon", "1",
                "--delta", "0.05", "--time-limit", "5", "--target-gap", "0.3", "--format", "json")
    return out, json.loads(out)


def test_a_plane_l2_row_parses_whole_with_its_norm_and_references(l2_plane_json):
    out, rows = l2_plane_json
    assert out.endswith("]\n") and len(rows) == 1
    r = rows[0]
    assert (r["sensitivity"], r["epsilon"], r["delta"]) == (1.0, 1.0, 0.05)
    check_nd_row(r, "l2", 2, "l2")
    assert r["ub_gaussian"] is None  # the classic calibration needs epsilon < 1
    assert r["ub_laplace"] == pytest.approx(2.0, rel=REL)  # the l2-Laplace: E||X||_2 = d Delta/epsilon


def test_a_row_stopped_by_the_time_limit_keeps_its_certified_bracket():
    """ℝ³, ℓ1 sensitivity, CSV: one second per row cannot reach a gap of 1e-3, and the row says so."""
    out = table("--domain", "continuous", "--dim", "3", "--norm", "l1", "--cost", "l1", "--epsilon", "1",
                "--delta", "0.05", "--time-limit", "1", "--target-gap", "1e-3", "--format", "csv")
    assert next(csv.reader([out.splitlines()[0]])) == ND_HEADER and len(out.splitlines()) == 2
    (r,) = parse_csv(out)
    r["dim"] = int(r["dim"])
    check_nd_row(r, "l1", 3, "l1")
    assert r["status"] == "gap_not_reached" and r["relative_gap"] > 1e-3


def test_build_table_on_the_plane_keeps_the_norm_in_the_rows_and_the_text():
    from optmech.table import build_table

    t = build_table("approx", cost="l2sq", sensitivities=[1], epsilons=[1.0], deltas=[0.05], domain="continuous",
                    dim=2, norm="l1", time_limit=1, target_gap=0.5, workers=1)
    assert repr(t) == "<Table approx on R^2: 1 rows>" and t.columns == ND_HEADER
    check_nd_row(dict(t[0]), "l2sq", 2, "l1")
    head = t.render("text").splitlines()[0].split()
    assert "norm" in head and "status" in head and "ub_truncated_laplace" not in head and "lb_theorem" not in head
    assert json.loads(t.render("json"))[0]["norm"] == "l1"


# -- bad input --------------------------------------------------------------------------------------
BAD = [
    (["--dim", "2", "--cost", "abs", "--delta", "0.1"], "1-D"),
    (["--dim", "2", "--cost", "square", "--delta", "0.1"], "l2sq"),
    (["--dim", "2", "--cost", "l2", "--norm", "linf2", "--delta", "0.1"], "linf2"),
    (["--dim", "1", "--norm", "linf2", "--delta", "0.1"], "norm"),
    (["--dim", "1", "--norm", "l2", "--delta", "0.1"], "norm"),
    (["--dim", "4", "--cost", "l2", "--delta", "0.1"], "--dim 1, 2, 3"),
    (["--delta", "1"], "delta"),
    (["--delta", "0.1,1.5"], "delta"),
    (["--delta", "0"], "pure"),
    (["--delta", "0.1", "--sensitivity", "0"], "sensitivity"),
]


@pytest.mark.parametrize("args, fragment", [BAD[0], BAD[2]], ids=["1-D cost on the plane", "bad norm"])
def test_bad_input_in_a_subprocess_is_one_line_and_exit_2(args, fragment):
    p = optmech("table", "--privacy", "approx", "--domain", "continuous", "--epsilon", "1", *args, "--format", "json")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("optmech: ") and fragment in lines[0] and "Traceback" not in p.stderr


@pytest.mark.parametrize("args, fragment", BAD)
def test_bad_input_is_one_line_and_exit_2(args, fragment, capsys):
    from optmech.cli import main

    try:
        got = main(["table", "--privacy", "approx", "--domain", "continuous", "--epsilon", "1", *args, "--format", "csv"])
    except SystemExit as exc:
        got = exc.code
    out, err = capsys.readouterr()
    assert got == 2, (got, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("optmech: ") and "Traceback" not in err
    assert fragment.lower() in err.lower()
