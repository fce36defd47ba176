"""The structured interior-point method for the 1-D (ε, δ) LP on ℤ (optmech.solvers.hockey_ipm).

Every value is checked against HiGHS's dual simplex on the same LP (an independent solver), and every
certificate against the exact values the issue measured with HiGHS at 10 digits (ε = 1, δ = 0.01, |x|).
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from optmech.certify import dual_lower_bound
from optmech.costs import as_cost
from optmech.errors import SpecError
from optmech.mechanisms.approx.bounds import thm8_n
from optmech.problems.approx import build_approx
from optmech.problems.approx_cells import NodeCosts
from optmech.problems.approx_periodic import build_aggregated
from optmech.solvers import hockey_ipm
from optmech.solvers.hockey_ipm import BlockTridiagonalCholesky, hockey_structure, solve_hockey
from optmech.solvers.profiles import parse_profile
from optmech.solvers import solve_lp

SIMPLEX = parse_profile('[[attempt]]\nbackend = "highs"\n[attempt.options]\nsolver = "simplex"\n'
                        "primal_feasibility_tolerance = 1e-10\ndual_feasibility_tolerance = 1e-10\n", "simplex")
#: the issue's exact values, ε = 1, δ = 0.01, cost |x| (HiGHS at 10 digits)
V_STAR = {8: 7.2549774950, 16: 14.5119723191}


def lp_for(D: int, eps: float = 1.0, delta: float = 0.01, cost: str = "abs", *, symmetry: str = "auto",
           nonnegative: bool = False, nodes=None, keep=None):
    n = thm8_n(eps, delta)
    N = int(math.ceil(D * (n + 1))) + D
    if nonnegative or symmetry == "off":
        N = int(math.ceil(2.5 * D * (n + 1))) + D
    shifts = np.arange(1, D + 1) if keep is None else np.asarray(keep)
    alp = build_approx(as_cost(cost), eps, delta, D, N, keep_shifts=shifts[:, None], edge_rows=True,
                       symmetry=symmetry, nonnegative=nonnegative, nodes=nodes)
    scale = 2.0 ** math.ceil(math.log2(2 * alp.R + 1))
    lp = alp.lp
    scaled = dataclasses.replace(lp, row_lower=lp.row_lower * scale, row_upper=lp.row_upper * scale,
                                 col_lower=lp.col_lower * scale, col_upper=lp.col_upper * scale)
    return alp, lp, scaled, scale


def ipm_bracket(lp, scaled, scale):
    res = solve_hockey(scaled)
    assert res.status.value == "optimal", res.message
    return dual_lower_bound(lp, res.row_dual).value, res.objective / scale, res


@pytest.mark.parametrize("D", [8, 16])
def test_matches_the_exact_values(D):
    _, lp, scaled, scale = lp_for(D)
    lo, obj, _ = ipm_bracket(lp, scaled, scale)
    assert lo <= V_STAR[D] * (1 + 1e-10)
    assert obj == pytest.approx(V_STAR[D], rel=1e-9)
    assert lo == pytest.approx(V_STAR[D], rel=1e-8)


@pytest.mark.parametrize("case", [
    dict(D=5, eps=0.5, delta=1e-3, cost="square"),
    dict(D=6, eps=1.0, delta=0.01, cost="where(x >= 0, x, 2*abs(x))", symmetry="off"),
    dict(D=4, eps=0.1, delta=0.01, cost="where(x >= 0, x, 2*abs(x))", symmetry="off", nonnegative=True),
    dict(D=12, eps=1.0, delta=1e-4, cost="abs", keep=[6, 7, 8, 9, 10, 11, 12]),
])
def test_agrees_with_simplex_on_the_same_lp(case):
    """Objective and certified lower bound against HiGHS's vertex solution of the identical LP (kept shifts,
    asymmetric costs without the ±x reduction, noise on ℕ with its columns fixed at 0)."""
    keep = case.pop("keep", None)
    _, lp, scaled, scale = lp_for(case.pop("D"), keep=keep, **case)
    lo, obj, res = ipm_bracket(lp, scaled, scale)
    ref = solve_lp(dataclasses.replace(lp, meta=dict(lp.meta, solve_scale=scale)), SIMPLEX)
    assert obj == pytest.approx(ref.objective, rel=1e-8)
    assert lo <= ref.objective * (1 + 1e-9)
    assert lo >= ref.objective * (1 - 1e-6)
    fixed = lp.col_upper <= 0
    assert np.all(res.x[fixed] == 0.0) and np.all(res.x >= 0)
    # the primal's rows hold to the solver's tolerance (relative to the scaled budget)
    act = scaled.A @ res.x
    assert np.all(act <= scaled.row_upper + 1e-9 * np.abs(scaled.row_upper).max())


def test_coarse_level_lp():
    """The coarse lattice's LP (node prices, sensitivity Δ/k) has the same structure."""
    _, lp, scaled, scale = lp_for(8, nodes=NodeCosts(as_cost("abs"), 32.0, 8))
    lo, obj, _ = ipm_bracket(lp, scaled, scale)
    ref = solve_lp(dataclasses.replace(lp, meta=dict(lp.meta, solve_scale=scale)), SIMPLEX)
    assert obj == pytest.approx(ref.objective, rel=1e-8)
    assert ref.objective * (1 - 1e-6) <= lo <= ref.objective * (1 + 1e-9)


