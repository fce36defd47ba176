"""``optmech sample`` and ``optmech mechanism``: file contracts, reproducibility, JSON fields and
input errors (exit 2, one line on stderr, no output file).  ``optmech audit`` is covered in
tests/test_audit.py and below for its CLI contract."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from optmech.mechanisms import DiscreteStaircase, Staircase, optimal_gamma
from optmech.costs import parse_cost
from test_cli import run_cli


def test_sample_npy_is_reproducible_and_has_the_law(tmp_path):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    for f in (a, b):
        p = run_cli("sample", "--mechanism", "staircase", "--epsilon", "1.5", "--sensitivity", "2", "-n", "20000",
                    "--seed", "11", "--out", str(f), "--json")
        assert p.returncode == 0, p.stderr
    x, y = np.load(a), np.load(b)
    assert x.shape == (20000,) and np.array_equal(x, y)
    summary = json.loads(p.stdout)
    assert summary["seed"] == 11 and summary["n"] == 20000 and not summary["secure"]
    g = summary["mechanism"]["gamma"]
    assert g == pytest.approx(optimal_gamma(parse_cost("abs"), 1.5, 2.0), rel=1e-14)  # default cost abs
    st = Staircase(epsilon=1.5, sensitivity=2.0, gamma=g)
    assert stats.kstest(x, st.cdf).pvalue > 1e-3


def test_sample_csv_discrete_and_dd(tmp_path):
    f = tmp_path / "k.csv"
    p = run_cli("sample", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "4", "--r", "3",
                "-n", "500", "--seed", "1", "--out", str(f))
    assert p.returncode == 0, p.stderr
    lines = f.read_text().splitlines()
    assert lines[0] == "x" and len(lines) == 501
    k = np.array([int(v) for v in lines[1:]])
    ds = DiscreteStaircase(epsilon=1.0, sensitivity=4, r=3)
    assert np.all(ds.pmf(k) > 0)
    g = tmp_path / "u.csv"
    p = run_cli("sample", "--mechanism", "uniform", "--delta", "0.25", "--dim", "2", "--sensitivity", "1", "-n", "100",
                "--secure", "--out", str(g), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["secure"] is True
    rows = g.read_text().splitlines()
    assert rows[0] == "x1,x2" and len(rows) == 101
    vals = np.array([[int(v) for v in r.split(",")] for r in rows[1:]])
    assert vals.min() >= -2 and vals.max() <= 1  # n = 4 points: {-2, -1, 0, 1} [Geng13, (4.28)]


def test_sample_zero_draws_writes_an_empty_file(tmp_path):
    f = tmp_path / "z.npy"
    p = run_cli("sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "0", "--seed", "0", "--out", str(f))
    assert p.returncode == 0, p.stderr
    assert np.load(f).shape == (0,)


def test_mechanism_json_contract():
    p = run_cli("mechanism", "--mechanism", "staircase", "--epsilon", "1", "--sensitivity", "1", "--cost", "square", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    b = math.exp(-1.0)
    v_star = (2 ** (-2 / 3) * (b * (1 + b)) ** (2 / 3) + b) / (1 - b) ** 2  # [Geng13] Thm 2.7
    assert d["expected_cost"] == pytest.approx(v_star, rel=1e-13)
    assert set(d["parameters"]) == {"gamma"} and d["shape_parameter"] == "optimal"
    p = run_cli("mechanism", "--mechanism", "staircase", "--epsilon", "1", "--gamma", "0.5", "--json")
    d = json.loads(p.stdout)
    assert d["parameters"]["gamma"] == 0.5
    assert d["expected_cost"] == pytest.approx(Staircase(epsilon=1, sensitivity=1, gamma=0.5).expected_cost("abs"), rel=1e-14)
    p = run_cli("mechanism", "--mechanism", "discrete_laplace", "--epsilon", "2", "--sensitivity", "3", "--json")
    lam = math.exp(-2 / 3)
    assert json.loads(p.stdout)["expected_cost"] == pytest.approx(2 * lam / (1 - lam**2), rel=1e-13)  # [GV13] (231)
    p = run_cli("mechanism", "--mechanism", "uniform", "--delta", "0.05", "--sensitivity", "3", "--json")
    d = json.loads(p.stdout)
    assert d["expected_cost"] == pytest.approx(3 / (4 * 0.05), rel=1e-13)  # [GV13] Cor 4 V_UB
    assert d["privacy"]["notion"] == "approx" and d["privacy"]["delta"] <= 0.05


@pytest.mark.parametrize(
    "args",
    [
        ["sample", "--mechanism", "staircase", "--epsilon", "1", "--gamma", "1.5", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "staircase", "--epsilon", "1", "--gamma", "-0.1", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "3", "--r", "0", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "3", "--r", "4", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "0", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "-2", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "nan", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "-1", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "2.5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "5", "--out", "{d}/x.txt"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "5", "--out", "{d}/missing/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "5", "--seed", "-3", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "5", "--seed", "3", "--secure", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "uniform", "--delta", "1.5", "-n", "5", "--out", "{d}/x.npy"],
        ["sample", "--mechanism", "gaussian", "--epsilon", "1", "-n", "5", "--out", "{d}/x.npy"],
        ["mechanism", "--mechanism", "staircase", "--epsilon", "1", "--gamma", "2", "--json"],
        ["mechanism", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "2.5", "--json"],
        ["mechanism", "--mechanism", "geometric", "--epsilon", "1", "--sensitivity", "2", "--json"],
        ["mechanism", "--mechanism", "laplace", "--epsilon", "1", "--r", "2", "--json"],
        ["mechanism", "--mechanism", "staircase", "--epsilon", "1", "--cost", "__import__('os')", "--json"],
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args):
    argv = [a.replace("{d}", str(tmp_path)) for a in args]
    p = run_cli(*argv)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not any(tmp_path.rglob("*.npy")) and not any(tmp_path.rglob("*.csv"))


def test_sample_and_describe_a_solved_mechanism(tmp_path):
    """``--from`` turns ``optmech solve --save`` into a sampler: its law is the discrete staircase
    (the proven optimum for |x| on ℤ [Geng13, Thm 2.13])."""
    saved, out = tmp_path / "s.json", tmp_path / "x.npy"
    p = run_cli("solve", "--domain", "integer", "--epsilon", "1", "--sensitivity", "3", "--save", str(saved), "--json")
    assert p.returncode == 0, p.stderr
    solved = json.loads(p.stdout)
    p = run_cli("mechanism", "--from", str(saved), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert solved["lower_bound"] - 1e-9 <= d["expected_cost"] <= solved["upper_bound"] + 1e-9
    assert d["privacy"]["epsilon"] <= 1.0
    p = run_cli("sample", "--from", str(saved), "-n", "20000", "--seed", "4", "--out", str(out))
    assert p.returncode == 0, p.stderr
    k = np.load(out)
    ds = DiscreteStaircase.optimal("abs", epsilon=1.0, sensitivity=3)
    pit = ds.cdf(k - 1) + np.random.default_rng(0).random(k.size) * ds.pmf(k)
    assert stats.kstest(pit, "uniform").pvalue > 1e-3
    for bad in (["mechanism", "--from", str(tmp_path / "none.json")], ["mechanism", "--from", str(saved), "--gamma", "0.2"],
                ["mechanism", "--from", str(out)], ["mechanism", "--mechanism", "laplace", "--from", str(saved)]):
        p = run_cli(*bad)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, (bad, p.stderr)


def test_dd_sample_and_mechanism(tmp_path):
    """d-D: the staircase's E‖X‖₁ = Δ(d/(d+1))N_{d+1}(γ)/N_d(γ) (reference/multidim.md §3) from
    the CLI, and the sample's mean ‖X‖₁ within 5 standard errors of it."""
    from optmech.mechanisms import staircase_nd_moment

    p = run_cli("mechanism", "--mechanism", "staircase", "--dim", "3", "--epsilon", "2", "--sensitivity", "1.5", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    g = d["parameters"]["gamma"]
    assert d["expected_cost"] == pytest.approx(staircase_nd_moment(1, 2.0, 1.5, g, 3), rel=1e-12)
    f = tmp_path / "x.npy"
    p = run_cli("sample", "--mechanism", "staircase", "--dim", "3", "--epsilon", "2", "--sensitivity", "1.5",
                "-n", "100000", "--seed", "2", "--out", str(f))
    assert p.returncode == 0, p.stderr
    x = np.load(f)
    assert x.shape == (100000, 3)
    l1 = np.abs(x).sum(axis=1)
    assert abs(l1.mean() - d["expected_cost"]) < 5 * l1.std() / math.sqrt(l1.size)
    p = run_cli("mechanism", "--mechanism", "l2_laplace", "--dim", "4", "--epsilon", "0.5", "--cost", "l2sq", "--json")
    assert json.loads(p.stdout)["expected_cost"] == pytest.approx(4 * 5 / 0.25, rel=1e-12)  # n(n+1)Δ²/ε² [KHP15]
    p = run_cli("mechanism", "--mechanism", "staircase", "--dim", "2", "--epsilon", "1", "--cost", "abs^2", "--json")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_audit_cli_contract(tmp_path):
    """``optmech audit``: the JSON fields of the issue's contract, for a solver file (pure) and a
    finite CSV pmf (not pure; uniform on n points has δ(ε) = Δ/n for every ε [QHFL22, corrected (22)])."""
    saved = tmp_path / "s.json"
    assert run_cli("solve", "--domain", "integer", "--epsilon", "0.7", "--sensitivity", "2", "--save", str(saved)).returncode == 0
    p = run_cli("audit", str(saved), "--sensitivity", "2", "--epsilon", "0.35", "0.70", "--epsilon", "1e0", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert 0.7 - 1e-9 <= d["epsilon"] <= 0.7
    assert list(d["delta_at"]) == ["0.35", "0.70", "1e0"]
    assert d["delta_at"]["0.35"] > 0 and d["delta_at"]["0.70"] == 0 and d["delta_at"]["1e0"] == 0
    eps_grid = [e for e, _ in d["delta_curve"]]
    assert eps_grid == sorted(eps_grid) and all(0 <= dl <= 1 for _, dl in d["delta_curve"])
    csv = tmp_path / "u.csv"
    csv.write_text("k,p\n" + "".join(f"{k},0.2\n" for k in range(-2, 3)))
    p = run_cli("audit", str(csv), "--sensitivity", "2", "--epsilon", "0,3", "--json")
    d = json.loads(p.stdout)
    assert d["epsilon"] is None
    assert d["delta_at"]["0"] == pytest.approx(2 / 5, rel=1e-12) and d["delta_at"]["3"] == pytest.approx(2 / 5, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    ["k,p\n0,-0.1\n1,1.1\n", "k,p\n0,nan\n1,1\n", "k,p\n0,0.5\n1,0.6\n", "k,p\n0,0.5\n0,0.5\n",
     "k,p\n0.5,0.5\n1,0.5\n", "x,y\n0,1\n", "", "k,p\n0,0.5,1\n"],
)
def test_audit_bad_pmf_files(tmp_path, text):
    f = tmp_path / "p.csv"
    f.write_text(text)
    p = run_cli("audit", str(f), "--sensitivity", "1", "--json")
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


def test_audit_of_a_missing_file_is_one_line(tmp_path):
    p = run_cli("audit", str(tmp_path / "missing.csv"), "--sensitivity", "1")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_mechanism_json_output_is_accepted_by_from(tmp_path):
    # `optmech mechanism --json > m.json` then `--from m.json` (sample, mechanism) rebuild the same law
    import json
    import subprocess
    import sys

    run = lambda *a: subprocess.run([sys.executable, "-m", "optmech", *a], capture_output=True, text=True, timeout=120)  # noqa: E731
    first = run("mechanism", "--mechanism", "staircase", "--epsilon", "1.5", "--sensitivity", "2", "--cost", "square", "--json")
    assert first.returncode == 0, first.stderr
    m = tmp_path / "m.json"
    m.write_text(first.stdout)
    again = run("mechanism", "--from", str(m), "--json")
    assert again.returncode == 0, again.stderr
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["definition"] == b["definition"] and a["privacy"] == b["privacy"]
    out = tmp_path / "s.csv"
    s = run("sample", "--from", str(m), "-n", "5", "--out", str(out), "--seed", "1")
    assert s.returncode == 0, s.stderr
    assert len(out.read_text().split()) == 6  # header + 5 samples


def test_the_staircase_in_another_norm_from_the_command_line(tmp_path):
    """`--norm` picks the d-D staircase's ball: its E‖X‖₂ in ℓ2 equals the ℓ1 staircase's E‖X‖₁ (the same
    radial law), and the saved definition keeps the norm; `sample` draws from ℓp balls too."""
    from optmech.mechanisms.multidim import staircase_nd_optimal_cost

    p = run_cli("mechanism", "--mechanism", "staircase", "--epsilon", "1", "--dim", "2", "--norm", "l2", "--cost", "l2",
                "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["definition"]["norm"] == "l2" and d["privacy"]["norm"] == "l2"
    assert d["expected_cost"] == pytest.approx(staircase_nd_optimal_cost("l1", 1.0, 1.0, 2), rel=1e-12)
    out = tmp_path / "s.csv"
    s = run_cli("sample", "--mechanism", "staircase", "--epsilon", "1", "--dim", "3", "--norm", "lp:3", "-n", "5",
                "--seed", "2", "--out", str(out))
    assert s.returncode == 0, s.stderr
    assert out.read_text().splitlines()[0] == "x1,x2,x3" and len(out.read_text().splitlines()) == 6
    for args, needle in ((["--mechanism", "laplace", "--dim", "2", "--norm", "l2"], "does not apply"),
                         (["--mechanism", "staircase", "--norm", "l2"], "d > 1")):
        b = run_cli("mechanism", "--epsilon", "1", *args)
        assert b.returncode == 2 and b.stdout == "" and len(b.stderr.strip().splitlines()) == 1 and needle in b.stderr
