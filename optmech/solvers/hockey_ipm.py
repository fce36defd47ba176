r"""A structured interior-point method for the hockey-stick LPs of :func:`optmech.problems.approx.build_approx`.

The (ε, δ) LP on ℤ (exact or coarse, :class:`optmech.families.approx.ApproxFamily`) and on ℝ's cells
(:class:`optmech.families.approx_real.ApproxRealFamily`) has p columns (masses, one per point, ±x pair or orbit),
one far column, one epigraph column t_r per hockey-stick row r = (v, x), and (with edge rows) one column T_v per
edge row; and the rows

* hockey-stick: h_r·q − t_r <= 0 (h_r: +1 at x's column, −e^ε at (x + v)'s column; summed when they coincide);
* edge (optional): g_v·q − T_v <= 0 (g_v: +1 on the |v| points whose partner leaves the box, −(e^ε − 1)/2 or
  −(e^ε − 1) on far);
* budget: Σ_{r of v} ω_r t_r + T_v <= δ, one per kept shift v;
* normalisation: a₀·q = 1,

with q = (p, far) and every column >= 0.  A simplex method pivots through its massive degeneracy (a quarter to
a half of the positions per shift are ties p(x) = e^ε p(x + v)); HiGHS's interior-point method factorises
the normal equations without seeing their structure.  This module solves the same LP by Mehrotra's
predictor–corrector method [Meh92] with the structure used exactly [derived]:

Normal equations.  With the usual diagonal scalings Θ (rows: λ/s, columns: w/z) the Newton step solves
(Gᵀ Θ_s G + Θ_z) dz − a₀ dy = g, a₀ᵀ dz = r with z = (q, t, T).  The block of (t, T) is, shift by shift,
a diagonal D plus β_v ω̃_v ω̃_vᵀ (the budget row): Sherman–Morrison inverts it in O(rows).  Eliminating it
leaves the Schur complement on q

.. math:: S = \Theta_q + H^\top \operatorname{diag}(\psi) H + \hat U \hat U^\top,
   \qquad \psi_r = \frac{\theta_r \zeta_r}{\theta_r + \zeta_r},

(θ_r the row's scaling, ζ_r the scaling of t_r's bound) whose first two terms are banded with half-width
Δ in the p columns (row r couples x and x + v, |v| <= Δ; under the ±x reduction the columns R − |x| and
R − |x + v| are at most |v| apart) and whose last term has rank at most 2K (K kept shifts): one column
per edge row, ĝ_v·√(θ_v ζ_v/(θ_v + ζ_v)), and one per budget row, m_v √ρ_v with
m_v = −Σ_{r of v} θ_r ω_r/(θ_r + ζ_r) h_r − (θ_v/(θ_v + ζ_v)) ĝ_v, ρ_v = β_v/(1 + β_v Σ ω̃²/D).
Up to ``DENSE_MAX`` columns q (``DENSE_WIDE_MAX`` when the band spans half the matrix, as in the
periodic-decay LP) the whole S is formed and factorised densely; beyond, the banded part is
factorised as a block-tridiagonal matrix with dense blocks of side >= its half-bandwidth (LAPACK Cholesky and
triangular solves, so the work is in level-3 BLAS), the low-rank part by Woodbury's identity with the SPD
capacitance matrix I + Ŵᵀ Ŵ, Ŵ = L⁻¹ Û.  Iterative refinement against the exact operators (of S and of the
whole system) corrects the tiny regularisation of the band.  An iteration costs O(n Δ² + n Δ K + K³ + rows)
instead of a general sparse factorisation of the whole system.  Nothing above needs one dimension: an LP of
this shape whose masses are not banded (the orbit LP on ℤ^d) is solved too, with blocks as wide as its
half-bandwidth.

Accuracy.  The iterates' dual residual stalls near 1e-9..1e-8 of the largest cost (the normal equations'
conditioning), so the certified lower bound of its duals is within about 1e-10 (ε = 1, δ = 0.01) to 5e-8
(ε = 0.1) of the optimum, where a simplex method's vertex duals reach 1e-12: the default profile uses it for
the cell LPs on ℝ, whose gaps are the discretisation's (1e-4..1e-6), and the profile ``structured`` for ℤ.

The answer is *not* trusted: it goes through the same certificate as any other backend's
(:func:`optmech.certify.dual_lower_bound` on its row duals, the exact audit of its primal).  Returned in
the sign convention of :mod:`optmech.solvers.base`: y = −λ on the ≤ rows, the normalisation's multiplier
on the equality row, column duals c − Aᵀy.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from optmech import __version__
from optmech.errors import SpecError
from optmech.lp import LinearProgram
from optmech.solvers.base import Backend, RawSolution, Status

__all__ = ["HockeyIPMBackend", "HockeyStructure", "hockey_structure", "solve_hockey"]

#: builders whose LPs may have the structure of the module docstring (checked coefficient by coefficient)
BUILDERS = ("hockey_stick", "hockey_stick_coarse", "hockey_stick_cells", "hockey_stick_decay")
#: stop when the relative primal and dual residuals and the relative duality gap are below this
DEFAULT_TOLERANCE = 1e-10
#: the dual residual accepted at the end (relative to the largest cost): the certificate repairs what is left
#: (:func:`optmech.certify.dual_lower_bound`), at a relative cost of about this much
DUAL_TOLERANCE = 1e-8
MAX_ITERATIONS = 200
#: fraction of the step to the boundary
STEP_FRACTION = 0.995
#: relative regularisation of the banded block (corrected by iterative refinement)
BAND_REGULARISATION = 1e-13
#: at most this many centrality correctors per iteration [Gon96]
CORRECTORS = 3
#: the band is factorised in dense blocks of at least this side (or the half-bandwidth, if larger)
MIN_BLOCK = 64
#: give up when this many iterations pass without a better iterate (residuals and gap)
STALL_ITERATIONS = 15
#: ... or once the complementarity has fallen this far below its start (what is left is rounding noise)
MU_FLOOR = 1e-16
#: the Schur complement is factorised densely up to this many columns q (block-tridiagonal + Woodbury beyond)
DENSE_MAX = 3000
#: ... and up to this many when its band is at least half as wide as the matrix (the periodic-decay LP of
#: optmech.problems.approx_decay couples every residue with every other: its band is the whole matrix)
DENSE_WIDE_MAX = 6000
_TINY = 1e-200


@dataclass
class HockeyStructure:
    """The LP's blocks read off its matrix (module docstring).  q = (p, far) are the first n_p + 1 columns,
    then the hockey-stick rows' epigraph columns t (in row order), then the edge rows' columns T."""

    n_p: int
    hockey_rows: np.ndarray
    edge_rows: np.ndarray
    budget_rows: np.ndarray
    norm_row: int
    H: sp.csr_array          # hockey-stick rows × q
    HT: sp.csr_array
    E: sp.csr_array          # edge rows × q
    ET: sp.csr_array
    group: np.ndarray        # budget row (0..K−1) of every column of t and T
    omega: np.ndarray        # its coefficient there
    a0: np.ndarray           # normalisation coefficients on q
    fixed: np.ndarray        # q columns fixed at 0 (column upper bound 0)
    ia: np.ndarray           # per hockey-stick row: its first p column and coefficient, its second (or −1)
    va: np.ndarray
    ib: np.ndarray
    vb: np.ndarray
    half_band: int


def hockey_structure(lp: LinearProgram) -> HockeyStructure | None:
    """The structure of the module docstring, verified on ``lp`` (every coefficient accounted for), or None."""
    rb, cb = lp.row_blocks, lp.col_blocks
    if set(rb) - {"edge"} != {"normalisation", "hockey_stick", "budget"} or not {"p", "far", "t"} <= set(cb):
        return None
    n_p, col_far = cb["p"].stop, cb["far"].start
    if cb["p"].start != 0 or col_far != n_p or cb["t"].start != n_p + 1 or cb["t"].stop != lp.cols:
        return None
    ed = np.arange(rb["edge"].start, rb["edge"].stop) if "edge" in rb else np.zeros(0, dtype=np.int64)
    hs, bu = (np.arange(rb[k].start, rb[k].stop) for k in ("hockey_stick", "budget"))
    T, K, Ke, nq = len(hs), len(bu), len(ed), n_p + 1
    i0 = rb["normalisation"].start
    if Ke not in (0, K) or rb["normalisation"].stop != i0 + 1 or lp.cols != nq + T + Ke or T == 0:
        return None
    A = sp.csr_array(lp.A)
    Ah, Ae, Ab = A[hs], A[ed], A[bu]
    H, E = sp.csr_array(Ah[:, :nq]), sp.csr_array(Ae[:, :nq])
    if not (_is_minus_identity(Ah[:, nq:nq + T], T) and (Ke == 0 or _is_minus_identity(Ae[:, nq + T:], Ke))
            and Ah[:, nq + T:].nnz == 0 and Ae[:, nq:nq + T].nnz == 0 and Ab[:, :nq].nnz == 0
            and H[:, [n_p]].nnz == 0 and int(np.diff(H.indptr).max()) <= 2):
        return None
    B = sp.coo_array(Ab[:, nq:])
    if B.nnz != T + Ke or np.any(B.data <= 0):
        return None
    group = np.full(T + Ke, -1, dtype=np.int64)
    omega = np.zeros(T + Ke)
    group[B.col], omega[B.col] = B.row, B.data
    a0 = A[[i0]].toarray().ravel()
    ineq = np.concatenate([hs, ed, bu])
    if (np.any(group < 0) or np.any(a0[nq:] != 0) or np.any(a0[:nq] < 0) or lp.row_lower[i0] != lp.row_upper[i0]
            or not np.all(np.isneginf(lp.row_lower[ineq])) or np.any(lp.row_upper[np.concatenate([hs, ed])] != 0)
            or np.any(lp.row_upper[bu] <= 0) or np.any(lp.col_lower != 0) or np.any(lp.c[nq:] != 0)):
        return None
    fixed = lp.col_upper[:nq] <= 0
    keep = sp.diags_array((~fixed).astype(float))
    H, E = sp.csr_array(H @ keep), sp.csr_array(E @ keep)  # fixed columns stay at 0: their entries never act
    H.eliminate_zeros()
    E.eliminate_zeros()
    H.sort_indices()
    start, cnt = H.indptr[:-1], np.diff(H.indptr)
    col = np.append(H.indices, 0)
    val = np.append(H.data, 0.0)
    ia = np.where(cnt >= 1, col[start], -1)
    va = np.where(cnt >= 1, val[start], 0.0)
    ib = np.where(cnt >= 2, col[np.minimum(start + 1, len(col) - 1)], -1)
    vb = np.where(cnt >= 2, val[np.minimum(start + 1, len(val) - 1)], 0.0)
    span = np.where(ib >= 0, np.abs(ib - ia), 0)
    return HockeyStructure(
        n_p=n_p, hockey_rows=hs, edge_rows=ed, budget_rows=bu, norm_row=i0, H=H, HT=sp.csr_array(H.T), E=E,
        ET=sp.csr_array(E.T), group=group, omega=omega, a0=a0[:nq], fixed=fixed, ia=ia, va=va, ib=ib, vb=vb,
        half_band=int(span.max(initial=0)),
    )


def _is_minus_identity(M, n: int) -> bool:
    M = sp.coo_array(M)
    if M.shape[0] != n or M.nnz != n:
        return False
    order = np.argsort(M.row, kind="stable")
    return bool(np.array_equal(M.row[order], np.arange(n)) and np.array_equal(M.col[order], np.arange(n))
                and np.all(M.data == -1.0))


# -- the banded block as a block-tridiagonal matrix ---------------------------------------------------
class BandPattern:
    """Where each term of Hᵀ diag(ψ) H + diag(d) lands in blocks of side ``bs`` >= the half-bandwidth: block
    row I stores B[I, I] (columns bs..2bs) and B[I, I − 1] (columns 0..bs), lower entries only."""

    def __init__(self, st: HockeyStructure) -> None:
        n = self.n = st.n_p
        self.bs = bs = min(max(1, n), max(MIN_BLOCK, int(st.half_band)))
        self.nb = -(-n // bs)
        self.pad = self.nb * bs - n
        ra, rb = np.flatnonzero(st.ia >= 0), np.flatnonzero(st.ib >= 0)
        self.rows_a, self.rows_b = ra, rb
        pos = np.concatenate([self._pos(st.ia[ra], st.ia[ra]), self._pos(st.ib[rb], st.ib[rb]),
                              self._pos(np.maximum(st.ia, st.ib)[rb], np.minimum(st.ia, st.ib)[rb])])
        self.coef = np.concatenate([st.va[ra] ** 2, st.vb[rb] ** 2, (st.va * st.vb)[rb]])
        self.which = np.concatenate([ra, rb, rb])
        self.pos = pos
        self.pos_diag = self._pos(np.arange(n), np.arange(n))
        self.size = self.nb * bs * 2 * bs
        #: small problems: the whole Schur complement on q = (p, far) is formed and factorised densely
        self.dense = n + 1 <= DENSE_MAX or (2 * int(st.half_band) >= n and n + 1 <= DENSE_WIDE_MAX)
        if self.dense:
            nq = n + 1
            lo = np.minimum(st.ia, np.where(st.ib >= 0, st.ib, st.ia))
            hi = np.maximum(st.ia, st.ib)
            self.dpos = np.concatenate([st.ia[ra] * nq + st.ia[ra], st.ib[rb] * nq + st.ib[rb], hi[rb] * nq + lo[rb]])

    def _pos(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        bs = self.bs
        I = i // bs
        return (I * bs + i % bs) * (2 * bs) + (j - (I - 1) * bs)

    def assemble(self, psi: np.ndarray, diag: np.ndarray) -> np.ndarray:
        """The blocks (nb, bs, 2bs) of Hᵀ diag(ψ) H + diag(d) (padding gets 1 on the diagonal)."""
        w = np.bincount(self.pos, weights=psi[self.which] * self.coef, minlength=self.size)
        w[self.pos_diag] += diag
        blocks = w.reshape(self.nb, self.bs, 2 * self.bs)
        if self.pad:
            k = np.arange(self.bs - self.pad, self.bs)
            blocks[-1, k, self.bs + k] = 1.0
        return blocks


class BlockTridiagonalCholesky:
    """L Lᵀ of a symmetric positive definite block-tridiagonal matrix given by its lower blocks."""

    def __init__(self, blocks: np.ndarray) -> None:
        nb, bs, _ = blocks.shape
        self.nb, self.bs = nb, bs
        self.L = np.empty((nb, bs, bs))
        self.C = np.zeros((nb, bs, bs))  # C[i] = L[i, i − 1]
        for i in range(nb):
            D = np.array(blocks[i, :, bs:], order="F")
            if i > 0:
                D -= self.C[i] @ self.C[i].T
            L, info = sla.lapack.dpotrf(D, lower=1, clean=1, overwrite_a=1)
            if info != 0:
                raise np.linalg.LinAlgError(f"block {i} of the band is not positive definite")
            self.L[i] = L
            if i + 1 < nb:
                self.C[i + 1] = sla.solve_triangular(L, blocks[i + 1, :, :bs].T, lower=True, check_finite=False).T

    def forward(self, X: np.ndarray) -> np.ndarray:
        """L⁻¹ X for X of shape (nb·bs,) or (nb·bs, k)."""
        Y = X.reshape(self.nb, self.bs, -1).copy()
        for i in range(self.nb):
            if i > 0:
                Y[i] -= self.C[i] @ Y[i - 1]
            Y[i] = sla.solve_triangular(self.L[i], Y[i], lower=True, check_finite=False)
        return Y.reshape(X.shape)

    def backward(self, Y: np.ndarray) -> np.ndarray:
        """L⁻ᵀ Y."""
        Z = Y.reshape(self.nb, self.bs, -1).copy()
        for i in range(self.nb - 1, -1, -1):
            if i + 1 < self.nb:
                Z[i] -= self.C[i + 1].T @ Z[i + 1]
            Z[i] = sla.solve_triangular(self.L[i], Z[i], lower=True, trans="T", check_finite=False)
        return Z.reshape(Y.shape)


# -- the Newton systems --------------------------------------------------------------------------------
class _Newton:
    """(Gᵀ Θ_s G + Θ_z) of one iteration (module docstring), factorised once, solved for several right sides."""

    def __init__(self, st: HockeyStructure, pattern: BandPattern, theta_rows: np.ndarray, zeta: np.ndarray) -> None:
        T, Ke, K, n_p = len(st.hockey_rows), len(st.edge_rows), len(st.budget_rows), st.n_p
        nq = n_p + 1
        self.st, self.T, self.K, self.nq, self.n_p, self.pad = st, T, K, nq, n_p, pattern.pad
        th_w = theta_rows[:T + Ke]                   # hockey-stick and edge rows, paired with t and T
        self.th_h, self.th_e = th_w[:T], th_w[T:]
        z_w = zeta[nq:]
        self.z_q = zeta[:nq]
        self.Dg = th_w + z_w
        th_b = theta_rows[T + Ke:]
        self.rho = th_b / (1.0 + th_b * np.bincount(st.group, weights=st.omega ** 2 / self.Dg, minlength=K))
        self.psi = th_w[:T] * z_w[:T] / self.Dg[:T]
        phi = th_w[T:] * z_w[T:] / self.Dg[T:]
        d_p = self.z_q[:n_p]
        self.reg = BAND_REGULARISATION * max(1.0, float(np.max(d_p, initial=0.0)), float(np.max(self.psi, initial=0.0)))
        self.dense = pattern.dense
        if not self.dense:
            self.chol = BlockTridiagonalCholesky(pattern.assemble(self.psi, d_p + self.reg))
        self.far_diag = self.z_q[n_p] + self.reg
        # the low-rank columns: one per budget row (m_v √ρ_v), one per edge row (ĝ_v √φ_v)
        coef = th_w * st.omega / self.Dg
        M = np.zeros((nq, K))
        flat = M.reshape(-1)
        ra, rb = pattern.rows_a, pattern.rows_b
        g = st.group[:T]
        flat += np.bincount(st.ia[ra] * K + g[ra], weights=-coef[ra] * st.va[ra], minlength=nq * K)
        flat += np.bincount(st.ib[rb] * K + g[rb], weights=-coef[rb] * st.vb[rb], minlength=nq * K)
        Pe = sp.csr_array((-coef[T:], (np.arange(Ke), st.group[T:])), shape=(Ke, K))
        M += (st.ET @ Pe).toarray()
        M *= np.sqrt(self.rho)
        U = np.hstack([M, st.ET.toarray() * np.sqrt(phi)])
        U[st.fixed, :] = 0.0
        U[np.abs(U) < _TINY] = 0.0
        self.U, self.free = U, ~st.fixed
        if self.dense:  # S = diag(ζ_q) + Hᵀ diag(ψ) H + U Uᵀ, lower triangle, fixed columns as the identity
            S = np.bincount(pattern.dpos, weights=self.psi[pattern.which] * pattern.coef, minlength=nq * nq)
            S = S.reshape(nq, nq)
            S += np.tril(U @ U.T)
            S[np.diag_indices(nq)] += np.where(self.free, self.z_q + self.reg, 1.0)
            S[st.fixed, :] = 0.0
            S[:, st.fixed] = 0.0
            S[st.fixed, st.fixed] = 1.0
            S[np.abs(S) < _TINY] = 0.0  # subnormal numbers slow the factorisation down by orders of magnitude
            self.S_chol = sla.cho_factor(S, lower=True, overwrite_a=True, check_finite=False)
            return
        Up = np.vstack([U[:n_p], np.zeros((self.pad, U.shape[1]))]) if self.pad else U[:n_p]
        self.W = self.chol.forward(Up)
        self.W_far = U[n_p] / math.sqrt(self.far_diag)
        cap = self.W.T @ self.W + np.outer(self.W_far, self.W_far)
        cap[np.diag_indices_from(cap)] += 1.0
        self.cap = sla.cho_factor(cap, lower=True, check_finite=False)

    def S_matvec(self, x: np.ndarray) -> np.ndarray:
        """The Schur complement on q (exact, without the regularisation); identity on fixed columns."""
        st = self.st
        out = self.z_q * x + st.HT @ (self.psi * (st.H @ x)) + self.U @ (self.U.T @ x)
        return np.where(self.free, out, x)

    def S_solve(self, r: np.ndarray) -> np.ndarray:
        """Its inverse by the block Cholesky factor and Woodbury's identity (the band regularised)."""
        n_p = self.n_p
        r = np.where(self.free, r, 0.0)
        if self.dense:
            return np.where(self.free, sla.cho_solve(self.S_chol, r, check_finite=False), 0.0)
        y = self.chol.forward(np.concatenate([r[:n_p], np.zeros(self.pad)]))
        y_far = r[n_p] / math.sqrt(self.far_diag)
        t = sla.cho_solve(self.cap, self.W.T @ y + self.W_far * y_far, check_finite=False)
        y -= self.W @ t
        y_far -= self.W_far @ t
        x = np.empty(n_p + 1)
        x[:n_p] = self.chol.backward(y)[:n_p]
        x[n_p] = y_far / math.sqrt(self.far_diag)
        return np.where(self.free, x, 0.0)

    def Kww_inv(self, x: np.ndarray) -> np.ndarray:
        """The (t, T) block's inverse: diagonal plus one rank-one term per budget row (Sherman–Morrison)."""
        st = self.st
        y = x / self.Dg
        s = np.bincount(st.group, weights=st.omega * y, minlength=self.K) * self.rho
        return y - s[st.group] * st.omega / self.Dg

    def solve_approx(self, g: np.ndarray) -> np.ndarray:
        """(Gᵀ Θ_s G + Θ_z)⁻¹ g by block elimination of (t, T)."""
        st, nq, T = self.st, self.nq, self.T
        gq, gw = g[:nq], g[nq:]
        tmp = self.Kww_inv(gw)
        rq = gq + st.HT @ (self.th_h * tmp[:T]) + st.ET @ (self.th_e * tmp[T:])
        dq = self.S_solve(rq)
        dq += self.S_solve(np.where(self.free, rq - self.S_matvec(dq), 0.0))  # one step of refinement
        dw = self.Kww_inv(gw + np.concatenate([self.th_h * (st.H @ dq), self.th_e * (st.E @ dq)]))
        return np.concatenate([dq, dw])

    def solve(self, g: np.ndarray, K_matvec, free: np.ndarray, refine: int = 2) -> np.ndarray:
        """The same, refined against the exact operator ``K_matvec`` (iterative refinement)."""
        x = self.solve_approx(g)
        for _ in range(refine):
            r = np.where(free, g - K_matvec(x), 0.0)
            if not np.any(r):
                break
            x += self.solve_approx(r)
        return x


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    neg = dx < 0
    if not np.any(neg):
        return 1.0
    return float(min(1.0, np.min(-x[neg] / dx[neg])))


