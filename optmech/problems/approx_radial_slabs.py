r"""(ε, δ) on ℝ^d with ℓ2 sensitivity and a radial cost: the slab relaxation, a certified lower bound [derived].

Setting.  Δ = 1 (V*(Δ) = Δ^m V*(1) for L = ‖x‖₂^m).  V* is an infimum over radial laws X = R U, U uniform on
the sphere and independent of R (rotation averaging, :mod:`optmech.problems.approx_radial`).  Fix w = e₁
(‖w‖ = 1 = Δ) and write A = ⟨X, w⟩ for the coordinate along the shift and B = ‖X − A w‖ for the distance from
its axis.  A shift by w moves A to A + 1 and leaves B alone, so the pair (A, B) carries the whole privacy
constraint and the shift acts on it as a translation of one coordinate.  Every (ε, δ)-DP noise satisfies
E ψ(X) − e^ε E ψ(X + w) <= δ for every test function 0 <= ψ <= 1 (the hockey-stick divergence is the supremum
over sets, and a [0, 1]-valued ψ is a mixture of indicators).

Test functions.  Nodes kh (h = 1/n, n a power of two) carry the hat functions hat_k(a) = (1 − |a/h − k|)₊,
and slab edges b_j = jβ (β a power of two) the indicators of B ∈ [b_j, b_{j+1}).  The products
ψ_{jk}(x) = hat_k(A) 1{B ∈ [b_j, b_{j+1})} satisfy ψ_{jk} >= 0 and Σ_{jk} ψ_{jk} <= 1, and, because a shift by w
is n nodes along A, ψ_{jk}(x + w) = ψ_{j,k−n}(x).

Weak duality (the certificate).  For rows m in a finite family F, multipliers 0 <= μ_m <= Λ, and x_m =
E ψ_m(X) − e^ε E ψ_m(X + w):  Σ_m μ_m x_m <= Λ Σ_m (x_m)₊ = Λ (E ψ_S(X) − e^ε E ψ_S(X + w)) <= Λ δ, with S the
rows where x_m > 0 and ψ_S = Σ_{m∈S} ψ_m ∈ [0, 1].  With K_r(j, k) = E ψ_{jk}(rU),

    E L(R) >= inf_{r >= 0} φ(r) − Λ δ,   φ(r) = L(r) + Σ_{jk} c_{jk} K_r(j, k),   c_{jk} = μ_{jk} − e^ε μ_{j,k+n}

(μ = 0 off F), for every (ε, δ)-DP radial law; nothing about the law's shape is assumed.  Rows are kept only
when the supports of ψ_m and ψ_{m−n} lie in the ball of radius ``outer`` (the window): beyond it every K_r of
the family vanishes, so φ(r) = L(r) >= L(outer) there.

Kernel (closed forms).  For U uniform on S^{d−1}, U₁ has the density f_d(t) = (1 − t²)^{(d−3)/2}/J_d on
[−1, 1], with cdf G_d (:func:`optmech.exact.sphere.sphere_cdf`) and first moment
H_d(t) = ∫_{−1}^t s f_d(s) ds = −c_d (1 − t²)^{(d−1)/2}, c_d = 1/((d − 1) J_d) = E|U₁|/2 (differentiate).  For
r > 0, the point rU has A = r U₁ and B = r (1 − U₁²)^{1/2}, so B ∈ [b_j, b_{j+1}) ⟺ τ_{j+1}(r) < |U₁| <= τ_j(r)
with τ_b(r) = (1 − b²/r²)^{1/2} for b < r and 0 otherwise.  By the symmetry U₁ ↦ −U₁,
K_r(j, k) = V_r(j, |k|) (twice that for k = 0) with V_r(j, k) = ∫_{τ_{j+1}(r)}^{τ_j(r)} hat_k(r t) f_d(t) dt,
and hat_k(rt) is linear on [(k − 1)h/r, kh/r] and [kh/r, (k + 1)h/r], so each piece is
p (G_d(β) − G_d(α)) + q (H_d(β) − H_d(α)).  K_0(j, k) = 1 for (j, k) = (0, 0) (X = 0), else 0.

Why it is strong in high dimension.  For the Gaussian the privacy loss depends on A alone, and the marginal
bound (the 1-D problem along A) is what a radial law's coordinate allows, with no memory of how far the point
lies from the axis; but most of a radial law's privacy loss comes from the growth of the sphere's volume, which B
carries (a shift moves the radius by about Δ·U₁ + Δ²/(2r), and the density's log by (d − 1)/r times that).
Keeping B in slabs restores it: at ε = 1, δ = 1e-3, ‖x‖₂, 4 nodes per Δ, the LP's value is 1.917 at d = 2,
7.00 at d = 10 and 24.8 at d = 100, against the audited radial laws' 1.944, 7.037 and 25.59 (the shell-pair
relaxation of earlier versions reached 1.870, 5.17 and 13.7 at its finest).

The LP (a proposal; its dual is checked, never trusted).  Columns: the mass at r = 0, masses at radii on a grid
(column generation adds the radii where φ dips below the LP's value, :func:`certify_slabs` locating them), the
mass beyond the window (priced L(outer), in no row), one budget share t_m per row of a subset of the admissible
rows (:func:`slab_rows`; row generation: the certificate above holds for any family F, μ = 0 off it, so the LP may
keep only some rows and add those its law violates, :func:`violated_rows`, :func:`seed_rows`); rows
(Σ_i m_i (K_{r_i}(m) − e^ε K_{r_i}(m − n)))/δ − t_m <= 0, Σ t <= 1, Σ m = 1; the objective E L / L_max.  The
multipliers are μ_m = −(row dual) · L_max/δ.  At δ < :data:`SMALL_DELTA` the builder is named
``radial_slabs_small_delta`` (the default profile sends it to HiGHS's interior point).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp

from optmech.exact.sphere import abs_coordinate_mean, cdf_error, sphere_cdf
from optmech.lp import LinearProgram

__all__ = ["SMALL_DELTA", "SlabRelaxation", "build_slab_relaxation", "certify_slabs", "lagrangian_lower", "multiplier_max",
           "slab_edges", "slab_kernel", "seed_rows", "slab_row_values", "slab_rows", "sphere_first_moment",
           "violated_rows"]


#: Below this δ the LP goes to HiGHS's interior point (its builder name ``radial_slabs_small_delta``).
SMALL_DELTA = 1e-4


def sphere_first_moment(d: int, t) -> np.ndarray:
    """H_d(t) = E[U₁ 1{U₁ <= t}] = −c_d (1 − t²)^{(d−1)/2} (module docstring), t clipped to [−1, 1]."""
    c = 0.25 * sum(abs_coordinate_mean(d))  # c_d = E|U₁|/2, the enclosure's midpoint
    t = np.clip(np.asarray(t, dtype=float), -1.0, 1.0)
    w = (1.0 - t) * (1.0 + t)
    return -c * np.power(w, 0.5 * (d - 1))


def _tau(b: np.ndarray, r: np.ndarray) -> np.ndarray:
    """τ_b(r) = (1 − b²/r²)^{1/2} for b < r, else 0 (elementwise, broadcast)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = b / r
        tau = np.where(q < 1.0, np.sqrt(np.maximum((1.0 - q) * (1.0 + q), 0.0)), 0.0)
    return np.where(b <= 0, 1.0, tau)


