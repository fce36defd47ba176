"""Exact W1 utility of lattice noise [QHFL22, §IV-C; discrete-wasserstein.md §4]: certified brackets."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from optmech.errors import SpecError
from optmech.inputs import input_from_arrays, parse_input_spec, read_input_pmf
from optmech.problems.wasserstein import build_wasserstein, w1_of_mechanism, w1_of_pmf
from optmech.drive import solve_wasserstein
from optmech.families.wasserstein import staircase_mechanism


def _ref(res, name):
    return next(r for r in res.references if r.name == name)


# -- inputs -----------------------------------------------------------------------------------------
def test_input_specs():
    x = parse_input_spec("poisson:5:0:30")
    assert x.lo == 0 and x.hi == 30 and math.isclose(math.fsum(x.p), 1.0, abs_tol=1e-15)
    assert abs(x.mean() - 5.0) < 1e-9
    g = parse_input_spec("gaussian:0:10:-50:50")
    assert math.isclose(math.fsum(g.p), 1.0, abs_tol=1e-15)
    assert abs(g.mean() + 0.5) < 1e-4  # floor binning: mean -Delta/2 (discrete-wasserstein.md §1)
    u = parse_input_spec("uniform:-2:2")
    assert list(u.k) == [-2, -1, 0, 1, 2] and np.allclose(u.p, 0.2)
    assert u.cdf()[-1] == 1.0


@pytest.mark.parametrize("spec", [
    "binomial:5:0:3", "poisson:5:0", "poisson:5:0:30:1", "poisson:0:0:30", "poisson:-1:0:30",
    "poisson:nan:0:30", "poisson:inf:0:30", "poisson:5:10:3", "poisson:5:0.5:3", "poisson:5:-10:-1",
    "gaussian:0:0:-5:5", "gaussian:0:-1:-5:5", "gaussian:inf:1:-5:5", "gaussian:0:1:5:-5", "uniform:3:1",
    "uniform:a:3", "", "uniform:0:1:2",
])
def test_bad_specs(spec):
    with pytest.raises(SpecError) as exc:
        parse_input_spec(spec)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("body", [
    "k,p\n0,0.5\n1,-0.1\n2,0.6\n",  # negative
    "k,p\n0,0.5\n1,0.4\n",  # sums to 0.9
    "k,p\n0.5,0.5\n1,0.5\n",  # non-integer support
    "k,p\n0,0.5\n0,0.5\n",  # duplicate
    "x,y\n0,1\n",  # header
    "k,p\n0,abc\n",  # malformed
    "k,p\n",  # empty
    "k,p\n0,nan\n",
])
def test_bad_csv(tmp_path, body):
    f = tmp_path / "in.csv"
    f.write_text(body)
    with pytest.raises(SpecError) as exc:
        read_input_pmf(f)
    assert "\n" not in str(exc.value)


def test_csv_roundtrip(tmp_path):
    f = tmp_path / "in.csv"
    f.write_text("k,p\n3,0.25\n-1,0.5\n7,0.25\n")
    x = read_input_pmf(f)
    assert list(x.k) == [-1, 3, 7] and list(x.p) == [0.5, 0.25, 0.25]
    with pytest.raises(SpecError):
        input_from_arrays([0, 1], [0.5, 0.5 + 2e-9])


# -- W1 evaluation ------------------------------------------------------------------------------------
def test_w1_evaluation_identities():
    x = parse_input_spec("poisson:3:0:15")
    # a shift by l has W1 = |l| for any input
    for l in (-4, 0, 7):
        assert math.isclose(w1_of_pmf(x, l, np.array([1.0])), abs(l), rel_tol=1e-13, abs_tol=1e-14)
    # point-mass input: W1 = E|theta|
    pt = parse_input_spec("uniform:0:0")
    st = staircase_mechanism(1.0, 4, 2)
    a, ea = w1_of_mechanism(pt, st)
    b, eb = w1_of_mechanism(None, st)
    assert abs(a - b) <= ea + eb


# -- solves ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,m", [(1.0, 3), (2.0, 5)])
def test_point_mass_equals_surrogate(eps, m):
    x = parse_input_spec("uniform:0:0")
    w = solve_wasserstein(x, eps, m)
    s = solve_wasserstein(x, eps, m, utility="surrogate")
    assert w.certified and s.certified
    assert w.relative_gap <= 1e-6 and s.relative_gap <= 1e-6
    # same optimum: the brackets overlap and agree to the target
    assert max(w.lower_bound, s.lower_bound) <= min(w.upper_bound, s.upper_bound) + 1e-12
    assert abs(w.upper_bound - s.upper_bound) <= 2e-6 * s.upper_bound


@pytest.mark.parametrize("spec,eps,m", [
    ("poisson:5:0:30", 1.0, 3), ("gaussian:0:5:-20:20", 2.0, 4), ("uniform:0:10", 0.5, 2),
    ("poisson:5:0:30", 1.0, 5),
])
def test_staircase_inside_bracket(spec, eps, m):
    res = solve_wasserstein(parse_input_spec(spec), eps, m)
    assert res.certified and res.status == "optimal"
    assert res.audit["realised_epsilon"] <= eps
    st = _ref(res, "discrete_staircase")
    # the best GKOV member is feasible, so >= the lower bound; for asymmetric inputs the W1
    # optimum can be a slightly asymmetric perturbation of it (found: gaussian:0:5:-20:20,
    # eps = 2, m = 4 beats P_2 by 2e-10 relative, certified), so only near the upper bound
    assert st.value >= res.lower_bound
    assert st.value <= res.upper_bound * (1 + 1e-8), (st, res)
    if spec.startswith("uniform"):  # symmetric input: the staircase is inside the bracket
        assert st.inside_bracket, (st, res)
    for name in ("discrete_laplace", "binned_laplacian_tight", "staircase003_a5"):
        assert _ref(res, name).value >= res.lower_bound


def test_w1_optimal_r_differs_from_surrogate_r():
    """Poisson(5) on [0, 30], eps = 2, m = 3: W1 prefers r = 2, E|theta| prefers r = 1 (certified)."""
    x = parse_input_spec("poisson:5:0:30")
    w = solve_wasserstein(x, 2.0, 3)
    s = solve_wasserstein(x, 2.0, 3, utility="surrogate")
    assert w.certified and s.certified
    r_w = _ref(w, "discrete_staircase").parameters["r"]
    r_s = _ref(s, "discrete_staircase").parameters["r"]
    assert (r_w, r_s) == (2, 1)
    # under W1, the E|theta|-optimal member P_1 is certified worse than the optimum
    p1_w1 = _ref(w, "discrete_staircase_abs_optimal_r")
    assert p1_w1.parameters["r"] == 1 and p1_w1.value > w.upper_bound
    # finding: here the W1 optimum is not a GKOV member at all (an asymmetric block, p(-1) between
    # the levels); even the best member P_2 lies certifiedly above the upper bound
    best = _ref(w, "discrete_staircase")
    assert best.value > w.upper_bound and p1_w1.value > best.value
    # under E|theta|, the W1-optimal member P_2 is certified worse than the optimum
    p2_abs, err = w1_of_mechanism(None, staircase_mechanism(2.0, 3, 2))
    assert p2_abs - err > s.upper_bound
    assert _ref(s, "discrete_staircase").inside_bracket


def test_approx_dp_solves():
    res = solve_wasserstein(parse_input_spec("poisson:5:0:30"), 1.0, 3, delta=0.05)
    assert res.certified and res.audit["realised_delta"] <= 0.05
    # (eps, delta) relaxes eps-DP: the optimum is at most the pure optimum
    assert res.lower_bound <= _ref(res, "discrete_staircase").value
    assert _ref(res, "uniform").valid


def test_lp_is_relaxation_for_staircase():
    """The staircase's window/far masses, plugged into the direct LP, give an objective <= its W1 (the
    compact LP: tests/test_wasserstein_scale.py)."""
    x = parse_input_spec("poisson:2:0:8")
    eps, m, K = 1.0, 3, 60
    wl = build_wasserstein(x, eps, m, K, direct=True)
    st = staircase_mechanism(eps, m, 2)
    j = np.arange(-K, K + 1)
    p = st.mass(j)
    lp = wl.lp
    xv = np.zeros(lp.cols)
    xv[lp.col_blocks["q"]] = p * lp.meta["scale"]
    far = lp.col_blocks["far"]
    mL = 1.0 - math.fsum(st.mass(np.arange(-K, 10 * K)))
    mR = 1.0 - math.fsum(st.mass(np.arange(-10 * K, K + 1)))
    xv[far] = [mL, mR]
    G = np.concatenate([[mL], mL + np.cumsum(p)])
    xv[lp.col_blocks["G"]] = G
    Ax = lp.A @ xv
    # t_k as small as the epigraph rows allow
    T = lp.col_blocks["t"]
    rp, rm = lp.row_blocks["epigraph_plus"], lp.row_blocks["epigraph_minus"]
    xv[T] = np.maximum(lp.row_lower[rp] - Ax[rp], lp.row_lower[rm] - Ax[rm])
    obj = float(lp.c @ xv)
    true, err = w1_of_mechanism(x, st)
    assert obj <= true + 1e-9
    assert obj >= true - 1e-5  # K = 60: tail mass ~ e^{-20}


def test_poisson_fig7_setting():
    """Poisson(5) on [0, 30], eps = 2, m = 15 ([QHFL22] Fig. 7 setting)."""
    t0 = time.perf_counter()
    res = solve_wasserstein(parse_input_spec("poisson:5:0:30"), 2.0, 15, time_limit=120)
    sec = time.perf_counter() - t0
    assert res.certified and res.status == "optimal" and res.relative_gap <= 1e-6
    st = _ref(res, "discrete_staircase")
    assert st.inside_bracket and st.parameters["r"] == 5
    assert res.audit["structure"]["max_abs_mass_difference"] < 1e-6
    print(f"poisson(5) [0,30] eps=2 m=15: {sec:.2f}s, lp {res.lp}, gap {res.relative_gap:.2e}, "
          f"bracket [{res.lower_bound!r}, {res.upper_bound!r}]")
    assert sec < 60
