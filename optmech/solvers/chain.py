"""Exact O(W) solver for the one-period LP of :func:`optmech.problems.pure.build_periodic`.

That LP is ``min c·a`` subject to ``a_0 >= a_1 >= … >= a_{W−1} >= b·a_0`` and ``m·a = 1``.
In the differences ``d_k = a_k − a_{k+1}`` (k < W−1) and ``d_{W−1} = a_{W−1} − b·a_0`` it
becomes a one-row LP over the nonnegative orthant, because the difference map D is invertible:
``a = T d`` with

    a_k = Σ_{j>=k} d_j + b/(1−b) · Σ_j d_j .

So ``min (Tᵀc)·d  s.t. (Tᵀm)·d = 1, d >= 0`` is solved by the single j* minimising
(Tᵀc)_j/(Tᵀm)_j; its primal vertex is a two-level (staircase) law, the "vertex argument" of
[Geng13, App. A.2 step 7, App. A.6 step 5].  The dual is explicit too:
the normalisation multiplier z = min_j (Tᵀc)_j/(Tᵀm)_j and the row multipliers
μ = Tᵀ(c − z·m) >= 0 leave every reduced cost at zero.  Prefix sums make all of it O(W), where
a simplex method pivots O(W) times on this chain.

The solution is *not* trusted: it goes through the same certificate
(:func:`optmech.certify.dual_lower_bound`, primal repair and audit) as any other backend's.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optmech import __version__
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status


class ChainBackend(Backend):
    """Closed-form solution of the periodic one-period LP (and only that LP)."""

    name = "chain"
    module = "numpy"

    def version(self) -> str:
        return __version__

    def accepts(self, lp: LinearProgram) -> bool:
        return lp.meta.get("builder") == "periodic"

    def solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        t0 = time.perf_counter()
        if not self.accepts(lp):
            return self._fail("not a periodic one-period LP", t0)
        s = np.asarray(lp.meta["scale"], dtype=float)
        b = float(lp.meta["decay"])
        W = s.size
        norm = lp.A[[lp.meta["normalisation_row"]], :].toarray().ravel()
        c_a, m_a = lp.c * s, norm * s  # costs and masses per unit of a (unscaled)
        tail = b / (1.0 - b)
        Tc = np.cumsum(c_a) + tail * np.sum(c_a)
        Tm = np.cumsum(m_a) + tail * np.sum(m_a)
        with np.errstate(all="ignore"):
            ratio = Tc / Tm
        if not np.all(np.isfinite(ratio)) or np.any(Tm <= 0):
            return self._fail("degenerate normalisation row", t0)
        j = int(np.argmin(ratio))
        z = float(ratio[j])
        d_star = 1.0 / Tm[j]
        a = np.full(W, tail * d_star)
        a[: j + 1] += d_star
        mu = np.maximum(Tc - z * Tm, 0.0)
        y = np.zeros(lp.rows)
        y[lp.meta["normalisation_row"]] = z
        if "monotone" in lp.row_blocks:
            y[lp.row_blocks["monotone"]] = -mu[: W - 1] / s[1:]  # row k: s_{k+1}(a_{k+1} − a_k) <= 0
        if "period" in lp.row_blocks:
            y[lp.row_blocks["period"]] = -mu[W - 1] / s[0]  # s_0(b·a_0 − a_{W−1}) <= 0
        x = a * s
        col_dual = lp.c - lp.A.T @ y
        return RawSolution(
            status=Status.OPTIMAL, raw_status="optimal", message=f"two-level vertex j*={j}",
            objective=float(lp.c @ x), x=x, row_dual=y, col_dual=col_dual,
            backend=self.name, method="difference-substitution", version=self.version(),
            seconds=time.perf_counter() - t0, iterations=1, options=dict(options),
        )

    def _fail(self, why: str, t0: float) -> RawSolution:
        return RawSolution(
            status=Status.ERROR, raw_status="error", message=why, objective=float("nan"), x=None,
            row_dual=None, col_dual=None, backend=self.name, method="difference-substitution",
            version=self.version(), seconds=time.perf_counter() - t0,
        )
