"""Smoke tests of the fixed-grid LP in ``benchmarks/bench_approx_real.py`` (no timings).

The vectorised builder is checked entry by entry against the same LP written with plain loops,
and, at a coarse resolution, its optimum (HiGHS) is placed against optmech's certified bracket
at the same resolution and box: for |x| and x² the naive LP is the box-restricted lattice
problem priced at the nodes, which lies between optmech's relaxation (node prices minus a proven
chord error) and its restriction (cell means), so it must fall inside, up to the solver's
tolerance.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import optmech
from optmech.spec import Problem

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_approx_real", ROOT / "benchmarks" / "bench_approx_real.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _loop_lp(costs, eps, delta, n):
    """The fixed-grid LP written the obvious way: one Python loop over the shifts and cells."""
    M = len(costs)
    shifts = [s for s in range(-n, n + 1) if s != 0]
    nv = M + len(shifts) * M
    A = np.zeros((len(shifts) * M + len(shifts), nv))
    for a, s in enumerate(shifts):
        for i in range(M):
            r = a * M + i
            A[r, i] += 1.0
            if 0 <= i + s < M:
                A[r, i + s] -= math.exp(eps)
            A[r, M + r] -= 1.0
            A[len(shifts) * M + a, M + r] = 1.0
    b = np.concatenate([np.zeros(len(shifts) * M), np.full(len(shifts), delta)])
    return A, b


def test_the_vectorised_builder_is_the_loop_lp():
    costs = np.abs(np.arange(-5, 6) * 0.25)
    m = bench.naive_lp_matrices(costs, 0.7, 0.01, 3)
    A, b = _loop_lp(costs, 0.7, 0.01, 3)
    M, S = 11, 6
    assert m["A_ub"].shape == (S * M + S, M + S * M)
    assert np.array_equal(m["A_ub"].toarray(), A)
    assert np.array_equal(m["b_ub"], b)
    assert m["A_eq"].shape == (1, M + S * M) and m["A_eq"].nnz == M
    # one p_i and one t per pair row, e^ε p_{i+s} where the shifted cell is on the grid, t once in its budget row
    inside = sum(1 for s in range(1, 4) for i in range(M) if i + s < M) * 2
    assert m["A_ub"].nnz == 3 * S * M + inside
    assert np.array_equal(m["c"][:M], costs) and not m["c"][M:].any()


def test_paper_grid_is_eighty_cells_of_width_a_tenth():
    centres, h, n = bench.grid_paper(1.0)
    assert centres.size == 80 and h == pytest.approx(0.1) and n == 10
    assert centres[0] == pytest.approx(-3.95) and centres[-1] == pytest.approx(3.95)
    centres2, h2, _ = bench.grid_paper(2.0)
    assert h2 == pytest.approx(0.2) and centres2[-1] == pytest.approx(7.9)


def test_realised_delta_and_cell_means():
    p = np.array([0.2, 0.3, 0.5])
    # shift +1: (0.2 - e 0.3)_+ + (0.3 - e 0.5)_+ + 0.5; shift -1: 0.2 + ...
    e = math.exp(0.0)
    want = max(max(0.2 - e * 0.3, 0) + max(0.3 - e * 0.5, 0) + 0.5, 0.2 + max(0.3 - e * 0.2, 0) + max(0.5 - e * 0.3, 0))
    assert bench.realised_delta(p, 0.0, 1) == pytest.approx(want)
    c = np.array([-0.5, 0.0, 0.5])
    assert bench.cell_means("abs", c, 1.0) == pytest.approx([0.5, 0.25, 0.5])
    assert bench.cell_means("square", c, 1.0) == pytest.approx([0.25 + 1 / 12, 1 / 12, 0.25 + 1 / 12])


@pytest.mark.parametrize("cost", ["abs", "square"])
def test_naive_optimum_at_optmechs_first_resolution_is_inside_its_bracket(cost):
    eps, delta, n = 1.0, 0.05, 4
    params = {"privacy": "approx", "domain": "continuous", "sensitivity": 1, "epsilon": eps, "delta": delta,
              "cost": cost, "resolution": n, "target_gap": 0.5}
    r = optmech.solve(Problem.from_params(params), time_limit=60)
    t = r.truncation
    assert r.certified and t["cells_per_sensitivity"] == n
    out = bench.naive_case(cost, eps, delta, "same", 1.0, n, t["box_half_width_cells"], solver="linprog")
    assert out["status"] == "optimal"
    assert out["rows"] == 2 * n * out["cells"] + 2 * n + 1 and out["cols"] == (2 * n + 1) * out["cells"]
    tol = 1e-6 * r.upper_bound
    assert r.lower_bound - tol <= out["value"] <= r.upper_bound + tol
    assert out["realised_delta"] <= delta * (1 + 1e-5)
    # the true cost of its cell-constant density is an upper bound on V*, so it cannot be below the lower end
    assert out["cell_mean_cost"] >= r.lower_bound - tol
