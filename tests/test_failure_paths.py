"""Solver failure paths: time and iteration limits, infeasible LPs, unboundable LPs, HiGHS errors,
costs that reward large noise.  Each gives a clear one-line message and a nonzero exit, and no
partial result is printed as an optimum."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from optmech.cli import main
from optmech.errors import SolveFailed, SpecError
from optmech.lp import LinearProgram
from optmech.solvers import load_profile, solve_lp


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_failure(code: int, out: str, err: str, exit_code: int, *fragments: str) -> None:
    assert code == exit_code, (code, out, err)
    assert out == "", out                       # nothing printed as a result
    assert err.count("\n") == 1 and err.startswith("optmech: "), err
    for f in fragments:
        assert f in err, (f, err)


def test_time_limit_before_any_lp_answers_with_the_bracket_found_without_one(capsys):
    """A time limit always yields a certified bracket where the family has bounds without an LP (issue 36):
    here the floor 0 and the best l1 lattice staircase."""
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--dim", "3", "--cost", "l1", "--domain", "integer",
                                   "--sensitivity", "3", "--time-limit", "0.3", "--json"])
    import json

    assert code == 0 and err == ""
    res = json.loads(out)
    assert res["certified"] and res["status"] == "gap_not_reached" and "time limit" in res["message"]
    assert 0.0 <= res["lower_bound"] <= res["upper_bound"] < float("inf")


def test_iteration_limit_fails_cleanly(capsys, tmp_path):
    prof = tmp_path / "one_iteration.toml"
    prof.write_text('description = "one simplex iteration"\n[[attempt]]\nbackend = "highs"\n'
                    '[attempt.options]\nsolver = "simplex"\nsimplex_iteration_limit = 1\n')
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--cost", "where(x > 0, x, 2*abs(x))", "--domain",
                                   "integer", "--sensitivity", "3", "--solver", str(prof)])
    _one_line_failure(code, out, err, 4, "solver failed", "iteration_limit")


def test_time_limit_after_a_certified_bracket_says_so(capsys):
    """Stopped by the limit after some LP solved: the bracket is certified but labelled as not at target."""
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--cost", "where(x > 0, x, 2*abs(x))",
                                   "--time-limit", "0.01"])
    assert code == 0 and err == ""
    assert "bracket (certified)" in out and "gap_not_reached" in out and "time limit" in out


def _lp(c, rows, rl, ru, cu) -> LinearProgram:
    A = sp.csc_array(np.array(rows, dtype=float))
    n = A.shape[1]
    return LinearProgram(c=np.array(c, float), A=A, row_lower=np.array(rl, float), row_upper=np.array(ru, float),
                         col_lower=np.zeros(n), col_upper=np.array(cu, float), meta={"normalisation_row": 0})


def test_infeasible_lp_is_a_solver_failure_not_a_bound():
    # a pmf on two points with mass <= 0.2 each cannot sum to 1: what a (0, δ) window too small to
    # hold any feasible pmf looks like once the far mass is removed
    lp = _lp([1.0, 2.0], [[1.0, 1.0]], [1.0], [1.0], [0.2, 0.2])
    with pytest.raises(SolveFailed, match="infeasible"):
        solve_lp(lp, load_profile("default"))


def test_unbounded_lps_cannot_be_built():
    """Every column bound must be finite (so every LP optimum, and every dual bound, is finite)."""
    with pytest.raises(ValueError, match="finite"):
        _lp([-1.0], [[1.0]], [0.0], [np.inf], [np.inf])


HIGHS_ONLY = 'description = "HiGHS only"\n[[attempt]]\nbackend = "highs"\n[attempt.options]\nsolver = "simplex"\n'


def test_highs_error_is_reported_not_raised(monkeypatch, capsys, tmp_path):
    import highspy

    def boom(self):
        raise RuntimeError("simulated HiGHS crash")

    monkeypatch.setattr(highspy.Highs, "run", boom)
    monkeypatch.setattr(highspy.Highs, "startSolve", boom)  # the interruptible path (highspy >= 1.8)
    prof = tmp_path / "highs_only.toml"
    prof.write_text(HIGHS_ONLY)
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--dim", "2", "--cost", "l1", "--domain", "integer",
                                   "--sensitivity", "2", "--solver", str(prof)])
    _one_line_failure(code, out, err, 4, "solver failed", "HiGHS raised RuntimeError")


def test_the_default_profile_falls_back_when_highspy_fails(monkeypatch, capsys):
    import highspy

    monkeypatch.setattr(highspy.Highs, "run", lambda self: (_ for _ in ()).throw(RuntimeError("crash")))
    monkeypatch.setattr(highspy.Highs, "startSolve", lambda self: (_ for _ in ()).throw(RuntimeError("crash")))
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--dim", "2", "--cost", "l1", "--domain", "integer",
                                   "--sensitivity", "2", "--json"])
    assert code == 0 and err == ""     # scipy's HiGHS binding took over; the result is certified as usual
    import json

    assert json.loads(out)["certified"] is True


def test_highs_rejecting_the_model_is_reported(monkeypatch, tmp_path):
    import highspy

    from optmech.solvers.profiles import load_profile as load

    monkeypatch.setattr(highspy.Highs, "passModel", lambda self, lp: highspy.HighsStatus.kError)
    prof = tmp_path / "highs_only.toml"
    prof.write_text(HIGHS_ONLY)
    lp = _lp([1.0, 2.0], [[1.0, 1.0]], [1.0], [1.0], [1.0, 1.0])
    with pytest.raises(SolveFailed, match="passModel"):
        solve_lp(lp, load(str(prof)))


@pytest.mark.parametrize("cost", ["1/(1+x**2)", "exp(-abs(x))", "where(x > 0, 1/(1+x), abs(x) + 1)"])
def test_costs_that_reward_large_noise_are_refused(capsys, cost):
    code, out, err = _run(capsys, ["solve", "--epsilon", "1", "--cost", cost])
    _one_line_failure(code, out, err, 2, "rewards large noise", "no optimum exists")


def test_rewarding_costs_are_refused_in_d_dimensions_and_by_the_api():
    from optmech.spec import IntegerLattice, Problem, PureDP

    with pytest.raises(SpecError, match="rewards large noise"):
        Problem(privacy=PureDP(1.0), cost="1/(1+x1**2+x2**2)", dim=2, domain=IntegerLattice())
    # growing, bounded and constant costs are accepted
    for cost in ("abs(x)", "min(abs(x), 3)", "2", "abs(x - 3)"):
        Problem(privacy=PureDP(1.0), cost=cost)
