r"""(ε, δ) on ℝ^d with ℓ2 sensitivity and a radial cost: the shell LP [derived].

Radial laws suffice.  For an ℓ2 sensitivity ball and a cost L(‖x‖₂), the average of an (ε, δ)-DP
noise law over the rotation group (Haar measure) is (ε, δ)-DP with the same cost: for a rotation O,
OX is private (the shifts O^T v stay in the ball), P(X̄ ∈ S) = ∫ P(OX ∈ S) dO <= ∫ (e^ε P(OX + v ∈ S)
+ δ) dO = e^ε P(X̄ + v ∈ S) + δ, and E L(‖OX‖) = E L(‖X‖).  So V* is the infimum over radial laws.

The LP (a restriction, so its optimum is only a proposal for an upper end).  Shells
[e_i, e_{i+1}), 0 = e_0 < ... < e_n; the law has density g_i on shell i (masses m_i = g_i ·
vol(shell i)), g nonincreasing, 0 beyond e_n.  By the lemma of
:mod:`optmech.mechanisms.solved.radial_shells` one shift v of norm Δ is the worst, and the
hockey-stick sum there is Σ_{i,j} (g_i − c g_j)₊ W(i, j) = Σ_{i,j} (m_i Q(i, j) − c m_j Q(j, i))₊,
Q(i, j) = W(i, j)/vol(shell i) = P(‖X + v‖ in shell j | X uniform in shell i) and W(i, j) = W(j, i)
(reflecting x ↦ −x − v swaps the two conditions).  With g nonincreasing and c >= 1 only the pairs
i < j (and j = "beyond e_n", where g = 0) can be positive, so the LP is

* columns m_i ∈ [0, 1] and t_{i,j} ∈ [0, 1] for the pairs i < j with Q(i, j) > 0 (j <= n, j = n the
  outside), t in units of the budget δ_b;
* rows (m_i Q(i, j) − c m_j Q(j, i))/δ_b − t_{i,j} <= 0 (Q(n, i) = 0), Σ t <= 1 ("budget"),
  Σ m = 1 ("normalisation"), and the monotone rows (vol_i/vol_{i+1}) m_{i+1} − m_i <= 0 where
  that ratio is at least :data:`MONOTONE_MIN_RATIO` (a smaller coefficient would be dropped by the
  solver; the family restores monotonicity on those inner shells before the audit);
* objective Σ m_i L̄_i / max L̄, L̄_i the cost's mean on shell i (density ∝ r^{d−1}).

The scaling (rows by 1/δ_b, the objective by the largest price) keeps the dual values near 1: unscaled,
the budget's dual is about (cost)/δ, which HiGHS's dual simplex refuses at δ = 1e−6 and d = 100.

Q(i, j) is computed by composite Gauss–Legendre quadrature over shell i (:data:`KERNEL_NODES` nodes per
piece, pieces no wider than the median shell and cut at the kinks r = e_j ± Δ, Δ − e_j; weight r^{d−1})
of K(r, j) = G_d(τ(r, e_{j+1})) − G_d(τ(r, e_j)) (:func:`optmech.exact.sphere.sphere_cdf`):
floats, which is why the LP only proposes.  The proposal is certified by the audit
(:func:`optmech.mechanisms.solved.radial_shells.radial_delta_upper`) and priced by proven shell means.

Size: the pairs number about n·(Δ/h + 2) for shells of width h, against n^d cells of a cube grid.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from optmech.exact.sphere import shell_moments, shell_volumes, sphere_cdf
from optmech.lp import LinearProgram

__all__ = ["KERNEL_NODES", "MONOTONE_MIN_RATIO", "RadialShellLP", "build_radial_shells", "shell_edges",
           "shell_kernel"]

#: Gauss–Legendre nodes per piece of a shell of the kernel Q.
KERNEL_NODES = 16
#: Smallest vol_i/vol_{i+1} of a monotone row the LP keeps.
MONOTONE_MIN_RATIO = 1e-7


def shell_edges(sensitivity: float, per_sensitivity: int, radius: float) -> np.ndarray:
    """Uniform edges 0, h, 2h, ..., n h >= radius, h = Δ/per_sensitivity."""
    h = float(sensitivity) / int(per_sensitivity)
    n = max(2, int(np.ceil(float(radius) / h)))
    return h * np.arange(n + 1, dtype=float)


def shell_kernel(d: int, edges: np.ndarray, sensitivity: float, nodes: int = KERNEL_NODES):
    """(i, j, Q) for every pair i < j with Q(i, j) > 0 (j = n: beyond the last edge), and the reverse
    Q(j, i) for j < n (0 for j = n), all by quadrature (module docstring)."""
    e = np.asarray(edges, dtype=float)
    n, s = e.size - 1, float(sensitivity)
    x, w = np.polynomial.legendre.leggauss(int(nodes))
    x, w = 0.5 * (x + 1.0), 0.5 * w
    h_ref = float(np.median(np.diff(e)))  # a few narrow shells (refined at a jump) leave the others' pieces alone
    kinks = np.unique(np.concatenate([e + s, e - s, s - e]))

    def kernel_rows(i: int, j0: int, j1: int) -> np.ndarray:
        """Q(i, j) for j0 <= j < j1 (j1 <= n + 1; j = n the outside): composite Gauss–Legendre on pieces of
        shell i no wider than the median shell, cut where r ± s or s − r meets an edge (the kernel's kinks)."""
        a, b = e[i], e[i + 1]
        cuts = np.unique(np.concatenate([[a, b], kinks[(kinks > a) & (kinks < b)]]))
        parts = [np.linspace(lo, hi, int(np.ceil((hi - lo) / h_ref * (1 - 1e-9))) + 1)
                 for lo, hi in zip(cuts[:-1], cuts[1:])]
        ends = np.unique(np.concatenate(parts))
        lo, width = ends[:-1, None], np.diff(ends)[:, None]
        r = (lo + width * x[None, :]).ravel()
        wt = (width * w[None, :]).ravel() * (r / b) ** (d - 1)
        wt = wt / wt.sum()
        rho = e[j0:min(j1, n) + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            tau = (rho[None, :] ** 2 - r[:, None] ** 2 - s * s) / (2.0 * r[:, None] * s)
        F = sphere_cdf(d, tau)
        if j1 > n:  # the outside: 1 − F at e_n
            F = np.concatenate([F, np.ones((F.shape[0], 1))], axis=1)
        return wt @ np.diff(F, axis=1)

    I, J, Qf, Qb = [], [], [], []
    cache: dict[int, tuple[int, np.ndarray]] = {}

    def row(i: int) -> tuple[int, np.ndarray]:
        if i not in cache:
            j0 = max(0, int(np.searchsorted(e, e[i] - s, side="right")) - 1)
            j1 = min(n + 1, int(np.searchsorted(e, e[i + 1] + s, side="left")) + 1)
            cache[i] = (j0, kernel_rows(i, j0, j1))
        return cache[i]

    for i in range(n):
        j0, q = row(i)
        for k, qv in enumerate(q):
            j = j0 + k
            if j <= i or not qv > 0:
                continue
            back = 0.0
            if j < n:
                jj0, qj = row(j)
                if 0 <= i - jj0 < qj.size:
                    back = float(qj[i - jj0])
            I.append(i), J.append(j), Qf.append(float(qv)), Qb.append(back)
    return np.array(I, dtype=np.int64), np.array(J, dtype=np.int64), np.array(Qf), np.array(Qb)


@dataclasses.dataclass
class RadialShellLP:
    """The shell LP and what reads its solution: ``edges`` (n + 1), ``dim``."""

    lp: LinearProgram
    edges: np.ndarray
    dim: int

    @property
    def shells(self) -> int:
        return self.edges.size - 1

    def masses(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(np.asarray(x[: self.shells], dtype=float), 0.0)


def build_radial_shells(cost: str, epsilon: float, delta: float, sensitivity: float, d: int,
                        edges: np.ndarray) -> RadialShellLP:
    """The shell LP of the module docstring.

    Parameters
    ----------
    cost : {"l2", "l2sq"}
        L = ‖x‖₂ or ‖x‖₂².
    epsilon, delta : float
        ε >= 0 and the budget δ > 0 of the LP (the family passes δ less a slack for the audit).
    sensitivity : float
        Δ > 0 (ℓ2).
    d : int
        Dimension >= 2.
    edges : (n + 1,) array
        0 = e_0 < ... < e_n.
    """
    e = np.asarray(edges, dtype=float)
    n, d = e.size - 1, int(d)
    c = float(np.exp(epsilon))
    I, J, Qf, Qb = shell_kernel(d, e, sensitivity)
    P = I.size
    k = np.arange(P)
    # pair rows, divided by the budget: (m_i Q(i, j) − c m_j Q(j, i))/δ_b − t_p <= 0 with t_p = (its term)/δ_b
    inner = J < n
    b = float(delta)
    rows = np.concatenate([k, k[inner], k])
    cols = np.concatenate([I, J[inner], n + k])
    vals = np.concatenate([Qf / b, -c * Qb[inner] / b, -np.ones(P)])
    pairs = sp.csr_array((vals, (rows, cols)), shape=(P, n + P))
    budget = sp.csr_array((np.ones(P), (np.zeros(P, dtype=np.int64), n + k)), shape=(1, n + P))
    norm = sp.csr_array((np.ones(n), (np.zeros(n, dtype=np.int64), np.arange(n))), shape=(1, n + P))
    # vol_i/vol_{i+1} = (e_{i+1}^d − e_i^d)/(e_{i+2}^d − e_{i+1}^d)
    vol, _ = shell_volumes(e, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(vol[1:] > 0, vol[:-1] / np.where(vol[1:] > 0, vol[1:], 1.0), 0.0)
    keep = np.flatnonzero(ratio >= MONOTONE_MIN_RATIO)
    mono = sp.csr_array((np.concatenate([ratio[keep], -np.ones(keep.size)]),
                         (np.concatenate([np.arange(keep.size)] * 2), np.concatenate([keep + 1, keep]))),
                        shape=(keep.size, n + P))
    A = sp.vstack([pairs, budget, norm, mono]).tocsc()
    m = A.shape[0]
    lower = np.full(m, -np.inf)
    upper = np.zeros(m)
    upper[P] = 1.0
    lower[P + 1] = upper[P + 1] = 1.0
    power = 1 if cost == "l2" else 2
    prices = shell_moments(e, d, power)
    scale = float(prices.max())  # the objective in units of the largest shell price (dual values near 1)
    obj = np.concatenate([prices / scale, np.zeros(P)])
    lp = LinearProgram(
        c=obj, A=sp.csc_array(A), row_lower=lower, row_upper=upper,
        col_lower=np.zeros(n + P), col_upper=np.concatenate([np.ones(n), np.ones(P)]),
        row_blocks={"pairs": slice(0, P), "budget": slice(P, P + 1), "normalisation": slice(P + 1, P + 2),
                    "monotone": slice(P + 2, m)},
        col_blocks={"m": slice(0, n), "t": slice(n, n + P)},
        meta={"builder": "radial_shells", "dim": d, "shells": n, "objective_scale": scale, "budget": b},
    )
    return RadialShellLP(lp, e, d)
