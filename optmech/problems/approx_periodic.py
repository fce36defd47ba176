r"""Aggregated (ε, δ) LP on ℤ: one hockey-stick row per shift and residue class of a middle zone [derived].

The exact LP of :mod:`optmech.problems.approx` [GV13, (18)] has one epigraph row per shift v and
point x.  Its optimum for |x| is periodic with decay, p(x + Δ) = e^{−ε} p(x), between the centre
and the end T ≈ Δ(n + 1) of the support (n = ln(1 + (e^ε − 1)/(2δ))/ε, [GV13, (58)–(60)]), and the
optimal row multipliers y_{v,x} (|v| < Δ) are constant over x = kΔ + r in that middle zone.  This
module builds the *aggregated* LP whose dual is exactly that restricted dual, as a relaxation.

Zones.  With L = band·Δ and m >= 1 whole periods, the positive zone is Z₊ = [L, U], U = L + mΔ − 1,
and Z₋ = [−U, −L] its mirror image; the class (z, j) of zone z = [L_z, L_z + mΔ − 1] and offset
0 <= j < Δ is {L_z + kΔ + j : 0 <= k < m} (m points).  The default m is the largest with
U <= min(N, T − outer_band·Δ), T = ⌈Δ(n + 1)⌉, so the rows near the centre and near the end of
the support stay per point.

The LP (columns p, far, P, t, τ, T_v; the ±x reduction for an even cost as in
:func:`optmech.problems.approx.build_approx`, which keeps the shifts v > 0):

* per-point rows p(x) − e^ε p(x + v) <= t_{v,x} for |v| = Δ at every box point x whose partner
  x + v is in the box, and for the other kept shifts at those x outside Z₊ ∪ Z₋;
* class rows, for each kept shift 0 < |v| < Δ, zone z and offset j:
  Σ_{x ∈ (z, j)} (p(x) − e^ε p(x + v)) <= τ_{v,z,j}, written with the aggregate columns
  P_{z,j} = Σ_{x ∈ (z, j)} p(x) (one equality row each) as below;
* the budget Σ_x t_{v,x} + Σ_{z,j} τ_{v,z,j} + T_v <= δ per kept shift, the edge rows (T_v) and
  the normalisation Σ p + far = 1 of build_approx (``edge_rows``), the same far price.

Shift identity (the exact correction).  Let 0 < |v| < Δ, j' = (j + v) mod Δ.  Then

.. math::
   \sum_{k=0}^{m-1} p(L_z + k\Delta + j + v) =
   \begin{cases}
     P_{z,j'} & 0 \le j + v < \Delta,\\
     P_{z,j'} - p(L_z + j') + p(L_z + m\Delta + j') & j + v \ge \Delta,\\
     P_{z,j'} + p(L_z - \Delta + j') - p(L_z + (m-1)\Delta + j') & j + v < 0.
   \end{cases}

Proof.  If 0 <= j + v < Δ the summands are the points L_z + kΔ + j', k = 0..m−1: the class (z, j').
If j + v >= Δ, then j + v = Δ + j' and the summands are L_z + k'Δ + j' for k' = 1..m: the class
(z, j') without its k' = 0 point, with the point k' = m.  If j + v < 0, then j + v = j' − Δ and the
summands are L_z + k'Δ + j' for k' = −1..m−2: the class with the point k' = −1, without k' = m−1.
(|v| < Δ and 0 <= j < Δ give −Δ < j + v < 2Δ, so these are all cases.)  Each class row therefore
has at most 5 nonzeros: P_{z,j}, P_{z,j'}, two correction points and τ.  The correction points
lie in [L_z − Δ, L_z + (m + 1)Δ − 1] ⊂ [−N − Δ, N + Δ] (U <= N).  Under the ±x reduction
p(x) = p(−x), Z₋'s class (−, j) is the mirror image of Z₊'s class (+, Δ − 1 − j)
(−(−U + kΔ + j) = L + (m − 1 − k)Δ + (Δ − 1 − j)), so P_{−,j} is the column P_{+,Δ−1−j}.

Validity (a relaxation of V*).  Let X be any (ε, δ)-DP noise on ℤ; under the ±x reduction replace
it by its symmetrisation (still (ε, δ)-DP: each hockey-stick sum is convex in the law, and the
reflected law's sum at v is the law's sum at −v; the cost is even, so its value is unchanged).  Set
p = its masses on the box, far = its mass outside, t_{v,x} = (p(x) − e^ε p(x + v))_+,
τ_{v,z,j} = Σ_{x ∈ (z, j)} t_{v,x}, P_{z,j} = Σ_{x ∈ (z, j)} p(x), T_v the edge term of
build_approx.  Every per-point row holds by definition of t; every class row holds because
Σ_x a_x <= Σ_x (a_x)_+; τ >= 0; and v's budget is a sum of (p(x) − e^ε p(x + v))_+ over disjoint
sets of points (the per-point rows, the zone points, the edge set E_v of build_approx), which is at
most its full hockey-stick sum <= δ.  The cost is at least the LP objective (point prices are lower
enclosures, the far mass is priced at the minimum outside the box).  So the LP's optimum is <= V*,
and :func:`optmech.certify.dual_lower_bound` on it is a certified lower bound; dropping every row of
the shifts |v| < ``min_shift`` only enlarges the feasible set (still a relaxation).  Its primal p on
the box is a candidate only: it is audited at every shift (the upper bound of
:func:`optmech.families.approx.upper_from_pmf`).

Size.  With the zones covering most of the support, the per-point rows number about
Δ·(2·band·Δ + 2(R − U)) (independent of n) plus 2R for |v| = Δ, the class rows 2Δ per kept shift,
against Δ·(2R + 1) in build_approx.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from optmech.errors import SpecError
from optmech.lp import LinearProgram, stack_rows
from optmech.problems.approx import ApproxLP, approx_mode, edge_points, outside_min, point_costs
from optmech.problems.approx_cells import NodeCosts

__all__ = ["build_aggregated", "support_estimate", "zone_periods"]


def support_estimate(epsilon: float, delta: float, sensitivity: int) -> int:
    """T = ⌈Δ(n + 1)⌉, n = (1/ε) ln(1 + (e^ε − 1)/(2δ)) [GV13, (58)–(60)] (n = 1/(2δ) at ε = 0):
    where the optimum's support ends in our measurements (only the zones' default uses it)."""
    eps, dlt = float(epsilon), float(delta)
    n = 1.0 / (2.0 * dlt) if eps == 0.0 else 1.0 + math.log1p(-math.expm1(-eps) * (1.0 / (2.0 * dlt) - 1.0)) / eps
    return int(math.ceil(int(sensitivity) * (n + 1.0)))


def zone_periods(epsilon: float, delta: float, sensitivity: int, N: int, band: int, outer_band: int) -> int:
    """The default number m of whole periods of the zone [band·Δ, band·Δ + mΔ − 1]: the largest with
    its end <= min(N, T − outer_band·Δ) (0: no zone)."""
    D = int(sensitivity)
    end = min(int(N), support_estimate(epsilon, delta, D) - int(outer_band) * D)
    return max(0, (end - int(band) * D + 1) // D)


def build_aggregated(
    cost, epsilon: float, delta: float, sensitivity: int, N: int, *, band: int = 2, outer_band: int | None = None,
    periods: int | None = None, min_shift: int | None = None, symmetry: str = "auto", edge_rows: bool = True,
    nodes: NodeCosts | None = None,
) -> ApproxLP:
    """The aggregated relaxation LP of the module docstring on [−N − Δ, N + Δ] (1-D).

    Parameters
    ----------
    cost : Cost
        A 1-D cost (``abs``, ``square``, an expression); the ±x reduction when it is even (as in
        :func:`optmech.problems.approx.build_approx`).
    epsilon, delta : float
        ε >= 0, δ in (0, 1).
    sensitivity : int
        Δ >= 1.
    N : int
        Inner half-width (box half-width R = N + Δ).
    band : int
        The zone starts at band·Δ (band >= 1): the rows with |x| < band·Δ stay per point.
    outer_band : int, optional
        The zone ends outer_band·Δ before T = ⌈Δ(n + 1)⌉ (default: ``band``).
    periods : int, optional
        The zone's number m of periods (default :func:`zone_periods`); 0 builds build_approx's LP.
    min_shift : int, optional
        Drop every row of the shifts 0 < |v| < min_shift (|v| = Δ is always kept).
    symmetry : {"auto", "even", "off"}
        ``"off"``: no ±x reduction (both signs of every shift, separate zone columns).
    edge_rows : bool
        Per-point rows at every box point whose partner is in the box and one edge row per shift
        (build_approx's ``edge_rows``); False: per-point rows on [−N, N] only.
    nodes : NodeCosts, optional
        Price point k at ``nodes.lower(k)`` (the box's end points at ``nodes.boundary_lower(R)``) and the
        far mass at ``nodes.beyond(R)``, as :func:`optmech.problems.approx.build_approx` does for the
        coarse lattice kℤ of :mod:`optmech.families.approx` (its relaxation argument is unchanged: the
        aggregation only sums rows of that LP); the ±x reduction when the node prices are even.

    Returns
    -------
    ApproxLP
        ``variant`` ``"hockey_stick_aggregated"``; ``box_masses``/``far_mass`` read the primal as
        for build_approx.  ``lp.meta`` holds the zones (``zone_starts``, ``zone_periods``) and,
        per class row, ``class_shift``, ``class_zone`` and ``class_offset``.
    """
    D, N, band = int(sensitivity), int(N), int(band)
    if D < 1 or N < 0:
        raise SpecError("the sensitivity must be >= 1 and the half-width >= 0")
    if band < 1:
        raise SpecError("band must be >= 1 (the zone starts at band·Δ > 0)")
    if not (0.0 < delta < 1.0) or not epsilon >= 0.0:
        raise SpecError("epsilon must be >= 0 and delta in (0, 1)")
    outer_band = band if outer_band is None else int(outer_band)
    m = zone_periods(epsilon, delta, D, N, band, outer_band) if periods is None else int(periods)
    L = band * D
    if m < 0 or (m > 0 and L + m * D - 1 > N):
        raise SpecError("the zone must end within the inner half-width N")
    R = N + D
    M = 2 * R + 1
    coords = np.arange(-R, R + 1, dtype=np.int64)
    if nodes is not None:
        mode = "even" if symmetry != "off" and nodes.even(coords) else "none"
        c_lo = nodes.lower(coords)
        c_lo[0], c_lo[-1] = nodes.boundary_lower(R)
        if not np.all(np.isfinite(c_lo)):
            raise SpecError("the cost cannot be bounded between the nodes of the window (an enclosure is infinite)")
    else:
        mode = approx_mode(cost, D, N, symmetry=symmetry)
        if mode == "orbits":
            mode = "even"
        cost.check_values(coords.astype(float))
        c_lo, _ = point_costs(cost, coords[:, None])
        if not np.all(np.isfinite(c_lo)):
            raise SpecError("the cost must be finite at every lattice point of the window")
        c_lo = np.maximum(c_lo, 0.0)

    flat = np.arange(M)
    even = mode == "even"
    point_var = np.minimum(flat, M - 1 - flat) if even else flat
    n_p = (M + 1) // 2 if even else M
    orbit = np.bincount(point_var, minlength=n_p).astype(float)
    col_far = n_p

    # zones: starts L_z (0-based box index L_z + R), P columns per (zone, offset)
    starts = np.array([L, -(L + m * D - 1)], dtype=np.int64) if m > 0 else np.zeros(0, dtype=np.int64)
    n_z = len(starts)
    j_all = np.arange(D)
    if n_z:
        n_P = D if even else 2 * D
        pcol = np.empty((n_z, D), dtype=np.int64)  # P column index (relative) of (zone, offset)
        pcol[0] = j_all
        pcol[1] = (D - 1 - j_all) if even else D + j_all
    else:
        n_P = 0
        pcol = np.zeros((0, D), dtype=np.int64)
    col_P0 = col_far + 1
    in_zone = np.zeros(M, dtype=bool)
    for Lz in starts:
        in_zone[Lz + R: Lz + R + m * D] = True

    # shifts
    v_all = np.arange(1, D + 1) if even else np.concatenate([np.arange(-D, 0), np.arange(1, D + 1)])
    if min_shift is not None:
        v_all = v_all[(np.abs(v_all) >= int(min_shift)) | (np.abs(v_all) == D)]
    K = len(v_all)

    # per-point rows: x (0-based) with x + v in the box (edge_rows) or x inner; outside the zones for |v| < Δ
    lo_x = 0 if edge_rows else R - N
    hi_x = M - 1 if edge_rows else R + N
    xs = []
    for v in v_all:
        x = np.arange(max(lo_x, -v), min(hi_x, M - 1 - v) + 1)
        if abs(v) < D:
            x = x[~in_zone[x]]
        xs.append(x)
    n_t = np.array([len(a) for a in xs], dtype=np.int64)
    T_pp = int(n_t.sum())
    col_t0 = col_P0 + n_P

    # class rows: kept shifts with |v| < Δ, every zone and offset
    v_cls = v_all[np.abs(v_all) < D] if n_z else np.zeros(0, dtype=np.int64)
    cs = np.repeat(v_cls, n_z * D)
    cz = np.tile(np.repeat(np.arange(n_z), D), len(v_cls))
    cj = np.tile(j_all, n_z * len(v_cls))
    n_c = len(cs)
    col_tau0 = col_t0 + T_pp
    n_edge = K if edge_rows else 0
    col_e0 = col_tau0 + n_c
    n_cols = col_e0 + n_edge
    e = math.exp(epsilon)

    # objective
    c = np.zeros(n_cols)
    np.add.at(c, point_var, c_lo)
    c[col_far] = nodes.beyond(R) if nodes is not None else max(0.0, outside_min(cost, R, 1))

    # per-point hockey-stick rows
    x_all = np.concatenate(xs) if xs else np.zeros(0, dtype=np.int64)
    y_all = x_all + np.repeat(v_all, n_t)
    rows = np.arange(T_pp)
    hs = sp.coo_array((np.concatenate([np.ones(T_pp), np.full(T_pp, -e), np.full(T_pp, -1.0)]),
                       (np.concatenate([rows] * 3),
                        np.concatenate([point_var[x_all], point_var[y_all], col_t0 + rows]))), shape=(T_pp, n_cols))

    # class rows: P_{z,j} − e^ε P_{z,j'} ∓ e^ε (corrections) − τ <= 0 (module docstring)
    Lz = starts[cz] if n_c else np.zeros(0, dtype=np.int64)
    s = cj + cs
    jp = np.mod(s, D)
    hi = s >= D
    lo = s < 0
    a_pt = np.where(hi, Lz + jp, Lz - D + jp)  # the point added (coefficient +e^ε if hi, −e^ε if lo)
    b_pt = np.where(hi, Lz + m * D + jp, Lz + (m - 1) * D + jp)
    corr = hi | lo
    ci = np.flatnonzero(corr)
    crow = np.arange(n_c)
    sign_a = np.where(hi[ci], e, -e)  # hi: −e^ε·(−p(a)); lo: −e^ε·(+p(a))
    cls = sp.coo_array((np.concatenate([np.ones(n_c), np.full(n_c, -e), np.full(n_c, -1.0), sign_a, -sign_a]),
                        (np.concatenate([crow, crow, crow, ci, ci]),
                         np.concatenate([col_P0 + pcol[cz, cj], col_P0 + pcol[cz, jp], col_tau0 + crow,
                                         point_var[a_pt[ci] + R], point_var[b_pt[ci] + R]]))), shape=(n_c, n_cols))

    # P definitions: P_{z,j} − Σ_k p(L_z + kΔ + j) = 0 for the zones owning their columns
    own = [0] if (n_z and even) else list(range(n_z))
    if own:
        zz = np.repeat(own, D)
        jj = np.tile(j_all, len(own))
        r_def = np.arange(len(zz))
        pts = starts[zz][:, None] + np.arange(m)[None, :] * D + jj[:, None] + R  # (rows, m) 0-based
        pdef = sp.coo_array((np.concatenate([np.ones(len(zz)), -np.ones(pts.size)]),
                             (np.concatenate([r_def, np.repeat(r_def, m)]),
                              np.concatenate([col_P0 + pcol[zz, jj], point_var[pts.ravel()]]))),
                            shape=(len(zz), n_cols))
    else:
        pdef = sp.coo_array((0, n_cols))

    # budgets: Σ t + Σ τ + T_v <= δ
    shift_of_t = np.repeat(np.arange(K), n_t)
    k_of_v = {int(v): i for i, v in enumerate(v_all)}
    shift_of_c = np.array([k_of_v[int(v)] for v in v_cls], dtype=np.int64)
    shift_of_c = np.repeat(shift_of_c, n_z * D)
    budget = sp.coo_array((np.ones(T_pp + n_c + n_edge),
                           (np.concatenate([shift_of_t, shift_of_c, np.arange(n_edge)]),
                            np.concatenate([col_t0 + rows, col_tau0 + crow, col_e0 + np.arange(n_edge)]))),
                          shape=(K, n_cols))
    norm = sp.coo_array((np.append(orbit, 1.0), (np.zeros(n_p + 1, dtype=np.int64), np.append(np.arange(n_p), col_far))),
                        shape=(1, n_cols))
    blocks = [("normalisation", norm, 1.0, 1.0), ("hockey_stick", hs, -np.inf, 0.0), ("class", cls, -np.inf, 0.0),
              ("class_mass", pdef, 0.0, 0.0)]
    if edge_rows:  # build_approx's edge rows: Σ_{x ∈ E_v} p(x) − (e^ε − 1)·far_side <= T_v
        e_pts = edge_points(v_all, M)
        e_rows = np.repeat(np.arange(K), np.abs(v_all))
        far_coef = (e - 1.0) / 2.0 if even else e - 1.0
        edge = sp.coo_array((np.concatenate([np.ones(len(e_pts)), np.full(K, -far_coef), np.full(K, -1.0)]),
                             (np.concatenate([e_rows, np.arange(K), np.arange(K)]),
                              np.concatenate([point_var[e_pts], np.full(K, col_far), col_e0 + np.arange(K)]))),
                            shape=(K, n_cols))
        blocks.append(("edge", edge, -np.inf, 0.0))
    A, rl, ru, row_blocks = stack_rows(blocks + [("budget", budget, -np.inf, delta)], n_cols)
    # column bounds implied by the rows: orbit·p <= 1, P <= 1, t, τ, T_v <= δ (rounded up)
    col_upper = np.concatenate([np.nextafter(1.0 / orbit, np.inf), [1.0], np.ones(n_P),
                                np.full(T_pp + n_c + n_edge, np.nextafter(delta, np.inf))])
    lp = LinearProgram(
        c=c, A=A, row_lower=rl, row_upper=ru, col_lower=np.zeros(n_cols), col_upper=col_upper,
        row_blocks=row_blocks,
        col_blocks={"p": slice(0, n_p), "far": slice(col_far, col_far + 1), "P": slice(col_P0, col_P0 + n_P),
                    "t": slice(col_t0, col_tau0), "tau": slice(col_tau0, col_e0), "edge": slice(col_e0, n_cols)},
        meta={"normalisation_row": row_blocks["normalisation"].start, "epsilon": epsilon, "delta": delta,
              "exp_epsilon": e, "symmetry": mode, "zone_starts": starts.tolist(), "zone_periods": m,
              "class_shift": cs, "class_zone": cz, "class_offset": cj, "band": band, "outer_band": outer_band,
              "min_shift": min_shift},
    )
    return ApproxLP(lp, 1, D, N, R, even, v_all[:, None].astype(np.int64), point_var, "hockey_stick_aggregated", mode)
