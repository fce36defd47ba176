"""A saved law keeps its guarantee (issue 36, items 9 and 6).

Every family is solved with ``optmech solve --save`` in a subprocess (all at once, small problems),
then loaded back the ways a user does: ``optmech mechanism --from F --json``, ``optmech sample
--from F --json`` (with and without ``--exact``) and ``Result.from_json``.  The privacy statement
each prints must be the guarantee the law has, re-audited: the saved problem's notion and ε, with δ
at most the problem's δ and never a vacuous ε = inf.  For the (ε, δ) laws the stated δ is checked
against an independent computation from the saved masses (exact rationals on ℤ; a fine Riemann sum
of the density at real shifts on ℝ).

A continuous saved law is released on the grid of step Δ/2^K by ``sample --exact --lattice-bits K``
(the law of ⌊X/h⌋, compared here with the density's own cdf); laws without an exact sampler are
refused up front, in one line that says what works.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from optmech import Result

#: name → the `optmech solve` arguments of a small problem of that family (each solves in about a second).
SOLVES = {
    "pure_int": ["--epsilon", "1", "--domain", "integer", "--cost", "abs"],
    "pure_real": ["--epsilon", "1", "--cost", "abs", "--target-gap", "1e-3"],
    "pure_2d": ["--epsilon", "1", "--dim", "2", "--domain", "integer", "--cost", "l1"],
    "approx_int": ["--privacy", "approx", "--epsilon", "1", "--delta", "0.05", "--sensitivity", "3", "--domain",
                   "integer", "--cost", "where(x > 0, x, 3*abs(x))"],
    "approx_int_2d": ["--privacy", "approx", "--epsilon", "1", "--delta", "0.05", "--sensitivity", "2", "--dim", "2",
                      "--domain", "integer", "--cost", "l1"],
    "approx_real": ["--privacy", "approx", "--epsilon", "1", "--delta", "0.05", "--domain", "continuous", "--cost",
                    "abs", "--target-gap", "1e-2"],
    "approx_real_2d": ["--privacy", "approx", "--epsilon", "2", "--delta", "1e-2", "--dim", "2", "--norm", "l2",
                       "--domain", "continuous", "--cost", "l2", "--resolution", "2", "--target-gap", "0.9",
                       "--time-limit", "30"],
    "lipschitz": ["--privacy", "lipschitz", "--epsilon", "1", "--cost", "square", "--target-gap", "1e-3"],
    "wasserstein_approx": ["--utility", "wasserstein", "--privacy", "approx", "--epsilon", "1", "--delta", "0.05",
                           "--input", "uniform:0:5"],
}


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "optmech", *args]


def _run_all(cmds: list[list[str]], timeout: float = 240) -> list[subprocess.CompletedProcess]:
    """Run the commands side by side; each result as subprocess.run would give it."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    out = []
    for c, p in zip(cmds, procs):
        stdout, stderr = p.communicate(timeout=timeout)
        out.append(subprocess.CompletedProcess(c, p.returncode, stdout, stderr))
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Every family of SOLVES solved and saved by the CLI."""
    folder = tmp_path_factory.mktemp("saved")
    paths = {name: folder / f"{name}.json" for name in SOLVES}
    results = _run_all([_cmd("solve", *args, "--save", str(paths[name])) for name, args in SOLVES.items()])
    for name, p in zip(SOLVES, results):
        assert p.returncode == 0, (name, p.stderr)
    return paths


def _loaded_statements(path: Path, tmp: Path, exact: bool) -> list[dict]:
    """The privacy statements of `mechanism --from`, `sample --from` (`--exact` where the law has an
    exact sampler: its statement comes from the same re-audit of the loaded law, on exact masses)
    and `Result.from_json`."""
    cmds = [_cmd("mechanism", "--from", str(path), "--json"),
            _cmd("sample", "--from", str(path), "-n", "1000", "--seed", "1", "--json", "--out", str(tmp / "a.npy"),
                 *(["--exact"] if exact else []))]
    out = []
    for p in _run_all(cmds):
        assert p.returncode == 0 and p.stderr == "", (p.args, p.stderr)
        out.append(json.loads(p.stdout)["privacy"])  # the whole stdout is one JSON object
    out.append(Result.from_json(path.read_text()).mechanism.privacy().to_dict())
    return out


def _number(v) -> float:
    return math.inf if v == "inf" else float(v)


def _check_pure(statements: list[dict], epsilon: float) -> None:
    for p in statements:
        assert p["notion"] == "pure" and p["delta"] == 0.0, p
        assert 0 < _number(p["epsilon"]) <= epsilon * (1 + 1e-12), p


def _check_approx(statements: list[dict], epsilon: float, delta: float) -> list[float]:
    deltas = []
    for p in statements:
        assert p["notion"] == "approx" and _number(p["epsilon"]) == epsilon, p
        assert 0 <= p["delta"] <= delta, p
        deltas.append(p["delta"])
    return deltas


@pytest.mark.parametrize("name, epsilon", [("pure_int", 1.0), ("pure_real", 1.0), ("pure_2d", 1.0)])
def test_a_saved_pure_law_states_its_audited_epsilon(saved, tmp_path, name, epsilon):
    exact = name != "pure_real"
    _check_pure(_loaded_statements(saved[name], tmp_path, exact), epsilon)


def _hockey_stick_exact(weights: list[float], shift: int, epsilon: float) -> Fraction:
    """Σ_k [p(k) − e^ε p(k + s)]_+ for the finitely supported pmf weights/Σ weights, exactly
    except e^ε (a float, rounded down two ulps: a lower estimate of the exact sum is all the test needs)."""
    w = [Fraction(x) for x in weights]
    tot = sum(w)
    c = Fraction(float(np.nextafter(np.nextafter(math.exp(epsilon), 0), 0)))
    n = len(w)
    return sum((max(w[k] - c * (w[k + shift] if 0 <= k + shift < n else 0), Fraction(0)) for k in range(n)),
               Fraction(0)) / tot


def test_the_issue_command_states_the_audited_epsilon_delta(saved, tmp_path):
    """`sample --from ap.json --exact --json` of the issue's (1, 0.05) law on ℤ: no longer "pure, inf"."""
    path = saved["approx_int"]
    statements = _loaded_statements(path, tmp_path, exact=True)
    deltas = _check_approx(statements, 1.0, 0.05)
    m = json.loads(path.read_text())["mechanism"]
    assert m["beta"] == 0.0  # finite support: the sum below is the whole divergence
    exact = max(_hockey_stick_exact(m["weights"], s, 1.0) for s in (-3, -2, -1, 1, 2, 3))
    assert 0.04 < exact <= 0.05
    for d in deltas:  # an upper bound of the exact δ(1), tight to rounding
        assert float(exact) * (1 - 1e-12) <= d <= float(exact) + 1e-12
    assert any("hockey-stick" in p["note"] for p in statements)


