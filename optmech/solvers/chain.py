"""Structure-aware solvers: the one-period LP of :func:`optmech.problems.pure.build_periodic` (exact,
O(W)) and the radial LP of :func:`optmech.problems.radial.build_radial` (dual bisection, O(N) per step).

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

The radial LP (rows G_{k+1} <= G_k, G_k <= ê G_{k+n}, Σ w_k G_k = 1, objective c·G with prefix
sums p_k) has the dual "maximise ν over nondecreasing Λ with p_k − ν s_k^d + Λ_{min(k, K)} −
ê Λ_{k−n} >= 0" (:mod:`optmech.problems.radial`).  For a fixed ν the least feasible Λ is the greedy
Λ_k = max(Λ_{k−1}, ν s_k^d − p_k + ê Λ_{k−n}) (its right side grows with the earlier Λ), computed one
Δ-period at a time with a running maximum; rows beyond K only bound Λ_K from below, except the last,
(ê − 1) Λ_K <= p_N − ν s_N^d.  Feasibility is monotone in ν, so bisection finds the optimum ν to
full precision in ~60 passes, each O(N) numpy work instead of O(N) simplex pivots.  The row duals
are ν, μ_k = Λ_k − Λ_{k−1} on the privacy rows and the node slacks on the monotone rows (they
leave every reduced cost at zero).  The primal returned is the best staircase with its steps on
the grid (a feasible point; its objective beside ν shows whether a staircase attains the LP's
optimum).

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
        return lp.meta.get("builder") in ("periodic", "radial")

    def solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        t0 = time.perf_counter()
        if not self.accepts(lp):
            return self._fail("not a periodic one-period LP or a radial LP", t0)
        if lp.meta.get("builder") == "radial":
            return self._solve_radial(lp, options, t0)
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

    def _solve_radial(self, lp: LinearProgram, options: dict[str, Any], t0: float) -> RawSolution:
        n, P, e = int(lp.meta["n"]), int(lp.meta["periods"]), float(lp.meta["e_up"])
        N, K = n * (P + 1), n * P
        w = lp.A[[lp.meta["normalisation_row"]], :].toarray().ravel()
        W = np.cumsum(w)  # s_k^d
        p = np.cumsum(lp.c)  # node prices
        # ν is feasible for ν <= min_k p_k/s_k^d − ... at least 0; the upper end: the primal's value
        lo, hi = 0.0, max(1.0, float(np.max(p[-1] / W[-1])))
        while _radial_feasible(hi, W, p, n, P, e)[0]:
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:
                return self._fail("the radial dual is unbounded (the LP is infeasible)", t0)
        if not _radial_feasible(0.0, W, p, n, P, e)[0]:
            return self._fail("the radial dual is infeasible at nu = 0", t0)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
            if _radial_feasible(mid, W, p, n, P, e)[0]:
                lo = mid
            else:
                hi = mid
        nu = lo
        _, lam, lam_k = _radial_feasible(nu, W, p, n, P, e)
        lam_full = np.concatenate([lam[: K - 1], [lam_k], np.full(N - K, lam_k)])
        shifted = np.concatenate([np.zeros(n), lam_full[: N - n]])
        sigma = p - nu * W + lam_full - e * shifted  # node slacks (>= 0 up to rounding)
        y = np.zeros(lp.rows)
        y[lp.meta["normalisation_row"]] = nu
        y[lp.row_blocks["monotone"]] = -np.maximum(sigma[: N - 1], 0.0)
        y[lp.row_blocks["privacy"]] = -np.diff(np.concatenate([[0.0], lam_full[:K]]))
        x, j = _grid_staircase(lp.c, w, n, e)
        col_dual = lp.c - lp.A.T @ y
        return RawSolution(
            status=Status.OPTIMAL, raw_status="optimal",
            message=f"radial dual bisection: nu = {nu:.17g}; grid staircase (first step at node {j}) "
                    f"value {float(lp.c @ x):.17g}",
            objective=nu, x=x, row_dual=y, col_dual=col_dual,
            backend=self.name, method="radial-bisection", version=self.version(),
            seconds=time.perf_counter() - t0, iterations=1, options=dict(options),
        )

    def _fail(self, why: str, t0: float) -> RawSolution:
        return RawSolution(
            status=Status.ERROR, raw_status="error", message=why, objective=float("nan"), x=None,
            row_dual=None, col_dual=None, backend=self.name, method="difference-substitution",
            version=self.version(), seconds=time.perf_counter() - t0,
        )


def _radial_feasible(nu: float, W: np.ndarray, p: np.ndarray, n: int, P: int, e: float):
    """(feasible, Λ_1..Λ_K, Λ_K after the rows beyond K): the least nondecreasing Λ of the radial dual
    at ν (module docstring)."""
    N, K = n * (P + 1), n * P
    a = nu * W - p
    lam = np.empty(K)
    prev = np.zeros(n)
    last = 0.0
    for q in range(P):
        lb = a[q * n:(q + 1) * n] + e * prev
        cur = np.maximum.accumulate(np.maximum(lb, last))
        lam[q * n:(q + 1) * n] = cur
        prev, last = cur, float(cur[-1])
    if N - 1 > K:
        last = max(last, float(np.max(a[K:N - 1] + e * lam[K - n:N - 1 - n])))
    return (e - 1.0) * last <= -a[N - 1], lam, last


def _grid_staircase(c: np.ndarray, w: np.ndarray, n: int, e: float) -> tuple[np.ndarray, int]:
    """The best staircase with its steps on the grid: G_k = b^{⌈(k − j)/n⌉} for k > j (1 before), b = 1/ê,
    normalised; over the first-step offsets j = 1..n (prefix sums per Δ-period, O(N))."""
    N = c.size
    b = 1.0 / e
    Sc = np.concatenate([[0.0], np.cumsum(c)])
    Sw = np.concatenate([[0.0], np.cumsum(w)])
    j = np.arange(1, n + 1)
    cost, mass = Sc[j].copy(), Sw[j].copy()
    q = 0
    while j[0] + q * n < N:
        lo, hi = np.minimum(j + q * n, N), np.minimum(j + (q + 1) * n, N)
        f = b ** (q + 1)
        cost += f * (Sc[hi] - Sc[lo])
        mass += f * (Sw[hi] - Sw[lo])
        q += 1
    best = int(np.argmin(cost / mass))
    k = np.arange(1, N + 1)
    jb = best + 1
    x = np.where(k <= jb, 1.0, b ** np.ceil((k - jb) / n)) / mass[best]
    return x, jb
