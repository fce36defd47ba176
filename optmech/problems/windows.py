r"""All pairwise ratio rows p_i <= e^ε p_j, |i − j| <= W, with O(N) rows (van Herk / Gil–Werman).

Pure ε-DP with integer sensitivity W on ℤ is p(a) <= e^ε p(b) for every 0 < |a − b| <= W
[Geng13, §2.8; QHFL22, Thm 1].  Written as direct pairs that is 2·N·W rows on a window of N
points; :func:`window_ratio_rows` writes the same feasible set with about 6N rows, 12N nonzeros
and 2N auxiliary columns, independent of W.  It is the encoding of
:func:`optmech.problems.pure.build_general`, factored out so that other builders (the W1 LP of
:mod:`optmech.problems.wasserstein`) can use it on their own columns.

The construction.  Cut the window's positions 0..N−1 into blocks of length L = 2W + 1.  For each
position j keep two auxiliaries, SMin_j (a lower bound of the minimum of p over the *suffix* of
j's block, j..end) and PMin_j (of the *prefix*, start..j), through the rows

* ``link``:  SMin_j <= p_j and PMin_j <= p_j;
* ``chain``: SMin_j <= SMin_{j+1} when j + 1 is in j's block, PMin_j <= PMin_{j−1} when j − 1 is;
* ``window``: for every i, with lo = max(i − W, 0) and hi = min(i + W, N − 1) (so hi − lo <= 2W < L):
  if lo starts a block, [lo, hi] is a prefix of that block and the one row p_i <= e^ε PMin_hi is
  kept; otherwise p_i <= e^ε SMin_lo, plus p_i <= e^ε PMin_hi when hi lies beyond the end of lo's
  block (then hi is in the next block).

Which positions each row covers.  When lo is not a block start, lo > 0, so lo = i − W and lo's
block starts before lo: its end is at most lo + 2W − 1 = i + W − 1 (and at most N − 1), so the
suffix [lo, end(lo)] lies inside [lo, hi].  The prefix [start(hi), hi] lies inside [lo, hi] too
(start(hi) = lo in the prefix case, end(lo) + 1 otherwise).  And the covered parts together are all
of [lo, hi].

Proof that the rows are exactly the pairwise ones (projected on p).  (⇐) Any p satisfying every pair
row, with SMin and PMin set to the true suffix and prefix minima of their blocks, satisfies the link
and chain rows by definition, and each window row because it reads p_i <= e^ε·min(p over a part of
[lo, hi]), a pair row for each point of that part (p_i <= e^ε p_i for i itself).  (⇒) For a feasible
point and any j with |i − j| <= W, j lies in [lo, hi]; if the row of SMin_lo covers j, the chain
rows give SMin_lo <= SMin_{lo+1} <= ... <= SMin_j <= p_j, so p_i <= e^ε SMin_lo <= e^ε p_j;
otherwise the row of PMin_hi covers j and PMin_hi <= PMin_{hi−1} <= ... <= PMin_j <= p_j likewise.
So the projection is the same polyhedron, and an LP with these rows has the same optimum (and the
same p-part of its feasible set) as with the 2·N·W pair rows.

Scaling.  The LP's columns are q = s·p (a positive scale vector s, e.g. the Laplace normalisation
of :mod:`optmech.problems.pure`); the auxiliaries are kept in the scale of their own position
(column value s_j·SMin_j), so every row reads ``x_a − r·x_b <= 0`` with r a ratio of scales
(times e^ε in the window rows), and the auxiliaries' upper bounds are those of the q at their
position (the true minima are at most p_j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["WindowRows", "window_ratio_rows"]


@dataclass(frozen=True)
class WindowRows:
    """The row families of :func:`window_ratio_rows` and what they add to the LP's columns.

    ``blocks`` are ``(name, matrix, lower, upper)`` entries for :func:`optmech.lp.stack_rows`
    (every row ``<= 0``); ``aux`` is the slice of the 2N auxiliary columns (suffix minima, then
    prefix minima); ``aux_upper`` their column upper bounds.
    """

    blocks: list
    aux: slice
    aux_upper: np.ndarray


def _pairs(a: np.ndarray, ca: np.ndarray, b: np.ndarray, cb: np.ndarray, n_cols: int) -> sp.coo_array:
    """One row ``ca·x[a] + cb·x[b]`` per entry of the column arrays."""
    r = np.arange(len(a))
    return sp.coo_array((np.concatenate([ca, cb]), (np.concatenate([r, r]), np.concatenate([a, b]))),
                        shape=(len(a), n_cols))


def window_ratio_rows(q_cols: np.ndarray, scale: np.ndarray, W: int, e_eps: float, aux_start: int,
                      n_cols: int, q_upper: np.ndarray, prefix: str = "") -> WindowRows:
    """Rows equivalent to p_i <= e^ε p_j for all |i − j| <= W on the window (module docstring).

    Parameters
    ----------
    q_cols : (N,) int array
        LP column of the scaled mass q_j = scale_j·p_j of window position j (consecutive lattice
        points in order).
    scale : (N,) positive float array
    W : int
        The sensitivity (largest distance of a constrained pair), W >= 1.
    e_eps : float
        e^ε.
    aux_start : int
        First of the 2N auxiliary columns (the caller reserves aux_start .. aux_start + 2N − 1).
    n_cols : int
        The LP's total number of columns.
    q_upper : (N,) float array
        Upper bounds of the q columns (the auxiliaries get the same ones).
    prefix : str
        Prefix of the row-family names (``link_min``, ``chain_min``, ``window``).
    """
    q_cols = np.asarray(q_cols, dtype=np.int64)
    s = np.asarray(scale, dtype=float)
    N = len(q_cols)
    if W < 1 or N < 1:
        raise ValueError(f"window_ratio_rows needs W >= 1 and a nonempty window (W = {W}, N = {N})")
    j = np.arange(N)
    SMIN = aux_start + j
    PMIN = aux_start + N + j
    L = 2 * W + 1
    block = j // L
    one = np.ones

    js = j[(j + 1 < N) & (block == np.minimum(j + 1, N - 1) // L)]  # SMin_j <= SMin_{j+1}
    jp = j[(j >= 1) & (block == np.maximum(j - 1, 0) // L)]  # PMin_j <= PMin_{j−1}
    lo = np.maximum(j - W, 0)
    hi = np.minimum(j + W, N - 1)
    block_end = np.minimum((block + 1) * L - 1, N - 1)
    use_s = np.ones(N, dtype=bool)
    use_p = hi > block_end[lo]
    only_p = (lo % L == 0) & (lo // L == hi // L)  # [lo, hi] is a prefix of one block: PMin_hi alone
    use_s &= ~only_p
    use_p |= only_p
    i_s, i_p = j[use_s], j[use_p]
    blocks = [
        (prefix + "link_min", sp.vstack([_pairs(SMIN, one(N), q_cols, -one(N), n_cols),
                                         _pairs(PMIN, one(N), q_cols, -one(N), n_cols)]), -np.inf, 0.0),
        (prefix + "chain_min", sp.vstack([_pairs(SMIN[js], one(len(js)), SMIN[js + 1], -s[js] / s[js + 1], n_cols),
                                          _pairs(PMIN[jp], one(len(jp)), PMIN[jp - 1], -s[jp] / s[jp - 1], n_cols)]),
         -np.inf, 0.0),
        (prefix + "window", sp.vstack([
            _pairs(q_cols[i_s], one(len(i_s)), SMIN[lo[i_s]], -e_eps * s[i_s] / s[lo[i_s]], n_cols),
            _pairs(q_cols[i_p], one(len(i_p)), PMIN[hi[i_p]], -e_eps * s[i_p] / s[hi[i_p]], n_cols),
        ]), -np.inf, 0.0),
    ]
    q_upper = np.asarray(q_upper, dtype=float)
    return WindowRows(blocks, slice(aux_start, aux_start + 2 * N), np.concatenate([q_upper, q_upper]))
