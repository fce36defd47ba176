"""The shell-pair relaxation's certified lower bound for (ε, δ) on ℝ^d with ℓ2 sensitivity
(optmech.problems.approx_radial_pairs): its kernel against Archimedes' closed form, and its certificate
against the Lagrangian evaluated independently and against the audited radial law above it."""

import math

import numpy as np
import pytest

from optmech.families.approx_radial import radial_pairs_lower, radial_shell_upper, radial_support
from optmech.problems.approx_radial_pairs import build_pair_relaxation, certify_pairs, pair_kernel
from optmech.solvers.dispatch import solve_lp


def test_kernel_matches_archimedes_in_three_dimensions():
    # d = 3: U₁ is uniform on [−1, 1], so ‖rU − w‖² is uniform on [(r − 1)², (r + 1)²]
    edges = np.arange(0, 13) / 4.0
    for r in (0.3, 1.0, 1.7, 2.2):
        lo, hi = (r - 1.0) ** 2, (r + 1.0) ** 2
        a, b = edges[:-1] ** 2, edges[1:] ** 2
        want = np.clip(np.minimum(b, hi) - np.maximum(a, lo), 0.0, None) / (hi - lo)
        np.testing.assert_allclose(pair_kernel(3, np.array([r]), edges)[0], want, atol=1e-13)
    # r = 0: the point ‖w‖ = 1 lies in the shell [1, 1.25)
    assert pair_kernel(2, np.array([0.0]), edges)[0].tolist() == [0.0] * 4 + [1.0] + [0.0] * 7


@pytest.fixture(scope="module", params=[(2, 1), (3, 2), (10, 1)])
def solved(request):
    d, power = request.param
    eps, delta = 2.0, 1e-3
    model = build_pair_relaxation(power, eps, delta, d, 4, radial_support(eps, delta, 1.0, d)[1], 16)
    raw = solve_lp(model.lp, time_limit=60)
    value, info = certify_pairs(model, raw.row_dual, seconds=1.0)
    return model, raw, value, info


def test_certificate_is_below_the_lagrangian_everywhere(solved):
    model, raw, value, info = solved
    M = np.zeros((model.edges.size - 1,) * 2)
    M[model.pairs[:, 0], model.pairs[:, 1]] = model.multipliers(raw.row_dual)
    e, c = model.edges, math.exp(model.epsilon)
    rng = np.random.default_rng(7)
    r = np.concatenate([[0.0, 1e-12, 1e-6], rng.uniform(0, e[-1], 4000), e[:-1], np.nextafter(e[1:], 0)])
    shell = np.minimum(np.searchsorted(e, r, side="right") - 1, e.size - 2)
    K = pair_kernel(model.dim, r, e)
    phi = r ** model.power + np.einsum("rj,rj->r", K, M[shell]) - c * np.einsum("rj,jr->r", K, M[:, shell])
    assert info["phi_inf"] <= phi.min() + 1e-9 * max(1.0, abs(phi.min()))
    assert value == pytest.approx(info["phi_inf"] - info["multiplier_max"] * model.delta, rel=1e-12)
    assert value <= info["phi_inf"] - info["multiplier_max"] * model.delta


def test_certificate_is_a_lower_bound_below_the_audited_radial_law(solved):
    model, raw, value, _ = solved
    lp_value = model.scale * raw.objective
    assert 0 < value <= lp_value * (1 + 1e-9)
    cost = "l2" if model.power == 1 else "l2sq"
    up, _ = radial_shell_upper(cost, model.epsilon, model.delta, 1.0, model.dim,
                               lambda lp, s: solve_lp(lp, time_limit=s), 10.0, resolution=8)
    assert up is not None and up.certified
    assert value <= up.value
    assert value > 0.25 * up.value  # informative at 4 shells per sensitivity (the family uses 8), not the floor


def test_shells_must_be_exact():
    with pytest.raises(ValueError, match="power of two"):
        build_pair_relaxation(1, 1.0, 1e-3, 2, 6, 5.0, 8)


def _lp(lp, seconds):
    return solve_lp(lp, time_limit=seconds)


def test_the_shells_double_while_the_time_allows_and_the_best_bound_is_kept():
    # d = 5, eps = 1, delta = 1e-3: 8 then 16 shells per sensitivity within 20 s; the 16-shell bound is the
    # larger (the sets refine) and lies below the audited radial law
    eps, delta = 1.0, 1e-3
    bound, why = radial_pairs_lower("l2", eps, delta, 2.0, 5, _lp, 20.0)
    model = build_pair_relaxation(1, eps, delta, 5, 8, radial_support(eps, delta, 1.0, 5)[1], 8)
    first, _ = certify_pairs(model, solve_lp(model.lp, time_limit=30).row_dual)
    assert "16 shells per sensitivity" in why or "32 shells per sensitivity" in why
    assert bound > 2.0 * first  # sensitivity 2: V*(2) = 2 V*(1)
    up, _ = radial_shell_upper("l2", eps, delta, 2.0, 5, _lp, 10.0, resolution=10)
    assert up is not None and up.certified and bound <= up.value


def test_an_interrupt_keeps_the_bound_that_finished():
    calls = []

    def interrupted_second(lp, seconds):
        calls.append(lp.cols)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return _lp(lp, seconds)

    with pytest.raises(KeyboardInterrupt) as info:
        radial_pairs_lower("l2", 1.0, 1e-3, 1.0, 3, interrupted_second, 30.0)
    kept = info.value.pairs_best
    assert len(calls) == 2 and kept is not None and kept[0] > 0 and "8 shells per sensitivity" in kept[1]
