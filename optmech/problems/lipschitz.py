"""LPs for ε-Lipschitz privacy [KHP15].

Lipschitz privacy of additive noise with density (or pmf) g means g(x) <= e^{ε‖x−y‖} g(y) for all
x, y.  Every problem here reduces to a *chain* of nonnegative masses m_0, ..., m_{N−1} with ratio
rows between neighbours

    lo_k · m_k <= m_{k+1} <= hi_k · m_k          (hi_k = inf: no upper row),

a normalisation Σ m + Σ far = 1, far lumps that carry the mass beyond the window priced at the
cost's minimum there, and link rows far >= τ · m_edge.  The builders below produce relaxations
(every feasible mechanism of the real problem maps to a feasible LP point of no larger cost), so
:func:`optmech.certify.dual_lower_bound` of the LP is a certified lower bound:

* ``build_line(..., cells=False)``: points of hℤ (h = 1 for the integer domain).  Chaining the
  adjacent rows gives p_j <= e^{εh|j−k|} p_k, i.e. the rows are exactly the Lipschitz constraint
  on the lattice.  The far lump beyond K has mass >= p_K · b/(1 − b),
  b = e^{−εh}, because p_{K+j} >= b^j p_K.
* ``build_line(..., cells=True)``: masses of cells [(k−½)h, (k+½)h) of a Lipschitz-private density
  on ℝ satisfy the same ratio rows (g(x+h) ∈ [e^{−εh}, e^{εh}]·g(x) pointwise) [§7].  A cell is
  priced at the minimum of E[L] over log-ε-Lipschitz conditional densities on it: for |x|^P this
  is attained by the density ∝ e^{−ε(|v|−a)} (monotone likelihood ratio), evaluated exactly for
  P = 1, 2 and by Jensen (a lower bound) for other P >= 1; other costs use the cell minimum.
* ``build_radial``: ℓ2-Lipschitz radial densities h(‖v‖) on ℝ^d (WLOG by rotation averaging,
  [§8]); shell masses Q_k on [kh, (k+1)h) satisfy
  e^{−εh}((k+2)/(k+1))^{d−1} Q_k <= Q_{k+1} <= e^{εh}((k+1)/k)^{d−1} Q_k, and a shell costs at least
  E[r^P] under ∝ r^{d−1}e^{−εr} on it.

Cell and shell costs are computed in floating point and then lowered by the relative margin
``COST_MARGIN`` (1e-9), which dominates their rounding error (series/recurrences with at most a
few hundred ulps of error) by orders of magnitude.

Variables are scaled (m = σ q) with σ ≈ e^{−min(ε|x|, SCALE_EFOLDS)}, as in
:mod:`optmech.problems.pure_nd`, so that the LP's numbers stay O(1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from optmech.lp import LinearProgram, stack_rows
from optmech.problems.lattice import enclose

#: Relative safety margin subtracted from computed cell/shell costs (lower bounds).
COST_MARGIN = 1e-9
#: Largest scaling, in e-folds.
SCALE_EFOLDS = 8.0
U = 2.0**-53


# ------------------------------------------------------------------------------------------------
# moments of truncated exponentials
# ------------------------------------------------------------------------------------------------
def exp_moments(x: float, imax: int) -> np.ndarray:
    """M_i(x) = ∫_0^1 s^i e^{−x s} ds for i = 0..imax, x >= 0 (float; relative error << 1e-12)."""
    if x < 0 or not math.isfinite(x):
        raise ValueError("exp_moments needs 0 <= x < inf")
    out = np.empty(imax + 1)
    if x <= 4.0:
        n = np.arange(80, dtype=float)
        # (−x)^n / n! computed as a running product
        coef = np.cumprod(np.concatenate([[1.0], -x / n[1:]]))
        for i in range(imax + 1):
            out[i] = math.fsum(coef / (n + i + 1))
        return out
    ex = math.exp(-x)
    out[0] = -math.expm1(-x) / x
    for i in range(1, imax + 1):
        out[i] = (i * out[i - 1] - ex) / x
    return out


def cell_costs_line(cost, epsilon: float, h: float, k: np.ndarray) -> np.ndarray:
    """Lower bounds of the cost of a unit mass in cell k (cell [(k−½)h, (k+½)h)), see module doc."""
    k = np.asarray(k)
    kind = getattr(cost, "kind", "expr")
    if kind == "expr" or (kind == "pow" and cost.power < 1):
        lo, _ = enclose(cost, h * (k - 0.5), h * (k + 0.5))
        return np.maximum(np.asarray(lo, dtype=float), 0.0)
    P = float(cost.power)
    a = (np.abs(k) - 0.5) * h
    M = exp_moments(epsilon * h, 2)
    Mc = exp_moments(epsilon * h / 2, 2)
    t1, t2 = h * M[1] / M[0], h * h * M[2] / M[0]
    c1, c2 = (h / 2) * Mc[1] / Mc[0], (h / 2) ** 2 * Mc[2] / Mc[0]
    if kind == "abs":
        out, centre = a + t1, c1
    elif kind == "square":
        out, centre = a * a + 2 * a * t1 + t2, c2
    else:  # pow, P >= 1: Jensen E[(a+t)^P] >= (a + E t)^P
        out, centre = (a + t1) ** P, c1**P
    out = np.where(k == 0, centre, out)
    return np.maximum(out * (1 - COST_MARGIN), 0.0)


def shell_costs_radial(power: float, epsilon: float, h: float, d: int, k: np.ndarray) -> np.ndarray:
    """Lower bounds of E[r^P] (P integer >= 1) on the shell [kh, (k+1)h) of ℝ^d (module doc)."""
    n = d - 1
    P = int(power)
    M = exp_moments(epsilon * h, n + P)
    kf = np.asarray(k, dtype=float)[:, None]
    i_num = np.arange(n + P + 1)
    i_den = np.arange(n + 1)
    cnum = np.array([math.comb(n + P, int(i)) for i in i_num], dtype=float)
    cden = np.array([math.comb(n, int(i)) for i in i_den], dtype=float)
    num = np.sum(cnum * kf ** (n + P - i_num) * M[i_num], axis=1)
    den = np.sum(cden * kf ** (n - i_den) * M[i_den], axis=1)
    return np.maximum(h**P * num / den * (1 - COST_MARGIN), 0.0)


# ------------------------------------------------------------------------------------------------
# the chain LP
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChainLP:
    """A chain LP and how its columns map back to masses."""

    lp: LinearProgram
    sigma: np.ndarray  # m = sigma * q for the chain columns
    x: np.ndarray  # position of each chain variable (point, cell centre, or shell's inner radius)
    h: float
    kind: str  # "points", "cells" or "shells"
    far: list = field(default_factory=list)  # (price, edge index, tau) of each far lump
    dim: int = 1

    def masses(self, sol: np.ndarray) -> np.ndarray:
        n = len(self.sigma)
        return np.maximum(np.asarray(sol[:n], dtype=float), 0.0) * self.sigma


def build_chain(cost_lo: np.ndarray, sigma: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                far: list[tuple[float, int, float]], meta: dict) -> tuple[LinearProgram, np.ndarray]:
    """min Σ cost_lo·m + Σ price·far over the chain rows (module doc), m = σ q."""
    n = len(sigma)
    nf = len(far)
    ncol = n + nf
    i = np.arange(n - 1)
    rsig = sigma[:-1] / sigma[1:]
    blocks = []
    # q_{k+1} − hi_k (σ_k/σ_{k+1}) q_k <= 0
    fin = np.isfinite(hi)
    ii = i[fin]
    up = sp.coo_array((np.concatenate([np.ones(len(ii)), -hi[fin] * rsig[fin]]),
                       (np.concatenate([np.arange(len(ii))] * 2), np.concatenate([ii + 1, ii]))), shape=(len(ii), ncol))
    # lo_k (σ_k/σ_{k+1}) q_k − q_{k+1} <= 0
    dn = sp.coo_array((np.concatenate([lo * rsig, -np.ones(n - 1)]),
                       (np.concatenate([i, i]), np.concatenate([i, i + 1]))), shape=(n - 1, ncol))
    link_r, link_c, link_v = [], [], []
    for j, (_price, e, tau) in enumerate(far):
        link_r += [j, j]
        link_c += [e, n + j]
        link_v += [tau * sigma[e], -1.0]
    link = sp.coo_array((link_v, (link_r, link_c)), shape=(nf, ncol))
    norm = sp.coo_array((np.concatenate([sigma, np.ones(nf)]), (np.zeros(ncol, dtype=np.int64), np.arange(ncol))),
                        shape=(1, ncol))
    blocks = [("normalisation", norm, 1.0, 1.0), ("ratio_up", up, -np.inf, 0.0), ("ratio_down", dn, -np.inf, 0.0),
              ("tail_link", link, -np.inf, 0.0)]
    A, rl, ru, rb = stack_rows(blocks, ncol)
    c = np.concatenate([cost_lo * sigma, [p for p, _, _ in far]])
    cu = np.concatenate([1.0 / sigma, np.ones(nf)])
    lp = LinearProgram(c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(ncol), col_upper=cu,
                       row_blocks=rb, col_blocks={"m": slice(0, n), "far": slice(n, ncol)},
                       meta={"normalisation_row": 0, "builder": "lipschitz_chain"} | meta)
    return lp, sigma


def build_line(cost, epsilon: float, h: float, K: int, *, cells: bool) -> ChainLP:
    """Points (cells=False) or cells (cells=True) k = −K..K of width h on the line (module doc)."""
    k = np.arange(-K, K + 1)
    x = k * h
    if cells:
        cost_lo = cell_costs_line(cost, epsilon, h, k)
        edge = (K + 0.5) * h
    else:
        cost_lo = np.maximum(np.asarray(enclose(cost, x, x)[0], dtype=float), 0.0)
        edge = (K + 1) * h
    sigma = np.exp(-np.minimum(epsilon * np.abs(x), SCALE_EFOLDS))
    e = math.exp(epsilon * h)
    lo = np.full(2 * K, 1.0 / e)
    hi = np.full(2 * K, e)
    b = math.exp(-epsilon * h)
    tau = b / -math.expm1(-epsilon * h)
    pl = max(float(cost.enclose(-np.inf, -edge)[0]), 0.0)
    pr = max(float(cost.enclose(edge, np.inf)[0]), 0.0)
    far = [(pl, 0, tau), (pr, 2 * K, tau)]
    lp, sigma = build_chain(cost_lo, sigma, lo, hi, far, {"kind": "cells" if cells else "points", "h": h, "K": K})
    return ChainLP(lp, sigma, x, h, "cells" if cells else "points", far, 1)


def build_radial(power: float, epsilon: float, h: float, K: int, d: int) -> ChainLP:
    """Shells [kh, (k+1)h), k = 0..K−1, of a radial ℓ2-Lipschitz density on ℝ^d (module doc)."""
    k = np.arange(K)
    r = k * h
    cost_lo = shell_costs_radial(power, epsilon, h, d, k)
    vol = ((k + 1.0) ** d - k.astype(float) ** d)  # shell volume / (c_d h^d)
    sigma = np.exp(-np.minimum(epsilon * r, SCALE_EFOLDS)) * vol / vol[min(len(vol) - 1, int(1 / (epsilon * h)) + 1)]
    e = math.exp(epsilon * h)
    kk = k[:-1].astype(float)
    lo = (1.0 / e) * ((kk + 2) / (kk + 1)) ** (d - 1)
    with np.errstate(divide="ignore"):
        hi = np.where(kk > 0, e * ((kk + 1) / np.maximum(kk, 1)) ** (d - 1), np.inf)
    if d == 1:
        hi = np.full(K - 1, e)
    b = math.exp(-epsilon * h)
    tau = b / -math.expm1(-epsilon * h)
    price = (K * h) ** power * (1 - COST_MARGIN)
    far = [(price, K - 1, tau)]
    lp, sigma = build_chain(cost_lo, sigma, lo, hi, far, {"kind": "shells", "h": h, "K": K, "dim": d})
    return ChainLP(lp, sigma, r, h, "shells", far, d)


# ------------------------------------------------------------------------------------------------
# repair and audit
# ------------------------------------------------------------------------------------------------
def majorant(values: np.ndarray, beta: float) -> np.ndarray:
    """Smallest φ >= values with φ_{k±1} >= β φ_k: φ_k = max_j v_j β^{|k−j|} (two passes)."""
    phi = np.array(values, dtype=float, copy=True)
    phi[~(phi > 0)] = 0.0
    for k in range(1, len(phi)):
        t = beta * phi[k - 1]
        if t > phi[k]:
            phi[k] = t
    for k in range(len(phi) - 2, -1, -1):
        t = beta * phi[k + 1]
        if t > phi[k]:
            phi[k] = t
    return phi


@dataclass(frozen=True)
class ChainAudit:
    """Audit of adjacent log-ratios: ``realised_rate`` >= max |ln v_{k+1} − ln v_k| / h (outward)."""

    realised_rate: float
    epsilon: float
    passed: bool
    worst_index: int | None


def audit_chain(values: np.ndarray, h: float, epsilon: float) -> ChainAudit:
    """Check |ln v_{k+1} − ln v_k| <= ε h for a chain of knot values (pmf on hℤ or knots of a
    log-linear density), rounding the realised rate outward.  Zeros next to positives fail."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return ChainAudit(0.0, epsilon, bool(np.all(v > 0)), None)
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        return ChainAudit(math.inf, epsilon, False, int(np.argmax(~(np.isfinite(v) & (v > 0)))))
    r = np.maximum(v[1:] / v[:-1], v[:-1] / v[1:])
    worst = int(np.argmax(r))
    lr = math.log(float(r[worst]))
    lr = lr + 4 * U * abs(lr) + 4 * U  # the quotient and the log are each within 1 ulp
    rate = float(np.nextafter(np.nextafter(lr / h, np.inf) * (1 + 2 * U), np.inf))
    return ChainAudit(rate, epsilon, rate <= epsilon, worst)
