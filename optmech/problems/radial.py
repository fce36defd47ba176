r"""The radial LP: pure ε-DP on ℝ^d when the cost is a power of the sensitivity's own norm.

Reduction [derived here; [MDA26] states that a staircase in the norm K is optimal for every norm and
every nondecreasing cost of it].
Let K be any norm on ℝ^d with unit ball B, the sensitivity Δ measured in K, and the cost
L(x) = f(‖x‖_K) with f nondecreasing (here f(r) = r^m, m = 1, 2).  For an ε-DP density p, the
level sets satisfy {p > t} + ΔB ⊆ {p > e^{−ε}t} for every t > 0.  Replace every level set by the
centred ball r_t B of the same volume (the K-symmetric decreasing rearrangement p*).  The
Brunn–Minkowski inequality gives vol({p > t} + ΔB)^{1/d} >= (r_t + Δ) vol(B)^{1/d}, so
(r_t + Δ)B ⊆ {p* > e^{−ε}t}: p* is ε-DP.  Among sets of one volume the centred ball has the
least integral of f(‖x‖_K) (f nondecreasing), so E_{p*} L <= E_p L.  Hence

.. math:: V^* = \inf_g \int_0^\infty f(r)\, g(r)\, d\,\mathrm{vol}(B)\, r^{d-1}\, dr

over nonincreasing g >= 0 with ∫ g d vol(B) r^{d−1} dr = 1 and g(r) <= e^ε g(r + Δ) (for a
radial nonincreasing density these are all the constraints: ‖x + v‖_K, ‖v‖_K <= Δ, covers
[‖x‖_K − Δ, ‖x‖_K + Δ]).  V* does not depend on K: one 1-D problem answers every norm.

The LP (Δ = 1 internally; V*(Δ) = Δ^m V*(1)).  Grid s_k = k h, h = 1/n with n a power of two (so
s_k, s_k^d and s_k + 1 = s_{k+n} are exact), nodes k = 1..N with N = n (P + 1).  Variables G_k =
g on [s_{k−1}, s_k); rows G_{k+1} <= G_k (monotone), G_k <= ê G_{k+n} for k <= nP (ê >= e^ε, one
ulp up) and Σ_k G_k (s_k^d − s_{k−1}^d) = 1 (the mass, in units of vol(B)).  The objective is
Σ_k G_k (p_k − p_{k−1}): an atom of the tail measure ρ = −dg at s_k is priced p_k <= C(s_k) − E_k,
with C(s) = d s^{d+m}/(d+m) (the cost of the ball of radius s, per vol(B)) and
E_k = (h²/8) d(d+m−1) s_{k+1}^{d+m−2} >= the linear-interpolation error of C on [s_k, s_{k+1}]
(p_1 = min(0, C(s_1) − E_1)).

Why the LP's optimum is a lower bound (second order in h).  Its dual is: maximise ν over ν and a
nondecreasing Λ_0 = 0, Λ_1, .., Λ_{nP} with p_k − ν s_k^d + Λ_{min(k, nP)} − ê Λ_{k−n} >= 0 for
every node (Λ_j = 0 for j <= 0).  Interpolate Λ linearly between nodes (constant beyond s_{nP}).
For the continuous problem, weak duality holds for every nondecreasing Λ with
F(s) = C(s) − ν s^d + Λ(s) − e^ε Λ(s − 1) >= 0 on s >= 0 (integrate F against ρ: ∫ Λ dρ − e^ε ∫
Λ(· − 1) dρ = ∫ (g(r) − e^ε g(r + 1)) dΛ(r) <= 0).  On a cell [s_k, s_{k+1}], k >= 1, F − C is
concave (ν >= 0) and C >= its interpolant − E_k, so F >= min(F(s_k), F(s_{k+1})) − E_k >= 0 by
the node rows; on [0, h], F(s) >= s(Λ_1/h − ν) >= 0 by node 1 (p_1 <= 0); beyond s_N,
F(s) − F(s_N) = ∫ d r^{d−1}(r^m − ν) dr >= 0 once s_N^m >= ν (checked by the family against its
upper bound).  So every dual-feasible point of the LP is a continuous certificate, and
:func:`optmech.certify.dual_lower_bound` of the LP is a certified lower bound on V*.  The error is
O(h²): the interpolation allowance is O(h²) and restricting the steps of g to the grid costs O(h²)
at a stationary staircase.

Rounding.  Prices are rounded down so that the exact prefix sums of the float objective
coefficients are <= C(s_k) − E_k (checked in exact rational arithmetic while building); every
other coefficient is exact (s_k^d − s_{k−1}^d = h^d (k^d − (k−1)^d) while k^d < 2^53, else within
d + 2 roundings, inside the certificate's data allowance ``DATA_RELERR``) or rounded toward a
relaxation (ê).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from optmech.lp import LinearProgram

__all__ = ["RadialLP", "build_radial", "periods_needed", "node_prices", "radial_lp_size"]

U = 2.0**-53


@dataclass(frozen=True)
class RadialLP:
    """The radial LP and its grid (module docstring): ``n`` nodes per Δ, ``periods`` DP periods,
    ``N = n (periods + 1)`` columns G_1..G_N (G_k the density on [s_{k−1}, s_k), s_k = k/n)."""

    lp: LinearProgram
    n: int
    periods: int
    dim: int
    power: int
    epsilon: float

    @property
    def N(self) -> int:
        return self.n * (self.periods + 1)

    @property
    def variant(self) -> str:
        return "radial"


def periods_needed(epsilon: float, dim: int, power: int, tol: float = 1e-14) -> int:
    """Δ-periods P of the radial grid: the optimum's tail beyond P Δ (mass decaying like e^{−εr}
    against a polynomial of degree d + m) is below ``tol`` relative, i.e. ε(P − 1) >= ln(1/tol) +
    (d + m) ln(P + 1)."""
    P = 4
    while epsilon * (P - 1) < math.log(1 / tol) + (dim + power) * math.log(P + 1):
        P += max(1, P // 8)
    return P


def radial_lp_size(n: int, periods: int) -> tuple[int, int, int]:
    """(rows, columns, nonzeros) of :func:`build_radial`."""
    N = n * (periods + 1)
    K = n * periods
    return 1 + (N - 1) + K, N, N + 2 * (N - 1) + 2 * K


def node_prices(n: int, N: int, dim: int, power: int) -> np.ndarray:
    """Floats L_k <= C(s_k) − E_k for k = 1..N (module docstring), rounded down."""
    d, m = dim, power
    k = np.arange(1, N + 1, dtype=float)
    s = k / n
    err = (d + m + 6) * U
    C = (d / (d + m)) * s ** (d + m) * (1 - err)
    E = (d * (d + m - 1) / (8.0 * n * n)) * ((k + 1) / n) ** (d + m - 2) * (1 + err)
    L = np.nextafter(C - E, -np.inf)
    L[0] = min(0.0, float(L[0]))
    return L


#: Largest grid whose prefix sums are re-checked in exact integer arithmetic (beyond it the margin's proof stands alone).
EXACT_CHECK_NODES = 1 << 19


def _objective(L: np.ndarray) -> np.ndarray:
    """Float c with exact prefix sums Σ_{j<=k} c_j <= L_k.

    Vectorised: c_j = fl(T_j − T_{j−1}) with T_k = L_k − m_k rounded down, where the margin
    m_k = 2u (S_k (1 + 2ku) + 2k ulp(max |L|)), S_k = Σ_{j<=k} |L_j − L_{j−1}|, covers the rounding of
    every difference (|fl(a − b) − (a − b)| <= u|a − b|, and |T_j − T_{j−1}| <= |L_j − L_{j−1}| +
    |m_j − m_{j−1}| + 2 ulp(max |L|)), so the exact prefix sum T_k + Σ rounding errors is <= L_k.  Up
    to ``EXACT_CHECK_NODES`` the prefix sums are also checked exactly; a failure (never seen) falls
    back to the sequential exact construction."""
    N = L.size
    k = np.arange(1, N + 1, dtype=float)
    D = np.abs(np.diff(np.concatenate([[0.0], L])))
    S = np.cumsum(D) * (1 + 2 * k * U)
    ulp = float(np.spacing(np.max(np.abs(L)))) if N else 0.0
    m = 2 * U * (S + 2 * k * ulp) * (1 + 4 * U)
    T = np.nextafter(L - m, -np.inf)
    c = np.diff(np.concatenate([[0.0], T]))
    if N <= EXACT_CHECK_NODES and not _prefix_sums_below(c, L):
        return _objective_exact(L)
    return c


def _prefix_sums_below(c: np.ndarray, L: np.ndarray) -> bool:
    """Σ_{j<=k} c_j <= L_k for every k, exactly (integers at a common binary scale)."""
    mant, exp = np.frexp(np.concatenate([c, L]))
    m_int = (mant * 2.0**53).astype(np.int64)
    e = exp.astype(np.int64) - 53
    e0 = int(e.min())
    vals = [int(a) << int(b - e0) for a, b in zip(m_int.tolist(), e.tolist())]
    N = c.size
    acc = 0
    for i in range(N):
        acc += vals[i]
        if acc > vals[N + i]:
            return False
    return True


def _objective_exact(L: np.ndarray) -> np.ndarray:
    """The sequential construction: float c with exact prefix sums Σ_{j<=k} c_j <= L_k (rationals)."""
    c = np.empty_like(L)
    prefix = Fraction(0)
    for i, target in enumerate(L.tolist()):
        t = Fraction(target)
        v = target - float(prefix)
        while prefix + Fraction(v) > t:
            v = math.nextafter(v, -math.inf)
        c[i] = v
        prefix += Fraction(v)
    return c


def build_radial(epsilon: float, dim: int, power: int, n: int, periods: int) -> RadialLP:
    """The radial LP (module docstring) with n nodes per Δ (a power of two) and ``periods`` DP periods."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a power of two, got {n}")
    N = n * (periods + 1)
    K = n * periods
    km1 = np.arange(N, dtype=float)  # k − 1
    # s_k^d − s_{k−1}^d = Σ_{i<d} C(d, i)(k − 1)^i / n^d: positive terms, within (d + 2) roundings (exact while k^d < 2^53)
    w = sum(math.comb(dim, i) * km1**i for i in range(dim)) / float(n) ** dim
    c = _objective(node_prices(n, N, dim, power))
    e_up = math.nextafter(math.exp(epsilon) * (1 + 2 * U), math.inf)
    # rows: normalisation; monotone G_{k+1} − G_k <= 0 (k = 1..N−1); DP G_k − ê G_{k+n} <= 0 (k = 1..K)
    mono_r = np.repeat(np.arange(N - 1), 2)
    mono_c = np.stack([np.arange(1, N), np.arange(N - 1)], axis=1).ravel()
    mono_v = np.tile([1.0, -1.0], N - 1)
    dp_r = np.repeat(np.arange(K), 2)
    dp_c = np.stack([np.arange(K), np.arange(K) + n], axis=1).ravel()
    dp_v = np.tile([1.0, -e_up], K)
    rows = np.concatenate([np.zeros(N, dtype=np.int64), 1 + mono_r, N + dp_r])
    cols = np.concatenate([np.arange(N), mono_c, dp_c])
    vals = np.concatenate([w, mono_v, dp_v])
    m_rows = 1 + (N - 1) + K
    A = sp.csc_array(sp.coo_array((vals, (rows, cols)), shape=(m_rows, N)))
    rl = np.concatenate([[1.0], np.full(N - 1 + K, -np.inf)])
    ru = np.concatenate([[1.0], np.zeros(N - 1 + K)])
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(N),
        col_upper=np.nextafter(1.0 / w, np.inf),  # G_k w_k <= Σ G_j w_j = 1 for every feasible point
        row_blocks={"normalisation": slice(0, 1), "monotone": slice(1, N), "privacy": slice(N, m_rows)},
        col_blocks={"g": slice(0, N)},
        meta={"builder": "radial", "semantics": "relaxation (radial, second order)", "normalisation_row": 0,
              "n": n, "periods": periods, "e_up": e_up},
    )
    return RadialLP(lp, n, periods, dim, power, float(epsilon))
