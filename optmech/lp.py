"""The finite linear program every problem builder produces.

A :class:`LinearProgram` is ``min c @ x  s.t.  row_lower <= A @ x <= row_upper,
col_lower <= x <= col_upper`` with ``A`` a CSC array.  Builders attach the metadata the
certifier needs (which rows are which, how columns map back to grid points, the
scaling used) but no solver code: see ``optmech.solvers`` for that.

Every column bound is finite.  Builders add bounds that hold for at least one optimal
point (e.g. probabilities <= 1, auxiliaries <= their implied maxima), so that the weak
duality bound in :mod:`optmech.certify` is finite for *any* dual vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # at run time imported where used: scipy's first import costs the command line about 0.2 s
    import scipy.sparse as sp


@dataclass(frozen=True)
class LinearProgram:
    """``min c·x`` subject to row and column bounds; minimisation only.

    Attributes
    ----------
    c : (n,) float array
        Objective coefficients.
    A : (m, n) scipy.sparse.csc_array
        Constraint matrix.
    row_lower, row_upper : (m,) float arrays
        Row activity bounds; ``±inf`` for one-sided rows.
    col_lower, col_upper : (n,) float arrays
        Column bounds; must be finite (see module docstring).
    row_blocks : dict[str, slice]
        Named families of rows, e.g. ``{"normalisation": slice(0, 1), "window": ...}``.
    col_blocks : dict[str, slice]
        Named families of columns, e.g. ``{"p": slice(0, N), "aux": ...}``.
    meta : dict
        Free-form builder metadata (scaling, tail semantics, grid).
    """

    c: np.ndarray
    A: sp.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_blocks: dict[str, slice] = field(default_factory=dict)
    col_blocks: dict[str, slice] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m, n = self.A.shape
        for name, arr, size in (
            ("c", self.c, n),
            ("col_lower", self.col_lower, n),
            ("col_upper", self.col_upper, n),
            ("row_lower", self.row_lower, m),
            ("row_upper", self.row_upper, m),
        ):
            if np.shape(arr) != (size,):
                raise ValueError(f"LinearProgram.{name} has shape {np.shape(arr)}, expected ({size},)")
        import scipy.sparse as sp

        if not sp.issparse(self.A) or self.A.format != "csc":
            raise ValueError("LinearProgram.A must be a scipy.sparse CSC array")
        if not np.all(np.isfinite(self.col_lower)) or not np.all(np.isfinite(self.col_upper)):
            raise ValueError("LinearProgram column bounds must be finite")

    @property
    def rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def cols(self) -> int:
        return int(self.A.shape[1])

    @property
    def nonzeros(self) -> int:
        return int(self.A.nnz)

    def size(self) -> dict[str, int]:
        """``{rows, cols, nonzeros}`` as reported in results."""
        return {"rows": self.rows, "cols": self.cols, "nonzeros": self.nonzeros}


def stack_rows(
    blocks: list[tuple[str, sp.coo_array | sp.csr_array | sp.csc_array, np.ndarray, np.ndarray]],
    n_cols: int,
) -> tuple[sp.csc_array, np.ndarray, np.ndarray, dict[str, slice]]:
    """Stack named row families into one CSC matrix with their bounds.

    Parameters
    ----------
    blocks : list of (name, matrix, lower, upper)
        Each matrix has ``n_cols`` columns.  Empty families are skipped.

    Returns
    -------
    A, row_lower, row_upper, row_blocks
    """
    import scipy.sparse as sp

    mats, lows, ups, slices = [], [], [], {}
    start = 0
    for name, mat, lo, up in blocks:
        if mat.shape[0] == 0:
            continue
        if mat.shape[1] != n_cols:
            raise ValueError(f"row family {name!r} has {mat.shape[1]} columns, expected {n_cols}")
        mats.append(sp.csr_array(mat))
        lows.append(np.broadcast_to(np.asarray(lo, dtype=float), (mat.shape[0],)))
        ups.append(np.broadcast_to(np.asarray(up, dtype=float), (mat.shape[0],)))
        slices[name] = slice(start, start + mat.shape[0])
        start += mat.shape[0]
    A = sp.csc_array(sp.vstack(mats, format="csc")) if mats else sp.csc_array((0, n_cols))
    A.eliminate_zeros()
    A.sort_indices()
    return A, np.concatenate(lows), np.concatenate(ups), slices
