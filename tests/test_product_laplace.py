"""Independent Laplace laws with their own scales (optmech.mechanisms.laplace_nd.ProductLaplace) and their
certified price for cost expressions on ℝ^d (optmech.families.pure_nd_product).

The price is checked against expectations derived here in closed form (each coordinate's Laplace moments), and
against a Monte Carlo mean of the cost; the law's privacy against its density ratio at random points and shifts."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from optmech import Mechanism
from optmech.errors import SpecError
from optmech.families.pure_nd_product import product_laplace_uppers, product_upper, spread_scales
from optmech.families.pure_nd_setup import setup_for
from optmech.mechanisms import ProductLaplace
from optmech.spec import Continuous, Problem, PureDP


def _setup(cost: str, norm: str = "l1", eps: float = 1.0, d: int = 2):
    return setup_for(Problem(privacy=PureDP(eps), cost=cost, dim=d, norm=norm, domain=Continuous(2)))


def where_example_cost(b1: float, b2: float) -> float:
    """E[where(|X1| < 5, |X1| + |X2|, 0.5 + |X2|)], X_i ~ Laplace(b_i) independent: E|X2| = b2,
    E[|X1|; |X1| < 5] = b1(1 − e^{−5/b1}) − 5e^{−5/b1}, P(|X1| >= 5) = e^{−5/b1}."""
    return b2 + b1 * -math.expm1(-5 / b1) - 5 * math.exp(-5 / b1) + 0.5 * math.exp(-5 / b1)


# -- the law ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm, scales", [("l1", (1000.0, 1.0)), ("l2", (3.0, 1.2)), ("linf", (3.0, 1.5, 6.0))])
def test_the_law_is_private_where_its_scales_allow(norm, scales):
    """log f(x)/f(x + t) <= ε at random points and shifts on the sensitivity's sphere, ε = Δ‖1/b‖_* (recomputed
    here), and the sphere's extreme shift reaches it (Hölder is tight)."""
    d = len(scales)
    inv = np.array([1 / b for b in scales])
    eps = {"l1": inv.max(), "l2": math.sqrt(float(inv @ inv)), "linf": inv.sum()}[norm]
    m = ProductLaplace(epsilon=eps * (1 + 1e-12), sensitivity=1.0, scales=scales, norm=norm)
    rng = np.random.default_rng(3)
    x = rng.laplace(size=(4000, d)) * np.array(scales)
    t = rng.normal(size=(4000, d))
    t /= {"l1": np.abs(t).sum(1), "l2": np.linalg.norm(t, axis=1), "linf": np.abs(t).max(1)}[norm][:, None]
    ratio = np.log(m.pdf(x)) - np.log(m.pdf(x + t))
    assert ratio.max() <= eps * (1 + 1e-9)
    extreme = {"l1": np.eye(d)[np.argmax(inv)], "l2": inv / np.linalg.norm(inv), "linf": np.ones(d)}[norm]
    far = np.full(d, -50.0) * np.sign(extreme + 1e-300)  # every |x_i + t_i| − |x_i| = |t_i|
    assert math.log(m.pdf(far) / m.pdf(far - extreme)) == pytest.approx(eps, rel=1e-9)


def test_scales_beyond_the_budget_are_refused_exactly():
    """Δ²Σ1/b_i² = ε² exactly is private; one ulp less scale is not (the check is in rationals)."""
    b = math.sqrt(2.0)
    while Fraction(2) / (Fraction(b) ** 2) > 1:  # the smallest float with 2/b² <= 1
        b = math.nextafter(b, math.inf)
    ProductLaplace(epsilon=1, sensitivity=1, scales=(b, b), norm="l2")
    with pytest.raises(SpecError, match="not epsilon-DP"):
        ProductLaplace(epsilon=1, sensitivity=1, scales=(math.nextafter(b, 0), b), norm="l2")
    for bad in [(), (1.0, -1.0), (1.0, math.inf), ("a",)]:
        with pytest.raises(SpecError):
            ProductLaplace(epsilon=1, sensitivity=1, scales=bad, norm="l1")