def test_block_path_equals_dense_path(monkeypatch):
    """The block-tridiagonal factorisation with Woodbury's identity (large windows) solves the same systems as
    the dense Schur complement (small windows): same iterates, same answer."""
    _, lp, scaled, _ = lp_for(8)
    dense = solve_hockey(scaled)
    monkeypatch.setattr(hockey_ipm, "DENSE_MAX", 0)
    monkeypatch.setattr(hockey_ipm, "MIN_BLOCK", 4)
    block = solve_hockey(scaled)
    assert block.objective == pytest.approx(dense.objective, rel=1e-9)
    assert dual_lower_bound(lp, block.row_dual).value == pytest.approx(V_STAR[8], rel=1e-8)


def test_block_tridiagonal_cholesky():
    rng = np.random.default_rng(1)
    n, bw, bs = 37, 5, 8
    M = np.zeros((n, n))
    for k in range(bw + 1):
        d = rng.normal(size=n - k)
        M += np.diag(d, -k) + (np.diag(d, k) if k else 0)
    M = M @ M.T + np.eye(n)  # SPD, half-bandwidth 2·bw <= 10 > bs: use blocks of 16
    bs = 16
    nb = -(-n // bs)
    P = np.eye(nb * bs)
    P[:n, :n] = M
    blocks = np.zeros((nb, bs, 2 * bs))
    for i in range(nb):
        blocks[i, :, bs:] = np.tril(P[i * bs:(i + 1) * bs, i * bs:(i + 1) * bs])
        if i:
            blocks[i, :, :bs] = P[i * bs:(i + 1) * bs, (i - 1) * bs:i * bs]
    chol = BlockTridiagonalCholesky(blocks)
    b = rng.normal(size=(nb * bs, 3))
    x = chol.backward(chol.forward(b))
    assert np.allclose(P @ x, b, atol=1e-10)


def test_structure_is_checked_coefficient_by_coefficient():
    _, lp, scaled, _ = lp_for(6)
    st = hockey_structure(scaled)
    assert st is not None and st.half_band <= 6 and len(st.edge_rows) == 6
    # any other LP, or this one with one more coefficient, is refused
    agg = build_aggregated(as_cost("abs"), 1.0, 0.01, 16, 200)
    assert agg.variant == "hockey_stick_aggregated" and hockey_structure(agg.lp) is None
    A = sp.lil_array(lp.A)
    A[lp.row_blocks["budget"].start, 0] = 1.0
    assert hockey_structure(dataclasses.replace(lp, A=sp.csc_array(A))) is None
    with pytest.raises(SpecError):
        solve_hockey(agg.lp)


def test_lps_without_edge_rows_and_in_two_dimensions():
    """The same structure without edge rows (the cell LPs on ℝ, the orbit LP on ℤ²: its masses need not be
    banded, the block factorisation takes the half-bandwidth it finds): same optimum as HiGHS."""
    for alp in (build_approx("l1", 1.0, 0.01, 2, 4, dim=2),
                build_approx(as_cost("abs"), 2.0, 1e-3, 8, 40, nodes=NodeCosts(as_cost("abs"), 1.0, 8))):
        st = hockey_structure(alp.lp)
        assert st is not None and len(st.edge_rows) == 0
        res = solve_hockey(alp.lp)
        ref = solve_lp(alp.lp, SIMPLEX)
        assert res.objective == pytest.approx(ref.objective, rel=1e-8)
        lo = dual_lower_bound(alp.lp, res.row_dual).value
        assert ref.objective * (1 - 1e-6) <= lo <= ref.objective * (1 + 1e-9)


def test_cli_profile_certifies_the_optimum(tmp_path):
    """``--solver structured`` through the command line: the bracket contains V* and is tight; the JSON names the
    backend that solved the last LP."""
    prof = tmp_path / "ipm.toml"
    prof.write_text('[[attempt]]\nbackend = "hockey_ipm"\n[attempt.when]\nbuilders = ["hockey_stick", '
                    '"hockey_stick_coarse", "hockey_stick_decay"]\n\n[[attempt]]\nbackend = "highs"\n'
                    '[attempt.options]\nsolver = "simplex"\n')
    out = subprocess.run([sys.executable, "-m", "optmech", "solve", "--privacy", "approx", "--epsilon", "1",
                          "--delta", "0.01", "--sensitivity", "16", "--domain", "integer", "--solver", str(prof),
                          "--target-gap", "1e-7", "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    lo, up = res["lower_bound"], res["upper_bound"]
    assert lo <= V_STAR[16] * (1 + 1e-10) and up >= V_STAR[16] * (1 - 1e-10)
    assert (up - lo) / up <= 1e-7
    assert res["lp"]["solver"] == "hockey_ipm"
