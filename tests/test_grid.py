"""The periodic cell grid: geometry facts the builders and the audit rely on."""

from __future__ import annotations

import numpy as np
import pytest

from optmech.problems.lattice import Grid1D


@pytest.fixture(params=[0, 1, 2])
def grid(request) -> Grid1D:
    rng = np.random.default_rng(request.param)
    delta = [1.0, 2.5, 0.3][request.param]
    return Grid1D.from_edges(delta, rng.uniform(0, delta, size=7) ** 2 / delta)


def test_edges_are_symmetric_and_cover_one_period(grid: Grid1D) -> None:
    e = grid.edges
    assert e[0] == 0.0 and e[-1] == grid.period
    assert np.all(np.diff(e) > 0)
    np.testing.assert_allclose(e, grid.period - e[::-1], rtol=0, atol=1e-12 * grid.period)


def test_mirror_of_cell_k_is_cell_minus_k_minus_1(grid: Grid1D) -> None:
    k = np.arange(-3 * grid.W, 3 * grid.W)
    np.testing.assert_allclose(grid.left(-k - 1), -grid.right(k), atol=1e-12)
    np.testing.assert_allclose(grid.width(-k - 1), grid.width(k), atol=1e-12)


def test_cells_tile_the_line_and_repeat_with_period_delta(grid: Grid1D) -> None:
    k = np.arange(-3 * grid.W, 3 * grid.W)
    np.testing.assert_allclose(grid.right(k[:-1]), grid.left(k[1:]), atol=1e-12)
    np.testing.assert_allclose(grid.left(k + grid.W), grid.left(k) + grid.period, atol=1e-12)


def test_cells_within_reach_of_a_shift_are_exactly_those_within_W_indices(grid: Grid1D) -> None:
    """Cells i < j hold points closer than Δ iff j − i <= W (the UB's constraint window), and
    every pair of points of cells with j − i <= W − 1 is within Δ (the relaxation's pairs)."""
    i = np.arange(-2 * grid.W, 2 * grid.W)
    for d in range(1, 2 * grid.W + 2):
        gap = grid.left(i + d) - grid.right(i)  # inf distance between the two half-open cells
        span = grid.right(i + d) - grid.left(i)  # sup distance
        connected = gap < grid.period - 1e-12
        assert np.all(connected == (d <= grid.W))
        if d <= grid.W - 1:
            assert np.all(span <= grid.period + 1e-12)


def test_uniform_grid_matches_resolution() -> None:
    g = Grid1D.cells(2.0, 8)
    assert g.W == 8 and g.uniform
    np.testing.assert_allclose(g.width(np.arange(-5, 5)), 0.25)