# -- the method ----------------------------------------------------------------------------------------
@dataclass
class IPMResult:
    """What :func:`solve_hockey` returns: the last iterate in the sign convention of :mod:`optmech.solvers.base`."""

    status: Status
    message: str
    x: np.ndarray
    row_dual: np.ndarray
    col_dual: np.ndarray
    objective: float
    iterations: int


def solve_hockey(lp: LinearProgram, st: HockeyStructure | None = None, *, tolerance: float = DEFAULT_TOLERANCE,
                 max_iterations: int = MAX_ITERATIONS, time_limit: float = math.inf, log=None) -> IPMResult:
    """Mehrotra's predictor–corrector method [Meh92] with Gondzio's centrality correctors [Gon96] on ``lp``,
    with the linear algebra of the module docstring.

    Parameters
    ----------
    lp : LinearProgram
        An LP with the structure of the module docstring (:func:`hockey_structure` decides).
    tolerance : float
        Stop when the relative primal and dual residuals and the relative duality gap are below it.
    time_limit : float
        Seconds; the last iterate is returned with status ``TIME_LIMIT`` when they run out.
    log : callable, optional
        Called with one line per iteration.
    """
    st = hockey_structure(lp) if st is None else st
    if st is None:
        raise SpecError("the LP does not have the hockey-stick structure of optmech.solvers.hockey_ipm")
    from threadpoolctl import threadpool_limits

    # one BLAS thread: the factorisations are small and many, and OpenBLAS's threads slowed them down several
    # times on two cores (measured)
    with threadpool_limits(limits=1, user_api="blas"):
        return _solve(lp, st, tolerance, max_iterations, time_limit, log)