def test_a_saved_approx_law_on_z2_states_its_audited_delta(saved, tmp_path):
    deltas = _check_approx(_loaded_statements(saved["approx_int_2d"], tmp_path, exact=True), 1.0, 0.05)
    assert min(deltas) > 0.04


def test_a_saved_wasserstein_approx_law_states_its_audited_delta(saved, tmp_path):
    deltas = _check_approx(_loaded_statements(saved["wasserstein_approx"], tmp_path, exact=True), 1.0, 0.05)
    assert min(deltas) > 0.04


def test_a_saved_approx_density_on_r_states_its_audited_delta(saved, tmp_path):
    """The cell density's δ(1) is the audit over every real shift |t| <= Δ: a Riemann sum of
    ∫ [f(x) − e f(x + t)]_+ dx at a few real shifts stays below it (and it is not vacuous)."""
    path = saved["approx_real"]
    deltas = _check_approx(_loaded_statements(path, tmp_path, exact=False), 1.0, 0.05)
    assert min(deltas) > 0.04
    assert (tmp_path / "a.npy").exists()  # `sample --from` without --exact drew from it
    mech = Result.from_json(path.read_text()).mechanism
    lo, hi = mech.support()
    step = 1 / 4096
    x = np.arange(lo - 2, hi + 2, step) + step / 2
    for t in (1.0, -1.0, 0.5, 0.37, -0.8125):
        riemann = float(np.sum(np.maximum(mech.pdf(x) - math.e * mech.pdf(x + t), 0.0)) * step)
        assert riemann <= max(deltas) + 2e-3, t


def test_a_saved_approx_law_on_r2_keeps_its_guarantee(saved, tmp_path):
    """At ε = 2, δ = 1e-2 the ℝ² solve hands back a closed form (the ℓ2 Laplace, pure 2-DP)."""
    statements = _loaded_statements(saved["approx_real_2d"], tmp_path, exact=False)
    for p in statements:
        if p["notion"] == "pure":
            assert 0 < _number(p["epsilon"]) <= 2.0
        else:
            assert p["notion"] == "approx" and _number(p["epsilon"]) == 2.0 and p["delta"] <= 1e-2


def test_a_saved_lipschitz_law_keeps_its_rate(saved, tmp_path):
    for p in _loaded_statements(saved["lipschitz"], tmp_path, exact=False):
        assert p["notion"] == "lipschitz" and 0 < _number(p["epsilon"]) <= 1.0, p


