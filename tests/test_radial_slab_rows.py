"""Row generation for the slab relaxation (optmech.problems.approx_radial_slabs, optmech.families.approx_radial):
the row values against the LP's own row activities and against quadrature over the sphere, a relaxation on a
subset of rows certifies below the whole relaxation, adding the violated rows converges to the whole LP's value,
a warm start across added rows reaches the cold optimum, and the seed rows of a finer level are admissible."""

import math

import numpy as np
import pytest

from optmech.families.approx_radial import SLABS_ROW_REACH, SLABS_ROW_VIOLATION, slab_width
from optmech.problems.approx_radial_slabs import (
    build_slab_relaxation,
    certify_slabs,
    seed_rows,
    slab_edges,
    slab_row_values,
    slab_rows,
    violated_rows,
)
from optmech.solvers.dispatch import solve_lp

D, EPS, DELTA, N, OUTER = 3, 1.0, 1e-3, 4, 7.0


@pytest.fixture(scope="module")
def whole():
    edges = slab_edges(0.25, OUTER)
    model = build_slab_relaxation(1, EPS, DELTA, D, N, edges, OUTER, np.arange(1 / 16, OUTER, 1 / 16))
    raw = solve_lp(model.lp, time_limit=60)
    return model, raw


def test_rows_are_the_admissible_ones_and_a_subset_is_kept_in_order(whole):
    model, _ = whole
    every = slab_rows(N, model.edges, OUTER)
    assert np.array_equal(every, model.rows)
    h = 1.0 / N
    # every row's test functions lie inside the window, and every (j, k) whose would is a row
    inside = lambda j, k: np.hypot((np.abs(k) + 1) * h, model.edges[j + 1]) <= OUTER  # noqa: E731
    assert inside(every[:, 0], every[:, 1]).all() and inside(every[:, 0], every[:, 1] - N).all()
    some = every[::3][::-1]  # any order, with rows outside the table ignored
    sub = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, model.radii,
                                rows=np.concatenate([some, [[0, 10**6]]]))
    assert np.array_equal(sub.rows, every[::3]) and sub.lp.rows == sub.rows.shape[0] + 2


def test_row_values_are_the_lp_row_activities(whole):
    model, raw = whole
    F = model.rows.shape[0]
    rows, x = slab_row_values(model, raw.x)
    assert np.array_equal(rows, model.rows)
    m_cols = 2 + model.radii.size
    activity = model.lp.A[:F, :m_cols] @ np.asarray(raw.x)[:m_cols]  # (K − e^ε K')/δ times the masses
    assert np.allclose(x / model.delta, activity, atol=1e-9)
    # and the law's hockey-stick sum over the rows, its positive part, is within the budget δ
    assert np.maximum(x, 0).sum() <= model.delta * (1 + 1e-6)


def test_row_values_match_quadrature_over_the_sphere():
    # one radius carrying all the mass: x_m = K_r(m) − e^ε K_r(m − n), K by the midpoint rule over the angle
    edges = slab_edges(0.25, OUTER)
    r = 2.3
    model = build_slab_relaxation(1, EPS, DELTA, D, N, edges, OUTER, np.array([r]))
    x = np.zeros(model.lp.cols)
    x[1] = 1.0
    rows, val = slab_row_values(model, x)
    M = 400_000
    th = (np.arange(M) + 0.5) * np.pi / M
    w = np.sin(th) ** (D - 2)
    w /= w.sum()
    a, b = r * np.cos(th) * N, r * np.sin(th)
    k0 = np.floor(a).astype(int)
    j = np.searchsorted(edges, b, side="right") - 1
    K = {}
    for k, wk in ((k0, 1.0 - (a - k0)), (k0 + 1, a - k0)):
        np.add.at(K.setdefault("tab", np.zeros((edges.size + 1, 4 * N * 8 + 1))), (j, k + 2 * N * 8), w * wk)
    tab = K["tab"]
    ref = tab[rows[:, 0], rows[:, 1] + 2 * N * 8] - math.exp(EPS) * tab[rows[:, 0], rows[:, 1] - N + 2 * N * 8]
    assert np.abs(val - ref).max() < 1e-4


