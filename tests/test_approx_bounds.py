"""Tests of optmech.mechanisms.approx_bounds: guarded (ε, δ) closed forms and certified relaxed LPs.

Every closed form is checked against an independent route (a direct sum over the pmf it
describes, the printed formula at a δ where it applies, or the paper's explicit dual certificate
rebuilt here by its recursion), never against hard-coded outputs.  [GV13] = Geng & Viswanath
(equation numbers are the paper's); digest reference/approx-dp.md.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from optmech import audit
from optmech.errors import SpecError
from optmech.families.relaxed import approx_references, build_relaxed_lp, relaxed_lp_lower_bound
from optmech.mechanisms.approx_bounds import (
    laplace_upper_bound,
    staircase_upper_bound,
    theorem_lower_bound,
    thm8_n,
    uniform_upper_bound,
)


def L_abs(x):
    return np.abs(np.asarray(x, dtype=float))


def L_sq(x):
    x = np.asarray(x, dtype=float)
    return x * x


COSTS = {"abs": L_abs, "square": L_sq}


# --------------------------------------------------------------------------------------------
# independent helpers: the paper's primal pmfs and dual certificates, built by their definitions


def delta_for_integer_n(eps: float, n: int) -> float:
    """δ with Σ_{k<n} a b^k = ½ exactly: b^n = 2δ/(2δ + e^ε − 1) solved for δ."""
    bn = math.exp(-eps * n)
    return bn * math.expm1(eps) / (2.0 * (1.0 - bn))


def thm8_primal(L, eps: float, delta: float, D: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided pmf of (170) with the partial last atom: (support, masses)."""
    a = (delta + math.expm1(eps) / 2.0) * math.exp(-eps)
    b = math.exp(-eps)
    ks, ms, half = [], [], 0.0
    i = 0
    while half < 0.5 - 1e-15:
        m = min(a * b**i, 0.5 - half)
        ks.append(1 + i * D)
        ms.append(m)
        half += m
        i += 1
    ks, ms = np.array(ks), np.array(ms)
    return np.concatenate([-ks[::-1], ks]), np.concatenate([ms[::-1], ms])


def appendix_d_certificate(L, eps: float, D: int, n: int, length: int):
    """(181)–(185): μ and y_0..y_{length-1}, built by the backward recursion (183)."""
    b = math.exp(-eps)
    y = np.zeros(length + 2 * D + 2)
    mu = float(L(1 + (n - 1) * D))
    for k in range(1 + (n - 2) * D, 1, -1):
        y[k] = b * (y[k + D] + float(L(k + D) - L(k + D - 1)))
    i = np.arange(1, n)
    y[0] = float(np.sum(b**i * (L(i * D) - L(1 + (i - 1) * D))))
    y[1] = float(np.sum(b**i * (L(1 + i * D) - L(i * D))))
    return mu, y


def check_dual_eps(L, eps: float, D: int, mu: float, y: np.ndarray, kmax: int) -> dict[str, float]:
    """Largest violation of (173)–(176) for k <= kmax (the dual of (54)–(57))."""
    E = math.exp(eps)
    tail = np.concatenate([np.cumsum(y[::-1])[::-1], [0.0]])  # tail[k] = Σ_{l>=k} y_l
    v174 = 0.5 * mu - (1 + E) / 2 * y[0] - (E - 1) / 2 * tail[1]
    worst = -math.inf
    for k in range(1, kmax):
        lo = max(0, k - D + 1)
        win = y[lo:k + 1].sum() if not (k == 1 and D == 1) else y[1]
        lhs = mu - E * win - (E - 1) * tail[k + 1]
        worst = max(worst, lhs - float(L(k)))
    return {"174": v174, "175_176": worst, "neg": -float(y.min())}


def appendix_a_certificate(L, D: int, N: int, length: int):
    """(142)–(146) with N = 1/(2δ)."""
    y = np.zeros(length + 2 * D + 2)
    mu = float(L(1 + N * D))
    for k in range((N - 1) * D + 1, 1, -1):
        y[k] = float(L(k + D) - L(k + D - 1)) + y[k + D]
    i = np.arange(1, N + 1)
    y[1] = float(np.sum(L(1 + i * D) - L(i * D)))
    y[0] = mu - float(L(1)) - y[1]
    return mu, y