def slab_edges(beta: float, outer: float, first: float = 0.0) -> np.ndarray:
    """Slab edges b_0 = 0 < b_1 < … < b_J: ``first`` (rounded down to a multiple of β; none if 0), then steps of
    β up to the first edge >= ``outer``; the slab [b_J, ∞) past them carries no row."""
    top = int(math.ceil(outer / beta))
    lo = int(math.floor(first / beta))
    return beta * np.concatenate([[0.0], np.arange(max(lo, 1), top + 1, dtype=float)])


def _enumerate(lo_idx: np.ndarray, hi_idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, value) for every integer value in [lo_idx[q], hi_idx[q]] of every q (empty where hi < lo)."""
    count = np.maximum(hi_idx - lo_idx + 1, 0)
    owner = np.repeat(np.arange(lo_idx.size), count)
    value = lo_idx[owner] + (np.arange(owner.size) - np.repeat(np.cumsum(count) - count, count))
    return owner, value


def slab_kernel(d: int, r: np.ndarray, n: int, edges: np.ndarray) -> tuple[np.ndarray, ...]:
    """K_r(j, k) for the radii ``r`` (> 0) as (radius index, j, k, value), in floats (module docstring), for
    the slabs [b_j, b_{j+1}) of ``edges`` and the last one [b_J, ∞), every node k >= 0 with a nonzero value
    (K_r(j, −k) = K_r(j, k))."""
    r = np.asarray(r, dtype=float)
    h = 1.0 / n
    edges = np.append(np.asarray(edges, dtype=float), np.inf)
    # (i, j) pairs with b_j < r_i
    ii, jj = np.nonzero(edges[None, :-1] < r[:, None])
    rr = r[ii]
    t_hi = _tau(edges[jj], rr)
    t_lo = _tau(edges[jj + 1], rr)
    rep, k = _enumerate(np.floor(rr * t_lo / h).astype(np.int64), np.ceil(rr * t_hi / h).astype(np.int64))
    rr, lo, hi = rr[rep], t_lo[rep], t_hi[rep]
    val = np.zeros(k.size)
    for p_lo, p_hi, a, b in ((k - 1, k, -(k - 1.0), 1.0), (k, k + 1, k + 1.0, -1.0)):
        alpha = np.maximum(lo, np.maximum(p_lo, 0) * h / rr)
        omega = np.minimum(hi, p_hi * h / rr)
        ok = omega > alpha
        g = sphere_cdf(d, omega[ok]) - sphere_cdf(d, alpha[ok])
        m = sphere_first_moment(d, omega[ok]) - sphere_first_moment(d, alpha[ok])
        val[ok] += a[ok] * g + b * (rr[ok] / h) * m
    val = np.where(k == 0, 2.0 * val, val)
    keep = val > 0
    return ii[rep][keep], jj[rep][keep], k[keep], val[keep]


@dataclasses.dataclass
class SlabRelaxation:
    """The LP of the module docstring and what its certificate needs."""

    lp: LinearProgram
    rows: np.ndarray  # (F, 2): (j, k) of each hockey-stick row
    n: int
    edges: np.ndarray
    slabs: int  # J: the rows' slabs are 0 .. J − 1, and slab J = [b_J, ∞) has none
    outer: float
    dim: int
    power: int
    epsilon: float
    delta: float
    scale: float
    radii: np.ndarray


def slab_rows(n: int, edges: np.ndarray, outer: float) -> np.ndarray:
    """Every admissible hockey-stick row (j, k) of the relaxation with n nodes per sensitivity and slab edges
    ``edges`` (shape (F, 2), slab-major, k increasing): those whose test functions ψ_{jk} and ψ_{j,k−n} have
    their supports (|a| <= (|k| + 1) h, b <= b_{j+1}) inside the window of radius ``outer``."""
    h = 1.0 / n
    edges = np.asarray(edges, dtype=float)
    kmax = int(math.ceil(outer / h)) + 1

    def inside(j, k):
        return np.hypot((np.abs(k) + 1) * h, edges[j + 1]) <= outer

    jg, kg = np.meshgrid(np.arange(edges.size - 1), np.arange(-kmax, kmax + 1), indexing="ij")
    jg, kg = jg.ravel(), kg.ravel()
    ok = inside(jg, kg) & inside(jg, kg - n)
    return np.stack([jg[ok], kg[ok]], axis=1)


def _row_index(rows: np.ndarray, slabs: int, NA: int, kmax: int) -> np.ndarray:
    """A table from (j, k) (flattened as j·NA + k + kmax) to the position of that row in ``rows``, −1 elsewhere."""
    rid = np.full((slabs + 1) * NA, -1, dtype=np.int64)
    rid[rows[:, 0] * NA + rows[:, 1] + kmax] = np.arange(rows.shape[0])
    return rid


def build_slab_relaxation(power: int, epsilon: float, delta: float, d: int, n: int, edges: np.ndarray, outer: float,
                          radii: np.ndarray, start: tuple | None = None,
                          rows: np.ndarray | None = None) -> SlabRelaxation:
    """The LP that proposes the multipliers: masses at 0 and at ``radii`` (in (0, outer]), the mass beyond
    ``outer`` priced L(outer) in no row, one budget share per row (module docstring); ``edges`` from
    :func:`slab_edges`.  ``rows`` ((j, k) pairs) keeps only those of the admissible rows (:func:`slab_rows`; all by
    default): a relaxation of the relaxation, whose multipliers are zero on the rows left out, so its certificate
    is as valid (row generation, :func:`slab_row_values`).  ``start`` = (an earlier relaxation whose rows are
    among these, its solution's ``RawSolution.basis``) warm-starts the simplex (:func:`_extend_basis`)."""
    h = 1.0 / n
    edges = np.asarray(edges, dtype=float)
    slabs = edges.size - 1
    radii = np.unique(np.asarray(radii, dtype=float))
    radii = radii[(radii > 0) & (radii <= outer)]
    ii, jj, kk, val = slab_kernel(d, radii, n, edges)
    kmax = int(math.ceil(outer / h)) + 1
    NA = 2 * kmax + 1 + n
    every = slab_rows(n, edges, outer)
    if rows is not None:
        chosen = np.zeros((slabs + 1) * NA, dtype=bool)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
        fits = (rows[:, 0] >= 0) & (rows[:, 0] <= slabs) & (np.abs(rows[:, 1]) <= kmax)
        chosen[rows[fits, 0] * NA + rows[fits, 1] + kmax] = True
        every = every[chosen[every[:, 0] * NA + every[:, 1] + kmax]]
    rows = every
    F = rows.shape[0]
    rid = _row_index(rows, slabs, NA, kmax)
    c = math.exp(epsilon)
    cols0 = 1  # column 0: the mass at r = 0
    ent_r, ent_c, ent_v = [], [], []
    for kk_sign in (1, -1):
        if kk_sign == -1:
            sel = kk > 0
            i_, j_, k_, v_ = ii[sel], jj[sel], -kk[sel], val[sel]
        else:
            i_, j_, k_, v_ = ii, jj, kk, val
        # + K_r(j, k) on row (j, k); − e^ε K_r(j, k) on row (j, k + n)
        for shift, coef in ((0, 1.0), (n, -c)):
            kq = k_ + shift
            good = np.abs(kq) <= kmax
            rr_ = rid[j_[good] * NA + kq[good] + kmax]
            use = rr_ >= 0
            ent_r.append(rr_[use])
            ent_c.append(cols0 + i_[good][use])
            ent_v.append(coef * v_[good][use])
    # r = 0: ψ_{00}(0) = 1, ψ_{0,0}(0 + w) = ψ_{0,−n}(0): rows (0, 0) gets +1, row (0, n) gets −e^ε
    for k_, coef in ((0, 1.0), (n, -c)):
        q = rid[0 * NA + k_ + kmax]
        if q >= 0:
            ent_r.append(np.array([q]))
            ent_c.append(np.array([0]))
            ent_v.append(np.array([coef]))
    m_cols = cols0 + radii.size + 1
    N = m_cols + F
    block = sp.csr_array((np.concatenate(ent_v) / delta, (np.concatenate(ent_r), np.concatenate(ent_c))), shape=(F, N))
    block = block + sp.csr_array((-np.ones(F), (np.arange(F), m_cols + np.arange(F))), shape=(F, N))
    budget = sp.csr_array((np.ones(F), (np.zeros(F, dtype=np.int64), m_cols + np.arange(F))), shape=(1, N))
    norm = sp.csr_array((np.ones(m_cols), (np.zeros(m_cols, dtype=np.int64), np.arange(m_cols))), shape=(1, N))
    A = sp.vstack([block, budget, norm]).tocsc()
    lower = np.full(F + 2, -np.inf)
    upper = np.zeros(F + 2)
    upper[F] = 1.0
    lower[F + 1] = upper[F + 1] = 1.0
    prices = np.concatenate([[0.0], radii ** power, [outer ** power]])
    scale = float(prices.max())
    lp = LinearProgram(
        c=np.concatenate([prices / scale, np.zeros(F)]), A=sp.csc_array(A), row_lower=lower, row_upper=upper,
        col_lower=np.zeros(N), col_upper=np.ones(N),
        row_blocks={"slabs": slice(0, F), "budget": slice(F, F + 1), "normalisation": slice(F + 1, F + 2)},
        col_blocks={"m": slice(0, m_cols), "t": slice(m_cols, N)},
        # small δ: rows scaled by 1/δ and masses down to e^(−40), where HiGHS's interior point took a fifth of its
        # dual simplex's time (d = 2, ε = 1, δ = 1e-6: 2.9 s against 14 s; at δ = 1e-3 the simplex is faster)
        meta={"builder": "radial_slabs_small_delta" if delta < SMALL_DELTA else "radial_slabs", "dim": int(d),
              "keep_basis": True,
              "nodes_per_sensitivity": int(n),
              "slab_width": float(edges[-1] - edges[-2]), "slabs": slabs},
    )
    model = SlabRelaxation(lp, rows, int(n), edges, slabs, float(outer), int(d), int(power), float(epsilon),
                           float(delta), scale, radii)
    if start is not None and start[1] is not None:
        basis = _extend_basis(start[0], model, start[1])
        if basis is not None:
            lp.meta["start_basis"] = basis
    return model


def _row_keys(*row_sets: np.ndarray) -> list[np.ndarray]:
    """One integer per row (j, k) for each of ``row_sets``, on a common scale, increasing with (j, k) in
    lexicographic order (the order :func:`slab_rows` gives), for membership tests and sorted search."""
    base = 1 + max(int(np.abs(r[:, 1]).max(initial=0)) for r in row_sets)
    return [r[:, 0] * (2 * base + 1) + r[:, 1] + base for r in row_sets]


def _extend_basis(old: SlabRelaxation, new: SlabRelaxation, basis: tuple) -> tuple | None:
    """``basis`` (HiGHS status codes of ``old``'s columns and rows) mapped into ``new``: the old radii and rows
    where they now are (both sorted), the added radii and the added rows' budget shares at their lower bound 0
    (code 0), the added rows basic (code 1: their slack in the basis, so the count of basic variables stays the
    number of rows).  The new columns at zero keep the old point primal feasible for the old rows; added rows it
    violates leave it dual feasible, where the dual simplex starts.  None unless the resolution and slabs are the
    same and every old radius and row is among the new."""
    cols, rows = (np.asarray(v) for v in basis)
    F0, F1 = old.rows.shape[0], new.rows.shape[0]
    if (old.n != new.n or not np.array_equal(old.edges, new.edges) or old.outer != new.outer
            or rows.size != old.lp.rows or cols.size != old.lp.cols or F0 > F1):
        return None
    pos = np.searchsorted(new.radii, old.radii)
    if pos.size and (pos[-1] >= new.radii.size or not np.array_equal(new.radii[pos], old.radii)):
        return None
    key_old, key_new = _row_keys(old.rows, new.rows)
    at = np.searchsorted(key_new, key_old)
    if at.size and (at[-1] >= F1 or not np.array_equal(key_new[np.minimum(at, F1 - 1)], key_old)):
        return None
    R0, R1 = old.radii.size, new.radii.size
    out = np.zeros(new.lp.cols, dtype=cols.dtype)
    out[0] = cols[0]
    out[1 + pos] = cols[1: 1 + R0]
    out[1 + R1] = cols[1 + R0]  # the mass beyond the window
    out[2 + R1 + at] = cols[2 + R0:]  # the budget shares of the old rows
    row_out = np.ones(new.lp.rows, dtype=rows.dtype)
    row_out[at] = rows[:F0]
    row_out[F1:] = rows[F0:]  # the budget and the normalisation
    return out, row_out


def slab_row_values(model: SlabRelaxation, x: np.ndarray, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, x_m) for the rows ``rows`` (default: every admissible row, :func:`slab_rows`): x_m = E ψ_m(X) −
    e^ε E ψ_m(X + w) for the law of the LP's solution ``x`` (the masses at 0 and at ``model.radii``; the mass
    beyond the window is in no row).  A row left out of the LP with x_m > 0 is one the law violates, which row
    generation adds; the values are floats (they choose rows, they certify nothing)."""
    n, edges = model.n, model.edges
    h = 1.0 / n
    kmax = int(math.ceil(model.outer / h)) + 1
    if rows is None:
        rows = slab_rows(n, edges, model.outer)
    x = np.asarray(x, dtype=float)
    m = np.maximum(x[1: 1 + model.radii.size], 0.0)
    use = m > 0
    ii, jj, kk, val = slab_kernel(model.dim, model.radii[use], n, edges)
    # G[j, k + kmax + n] = E ψ_{jk}(X) for k = −kmax − n .. kmax (zero beyond the table)
    G = np.zeros((edges.size, 2 * kmax + 1 + n))
    w = m[use][ii] * val
    inside = kk <= kmax
    np.add.at(G, (jj[inside], kk[inside] + kmax + n), w[inside])
    neg = inside & (kk > 0)
    np.add.at(G, (jj[neg], -kk[neg] + kmax + n), w[neg])
    G[0, kmax + n] += max(float(x[0]), 0.0)
    j, k = rows[:, 0], rows[:, 1]
    return rows, G[j, k + kmax + n] - math.exp(model.epsilon) * G[j, k - n + kmax + n]


def violated_rows(model: SlabRelaxation, x: np.ndarray | None, tolerance: float) -> np.ndarray | None:
    """The admissible rows (:func:`slab_rows`) that ``model`` leaves out and at which the law of its LP's solution
    ``x`` has x_m > ``tolerance``·δ (row generation: the rows to add), or None when there are none or ``x`` is
    None."""
    if x is None:
        return None
    every = slab_rows(model.n, model.edges, model.outer)
    if every.shape[0] == model.rows.shape[0]:
        return None
    key, kept = _row_keys(every, model.rows)
    out = every[~np.isin(key, kept)]
    _, v = slab_row_values(model, x, out)
    out = out[v > tolerance * model.delta]
    return out if out.shape[0] else None


def seed_rows(model: SlabRelaxation, row_dual: np.ndarray | None, x: np.ndarray | None, n: int, edges: np.ndarray,
              reach: int, tolerance: float) -> np.ndarray | None:
    """The first rows of a finer relaxation (n nodes, slab edges ``edges``, the same window) after ``model``, whose LP
    gave ``row_dual`` and ``x``: the admissible rows whose node and slab lie, on ``model``'s grid, within ``reach``
    nodes and slabs of a row with a nonzero multiplier, and the rows the law ``x`` violates at the finer resolution
    (:func:`violated_rows`).  None (every row) without duals or a primal.  Any rows give a valid certificate; these
    decide only how much of the relaxation the first LP sees."""
    if row_dual is None or x is None:
        return None
    F = model.rows.shape[0]
    mu = np.maximum(-np.asarray(row_dual[:F], dtype=float), 0.0)
    used = model.rows[mu > 1e-9 * max(float(mu.max(initial=0.0)), 1e-300)]
    edges = np.asarray(edges, dtype=float)
    every = slab_rows(n, edges, model.outer)
    # a table of the coarse (slab, node) cells within the reach of a used row, and each fine row's coarse cell
    kmax = int(math.ceil(model.outer * model.n)) + 2 + reach
    table = np.zeros((model.edges.size + 2 * reach + 1, 2 * kmax + 1), dtype=bool)
    for dj in range(-reach, reach + 1):
        for dk in range(-reach, reach + 1):
            table[np.clip(used[:, 0] + dj + reach, 0, table.shape[0] - 1),
                  np.clip(used[:, 1] + dk + kmax, 0, table.shape[1] - 1)] = True
    mid = 0.5 * (edges[every[:, 0]] + edges[every[:, 0] + 1])
    j_c = np.clip(np.searchsorted(model.edges, mid, side="right") - 1, 0, model.edges.size - 1)
    k_c = np.rint(every[:, 1] * model.n / n).astype(np.int64)
    near = every[table[j_c + reach, np.clip(k_c + kmax, 0, 2 * kmax)]]
    finer = dataclasses.replace(model, n=int(n), edges=edges, rows=near)
    extra = violated_rows(finer, x, tolerance)
    return near if extra is None else np.concatenate([near, extra])


# -- the certificate -----------------------------------------------------------------------------------------
_U = 2.0**-53


def _first_moment_error(d: int) -> float:
    """An absolute error bound of :func:`sphere_first_moment`'s float value: (1 − t)(1 + t) is within 3u
    relative, its power (d − 1)/2 carries that (d − 1)/2 times plus the power's own ulps (within 2u), c_d's float is
    within 2^-49 relative, and |H_d| <= c_d; so the error is below c_d ((1.5 d + 8) u + 2^-48), u = 2^-53."""
    c = 0.5 * abs_coordinate_mean(d)[1]
    return c * ((1.5 * d + 8.0) * _U + 2.0**-48)


class _Dual:
    """The weights w(j, k), k >= 0, of the folded dual function (:func:`certify_slabs`)."""

    def __init__(self, model: SlabRelaxation, mu: np.ndarray, c_hi: float):
        n = model.n
        kmax = int(math.ceil(model.outer * n)) + 1
        self.kmax = kmax
        MU = np.zeros((model.slabs + 1, 2 * kmax + 1 + n))
        MU[model.rows[:, 0], model.rows[:, 1] + kmax] = mu
        C = MU[:, : 2 * kmax + 1] - c_hi * MU[:, n: 2 * kmax + 1 + n]  # c_{jk}, k = −kmax .. kmax
        self.c_err = 3.0 * _U * float(np.max(MU[:, : 2 * kmax + 1] + c_hi * MU[:, n: 2 * kmax + 1 + n]))
        w = C[:, kmax:] + np.concatenate([np.zeros((C.shape[0], 1)), C[:, kmax - 1::-1]], axis=1)
        w[:, 0] = 2.0 * C[:, kmax]
        # one zero column past kmax so that ranges may reach it; row `slabs` (B beyond the window) is zero
        self.w = np.concatenate([w, np.zeros((w.shape[0], 2))], axis=1)
        self.w_err = 2.0 * self.c_err + 2.0 * _U * float(np.abs(self.w).max(initial=0.0))
        self.top = self.w.shape[1] - 1

    def block_range(self, j0, j1, k0, k1) -> np.ndarray:
        """max − min of w over the blocks [j0, j1] × [k0, k1] (clipped to the table)."""
        j0 = np.clip(j0, 0, self.w.shape[0] - 1)
        j1 = np.clip(j1, 0, self.w.shape[0] - 1)
        k0 = np.clip(k0, 0, self.top)
        k1 = np.clip(k1, 0, self.top)
        out = np.zeros(j0.size)
        hi = np.full(j0.size, -np.inf)
        lo = np.full(j0.size, np.inf)
        span = int(np.max(j1 - j0, initial=0))
        for dj in range(span + 1):
            jj = np.minimum(j0 + dj, j1)
            owner, k = _enumerate(k0, k1)
            v = self.w[jj[owner], k]
            np.maximum.at(hi, owner, v)
            np.minimum.at(lo, owner, v)
        ok = hi >= lo
        out[ok] = hi[ok] - lo[ok]
        return out


def _point_lower(model: SlabRelaxation, dual: _Dual, r0: np.ndarray) -> np.ndarray:
    """Proven lower bounds of φ(r0): the closed forms less their float errors."""
    d, n = model.dim, model.n
    h = 1.0 / n
    Q = r0.size
    err_g, err_h = cdf_error(d), _first_moment_error(d)
    # -- φ(r0) less L: the folded weights against the kernel at r0 (r0 = 0: the point X = 0 has A = B = 0)
    at = np.zeros(Q)
    err = np.zeros(Q)
    pos = r0 > 0
    if pos.any():
        idx = np.flatnonzero(pos)
        ii, jj, kk, val = slab_kernel(d, r0[idx], n, model.edges)
        ok = kk <= dual.top
        wv = dual.w[np.minimum(jj, dual.w.shape[0] - 1), np.minimum(kk, dual.top)] * ok
        wv = np.where(kk == 0, 0.5 * wv, wv)  # slab_kernel doubles k = 0; w(j, 0) = 2 c_{j0} already does
        np.add.at(at, idx[ii], wv * val)
        # each value: two pieces of |p| ΔG + |q| ΔH with |p| <= k + 1, |q| = r/h, each difference within
        # 2 err_g + 2 err_h plus the boundaries' misplacement (fringe terms below), and the products and sums
        e_v = 2.0 * ((kk + 2.0) * 2.0 * err_g + (r0[idx][ii] / h) * 2.0 * err_h) + 8.0 * _U * np.abs(val)
        np.add.at(err, idx[ii], np.abs(wv) * e_v + (np.abs(val) + 1.0) * dual.w_err)
        cnt = np.bincount(ii, minlength=idx.size)
        err[idx] += (cnt + 2.0) * _U * np.bincount(ii, weights=np.abs(wv * val), minlength=idx.size)
    zero = ~pos
    at[zero] = 0.5 * dual.w[0, 0]
    err[zero] = dual.w_err
    low_cost = r0 if model.power == 1 else r0 * r0 * (1.0 - 2.0 * _U)
    total_err = err + 8.0 * _U * (np.abs(at) + low_cost)
    return low_cost + at - total_err


@dataclasses.dataclass
class _Fringes:
    """The fringes F_j = [τ_j(r0), τ_j(r1)] of sub-intervals (:func:`certify_slabs`), one entry per (interval,
    edge j >= 1 reached): ``q`` the interval, ``j`` the edge, ``t0``/``t1`` the float τ_j at the ends and ``w0``/``w1``
    their error bounds, ``p`` an upper bound of P(F_j widened), ``p_band`` one of the mass of the band
    [τ̃_j(r0) − w0, τ̃_j(r0) + w0] where the float slab limits at r0 may misplace a point, (``j_lo``, ``j_hi``) the
    slabs and (``k_lo``, ``k_hi``) the nodes a point of F_j can reach at any r of the interval, ``two`` where those
    slabs are j − 1 and j only."""

    q: np.ndarray
    j: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    w0: np.ndarray
    w1: np.ndarray
    p: np.ndarray
    p_band: np.ndarray
    j_lo: np.ndarray
    j_hi: np.ndarray
    k_lo: np.ndarray
    k_hi: np.ndarray
    two: np.ndarray


def _fringes(model: SlabRelaxation, a0: np.ndarray, a1: np.ndarray) -> _Fringes:
    d, h = model.dim, 1.0 / model.n
    err_g = cdf_error(d)
    edges = np.append(model.edges, np.inf)
    qi, jj = np.nonzero((edges[None, 1:-1] < a1[:, None]))
    jj = jj + 1
    t0 = _tau(edges[jj], a0[qi])
    t1 = _tau(edges[jj], a1[qi])
    # |τ̃ − τ| <= 6u / τ̃ for τ̃ > 0 (δ(τ²) <= 6u), and τ <= sqrt(6u) where τ̃ = 0
    w0 = np.minimum(np.where(t0 > 0, 6.0 * _U / np.maximum(t0, 1e-300), math.sqrt(6.0 * _U)), 1.0)
    w1 = np.minimum(np.where(t1 > 0, 6.0 * _U / np.maximum(t1, 1e-300), math.sqrt(6.0 * _U)), 1.0)
    t0w = np.maximum(t0 - w0, 0.0)
    t1w = np.minimum(t1 + w1, 1.0)
    p = (sphere_cdf(d, t1w) + err_g) - (sphere_cdf(d, t0w) - err_g)
    p_band = (sphere_cdf(d, np.minimum(t0 + w0, t1w)) + err_g) - (sphere_cdf(d, t0w) - err_g)
    s_lo = np.sqrt(np.maximum((1.0 - t1w) * (1.0 + t1w), 0.0)) * (1 - 4 * _U)
    s_hi = np.sqrt(np.maximum((1.0 - t0w) * (1.0 + t0w), 0.0)) * (1 + 4 * _U)
    j_lo = np.searchsorted(model.edges, a0[qi] * s_lo * (1 - 4 * _U), side="right") - 1
    j_hi = np.searchsorted(model.edges, a1[qi] * s_hi * (1 + 4 * _U), side="right") - 1
    k_lo = np.maximum(np.floor(a0[qi] * t0w / h * (1 - 4 * _U)).astype(np.int64), 0)
    k_hi = np.ceil(a1[qi] * t1w / h * (1 + 4 * _U)).astype(np.int64)
    two = (j_lo >= jj - 1) & (j_hi <= jj)
    return _Fringes(qi, jj, t0, t1, w0, w1, np.maximum(p, 0.0), np.maximum(p_band, 0.0), j_lo, j_hi, k_lo, k_hi, two)


def _fringe_ranges(model: SlabRelaxation, dual: _Dual, fr: _Fringes) -> tuple[np.ndarray, np.ndarray]:
    """(most, least) per fringe, bounds of what a point of it gains by changing slab, widened by the weights' float
    error: where ``fr.two``, max |D_j| and min D_j over the nodes k_lo .. k_hi, D_j(k) = w(j, k) − w(j − 1, k) (D_j is
    linear between nodes, so its extremes over an a-range lie at nodes); elsewhere ± the range of w over the slabs
    and nodes the points can reach."""
    most = np.empty(fr.q.size)
    least = np.empty(fr.q.size)
    two = fr.two
    if two.any():
        own, k = _enumerate(fr.k_lo[two], fr.k_hi[two])
        jt = np.minimum(fr.j[two][own], model.slabs)
        kc = np.minimum(k, dual.top)
        diff = dual.w[jt, kc] - dual.w[jt - 1, kc]
        count = int(two.sum())
        hi, lo = np.zeros(count), np.full(count, np.inf)
        np.maximum.at(hi, own, np.abs(diff))
        np.minimum.at(lo, own, diff)
        most[two], least[two] = hi + 2.0 * dual.w_err, lo - 2.0 * dual.w_err
    other = ~two
    if other.any():
        most[other] = dual.block_range(np.minimum(fr.j_lo[other] - 1, model.slabs),
                                       np.minimum(fr.j_hi[other] + 1, model.slabs),
                                       fr.k_lo[other] - 1, fr.k_hi[other] + 1) + 2.0 * dual.w_err
        least[other] = -most[other]
    return most, least


def _segments(model: SlabRelaxation, dual: _Dual, a0: np.ndarray, a1: np.ndarray) -> tuple[np.ndarray, ...]:
    """The slope terms' pieces: for each (sub-interval q, slab j nonempty at a0[q]) and each piece [kh, (k+1)h] a
    segment [a0 t, a1 t] of that slab may meet (and one past), (q, j clipped to the table, k, the slab's t-range
    [lo, hi] at a0)."""
    h = 1.0 / model.n
    edges = np.append(model.edges, np.inf)
    qi, jj = np.nonzero(edges[None, :-1] < a1[:, None])  # slabs reached within the interval
    lo_t = _tau(edges[jj + 1], a0[qi])
    hi_t = _tau(edges[jj], a0[qi])
    has = hi_t > lo_t
    q2, j2, lo2, hi2 = qi[has], np.minimum(jj[has], dual.w.shape[0] - 1), lo_t[has], hi_t[has]
    own, k = _enumerate(np.maximum(np.floor(a0[q2] * lo2 / h).astype(np.int64) - 1, 0),
                        np.ceil(a1[q2] * hi2 / h).astype(np.int64) + 1)
    return q2[own], j2[own], k, lo2[own], hi2[own]


def _first_order_drift(model: SlabRelaxation, dual: _Dual, r0: np.ndarray, r1: np.ndarray) -> np.ndarray:
    """How far φ − L can fall from r0 to any r in [r0, r1] (at least): the slope and fringe terms of
    :func:`certify_slabs`' first-order enclosure; 0 where r1 = r0."""
    d, n = model.dim, model.n
    h = 1.0 / n
    Q = r0.size
    eta = r1 - r0
    err_h = _first_moment_error(d)
    # -- the slope term: η Σ_j Σ_pieces |w(j, k + 1) − w(j, k)| / h ∫ t f over the t where [r0 t, r1 t] meets the piece
    moving = eta > 0
    slope = np.zeros(Q)
    fringe = np.zeros(Q)
    if moving.any():
        mi = np.flatnonzero(moving)
        a0, a1 = r0[mi], r1[mi]
        qq, jx, k, lo, hi = _segments(model, dual, a0, a1)
        kc = np.minimum(k, dual.top - 1)
        dw = np.abs(dual.w[jx, kc + 1] - dual.w[jx, kc])
        dw = np.where(k >= dual.top, 0.0, dw) + 2.0 * dual.w_err
        alpha = np.maximum(lo, k * h / a1[qq])
        with np.errstate(divide="ignore"):  # r0 = 0: the segment [0, r1 t] meets every piece up to r1 t
            omega = np.minimum(hi, (k + 1) * h / a0[qq])
        good = omega > alpha
        m1 = sphere_first_moment(d, omega[good]) - sphere_first_moment(d, alpha[good]) + 2.0 * err_h
        contrib = np.zeros(k.size)
        contrib[good] = dw[good] / h * np.maximum(m1, 0.0) * (1.0 + 4.0 * _U)
        np.add.at(slope, mi[qq], contrib)
        slope[mi] *= eta[mi] * (1.0 + 4.0 * _U)
        # -- the fringes: where every point of F_j lies in slab j − 1 or j, the integrand is ±(W_j − W_{j−1});
        # elsewhere the range of w over the block the points can reach
        fr = _fringes(model, a0, a1)
        np.add.at(fringe, mi[fr.q], fr.p * _fringe_ranges(model, dual, fr)[0] * (1.0 + 4.0 * _U))
    return slope + fringe


