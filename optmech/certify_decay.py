r"""A lower bound on the (ε, δ) optimum on ℤ from the periodic-decay LP's duals, checked on the whole of ℤ [derived].

The LP of :mod:`optmech.problems.approx_decay` is a *restriction* (laws of one shape): its dual value is no
bound on V*.  This module builds from its duals a dual solution of the *full* problem on ℤ and evaluates
that solution's value with outward rounding.  Nothing about the optimum's shape is assumed: a wrong
shape gives a weak bound, never a wrong one.

The dual (weak duality on ℤ).  Let L_lo(z) <= L(z) at every integer z, shifts v ∈ ±{1..m}, and
multipliers y_{v,x} >= 0, finitely many nonzero, with λ_v >= max_x y_{v,x}.  If
θ <= L_lo(z) + Σ_v (y_{v,z} − e^ε y_{v,z−v}) for every z ∈ ℤ, then every (ε, δ)-DP noise p on ℤ has

.. math::
   E\,L(X) \ge \sum_z p(z)\Big(θ - \sum_v (y_{v,z} - e^ε y_{v,z-v})\Big)
   = θ - \sum_v \sum_x y_{v,x}\big(p(x) - e^ε p(x+v)\big) \ge θ - \sum_v λ_v\, δ,

since Σ_x y_{v,x}(p(x) − e^ε p(x + v)) <= λ_v Σ_x (p(x) − e^ε p(x + v))_+ <= λ_v δ [GV13, (18)] (the sums
are finite: y has finite support).  So V* >= θ − δ Σ_v λ_v.  The issue's form of the same certificate.

Mirroring.  The LP keeps the shifts s > 0 and one column per ±x pair; write y'_{s,x} for its row duals
disaggregated to points (below).  Set y_{s,x} = y'_{s,x}/2 and y_{−s,x} = y'_{s,−x}/2, λ_{±s} = λ'_s/2 with
λ'_s = max_x y'_{s,x}.  Then the constraint at z reads θ <= L_lo(z) + Ψ(z)/2 with

.. math::
   Ψ(z) = \sum_{s} \big(y'_{s,z} - e^ε y'_{s,z-s} + y'_{s,-z} - e^ε y'_{s,-z-s}\big) = Ψ(-z),

and the value is θ − δ Σ_s λ'_s.  Only Ψ on z >= 0 is computed; z and −z are checked with the smaller of
L_lo(z), L_lo(−z).  No symmetry of the cost is assumed.

Disaggregation.  A row of the LP groups the points x of one key with weights b^{k(x)}; its dual μ >= 0
becomes y'_{s,x} = μ/ω at each of them (ω = Σ b^{k(x)}), which reproduces the LP's reduced costs
(Σ_x b^{k(x)} y'_{s,x} = μ).  Points without a row have y' = 0, except for the shift m on z >= 0.

The chain (shift m).  On the positive periodic zone the shift m's forms vanish identically, so the LP says
nothing about y'_{m,z}; beyond the support neither does it.  For z >= 0 the values y'_{m,z} are chosen
here, period by period, as the least that keep the constraint at z:
y'_{m,z} = max(0, 2(θ − L(z)) − (Ψ(z) without y'_{m,z})) (halved at z = 0, where y'_{m,0} enters twice),
which involves y'_{m,z−m} of the period before.  The chain runs past the support until a whole period of it
is zero (at most ``max_periods``).  Any nonnegative choice is allowed by the dual above; the least one
keeps λ'_m small and the later constraints easiest.  θ is the LP's normalisation multiplier.

Two variants, the better bound kept (each is a valid dual).  *Forward*: the chain above on every z >= 0.  It
multiplies any error in the LP's duals by e^ε per period, e^{εK} over the periodic zone (2.6e10 at ε = 2,
K = 12: the chain then explodes).  *Backward*: the LP's own values on its rows of the shift m; on the zero forms
of the periodic zone, from its end down, y'_{m,z} = max(0, (Ψ(z + m) − 2(θ − L(z + m)))/e^ε), the largest value
the constraint at z + m allows (each period divides the error by e^ε); the forward chain only past the support.

Rigour.  e^ε is replaced by E ≥ e^ε (exp rounded up twice: every e^ε term enters with a minus sign and
y >= 0, so Ψ only decreases).  Each Ψ(z) is a float sum of at most n = 4(kept shifts) + 8 terms; its error
is at most γ_n Σ|terms| (γ_n = nu/(1 − nu), u = 2^−53; the standard bound of recursive summation), which is subtracted, as is one
rounding of L_lo + Ψ/2.  Beyond the checked range (|z| > Z + m, where every y at z − v is 0), the
constraint is θ <= L_lo(z): there the caller's proven ``outside`` price bounds L from below.  θ is then
the minimum of the checked values, rounded down, and δ Σ λ' is rounded up.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from optmech.problems.approx_decay import DecayLP

__all__ = ["DecayCertificate", "decay_lower_bound", "onesided_lower_bound"]

_U = 2.0**-53


@dataclasses.dataclass
class DecayCertificate:
    """The value of :func:`decay_lower_bound` and how it was reached."""

    value: float
    theta: float
    budget_term: float
    worst_point: int
    chain_end: int
    solver_objective: float
    #: how much the float-error allowance lowered the bound
    rounding_loss: float = 0.0
    #: for the loop's stall rule (the clipped rows of the generic certificate; none here)
    clipped_rows: int = 0
    normalisation_multiplier: float = math.nan
    error_term: float = 0.0
    #: with ``keep=True``: the multipliers the bound rests on, for an independent re-check (tests): ``shifts``,
    #: ``points`` (x = −(R − 1)..R − 1), ``y`` (one array per shift on the points; the shift m's entries at x >= 0
    #: are zero there and given by ``chain`` on z = 0..len(chain) − 1), ``E`` (the value used for e^ε), ``limit``
    #: (the last z checked), ``lam`` (λ'_s)
    multipliers: dict | None = None


def decay_lower_bound(dlp: DecayLP, row_dual: np.ndarray, prices, outside: float, *,
                      solver_objective: float = math.nan, max_periods: int | None = None,
                      keep: bool = False) -> DecayCertificate:
    """V* >= value (module docstring) from the row duals of ``dlp.lp`` (sign convention of
    :mod:`optmech.solvers.base`: −μ on the <= rows, θ on the normalisation row).

    ``prices(z)``: proven lower bounds of the cost at the integers z (node prices on a coarse lattice);
    ``outside``: a proven lower bound of the cost at every |z| beyond the checked range, computed by the
    caller for the range returned as ``chain_end + m`` (it is called as ``outside(limit)``)."""
    lay = dlp.layout
    m, R = lay.sensitivity, dlp.R
    kept = [int(s) for s in dlp.shifts]
    if m not in kept:
        raise ValueError("decay_lower_bound needs the shift m among the LP's shifts")
    theta, mu, Z, n, E = _setup(dlp, row_dual, max_periods)  # y' may be nonzero on [−Z, Z]; Ψ on [0, Z + m]
    psi = np.zeros(n)                             # Ψ(z), z = 0..Z + m
    mag = np.zeros(n)                             # Σ |terms|
    lam = np.zeros(len(kept))
    x = dlp.points()                              # −(R − 1) .. R − 1
    ys, y_m = [], None
    for i, s in enumerate(kept):
        y = _row_multipliers(dlp, mu, i, x)
        if s == m:
            y_m = np.where(x >= 0, y, 0.0)        # the LP's values on z >= 0: the second variant keeps them
            y[x >= 0] = 0.0                       # the chain decides these
        if keep:
            ys.append(y)
        lam[i] = float(np.max(y, initial=0.0))
        _add(psi, mag, y, x, s, E)
    price = np.minimum(prices(np.arange(n)), prices(-np.arange(n))).astype(float)
    i_m = kept.index(m)
    best = None
    for variant in ("forward", "backward"):
        p_, g_, chain = psi.copy(), mag.copy(), np.zeros(n)
        if variant == "forward":  # the least chain on every z >= 0, period by period
            end = _chain_forward(p_, g_, chain, price, theta, E, m, 0, Z, R, symmetric=True)
        else:  # the LP's values on its rows; the zero forms of the periodic zone backward; the forward chain past R
            pos = x >= 0
            _add_half(p_, g_, y_m[pos], x[pos], m, E)
            chain[x[pos]] = y_m[pos]
            _chain_backward(p_, g_, chain, price, theta, E, m, lay.periods - 1)
            end = _chain_forward(p_, g_, chain, price, theta, E, m, R, Z, R, symmetric=True)
        lam_v = lam.copy()
        lam_v[i_m] = max(lam_v[i_m], float(np.max(chain, initial=0.0)))
        cert = _finish(p_, g_, price, lam_v, end, m, len(kept), 0.5, outside, dlp.delta)
        if best is None or cert[0] > best[0][0]:
            best = (cert, chain, end, lam_v, variant)
    (value, th, budget, worst, loss, limit), chain, end, lam, variant = best
    kept_y = {"shifts": kept, "points": x, "y": ys, "chain": chain[: end + 1].copy(), "E": E, "limit": limit,
              "lam": lam.copy(), "variant": variant} if keep else None
    return DecayCertificate(value=value, theta=th, budget_term=budget, worst_point=worst, chain_end=end,
                            solver_objective=solver_objective, rounding_loss=loss, normalisation_multiplier=theta,
                            multipliers=kept_y)


def _setup(dlp: DecayLP, row_dual: np.ndarray, max_periods: int | None):
    """θ, the row duals μ >= 0, the last point Z that may carry a multiplier, the length n = Z + m + 1 of Ψ, and
    E >= e^ε (exp rounded up twice)."""
    lp, lay = dlp.lp, dlp.layout
    theta = float(row_dual[lp.row_blocks["normalisation"].start])
    mu = np.maximum(-np.asarray(row_dual[lp.row_blocks["hockey_stick"]], dtype=float), 0.0)
    periods_max = max_periods if max_periods is not None else 4 * lay.max_exponent + 8
    Z = dlp.R + periods_max * lay.sensitivity
    E = float(np.nextafter(np.nextafter(math.exp(lay.epsilon), np.inf), np.inf))
    return theta, mu, Z, Z + lay.sensitivity + 1, E


def _row_multipliers(dlp: DecayLP, mu: np.ndarray, i: int, x: np.ndarray) -> np.ndarray:
    """y'_{s,x} for the i-th kept shift on the points x: each row's dual spread evenly over its key's points
    (μ/ω), 0 where a point has no row."""
    r = dlp.row_of(i, x)
    y = np.zeros(x.size)
    live = r >= 0
    y[live] = mu[r[live]] / dlp.omega[r[live]]
    return y


def _chain_forward(psi, mag, chain, price, theta, E, m, first, Z, R, *, symmetric) -> int:
    """The least values of the shift m's multipliers on z = first.., period by period (module docstring, The
    chain): y_{m,z} = max(0, c(θ − L(z)) − Ψ(z)) with c = 2 (mirrored) or 1, halved at z = 0 when mirrored
    (y_{m,0} enters twice); stops after a whole zero period at or past R.  Returns the last z filled."""
    n = psi.size
    c = 2.0 if symmetric else 1.0
    end, zero_run = first, 0
    for start in range(first, Z + 1, m):
        z = np.arange(start, min(start + m, Z + 1))
        need = c * (theta - price[z]) - psi[z]
        if symmetric and start == 0:
            need[0] *= 0.5
        y = np.maximum(need, 0.0)
        chain[z] = y
        psi[z] += y
        mag[z] += y
        if symmetric and start == 0:
            psi[0] += y[0]
            mag[0] += y[0]
        ok = z + m < n
        psi[z[ok] + m] -= E * y[ok]
        mag[z[ok] + m] += E * y[ok]
        end = int(z[-1])
        zero_run = zero_run + 1 if not np.any(y > 0) else 0
        if start >= R and zero_run >= 1:
            break
    return end


def _chain_backward(psi, mag, chain, price, theta, E, m, periods) -> None:
    """The zero forms of the periodic zone, z in [0, periods·m), from its end down: y_{m,z} as large as the
    constraint at z + m allows, (Ψ(z + m) − 2(θ − L(z + m)))/E, and at least 0.  The forward chain multiplies
    any error by e^ε per period (e^{εK} over the zone: 2.6e10 at ε = 2, K = 12); this one divides by it."""
    for j in range(periods - 1, -1, -1):
        z = np.arange(j * m, (j + 1) * m)
        y = _fill_largest(psi, mag, chain, price, theta, E, z, z + m, 2.0)
        if j == 0:  # y_{m,0} enters the constraint at 0 twice (z and −z)
            psi[0] += y[0]
            mag[0] += y[0]


def _fill_largest(psi, mag, chain, price, theta, E, z, c, scale) -> np.ndarray:
    """Multipliers at the points z whose −e^ε term lands on the columns c: the largest values the constraints
    at c allow, (Ψ(c) − scale·(θ − L(c)))/E, and at least 0; added to Ψ (+ at z, −E at c)."""
    y = np.maximum((psi[c] - scale * (theta - price[c])) / E, 0.0)
    chain[z] = y
    psi[c] -= E * y
    mag[c] += E * y
    psi[z] += y
    mag[z] += y
    return y


def _add_half(psi, mag, y, x, s, E) -> None:
    """Add multipliers y'_{s,x} on points x >= 0 to Ψ on z >= 0: +y at z = x (and at z = 0 once more for
    x = 0, the mirrored term), −E y at z = x + s."""
    n = psi.size
    nz = np.flatnonzero(y)
    if nz.size == 0:
        return
    xv, yv = x[nz], y[nz]
    for z, sign in ((xv, 1.0), (xv + s, -E)):
        ok = (z >= 0) & (z < n)
        psi += np.bincount(z[ok], weights=sign * yv[ok], minlength=n)
        mag += np.bincount(z[ok], weights=abs(sign) * yv[ok], minlength=n)
    zero = xv == 0
    if np.any(zero):
        psi[0] += float(yv[zero][0])
        mag[0] += float(yv[zero][0])


def _finish(psi, mag, price, lam, end, m, n_kept, half, outside, delta):
    """(value, θ, budget term, worst z, rounding loss, limit) of the checked multipliers (module docstring,
    Rigour): θ_z = L_lo(z) + half·Ψ(z) minus its float-error allowance on z = 0..end + m, the cost's proven
    minimum beyond, and δ Σ λ' rounded up."""
    terms = 4 * n_kept + 8
    gamma = terms * _U / (1 - terms * _U)
    limit = end + m
    checked = price[: limit + 1] + half * psi[: limit + 1]
    err = half * gamma * mag[: limit + 1] * (1 + gamma) + _U * np.abs(checked)
    low = checked - err
    worst = int(np.argmin(low))
    th = float(np.nextafter(min(float(low[worst]), float(outside(limit))), -np.inf))
    budget = float(np.nextafter(math.fsum(lam.tolist()) * delta * (1 + 2 * _U), np.inf))
    value = float(np.nextafter(th - budget, -np.inf))
    return value, th, budget, worst, float(np.max(err)) if err.size else 0.0, limit