def _solve(lp: LinearProgram, st: HockeyStructure, tolerance: float, max_iterations: int, time_limit: float,
           log) -> IPMResult:
    t0 = time.perf_counter()
    A = sp.csr_array(lp.A)
    ineq = np.concatenate([st.hockey_rows, st.edge_rows, st.budget_rows])
    G = sp.csr_array(A[ineq])
    GT = sp.csr_array(G.T)
    h = lp.row_upper[ineq].astype(float)
    b0 = float(lp.row_lower[st.norm_row])
    n, m = lp.cols, len(ineq)
    nq = st.n_p + 1
    a0 = np.zeros(n)
    a0[:nq] = np.where(st.fixed, 0.0, st.a0)
    cscale = max(1.0, float(np.max(np.abs(lp.c))))
    c = lp.c / cscale
    free = np.ones(n, dtype=bool)
    free[:nq] = ~st.fixed
    n_free = int(free.sum())
    pattern = BandPattern(st)

    # Mehrotra's starting point: the least-norm primal (z, s) and dual (λ, w) of the equations (the systems
    # with Θ = I, solved with the same linear algebra), shifted into the interior and balanced
    newton0 = _Newton(st, pattern, np.ones(m), np.ones(n))

    def K0(x: np.ndarray) -> np.ndarray:
        return GT @ (G @ x) + x

    v0 = newton0.solve(a0, K0, free)
    u0 = newton0.solve(np.where(free, GT @ h, 0.0), K0, free)
    z = np.where(free, u0 + (b0 - float(a0 @ u0)) / float(a0 @ v0) * v0, 0.0)
    s = h - G @ z
    pos = free[:nq] & (a0[:nq] > 0)
    y = float(np.min(c[:nq][pos] / a0[:nq][pos])) if np.any(pos) else 0.0
    lam = -(G @ newton0.solve(np.where(free, c - a0 * y, 0.0), K0, free))
    w = np.where(free, c - a0 * y + GT @ lam, 0.0)
    dp = max(-1.5 * min(float(np.min(z[free])), float(np.min(s))), 0.0)
    dd = max(-1.5 * min(float(np.min(w[free])), float(np.min(lam))), 0.0)
    z, s, lam, w = np.where(free, z + dp, 0.0), s + dp, lam + dd, np.where(free, w + dd, 0.0)
    xs = float(z[free] @ w[free]) + float(s @ lam)
    dp = 0.5 * xs / max(float(np.sum(w[free])) + float(np.sum(lam)), 1e-300)
    dd = 0.5 * xs / max(float(np.sum(z[free])) + float(np.sum(s)), 1e-300)
    z, s, lam, w = np.where(free, z + dp, 0.0), s + dp, lam + dd, np.where(free, w + dd, 0.0)

    status, message, it = Status.ITERATION_LIMIT, f"iteration limit ({max_iterations})", 0
    hnorm, cnorm = 1.0 + float(np.max(np.abs(h))), 1.0 + float(np.max(np.abs(c)))
    best = (math.inf, z, lam, y, 0)
    for it in range(max_iterations + 1):
        r_p = G @ z + s - h
        r_e = float(a0 @ z) - b0
        r_d = np.where(free, c + GT @ lam - a0 * y - w, 0.0)
        mu = (float(s @ lam) + float(z[free] @ w[free])) / (m + n_free)
        pobj, dobj = float(c @ z), b0 * y - float(h @ lam)
        pinf = max(float(np.max(np.abs(r_p))) / hnorm, abs(r_e) / (1.0 + abs(b0)))
        dinf = float(np.max(np.abs(r_d))) / cnorm
        gap = abs(pobj - dobj) / (1.0 + abs(pobj))
        if log is not None:
            log(f"{it:3d}  primal {pobj * cscale:.12e}  dual {dobj * cscale:.12e}  pinf {pinf:.1e}  dinf {dinf:.1e}  "
                f"gap {gap:.1e}  mu {mu:.1e}  {time.perf_counter() - t0:.2f} s")
        merit = max(pinf, gap, dinf * tolerance / DUAL_TOLERANCE)
        if merit < best[0]:
            best = (merit, z.copy(), lam.copy(), y, it)
        if pinf <= tolerance and dinf <= DUAL_TOLERANCE and gap <= tolerance:
            status, message = Status.OPTIMAL, f"optimal after {it} iterations (gap {gap:.1e})"
            break
        if it == 0:
            mu0 = mu
        if best[0] < 1e-6 and (merit > 1e3 * best[0] or it - best[4] > STALL_ITERATIONS or mu < MU_FLOOR * mu0):
            status, message = Status.INACCURATE, f"stalled after {it} iterations"
            break
        if it == max_iterations:
            break
        if time.perf_counter() - t0 > time_limit:
            status, message = Status.TIME_LIMIT, f"time limit after {it} iterations (gap {gap:.1e})"
            break
        th_s = lam / s
        zsafe = np.where(free, z, 1.0)
        zeta = np.where(free, w / zsafe, 1.0)
        try:
            newton = _Newton(st, pattern, th_s, zeta)
        except np.linalg.LinAlgError as exc:
            status, message = Status.ERROR, f"numerical breakdown after {it} iterations: {exc}"
            break

        def K_matvec(x: np.ndarray) -> np.ndarray:
            return GT @ (th_s * (G @ x)) + zeta * x

        v = newton.solve(a0, K_matvec, free)
        a0v = float(a0 @ v)

        def direction(rc1: np.ndarray, rc2: np.ndarray, residuals: bool = True) -> list:
            rp, rd, re = (r_p, r_d, r_e) if residuals else (np.zeros(m), np.zeros(n), 0.0)
            g = -rd - GT @ (th_s * rp - rc1 / s) - np.where(free, rc2 / zsafe, 0.0)
            u = newton.solve(np.where(free, g, 0.0), K_matvec, free)
            dy = (-re - float(a0 @ u)) / a0v
            dz = np.where(free, u + dy * v, 0.0)
            Gdz = G @ dz
            ds = -rp - Gdz
            dl = th_s * (Gdz + rp) - rc1 / s
            dw = np.where(free, -rc2 / zsafe - zeta * dz, 0.0)
            return [dz, ds, dl, dw, dy]

        def steps(d: list) -> tuple[float, float]:
            dz, ds, dl, dw, _ = d
            return (min(_max_step(s, ds), _max_step(z[free], dz[free])),
                    min(_max_step(lam, dl), _max_step(w[free], dw[free])))

        # predictor (affine scaling), then Mehrotra's corrector with σ = (μ_aff/μ)³
        d = direction(s * lam, np.where(free, z * w, 0.0))
        ap, ad = steps(d)
        dz, ds, dl, dw, _ = d
        mu_aff = (float((s + ap * ds) @ (lam + ad * dl))
                  + float((z[free] + ap * dz[free]) @ (w[free] + ad * dw[free]))) / (m + n_free)
        sigma = min(1.0, (mu_aff / mu) ** 3)
        target = sigma * mu
        d = direction(s * lam + ds * dl - target, np.where(free, z * w + dz * dw - target, 0.0))
        ap, ad = steps(d)
        # Gondzio's correctors: aim at a longer step whose complementarity products are pushed back into
        # [0.1 σμ, 10 σμ]; each is kept only while it lengthens the step enough
        for _ in range(CORRECTORS):
            if min(ap, ad) > 0.99:
                break
            ap_t, ad_t = min(1.0, 1.5 * ap + 0.1), min(1.0, 1.5 * ad + 0.1)
            dz, ds, dl, dw, _ = d
            vs = (s + ap_t * ds) * (lam + ad_t * dl)
            vz = (z + ap_t * dz) * (w + ad_t * dw)
            cs = np.maximum(np.clip(vs, 0.1 * target, 10.0 * target) - vs, -10.0 * target)
            cz = np.where(free, np.maximum(np.clip(vz, 0.1 * target, 10.0 * target) - vz, -10.0 * target), 0.0)
            trial = [a + b for a, b in zip(d, direction(-cs, -cz, residuals=False))]
            ap2, ad2 = steps(trial)
            if min(ap2, ad2) < min(ap, ad) + 0.1 * (min(ap_t, ad_t) - min(ap, ad)):
                break
            d, ap, ad = trial, ap2, ad2
        dz, ds, dl, dw, dy = d
        ap, ad = STEP_FRACTION * ap, STEP_FRACTION * ad
        z, s = z + ap * dz, s + ap * ds
        lam, w, y = lam + ad * dl, w + ad * dw, y + ad * dy
    if status is not Status.OPTIMAL:  # the best iterate seen (its residuals and gap the smallest)
        _, z, lam, y, _ = best
        if best[0] <= tolerance * 100:
            status, message = Status.OPTIMAL, f"{message}; best iterate (residuals and gap {best[0]:.1e}) returned"
    row_dual = np.zeros(lp.rows)
    row_dual[ineq] = -lam * cscale
    row_dual[st.norm_row] = y * cscale
    x = np.where(free, z, 0.0)
    return IPMResult(status, message, x, row_dual, lp.c - lp.A.T @ row_dual, float(lp.c @ x), it)