def _drift(model: SlabRelaxation, dual: _Dual, r0: np.ndarray, r1: np.ndarray) -> np.ndarray:
    """How far φ can fall below φ(r0) on [r0, r1] (at least): η·max(0, −slope) + const of :func:`_enclosure`."""
    slope, const = _enclosure(model, dual, r0, r1)
    return (r1 - r0) * np.maximum(-slope, 0.0) * (1.0 + 4.0 * _U) + const


def _enclosure(model: SlabRelaxation, dual: _Dual, r0: np.ndarray, r1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slope, const) with φ(r) >= φ(r0) + (r − r0)·slope − const for every r in [r0, r1]: the linear enclosure of
    :func:`certify_slabs` where a sub-interval is short enough (r0 >= (r1/h + 2) η), the first-order one (slope 0)
    elsewhere; (0, 0) where r1 = r0."""
    d, h = model.dim, 1.0 / model.n
    eta = r1 - r0
    slope_out = np.zeros(r0.size)
    out = np.zeros(r0.size)
    linear = (r0 > 0) & (eta > 0) & (r0 >= (r1 / h + 2.0) * eta)
    first = ~linear & (eta > 0)
    if first.any():
        out[first] = _first_order_drift(model, dual, r0[first], r1[first])
    if not linear.any():
        return slope_out, out
    mi = np.flatnonzero(linear)
    a0, a1, eta_l = r0[mi], r1[mi], eta[mi]
    err_g, err_h = cdf_error(d), _first_moment_error(d)
    W, top = dual.w, dual.top
    coef = np.zeros(mi.size)
    const = np.zeros(mi.size)
    # -- slope: Σ_j ∫_{slab j at r0} t f(t) min{W_j' on [r0 t, r1 t]} dt, by the pieces' interiors and crossings
    qq, jx, k, lo_o, hi_o = _segments(model, dual, a0, a1)

    def piece_slope(kp):  # W_j' on [kp h, (kp + 1) h]; 0 past the table
        kc = np.clip(kp, 0, top - 1)
        return np.where((kp >= top) | (kp < 0), 0.0, (W[jx, kc + 1] - W[jx, kc]) / h)

    s_in = piece_slope(k)
    s_cross = np.minimum(piece_slope(k - 1), s_in)
    s_err = 2.0 * dual.w_err / h
    A0, A1 = a0[qq], a1[qq]

    def lower(alpha, omega, s):  # a lower bound of s ∫_alpha^omega t f_d (t within [lo, hi]), s within s_err
        alpha, omega = np.maximum(alpha, lo_o), np.minimum(omega, hi_o)
        meets = omega > alpha
        m = np.zeros(alpha.size)
        m[meets] = sphere_first_moment(d, omega[meets]) - sphere_first_moment(d, alpha[meets])
        m_lo = np.maximum(m - 2.0 * err_h, 0.0) * meets
        m_hi = (m + 2.0 * err_h) * meets
        s_lo = s - s_err
        return np.minimum(s_lo * m_lo, s_lo * m_hi) - 4.0 * _U * np.abs(s_lo) * m_hi

    part = lower(k * h / A0, (k + 1) * h / A1, s_in)  # the segment inside piece k
    part += np.where(k >= 1, lower(k * h / A1, k * h / A0, s_cross), 0.0)  # the segment across node k
    slope = np.zeros(mi.size)
    np.add.at(slope, qq, part)
    cnt = np.bincount(qq, minlength=mi.size)
    slope_abs = np.bincount(qq, weights=np.abs(part), minlength=mi.size)
    coef += slope - (cnt + 2.0) * _U * slope_abs
    # -- L's tangent: L(r) >= L(r0) + L'(r0)(r − r0), L convex
    coef += (np.ones(mi.size) if model.power == 1 else 2.0 * a0) * (1.0 - 4.0 * _U)
    # -- the fringes: linear in r − r0 where two slabs and the edge is inside the sphere at r0 (P concave, P(r0) = 0)
    fr = _fringes(model, a0, a1)
    most, least = _fringe_ranges(model, dual, fr)
    lin = fr.two & (fr.t0 > fr.w0)
    q_lin = fr.q[lin]
    b = model.edges[fr.j[lin]]
    r_lin = a0[q_lin]
    # P'(r0) = b^(d−1) / (J_d r0^d τ_j(r0)), 1/J_d = (d − 1) E|U₁| / 2, τ_j(r0) >= t0 − w0
    tangent = (0.5 * (d - 1) * abs_coordinate_mean(d)[1] * np.power(b / r_lin, d - 1) / (r_lin * (fr.t0[lin] - fr.w0[lin]))
               * (1.0 + (2 * d + 16) * _U))
    chord = (np.maximum(sphere_cdf(d, np.maximum(fr.t1[lin] - fr.w1[lin], 0.0)) - sphere_cdf(d, fr.t0[lin] + fr.w0[lin])
                        - 2.0 * err_g, 0.0) / eta_l[q_lin] * (1.0 - 4.0 * _U))
    dm = least[lin]
    np.add.at(coef, q_lin, np.where(dm >= 0, dm * chord * (1.0 - 4.0 * _U), dm * tangent * (1.0 + 4.0 * _U)))
    # the rest: a constant, −min(D, 0) on the fringe where not linear, the band where the float limits at r0 may
    # misplace a point counted twice with the range
    flat = np.where(lin, 0.0, fr.p * np.maximum(-least, 0.0))
    np.add.at(const, fr.q, (flat + 2.0 * fr.p_band * most) * (1.0 + 4.0 * _U))
    slope_out[mi] = coef
    out[mi] = const
    return slope_out, out


def lagrangian_lower(model: SlabRelaxation, row_dual: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                     at: np.ndarray | None = None) -> np.ndarray:
    """Proven lower bounds of the Lagrangian φ (:func:`certify_slabs`) from the LP's row duals: over each
    [r0[i], r1[i]] (r0 <= r1, in [0, outer]), φ(r0) less the enclosure's fall, what :func:`certify_slabs` branches
    on; with ``at`` (r0 <= at <= r1), the enclosure's own value at ``at`` (φ(r0) + (at − r0)·slope − const:
    linear where the interval is short, first order elsewhere), to check the enclosure against φ point by point."""
    dual, _ = _dual_of(model, row_dual)
    r0 = np.asarray(r0, dtype=float)
    r1 = np.asarray(r1, dtype=float)
    if at is None:
        return _point_lower(model, dual, r0) - _drift(model, dual, r0, r1)
    slope, const = _enclosure(model, dual, r0, r1)
    return _point_lower(model, dual, r0) + (np.asarray(at, dtype=float) - r0) * slope - const


def _multipliers(model: SlabRelaxation, row_dual: np.ndarray) -> np.ndarray:
    """μ = −(row dual)·L_max/δ on the hockey-stick rows (module docstring), clipped at 0."""
    F = model.rows.shape[0]
    return np.maximum(-np.asarray(row_dual[:F], dtype=float), 0.0) * (model.scale / model.delta)


def multiplier_max(model: SlabRelaxation, row_dual: np.ndarray) -> float:
    """Λ = max μ, the multipliers' bound in the certificate's weak duality (Λδ is what it subtracts)."""
    return float(_multipliers(model, row_dual).max(initial=0.0))


def _dual_of(model: SlabRelaxation, row_dual: np.ndarray) -> tuple[_Dual, float]:
    """The folded weights of the multipliers μ (:func:`_multipliers`), with e^ε rounded up; and Λ = max μ."""
    from optmech.costs.interval import WIDEN_LIBM, round_up

    mu = _multipliers(model, row_dual)
    return _Dual(model, mu, float(round_up(math.exp(model.epsilon), WIDEN_LIBM))), float(mu.max(initial=0.0))


def certify_slabs(model: SlabRelaxation, row_dual: np.ndarray, *, first: int = 4096, most: int = 2**22,
                  seconds: float = 10.0, tolerance: float = 1e-5, level: float | None = None) -> tuple[float, dict]:
    """A certified lower bound on V* (Δ = 1) from the LP's duals (module docstring), and what it rests on.

    φ(r) = L(r) + Σ_j ∫_{slab j at r} W_j(r t) f_d(t) dt over t >= 0, with W_j(a) = Σ_{k>=0} w(j, k) hat_k(a)
    the folded weights w(j, k) = c_{jk} + c_{j,−k} (k >= 1), w(j, 0) = 2 c_{j0}.  A t in slab j at r has
    τ_{j+1}(r) < t <= τ_j(r); as r grows, B = r (1 − t²)^{1/2} grows, so a t only moves up the slabs, across the
    fringes F_j(r) = (τ_j(r0), τ_j(r)] (τ_j nondecreasing in r).  On a sub-interval [r0, r1] (η = r1 − r0), for r
    in it, split the change of φ into L's, the slope part (each t keeps its slab at r0) and the fringe part
    (D_j = W_j − W_{j−1}, what a t of F_j(r) gains by moving up):

        φ(r) − φ(r0) = L(r) − L(r0) + Σ_j ∫_{slab j at r0} (W_j(rt) − W_j(r0 t)) f_d + Σ_j ∫_{F_j(r)} D_j(rt) f_d

    (where every t of F_j(r) moves one slab; a t that several F_j cover is counted in each below, which only
    lowers the bound).

    *Linear enclosure* (:func:`_enclosure`, where r0 >= (r1/h + 2) η, so that a segment [r0 t, r1 t] meets at most
    two pieces [kh, (k+1)h] of W_j): φ(r) >= φ(r0) + (r − r0) s − c on [r0, r1], hence inf φ over it is at least
    φ(r0) − η max(0, −s) − c, with

    - L(r) − L(r0) >= L'(r0)(r − r0) (L = r or r², convex);
    - slope: W_j is piecewise linear, so W_j(rt) − W_j(r0 t) >= (r − r0) t min{W_j' on [r0 t, r1 t]}; the t whose
      segment lies inside piece k (t ∈ [kh/r0, (k+1)h/r1]) get that piece's slope, those whose segment crosses
      node k (t ∈ [kh/r1, kh/r0]) the lesser slope of pieces k − 1 and k, each weighed by ∫ t f_d (H_d's
      differences);
    - fringes: where every t of F_j(r1) has its slab within {j − 1, j} at every r of the interval and the edge
      b_j lies inside the sphere of radius r0 (τ_j(r0) > 0), ∫_{F_j(r)} D_j(rt) f_d >= D_min P(r) with D_min the
      least D_j(k) over the nodes covering a = rt (D_j is linear between nodes) and P(r) = G_d(τ_j(r)) −
      G_d(τ_j(r0)).  P is concave on [b_j, ∞): with 1 − τ_j² = b_j²/r² and τ_j' = b_j²/(r³ τ_j),
      P'(r) = f_d(τ_j(r)) τ_j'(r) = b_j^{d−1}/(J_d r^d τ_j(r)), decreasing in r for every d >= 2, and P(r0) = 0;
      so (r − r0) P(r1)/η <= P(r) <= (r − r0) P'(r0), and D_min P(r) >= (r − r0) D_min·(P(r1)/η if D_min >= 0,
      else P'(r0)).  1/J_d = (d − 1) E|U₁|/2 (:func:`optmech.exact.sphere.abs_coordinate_mean`).  The other
      fringes (an edge passing the sphere's pole inside the interval, or points that may cross several slabs)
      enter c as P(F_j widened)·max(0, −D_min), resp. the range of w over the slabs and nodes the points can
      reach;
    - c also holds, twice, the band [τ̃_j(r0) − w, τ̃_j(r0) + w] where the float limits of the slabs at r0 may
      misplace a point (once in φ(r0), once in the slope part), times the largest |D_j| there.

    So the enclosure is second order where φ is smooth: its slope tracks φ'(r0), and a flat φ (the optimum's
    support) needs far fewer sub-intervals than a first-order one (d = 10, ε = 1, δ = 1e-3, 8 nodes: converged
    to 1e-5 in 2 s, where the first-order enclosure had not in 15 s).

    *First-order enclosure* (:func:`_first_order_drift`, the other sub-intervals): L(r) >= L(r0) and

        φ(r) − L(r) >= (φ(r0) − L(r0)) − η Σ_j Σ_k |w(j, k+1) − w(j, k)|/h ∫_{T_jk} t f_d − Σ_j P(F_j) ρ_j,

    because (slope) |W_j(rt) − W_j(r0 t)| <= η t sup |W_j'| on [r0 t, r1 t], and W_j' is the piece's slope on
    the pieces the segment meets (T_jk, the t of slab j at r0 whose segment meets piece k); and (fringes) on
    F_j = F_j(r1) the integrand W_{j'}(rt) − W_{j''}(rt) lies above −ρ_j: where every point of F_j has its B
    within [b_{j−1}, b_{j+1}) for every r of the interval, j', j'' ∈ {j − 1, j} and ρ_j = max_k |D_j(k)| over
    the nodes covering the a = rt of F_j; otherwise ρ_j is the range of w over the slabs and nodes a point of F_j
    can reach.  F_j is widened by the float error of τ (δ(τ²) <= 6u), which also covers the closed forms' slab
    limits at r0.

    At r0 = 0 the point X = 0 has A = B = 0, so φ(0) = L(0) + c_{00}.  The weights w carry the float error of
    c = μ − e^ε μ' (e^ε rounded up).  The closed forms' float errors are bounded piece by piece (|p| <= k + 1,
    |q| = r/h, G_d within cdf_error, H_d within :func:`_first_moment_error`).  Branch and bound: ``first``
    sub-intervals of [0, outer]; those whose bound lies more than ``tolerance`` (relative to the bound it gives,
    inf φ − Λδ: at small δ, Λδ may be far above it) below the least value of φ seen at a point (an estimate from
    above of inf φ) are halved while ``seconds`` last (the lowest first when not all fit), at most ``most``.
    With ``level`` (column generation), so are those whose bound lies below ``level`` while their left end lies
    above it: every dip of φ below ``level`` gets a point seen below it, not only the least one."""
    import time

    from optmech.costs.interval import round_down, round_up

    t0 = time.perf_counter()
    dual, lam = _dual_of(model, row_dual)
    outer = model.outer
    far = outer ** model.power * (1.0 - 2.0 * _U)
    # every interval keeps the lower bound of φ at its left end; a split evaluates φ at the midpoint only (the
    # left end of the new right half, and a point seen), and the drift of both halves
    cuts = np.linspace(0.0, outer, int(first) + 1)
    at_cuts = _point_lower(model, dual, cuts)
    r0, r1, p0 = cuts[:-1], cuts[1:], at_cuts[:-1]
    lows = p0 - _drift(model, dual, r0, r1)
    seen_r, seen_v = [cuts], [at_cuts]
    best = min(float(at_cuts.min()), far)
    rounds = 0
    per = (time.perf_counter() - t0) / r0.size  # seconds per split, measured
    while time.perf_counter() - t0 < seconds:
        split = lows < best - tolerance * max(abs(best - lam * model.delta), 1e-12)
        if level is not None:  # column generation: every dip below the level, not only the least
            split |= (lows < level) & (p0 >= level)
        if not split.any() or r0.size + int(split.sum()) > most:
            break
        # split the lowest intervals that fit the seconds left
        fit = int((seconds - (time.perf_counter() - t0)) / (per * 1.2))
        if fit < int(split.sum()):
            if fit < 1:
                break
            low_idx = np.flatnonzero(split)
            keep_low = low_idx[np.argsort(lows[low_idx])[:fit]]
            split = np.zeros_like(split)
            split[keep_low] = True
        t_round = time.perf_counter()
        a, b, pa = r0[split], r1[split], p0[split]
        m = 0.5 * (a + b)
        pm = _point_lower(model, dual, m)
        keep = ~split
        r0 = np.concatenate([r0[keep], a, m])
        r1 = np.concatenate([r1[keep], m, b])
        p0 = np.concatenate([p0[keep], pa, pm])
        lows = np.concatenate([lows[keep], np.concatenate([pa, pm])
                               - _drift(model, dual, np.concatenate([a, m]), np.concatenate([m, b]))])
        seen_r.append(m)
        seen_v.append(pm)
        best = min(best, float(pm.min()))
        rounds += 1
        per = max(per, (time.perf_counter() - t_round) / a.size)
    rounds_left = bool((lows < best - tolerance * max(abs(best - lam * model.delta), 1e-12)).any())
    inf_phi = min(float(lows.min()), far)
    value = float(round_down(inf_phi - float(round_up(lam * model.delta))))
    seen_r, seen_v = np.concatenate(seen_r), np.concatenate(seen_v)
    return value, {"multiplier_max": lam, "phi_inf": inf_phi, "phi_seen": best, "subintervals": int(r0.size),
                   "rounds": rounds, "seconds": time.perf_counter() - t0, "seen_radii": seen_r, "seen_values": seen_v,
                   "rounds_left": rounds_left, "radii": int(model.radii.size)}