def _add(psi: np.ndarray, mag: np.ndarray, y: np.ndarray, x: np.ndarray, s: int, E: float) -> None:
    """Add the shift s's known multipliers y'_{s,x} (on the points x) to Ψ(z), z >= 0:
    +y'_{s,z}, −E y'_{s,z−s}, +y'_{s,−z}, −E y'_{s,−z−s}."""
    n = psi.size
    nz = np.flatnonzero(y)
    if nz.size == 0:
        return
    xv, yv = x[nz], y[nz]
    for z, sign in ((xv, 1.0), (xv + s, -E), (-xv, 1.0), (-xv - s, -E)):
        ok = (z >= 0) & (z < n)
        if np.any(ok):
            psi += np.bincount(z[ok], weights=sign * yv[ok], minlength=n)
            mag += np.bincount(z[ok], weights=abs(sign) * yv[ok], minlength=n)


def onesided_lower_bound(dlp: DecayLP, row_dual: np.ndarray, prices, outside, *, solver_objective: float = math.nan,
                         max_periods: int | None = None, keep: bool = False) -> DecayCertificate:
    r"""V* >= value on ℕ from the duals of the one-sided LP (:class:`~optmech.problems.approx_decay.OneSidedLayout`).

    The dual of the module docstring with the domain ℕ: a law on ℕ has p(z) = 0 at z < 0, so the constraint
    θ <= L_lo(z) + Σ_v (y_{v,z} − e^ε y_{v,z−v}) is needed at z >= 0 only, and the rows keep their own signed
    shifts v ∈ ±{1..m} (no mirroring, no halving).  Two chains replace the LP's silence: the shift +m on the decay
    zone and beyond (z from its start upward, y_{m,z} = max(0, θ − L(z) − rest), rest holding −e^ε y_{m,z−m}),
    and the shift −m on the growth zone (z from its end down to m, rest holding −e^ε y_{−m,z+m}).  The same
    rounding allowance; beyond the checked range ``outside(limit)`` bounds the cost."""
    lay = dlp.layout
    m, R = lay.sensitivity, dlp.R
    kept = [int(v) for v in dlp.shifts]
    if m not in kept or -m not in kept:
        raise ValueError("onesided_lower_bound needs the shifts ±m among the LP's shifts")
    theta, mu, Z, n, E = _setup(dlp, row_dual, max_periods)
    psi, mag = np.zeros(n), np.zeros(n)
    lam = np.zeros(len(kept))
    x = dlp.points()
    S, G = lay.decay_start, lay.growth * m
    last = S + (lay.decay - 1) * m                # the zero forms of +m are x in [S, last)
    ys, y_up = [], None
    for i, v in enumerate(kept):
        y = _row_multipliers(dlp, mu, i, x)
        if v == m:
            y_up = np.where(x >= last, y, 0.0)    # the LP's values past the zero forms: the second variant keeps them
            y[x >= S] = 0.0
        if v == -m:
            y[(x >= m) & (x < G)] = 0.0
        if keep:
            ys.append(y)
        lam[i] = float(np.max(y, initial=0.0))
        nz = np.flatnonzero(y)
        for z, sign in ((x[nz], 1.0), (x[nz] + v, -E)):
            ok = (z >= 0) & (z < n)
            psi += np.bincount(z[ok], weights=sign * y[nz][ok], minlength=n)
            mag += np.bincount(z[ok], weights=abs(sign) * y[nz][ok], minlength=n)
    price = np.asarray(prices(np.arange(n)), dtype=float)
    best = None
    for variant in ("forward", "backward"):
        p_, g_ = psi.copy(), mag.copy()
        up_chain, down_chain = np.zeros(n), np.zeros(n)
        if variant == "forward":
            # −m on the growth zone from its end down to m (y_{−m,z} enters column z (+) and z − m (−E)), the least
            # value that keeps the constraint at z; then +m from the decay zone on, the least values forward
            for top in range(G, m, -m):
                z = np.arange(max(m, top - m), top)
                y = np.maximum(theta - price[z] - p_[z], 0.0)
                down_chain[z] = y
                p_[z] += y
                g_[z] += y
                p_[z - m] -= E * y
                g_[z - m] += E * y
            end = _chain_forward(p_, g_, up_chain, price, theta, E, m, S, Z, R, symmetric=False)
        else:
            # the stable directions: −m from m up (as large as the constraint at z − m allows), +m on its zero forms
            # from their end down (as large as the constraint at z + m allows), the LP's values past them, and the
            # least values forward from R
            for low in range(m, G, m):
                z = np.arange(low, min(low + m, G))
                _fill_largest(p_, g_, down_chain, price, theta, E, z, z - m, 1.0)
            pos = x >= last
            for zz, sign in ((x[pos], 1.0), (x[pos] + m, -E)):
                ok = zz < n
                p_ += np.bincount(zz[ok], weights=sign * y_up[pos][ok], minlength=n)
                g_ += np.bincount(zz[ok], weights=abs(sign) * y_up[pos][ok], minlength=n)
            up_chain[x[pos]] = y_up[pos]
            for j in range(lay.decay - 2, -1, -1):
                z = np.arange(S + j * m, S + (j + 1) * m)
                _fill_largest(p_, g_, up_chain, price, theta, E, z, z + m, 1.0)
            end = _chain_forward(p_, g_, up_chain, price, theta, E, m, R, Z, R, symmetric=False)
        lam_v = lam.copy()
        lam_v[kept.index(m)] = max(lam_v[kept.index(m)], float(np.max(up_chain, initial=0.0)))
        lam_v[kept.index(-m)] = max(lam_v[kept.index(-m)], float(np.max(down_chain, initial=0.0)))
        cert = _finish(p_, g_, price, lam_v, end, m, len(kept) // 2 + 1, 1.0, outside, dlp.delta)
        if best is None or cert[0] > best[0][0]:
            best = (cert, up_chain, down_chain, end, lam_v, variant)
    (value, th, budget, worst, loss, limit), up_chain, down_chain, end, lam, variant = best
    kept_y = {"shifts": kept, "points": x, "y": ys, "up_chain": up_chain[: end + 1].copy(),
              "down_chain": down_chain[:G].copy(), "E": E, "limit": limit, "lam": lam.copy(),
              "variant": variant} if keep else None
    return DecayCertificate(value=value, theta=th, budget_term=budget, worst_point=worst, chain_end=end,
                            solver_objective=solver_objective, rounding_loss=loss, normalisation_multiplier=theta,
                            multipliers=kept_y)