class HockeyIPMBackend(Backend):
    """The structured interior-point method of this module, for the 1-D hockey-stick LPs with edge rows only.

    Options: ``tolerance`` (default :data:`DEFAULT_TOLERANCE`), ``max_iterations``, ``time_limit`` (seconds),
    ``output_flag`` (one line per iteration on standard error)."""

    name = "hockey_ipm"
    module = "scipy"

    def version(self) -> str:
        return __version__

    def accepts(self, lp: LinearProgram) -> bool:
        return lp.meta.get("builder") in BUILDERS and "budget" in lp.row_blocks and "hockey_stick" in lp.row_blocks

    def _solve(self, lp: LinearProgram, options: dict[str, Any]) -> RawSolution:
        import sys

        t0 = time.perf_counter()
        unknown = set(options) - {"tolerance", "max_iterations", "time_limit", "output_flag"}
        if unknown:
            raise SpecError(f"hockey_ipm: unknown option(s) {', '.join(sorted(unknown))}")
        st = hockey_structure(lp)
        if st is None:
            return RawSolution(Status.ERROR, "structure", "the LP does not have the hockey-stick structure", math.nan,
                               None, None, None, self.name, "ipm", self.version(), time.perf_counter() - t0)
        log = (lambda line: print(line, file=sys.stderr)) if options.get("output_flag") else None
        res = solve_hockey(lp, st, tolerance=float(options.get("tolerance", DEFAULT_TOLERANCE)),
                           max_iterations=int(options.get("max_iterations", MAX_ITERATIONS)),
                           time_limit=float(options.get("time_limit", math.inf)), log=log)
        ok = res.status is Status.OPTIMAL
        return RawSolution(res.status, res.status.value, res.message, res.objective, res.x if ok else None,
                           res.row_dual if ok else None, res.col_dual if ok else None, self.name,
                           "mehrotra-gondzio", self.version(), time.perf_counter() - t0, res.iterations, dict(options))