def test_a_subset_of_rows_certifies_below_the_whole_relaxation_and_generation_closes_it(whole):
    model, raw = whole
    lp_whole = model.scale * raw.objective
    every = model.rows
    rows = every[np.abs(every[:, 1]) <= 6]  # |a| <= 1.5 only: the law may hide mass elsewhere
    values = []
    for _ in range(20):
        sub = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, model.radii, rows=rows)
        got = solve_lp(sub.lp, time_limit=60)
        lp_sub = sub.scale * got.objective
        bound, _ = certify_slabs(sub, got.row_dual, seconds=1.0)
        values.append(lp_sub)
        assert lp_sub <= lp_whole * (1 + 1e-9)  # fewer rows: a relaxation of the relaxation
        assert bound <= lp_sub * (1 + 1e-9)
        added = violated_rows(sub, got.x, SLABS_ROW_VIOLATION)
        if added is None:
            break
        assert added.shape[0] and not (added[:, None, :] == sub.rows[None, :, :]).all(-1).any()
        rows = np.concatenate([sub.rows, added])
    assert added is None and values[0] < lp_whole * (1 - 1e-3)
    # no row of the whole relaxation is violated by the last law, so its value is the whole LP's
    assert values[-1] == pytest.approx(lp_whole, rel=1e-6)


def test_a_warm_start_across_added_rows_reaches_the_cold_optimum(whole):
    model, _ = whole
    every = model.rows
    rows = every[np.abs(every[:, 1]) <= 8]
    first = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, model.radii, rows=rows)
    raw = solve_lp(first.lp, time_limit=60)
    more_rows = np.concatenate([first.rows, violated_rows(first, raw.x, SLABS_ROW_VIOLATION)])
    more_radii = np.concatenate([first.radii, np.random.default_rng(5).uniform(0.05, OUTER, 100)])
    warm_model = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, more_radii, start=(first, raw.basis),
                                       rows=more_rows)
    cold_model = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, more_radii, rows=more_rows)
    assert "start_basis" in warm_model.lp.meta
    cols, row_status = warm_model.lp.meta["start_basis"]
    assert int((cols == 1).sum() + (row_status == 1).sum()) == warm_model.lp.rows  # a basis: one basic per row
    warm, cold = solve_lp(warm_model.lp, time_limit=60), solve_lp(cold_model.lp, time_limit=60)
    assert "warm start" in warm.method
    assert warm.objective == pytest.approx(cold.objective, rel=1e-8)
    # rows that are not a superset of the old ones: no start
    fewer = build_slab_relaxation(1, EPS, DELTA, D, N, model.edges, OUTER, more_radii, start=(first, raw.basis),
                                  rows=first.rows[1:])
    assert "start_basis" not in fewer.lp.meta


def test_seed_rows_of_a_finer_level_are_admissible_and_cover_the_multipliers(whole):
    model, raw = whole
    n2 = 2 * N
    edges2 = slab_edges(slab_width(n2, D), OUTER)
    seed = seed_rows(model, raw.row_dual, raw.x, n2, edges2, SLABS_ROW_REACH, SLABS_ROW_VIOLATION)
    every2 = slab_rows(n2, edges2, OUTER)
    key = lambda r: r[:, 0] * 10**6 + r[:, 1]  # noqa: E731
    assert np.isin(key(seed), key(every2)).all() and 0 < seed.shape[0] < every2.shape[0]
    # each coarse row with a multiplier has a fine row at its node (a = k/n) in a slab meeting its own
    F = model.rows.shape[0]
    mu = np.maximum(-np.asarray(raw.row_dual[:F]), 0.0)
    used = model.rows[mu > 1e-9 * mu.max()]
    lo, hi = edges2[seed[:, 0]], edges2[seed[:, 0] + 1]
    for j, k in used[:: max(1, used.shape[0] // 40)]:
        a = k / N
        b0, b1 = model.edges[j], model.edges[j + 1]
        assert ((seed[:, 1] / n2 == a) & (hi > b0) & (lo < b1)).any()


def test_slab_width_rule():
    assert [slab_width(n, 10) for n in (2, 4, 8, 16)] == [0.5, 0.25, 0.25, 0.125]
    assert [slab_width(n, 100) for n in (2, 4, 8)] == [1.0, 0.5, 0.25]