# -- item 6: exact samplers of saved continuous laws ------------------------------------------------
@pytest.mark.parametrize("name, notion", [("pure_real", "pure"), ("approx_real", "approx")])
def test_a_saved_density_on_r_is_released_on_the_grid(saved, tmp_path, name, notion):
    """`sample --from F --exact` names --lattice-bits; with it the draws are multiples of Δ/2^K and the
    released law keeps the guarantee (re-audited exactly)."""
    path = saved[name]
    cmds = [_cmd("sample", "--from", str(path), "-n", "20000", "--seed", "5", "--exact", "--lattice-bits", "4", "--json",
                 "--out", str(tmp_path / "b.npy"))]
    if notion == "pure":
        cmds.append(_cmd("sample", "--from", str(path), "-n", "10", "--exact", "--out", str(tmp_path / "a.npy")))
    released, *bare = _run_all(cmds)
    for b in bare:
        assert b.returncode == 2 and b.stdout == "" and len(b.stderr.splitlines()) == 1
        assert b.stderr.startswith("optmech: ") and "--lattice-bits K" in b.stderr
    assert released.returncode == 0, released.stderr
    out = json.loads(released.stdout)
    assert out["step"] == 1 / 16
    x = np.load(tmp_path / "b.npy")
    assert np.array_equal(x * 16, np.round(x * 16))
    p = out["privacy"]
    assert p["notion"] == notion and _number(p["epsilon"]) <= 1.0 + 1e-9
    assert p["delta"] <= (0.05 if notion == "approx" else 0.0)
    # the draws follow the law of floor(X/h)·h: its cdf at the grid points is the density's
    mech = Result.from_json(path.read_text()).mechanism
    grid = np.arange(-4, 4, 1 / 16)
    emp = np.searchsorted(np.sort(x), grid, side="left") / x.size  # P(draw < g) = P(X < g)
    assert np.max(np.abs(emp - mech.cdf(grid))) < 0.015


def test_the_grid_law_of_a_density_is_its_cdf_differences(saved):
    """density_on_grid: each mass is ∫ f over its grid cell, window and geometric tails alike."""
    from optmech.mechanisms.lattice_release import density_on_grid

    mech = Result.from_json(saved["pure_real"].read_text()).mechanism
    assert mech.law.beta > 0  # the pure density has geometric tails
    lat = density_on_grid(mech, 3)
    h = 1 / 8
    k = np.arange(lat.law.k_lo - 40, lat.law.k_hi + 41)
    want = mech.cdf((k + 1) * h) - mech.cdf(k * h)
    assert np.max(np.abs(lat.pmf(k) - want)) < 1e-12
    assert lat.exact_sampler().privacy().epsilon <= 1.0 + 1e-9


def test_a_law_without_an_exact_sampler_is_refused_up_front(saved, tmp_path):
    """A saved Lipschitz density has no lattice release: one line says what works, with or without K."""
    path = saved["lipschitz"]
    for p in _run_all([_cmd("sample", "--from", str(path), "-n", "5", "--exact", "--out", str(tmp_path / "a.npy")),
                       _cmd("sample", "--from", str(path), "-n", "5", "--exact", "--lattice-bits", "3", "--out",
                            str(tmp_path / "b.npy"))]):
        assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
        assert p.stderr.startswith("optmech: ") and "has no exact sampler" in p.stderr
        assert "without --exact" in p.stderr and "--domain integer" in p.stderr
    assert not (tmp_path / "a.npy").exists() and not (tmp_path / "b.npy").exists()


def test_a_saved_result_without_a_mechanism_says_so(tmp_path, saved):
    d = json.loads(saved["pure_int"].read_text())
    d["mechanism"] = None
    path = tmp_path / "none.json"
    path.write_text(json.dumps(d))
    p = subprocess.run(_cmd("mechanism", "--from", str(path)), capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1
    assert "holds no mechanism" in p.stderr


def test_result_from_json_audits_a_file_whose_mechanism_omits_epsilon_and_delta(saved):
    """Files written before the mechanism recorded ε and δ: the problem's are used for the re-audit."""
    d = json.loads(saved["approx_int"].read_text())
    want = Result.from_dict(d).mechanism.privacy()
    for key in ("epsilon", "delta"):
        d["mechanism"].pop(key, None)
    p = Result.from_dict(d).mechanism.privacy()
    assert (p.notion, p.epsilon, p.delta) == ("approx", 1.0, want.delta) and 0.04 < p.delta <= 0.05


def test_a_lipschitz_law_that_misses_its_recorded_rate_says_so(saved):
    """A tampered file: a rate target below what the knots have is not repeated; the audited slope is."""
    d = json.loads(saved["lipschitz"].read_text())
    d["mechanism"]["epsilon"] = 0.5
    p = Result.from_dict(d).mechanism.privacy()
    assert p.notion == "lipschitz" and 0.5 < p.epsilon <= 1.0