def check_dual_eps0(L, D: int, mu: float, y: np.ndarray, kmax: int) -> dict[str, float]:
    """Largest violation of (136)–(138)."""
    v137 = 0.5 * mu - y[0]
    worst = -math.inf
    for k in range(1, kmax):
        lo = max(0, k - D + 1)
        worst = max(worst, mu - y[lo:k + 1].sum() - float(L(k)))
    return {"137": v137, "138": worst, "neg": -float(y.min())}


# --------------------------------------------------------------------------------------------
# closed forms vs direct sums


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D,delta", [(1, 0.05), (3, 0.1), (5, 0.01), (2, 0.03), (4, 0.3)])
def test_uniform_is_the_sum_over_its_support(cost, D, delta):
    bnd = uniform_upper_bound(cost, delta, D)
    n = math.ceil(round(D / delta, 9))  # the width ⌈Δ/δ⌉ (δ given as decimals)
    k = np.arange(-(n // 2), -(n // 2) + n)
    assert bnd.valid and bnd.kind == "upper" and bnd.parameters["width"] == n
    assert bnd.value == pytest.approx(float(np.sum(COSTS[cost](k))) / n, rel=1e-13)
    assert bnd.parameters["realised_delta"] <= delta
    # the printed closed form (31) where Δ/(2δ) is an integer, and their agreement
    M = D / (2 * delta)
    if abs(M - round(M)) < 1e-9:
        M = round(M)
        i = np.arange(1, M)
        closed = 2 * np.sum(COSTS[cost](i)) * delta / D + delta / D * float(COSTS[cost](M))
        assert bnd.parameters["closed_form"] == pytest.approx(closed, rel=1e-13)
        assert bnd.parameters["closed_form_agrees"]


@pytest.mark.parametrize("name,closed", [("l1", lambda d, D, dl: d * D / (4 * dl)),
                                         ("l2sq", lambda d, D, dl: d * D**2 / (12 * dl**2) + d / 6)])
def test_uniform_dd_cor19_cor20_vs_sum(name, closed):
    d, D, delta = 2, 3, 0.1
    bnd = uniform_upper_bound(name, delta, D, dim=d)
    M = 15  # Δ/(2δ)
    g = np.arange(-M, M)
    X, Y = np.meshgrid(g, g)
    per = (np.abs(X) + np.abs(Y)) if name == "l1" else (X**2 + Y**2)
    direct = float(per.sum()) * (delta / D) ** d  # (79)
    assert bnd.value == pytest.approx(direct, rel=1e-13)
    assert bnd.parameters["closed_form"] == pytest.approx(closed(d, D, delta), rel=1e-13)
    assert bnd.parameters["closed_form_agrees"]


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D,delta", [(3, 0.1), (5, 0.05), (4, 0.01), (2, 0.25)])
def test_thm2_equals_the_primal_certificate_sum(cost, D, delta):
    L = COSTS[cost]
    N = round(1 / (2 * delta))
    k = np.array([1 + i * D for i in range(N)])
    direct = 2 * float(np.sum(delta * L(k)))  # (133) on both sides
    bnd = theorem_lower_bound(cost, 0.0, delta, D)
    assert bnd.parameters["theorem"].startswith("[GV13] Thm 2")
    assert bnd.value == pytest.approx(direct, rel=1e-12)
    assert bnd.parameters["formula_29"] == pytest.approx(direct, rel=1e-13)
    if cost == "abs":  # Cor 4 (33), which needs (28)
        assert bnd.value == pytest.approx(D / (4 * delta) + 1 - D / 2, rel=1e-12)


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D", [1, 2, 5])
@pytest.mark.parametrize("eps,delta", [(0.1, 0.05), (0.5, 0.01), (1.0, 0.1), (0.01, 0.005)])
def test_thm8_equals_the_partial_atom_primal_sum(cost, D, eps, delta):
    k, p = thm8_primal(COSTS[cost], eps, delta, D)
    assert p.sum() == pytest.approx(1.0, abs=1e-14)
    direct = float(np.sum(COSTS[cost](k) * p))
    bnd = theorem_lower_bound(cost, eps, delta, D)
    assert bnd.parameters["primal_value"] == pytest.approx(direct, rel=1e-13)
    assert bnd.value == pytest.approx(direct, rel=1e-12)  # the certificate's objective = primal value
    assert bnd.parameters["n"] == pytest.approx(math.log(1 + math.expm1(eps) / (2 * delta)) / eps, rel=1e-13)


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("eps,n", [(0.1, 10), (0.5, 3), (0.02, 40)])
def test_thm8_at_integer_n_is_formula_62(cost, eps, n):
    delta = delta_for_integer_n(eps, n)
    L = COSTS[cost]
    a = (delta + math.expm1(eps) / 2) * math.exp(-eps)
    formula = 2 * sum(a * math.exp(-k * eps) * float(L(1 + k * 5)) for k in range(n))  # (62)
    bnd = theorem_lower_bound(cost, eps, delta, 5)
    assert bnd.parameters["n_integer"] and bnd.parameters["atoms"] == n
    assert bnd.value == pytest.approx(formula, rel=1e-12)
    if cost == "abs":  # (200)
        b = math.exp(-eps)
        v200 = 1 + 2 * a * 5 * ((b - b**n) / (1 - b) ** 2 - (n - 1) * b**n / (1 - b))
        assert bnd.value == pytest.approx(v200, rel=1e-11)


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("eps,D", [(0.1, 1), (0.7, 3), (2.0, 2)])
def test_discrete_laplace_vs_direct_sum(cost, eps, D):
    lam = math.exp(-eps / D)
    k = np.arange(-4000, 4001)
    p = (1 - lam) / (1 + lam) * lam ** np.abs(k)
    bnd = laplace_upper_bound(cost, eps, D)
    assert bnd.valid and bnd.value == pytest.approx(float(np.sum(COSTS[cost](k) * p)), rel=1e-12)
    nd = laplace_upper_bound("l1" if cost == "abs" else "l2sq", eps, D, dim=3)
    assert nd.valid and nd.value == pytest.approx(3 * bnd.value, rel=1e-12)  # (122)/(127): product law


def test_laplace_and_staircase_undefined_at_eps0():
    for f in (laplace_upper_bound, staircase_upper_bound):
        b = f("abs", 0.0, 2)
        assert not b.valid and b.value == math.inf and "NOT a bound" in b.note


def test_staircase_upper_bound():
    from optmech.costs import parse_cost
    from optmech.mechanisms.discrete_staircase import discrete_staircase_cost

    b = staircase_upper_bound("abs", 0.3, 4)
    cost = parse_cost("abs")
    assert b.valid and b.value == pytest.approx(min(discrete_staircase_cost(cost, 0.3, 4, r) for r in range(1, 5)), rel=1e-14)
    assert b.value <= laplace_upper_bound("abs", 0.3, 4).value
    # d-D: product of geometrics for Δ = 1; the ℓ1 lattice staircase for Δ > 1 (l1 and l2sq only)
    g = staircase_upper_bound("l1", 0.3, 1, dim=2)
    assert g.valid and g.value == pytest.approx(2 * staircase_upper_bound("abs", 0.3, 1).value, rel=1e-12)
    s2 = staircase_upper_bound("l1", 0.3, 2, dim=2)
    x = np.arange(-300, 301)
    n1 = np.abs(x)[:, None] + np.abs(x)[None, :]  # brute force on a box: P ∝ b^(floor((|x|₁ − r)/Δ) + 1)
    w = np.exp(-0.3 * (np.floor((n1 - s2.parameters["r"]) / 2) + 1))
    assert s2.valid and s2.value == pytest.approx(float((n1 * w).sum() / w.sum()), rel=1e-10)
    assert not staircase_upper_bound("linf", 0.3, 2, dim=2).valid


@pytest.mark.parametrize("name", ["l1", "l2sq"])
@pytest.mark.parametrize("D,delta", [(1, 0.05), (3, 0.1), (2, 0.025)])
def test_thm16_thm17_formulas_and_relaxed_lp(name, D, delta):
    d = 2
    bnd = theorem_lower_bound(name, 0.0, delta, D, dim=d)
    assert bnd.valid
    assert bnd.value == pytest.approx(bnd.parameters["formula"], rel=1e-12)
    if name == "l1":
        assert bnd.value == pytest.approx(d * D / (4 * delta) - (D - 1) / 2 * d, rel=1e-12)  # (76)
    else:
        assert bnd.value == pytest.approx(d * D**2 / (12 * delta**2) + (1 / D - 1) * d * D**2 / (4 * delta)
                                          + (1 - D) / 2 * d + d * D**2 / 6, rel=1e-12)  # (77)
    # the candidates are dual feasible for (75) with k ∈ ℤ, so they cannot exceed its value
    lp = relaxed_lp_lower_bound(name, 0.0, delta, D, dim=d)
    assert lp.valid and bnd.value <= lp.value * (1 + 1e-9)
    # Δ = 1: Cor 22/24, uniform is optimal
    if D == 1:
        assert bnd.value == pytest.approx(uniform_upper_bound(name, delta, 1, dim=d).value, rel=1e-12)


@pytest.mark.parametrize("name", ["l1", "l2sq"])
@pytest.mark.parametrize("D,N", [(1, 10), (2, 5), (4, 3)])
def test_thm16_thm17_candidates_are_dual_feasible(name, D, N):
    """(243)/(253) satisfy μ/d − Σ_{i∈[k−Δ+1,k]} y_i <= L_1(k) for every k (one coordinate of App. I/J)."""
    L = L_abs if name == "l1" else L_sq
    mu1 = D * N if name == "l1" else (D * N) ** 2
    idx = np.arange(-(N + 3) * D, (N + 3) * D + 1)
    y = np.zeros(len(idx))
    for k in range(-N - 2, N + 3):
        if name == "l1":
            v = mu1 if k == 0 else max(mu1 - k * D, 0) if k > 0 else max(mu1 - (abs(k) - 1) * D - 1, 0)
        else:
            v = mu1 if k == 0 else (mu1 - (k * D) ** 2 if 1 <= k <= N else mu1 - ((abs(k) - 1) * D + 1) ** 2 if -N <= k <= -1 else 0)
        y[k * D - idx[0]] = v
    assert y.min() >= 0
    for j in range(D - 1, len(idx)):
        k = idx[j]
        assert mu1 - y[j - D + 1:j + 1].sum() <= float(L(k)) + 1e-9
    delta = 1 / (2 * N)
    assert theorem_lower_bound(name, 0.0, delta, D, dim=3).value == pytest.approx(3 * (mu1 - delta * y.sum()), rel=1e-12)


def test_thm1_is_the_uniform_cost():
    for delta in (0.5, 0.1, 0.05, 0.01, 0.005):
        t = theorem_lower_bound("abs", 0.0, delta, 1)
        u = uniform_upper_bound("abs", delta, 1)
        assert t.valid and t.parameters["theorem"].startswith("[GV13] Thm 1")
        assert t.value == pytest.approx(1 / (4 * delta), rel=1e-13)
        assert u.value == pytest.approx(t.value, rel=1e-13)
        sq = theorem_lower_bound("square", 0.0, delta, 1)
        assert sq.value == pytest.approx(1 / (12 * delta**2) + 1 / 6, rel=1e-13)
        # Thm 2's formula at Δ = 1 is 1/(4δ) + ½ > V*: reported, flagged
        assert t.parameters["thm2"]["value"] == pytest.approx(1 / (4 * delta) + 0.5, rel=1e-12)
        assert not t.parameters["thm2"]["condition_28"]


# --------------------------------------------------------------------------------------------
# the paper's dual certificates: a regression test of the proofs


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D", [1, 2, 3, 5])
@pytest.mark.parametrize("eps,delta", [(0.01, 0.005), (0.1, 0.05), (0.5, 0.01), (1.0, 0.1), (0.5, 0.1)])
def test_appendix_d_certificate(cost, D, eps, delta):
    L = COSTS[cost]
    bnd = theorem_lower_bound(cost, eps, delta, D)
    n_c = bnd.parameters["atoms"]
    assert n_c == math.ceil(thm8_n(eps, delta))
    length = 2 + (n_c + 3) * D
    mu, y = appendix_d_certificate(L, eps, D, n_c, length)
    viol = check_dual_eps(L, eps, D, mu, y, length)
    scale = max(1.0, mu)
    # (173), (175), (176) hold whatever the condition; beyond the window they read μ <= L(k)
    assert viol["neg"] <= 0.0 and viol["175_176"] <= 1e-12 * scale
    assert mu <= float(L(length))
    # (174) holds exactly when (61) holds (derivation (186)–(190))
    assert (viol["174"] <= 1e-12 * scale) == bnd.conditions["condition_61"]
    assert bnd.valid == bnd.conditions["condition_61"]
    # the dual objective (172) at δ equals the module's value and the partial-atom primal value
    obj = mu - (2 * delta + math.expm1(eps)) * y.sum()
    assert obj == pytest.approx(bnd.value, rel=1e-12)
    assert obj == pytest.approx(bnd.parameters["primal_value"], rel=1e-12)


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D", [2, 3, 4, 6])
@pytest.mark.parametrize("delta", [0.5, 0.25, 0.1, 0.05, 0.01])
def test_appendix_a_certificate(cost, D, delta):
    L = COSTS[cost]
    N = round(1 / (2 * delta))
    mu, y = appendix_a_certificate(L, D, N, (N + 3) * D)
    viol = check_dual_eps0(L, D, mu, y, (N + 3) * D)
    bnd = theorem_lower_bound(cost, 0.0, delta, D)
    assert viol["138"] <= 1e-12 * mu and y[1:].min() >= 0.0
    # (28) ⇔ (137) ½μ <= y_0 (the digest's "y_0 >= 0" is weaker: y_0 = N >= 0 at Δ = 2, ℓ1)
    assert (viol["137"] <= 0.0) == bnd.conditions["condition_28"]
    assert bnd.valid == bnd.conditions["condition_28"]
    obj = mu - 2 * delta * y.sum()  # (136)
    assert obj == pytest.approx(bnd.value, rel=1e-12)
    assert obj == pytest.approx(2 * delta * float(np.sum(L(1 + D * np.arange(N)))), rel=1e-12)  # (147)–(148)


# --------------------------------------------------------------------------------------------
# side conditions


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D", [1, 2])
def test_thm8_invalid_for_small_sensitivity(cost, D):
    for eps in (0.01, 0.1, 0.5, 1.0):
        for delta in (0.005, 0.01, 0.05, 0.1):
            b = theorem_lower_bound(cost, eps, delta, D)
            assert not b.conditions["condition_61"] and not b.valid
            assert "NOT a valid lower bound" in b.note


@pytest.mark.parametrize("cost", ["abs", "square"])
def test_thm8_valid_for_sensitivity_five(cost):
    for eps in (0.01, 0.1, 0.5):
        for delta in (0.005, 0.01, 0.05):
            b = theorem_lower_bound(cost, eps, delta, 5)
            assert b.valid and all(b.conditions.values()) and "valid lower bound" in b.note


def test_condition_28_iff_sensitivity_at_least_3_for_l1():
    for delta in (0.5, 0.25, 0.1, 0.05, 0.01, 0.005):
        for D in range(2, 8):
            b = theorem_lower_bound("abs", 0.0, delta, D)
            assert b.conditions["condition_28"] == (D >= 3)  # (32)
            assert b.valid == (D >= 3)
        assert not theorem_lower_bound("abs", 0.0, delta, 1).parameters["thm2"]["condition_28"]


def test_non_integer_inverse_delta():
    b = theorem_lower_bound("abs", 0.0, 0.03, 5)
    assert not b.valid and math.isnan(b.value) and not b.conditions["inv_2delta_integer"]
    assert not theorem_lower_bound("l1", 0.0, 0.03, 2, dim=2).valid
    # decimal δ = 0.01 is accepted as 1/(2·50)
    assert theorem_lower_bound("abs", 0.0, 0.01, 5).conditions["inv_2delta_integer"]


def test_cost_condition_flags_asymmetric_cost():
    b = theorem_lower_bound("where(x < 0, 2*abs(x), abs(x))", 0.1, 0.01, 5)
    assert not b.conditions["cost_symmetric_nondecreasing"] and not b.valid
    c = theorem_lower_bound("abs(x) + 1", 0.1, 0.01, 5)  # L(0) != 0
    assert not c.valid


def test_dd_other_costs_have_no_theorem_and_dd_eps_marginal():
    for name in ("l2", "linf"):
        b = theorem_lower_bound(name, 0.1, 0.05, 3, dim=2)
        assert not b.valid and math.isnan(b.value)
        assert not relaxed_lp_lower_bound(name, 0.1, 0.05, 3, dim=2).valid
    one = theorem_lower_bound("abs", 0.1, 0.05, 5)
    three = theorem_lower_bound("l1", 0.1, 0.05, 5, dim=3)
    assert three.valid == one.valid and three.value == pytest.approx(3 * one.value, rel=1e-15)
    assert not theorem_lower_bound("l2sq", 0.1, 0.05, 2, dim=3).valid


def test_valid_is_all_conditions_and_json():
    for bnd in approx_references("abs", 0.1, 0.05, 2) + approx_references("l1", 0.0, 0.05, 3, dim=2):
        assert bnd.valid == (all(bnd.conditions.values()) and not math.isnan(bnd.value)
                             and (bnd.kind == "lower" or math.isfinite(bnd.value)))
        json.dumps(bnd.to_dict())
    names = [b.name for b in approx_references("abs", 0.1, 0.05, 2)]
    assert names == ["thm_lower_bound", "relaxed_lp", "uniform", "discrete_laplace", "discrete_staircase"]
    assert json.loads(json.dumps(laplace_upper_bound("abs", 0.0, 1).to_dict()))["value"] == "inf"


# --------------------------------------------------------------------------------------------
# relaxed LPs


def test_builders_match_the_paper_rows():
    """The cumulative/survival rows equal (54)–(57) and (104) evaluated directly on a random pmf."""
    rng = np.random.default_rng(7)
    eps, delta, D, K = 0.3, 0.02, 3, 9
    E = math.exp(eps)
    # symmetric: x = (P_0..P_K, C_1..C_K, F)
    lp = build_relaxed_lp("abs", eps, delta, D, K, "symmetric")
    P = rng.random(K + 1)
    x = np.concatenate([P, np.cumsum(P[1:]), [0.37]])
    tail = (lp.A @ x)[lp.row_blocks["tail"]]
    direct = [P[0] * (1 + E) / 2 + E * P[1:D].sum()]  # (55)
    for i in range(1, K + 1):  # (56)/(57), window cut at K
        direct.append(P[0] * (E - 1) / 2 + (E - 1) * P[1:i].sum() + E * P[i:min(i + D, K + 1)].sum())
    assert np.allclose(tail, direct, rtol=1e-14, atol=0)
    assert np.allclose((lp.A @ x)[lp.row_blocks["cumulative"]], 0, atol=1e-14)
    # all_k: x = (P_{−K..K}, T_{−K..K}, F+, F−)
    lp = build_relaxed_lp("abs", eps, delta, D, K, "all_k")
    P = rng.random(2 * K + 1)
    Fp, Fm = 0.2, 0.1
    T = np.cumsum(P[::-1])[::-1] + Fp
    x = np.concatenate([P, T, [Fp, Fm]])
    rows = (lp.A @ x)[lp.row_blocks["tail"]]
    surv = np.concatenate([T, [Fp]])  # P(X >= j), j = −K..K+1
    direct = [surv[k + K] - E * surv[k + K + D] for k in range(-K, K + 2 - D)]  # (104), k ∈ ℤ
    assert np.allclose(rows, direct, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("eps,delta", [(0.01, 0.005), (0.1, 0.01), (0.5, 0.05), (0.0, 0.01), (0.01, 0.1)])
def test_thm_equals_relaxed_lp_where_valid(cost, eps, delta):
    t = theorem_lower_bound(cost, eps, delta, 5)
    r = relaxed_lp_lower_bound(cost, eps, delta, 5)
    assert t.valid and r.valid
    assert t.value <= r.value * (1 + 1e-9)
    assert r.value == pytest.approx(t.value, rel=1e-9)  # digest §5.2: equal where (61) holds


@pytest.mark.parametrize("cost", ["abs", "square"])
@pytest.mark.parametrize("D", [1, 2, 5])
@pytest.mark.parametrize("eps,delta", [(0.01, 0.005), (0.1, 0.1), (1.0, 0.01), (0.0, 0.05)])
def test_relaxed_lp_below_every_upper_bound(cost, D, eps, delta):
    refs = approx_references(cost, eps, delta, D)
    thm, lp = refs[0], refs[1]
    assert lp.valid and lp.kind == "lower"
    ubs = [b for b in refs[2:] if b.valid]
    assert ubs and all(lp.value <= b.value * (1 + 1e-12) for b in ubs)
    if thm.valid:
        assert thm.value <= lp.value * (1 + 1e-9)
    # invalid theorem values sit above the LP (digest §5.2), but they are flagged
    if not thm.valid and math.isfinite(thm.value) and eps > 0:
        assert thm.value > lp.value


def truncated_geometric(eps: float, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Digest §3, Δ = 1: P_0 = (2δ + e^ε − 1)/(1 + e^ε), P_k = P_0 e^{−ε|k|}, partial last atom."""
    p0 = (2 * delta + math.expm1(eps)) / (1 + math.exp(eps))
    masses, total, k = [p0], p0, 1
    while True:
        pk = p0 * math.exp(-eps * k)
        if total + 2 * pk >= 1:
            masses.append((1 - total) / 2)
            break
        masses.append(pk)
        total += 2 * pk
        k += 1
    m = np.array(masses)
    ks = np.arange(len(m))
    return np.concatenate([-ks[:0:-1], ks]), np.concatenate([m[:0:-1], m])


@pytest.mark.parametrize("eps,delta", [(0.1, 0.05), (0.5, 0.01), (1.0, 0.1), (0.01, 0.005)])
def test_sensitivity_one_relaxed_lp_is_the_truncated_geometric(eps, delta):
    k, p = truncated_geometric(eps, delta)
    pmf = audit.finite_pmf(k, p)
    realised = audit.delta_curve(pmf, 1, [eps])[0]
    assert realised <= delta + 1e-14  # (ε, δ)-DP: the relaxed LP's value is attained, so it is V*
    for cost in ("abs", "square"):
        v = float(np.sum(COSTS[cost](k) * p))
        r = relaxed_lp_lower_bound(cost, eps, delta, 1)
        assert r.valid and r.value <= v
        assert r.value == pytest.approx(v, rel=1e-9)


@pytest.mark.parametrize("name", ["l1", "l2sq"])
@pytest.mark.parametrize("eps,delta,D", [(0.1, 0.05, 2), (0.0, 0.1, 3), (0.5, 0.01, 1)])
def test_dd_relaxed_lp_decouples(name, eps, delta, D):
    two = relaxed_lp_lower_bound(name, eps, delta, D, dim=2)
    one = relaxed_lp_lower_bound("abs" if name == "l1" else "square", eps, delta, D, variant="all_k")
    assert two.valid and one.valid
    assert two.value == pytest.approx(2 * one.value, rel=1e-12)
    assert two.value <= 2 * one.value
    assert two.value <= uniform_upper_bound(name, delta, D, dim=2).value
    if eps > 0:
        assert two.value <= laplace_upper_bound(name, eps, D, dim=2).value


def test_relaxed_lp_expression_cost_and_variants():
    r = relaxed_lp_lower_bound("min(abs(x), 1e9)", 0.1, 0.05, 2)  # expressions default to all_k
    assert r.valid and r.parameters["variant"] == "all_k"
    a = relaxed_lp_lower_bound("abs", 0.1, 0.05, 2, variant="all_k")
    assert r.value == pytest.approx(a.value, rel=1e-9)
    # abs(x) is proven to be |x| (optmech.costs.rewrite): it is the named cost abs, on the same path
    named = relaxed_lp_lower_bound("abs", 0.1, 0.05, 2)
    same = relaxed_lp_lower_bound("abs(x)", 0.1, 0.05, 2)
    assert same.parameters["variant"] == named.parameters["variant"] == "symmetric" and same.value == named.value
    asym = relaxed_lp_lower_bound("where(x < 0, 2*abs(x), abs(x))", 0.1, 0.05, 2, variant="symmetric")
    assert not asym.valid and not asym.conditions["cost_symmetric"]
    assert relaxed_lp_lower_bound("where(x < 0, 2*abs(x), abs(x))", 0.1, 0.05, 2).valid


# --------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("kwargs", [
    {"epsilon": -0.1}, {"epsilon": math.inf}, {"epsilon": math.nan}, {"epsilon": True}, {"epsilon": 800.0},
    {"delta": 0.0}, {"delta": 1.0}, {"delta": -0.1}, {"delta": "0.1"},
    {"sensitivity": 0}, {"sensitivity": 1.5}, {"sensitivity": True},
    {"dim": 0}, {"dim": 9}, {"dim": 1.5},
    {"epsilon": 0.0, "delta": 0.0},
    {"cost": "l3"}, {"cost": "abs", "dim": 2}, {"cost": "nonsense((("},
])
def test_bad_input(kwargs):
    args = {"cost": "abs", "epsilon": 0.1, "delta": 0.05, "sensitivity": 2, "dim": 1, **kwargs}
    for f in (theorem_lower_bound, relaxed_lp_lower_bound, approx_references):
        with pytest.raises(SpecError) as exc:
            f(args["cost"], args["epsilon"], args["delta"], args["sensitivity"], args["dim"])
        assert "\n" not in str(exc.value)
    with pytest.raises(SpecError):
        relaxed_lp_lower_bound("abs", 0.1, 0.05, 2, variant="nope")
    with pytest.raises(SpecError):
        uniform_upper_bound("abs", 0.0, 2)