def test_round_trip_moments_and_samples():
    m = ProductLaplace(epsilon=1, sensitivity=2, scales=(4.0, 2.0, 3.0), norm="l1")
    back = Mechanism.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back == m and type(back) is ProductLaplace and back.scales == m.scales
    assert m.expected_cost("l1") == 9.0 and m.expected_cost("l2sq") == 2 * (16 + 4 + 9)
    assert np.allclose(m.var(), [32.0, 8.0, 18.0])
    assert m.privacy().epsilon == 1.0 and m.privacy().norm == "l1"
    x = m.sample(200_000, rng=np.random.default_rng(5))
    assert x.shape == (200_000, 3)
    assert np.allclose(np.abs(x).mean(0), [4.0, 2.0, 3.0], rtol=0.02)


# -- the price --------------------------------------------------------------------------------------
@pytest.mark.parametrize("cost, scales, exact", [
    ("where(abs(x1) < 5, abs(x1)+abs(x2), 0.5+abs(x2))", (1000.0, 1.0), where_example_cost(1000.0, 1.0)),
    ("where(abs(x1) < 5, abs(x1)+abs(x2), 0.5+abs(x2))", (3.0, 1.0), where_example_cost(3.0, 1.0)),
    ("abs(x1) + 2*abs(x2) + x1**2", (2.0, 0.5), 2.0 + 1.0 + 8.0),  # E X² = 2b²
    ("min(abs(x1), 1) + abs(x2)", (1.0, 1.0), -math.expm1(-1.0) + 1.0),  # E min(|X|, 1) = b(1 − e^{−1/b})
])
def test_the_price_is_above_the_exact_expectation_and_close_to_it(cost, scales, exact):
    s = _setup(cost)
    up = product_upper(s.cost, list(scales), (400, 60))
    assert exact <= up <= exact * 1.03 + 1e-3


def test_the_price_is_above_a_monte_carlo_mean_in_three_dimensions():
    s = _setup("sqrt(x1**2 + x2**2) + where(x3 > 1, 1, abs(x3))", d=3)
    scales = [1.5, 0.7, 2.0]
    up = product_upper(s.cost, scales, (40, 10))
    x = np.random.default_rng(7).laplace(size=(400_000, 3)) * scales
    L = np.hypot(x[:, 0], x[:, 1]) + np.where(x[:, 2] > 1, 1.0, np.abs(x[:, 2]))
    assert L.mean() + 5 * L.std() / math.sqrt(len(L)) <= up <= 1.1 * L.mean()


def test_exponential_growth_gets_no_price():
    s = _setup("abs(x1) + exp(0.1*abs(x2))")
    assert product_upper(s.cost, [1.0, 1.0], (40, 10)) == math.inf
    assert product_laplace_uppers(s) == []


def test_the_candidates_spread_one_axis_within_the_budget():
    """Each candidate's law is private (the mechanism checks it exactly); with ℓ1 sensitivity the other axes stay
    at Δ/ε, with ℓ∞ they share what the spread axis leaves."""
    for norm in ("l1", "l2", "linf"):
        for axis in (None, 0, 1):
            scales = spread_scales(0.7, 2.0, norm, 3, axis, 100.0)
            ProductLaplace(epsilon=0.7, sensitivity=2.0, scales=scales, norm=norm)
    assert spread_scales(1.0, 1.0, "l1", 2, 0, 1000.0)[1] == pytest.approx(1.0)
    assert spread_scales(1.0, 1.0, "linf", 2, 0, 1000.0)[1] == pytest.approx(1 / (1 - 1 / 2000), rel=1e-9)


def test_the_where_example_gets_the_spread_law_as_its_upper_end():
    """The issue's example (ℓ1 sensitivity, ε = 1): the ℓ1 staircase costs 1.986, the spread law about 1.51."""
    ups = product_laplace_uppers(_setup("where(abs(x1) < 5, abs(x1)+abs(x2), 0.5+abs(x2))"))
    assert len(ups) == 1
    up = ups[0]
    b1, b2 = up.mechanism.scales
    assert b1 == 1000.0 and b2 == pytest.approx(1.0)
    assert where_example_cost(b1, b2) <= up.value <= 1.55
    assert up.mechanism.privacy().epsilon == 1.0 and not up.closed_form
