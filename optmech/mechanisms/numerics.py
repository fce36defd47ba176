"""Shared numerics of the 1-D mechanisms (private).

* parameter validation helpers (one-line :class:`~optmech.errors.SpecError` messages);
* cost inspection by duck typing (``kind``, ``power``, ``__call__``,
  ``is_symmetric_nondecreasing``);
* the series constants ``c_k = sum_{i>=0} i^k b^i`` in closed form (Eulerian numbers);
* :class:`PeriodSum`, the periodised cost ``M(o) = sum_k b^k Lsym(k*period + o)`` that every
  numeric route (staircase, Laplace, discrete staircase, discrete Laplace) reduces to;
* a vectorised adaptive Gauss-Legendre integrator.

Nothing here imports optional dependencies.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from optmech.errors import ProblemTooLarge, SpecError

#: Largest epsilon (or epsilon/Delta) for which b = exp(-epsilon) is a normal float with margin.
EPS_MAX = 700.0


# --------------------------------------------------------------------------------------------
# validation


def up_ulps(x: float, ulps: int = 1) -> float:
    """x moved up by ``ulps`` units in the last place (an upper bound after rounding).

    >>> up_ulps(1.0) > 1.0
    True
    """
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


def mp_round_up(value, pad_digits: int = 25) -> float:
    """The smallest double >= an mpmath value, computed with >= 50 digits and padded by
    10^-pad_digits relative (positive values).

    >>> import mpmath
    >>> mp_round_up(mpmath.mpf(1) / 3) >= 1 / 3
    True
    """
    import mpmath

    with mpmath.workdps(max(mpmath.mp.dps, 50)):
        v = value * (1 + mpmath.mpf(10) ** -pad_digits) if value > 0 else +value
        f = float(v)
        if math.isfinite(f) and mpmath.mpf(f) < v:
            f = math.nextafter(f, math.inf)
    return f


def check_epsilon(epsilon, *, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float in (0, EPS_MAX], or raise SpecError."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real):
        raise SpecError(f"{name} must be a real number, got {epsilon!r}")
    eps = float(epsilon)
    if not (0.0 < eps <= EPS_MAX):
        raise SpecError(f"{name} must be in (0, {EPS_MAX:g}] (b = e^-{name} must not underflow), got {epsilon!r}")
    return eps


def check_sensitivity(sensitivity, *, integer: bool = False) -> float | int:
    """Return the sensitivity Δ > 0 (a Python int >= 1 when ``integer``), or raise SpecError."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, Real):
        raise SpecError(f"sensitivity must be a real number, got {sensitivity!r}")
    if integer:
        if isinstance(sensitivity, Integral):
            value = int(sensitivity)
        elif math.isfinite(float(sensitivity)) and float(sensitivity).is_integer():
            value = int(float(sensitivity))
        else:
            raise SpecError(f"sensitivity must be an integer >= 1 on the integer domain, got {sensitivity!r}")
        if value < 1:
            raise SpecError(f"sensitivity must be an integer >= 1 on the integer domain, got {sensitivity!r}")
        return value
    value = float(sensitivity)
    if not (0.0 < value < math.inf):
        raise SpecError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    return value


def check_unit_interval(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not (0.0 <= float(value) <= 1.0):
        raise SpecError(f"{name} must be a real number in [0, 1], got {value!r}")
    return float(value)


def check_int_range(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise SpecError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    if isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer():
        v = int(float(value))
    else:
        raise SpecError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    if not lo <= v <= hi:
        raise SpecError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return v


def b_and_u(epsilon: float) -> tuple[float, float]:
    """``(b, 1 - b)`` with ``b = e^{-epsilon}``; ``1 - b`` via expm1 (no cancellation)."""
    return math.exp(-epsilon), -math.expm1(-epsilon)


# --------------------------------------------------------------------------------------------
# costs (duck typed)


def evaluate(cost, x) -> np.ndarray:
    """``cost(x)`` as a float array of the shape of ``x``; NaN is an error."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(cost(x), dtype=float)
    if y.shape != x.shape:
        y = np.broadcast_to(y, x.shape).astype(float)
    if np.isnan(y).any():
        raise SpecError(f"cost {getattr(cost, 'spec', cost)!r} evaluates to NaN")
    return y


def symmetrised(cost):
    """``Lsym(x) = L(x) + L(-x)``, so that ``∫ L dP = ∫_{x>=0} Lsym dP`` for symmetric P."""

    def lsym(x):
        x = np.asarray(x, dtype=float)
        return evaluate(cost, x) + evaluate(cost, -x)

    return lsym


_PROBES = np.array([0.0, 0.3, 0.5, 1.0, 1.7, 2.5, 3.0, 7.25])


def power_of(cost) -> float | None:
    """Exponent p if ``cost`` is exactly ``|x|**p`` (kind abs/square/pow), else None.

    The declared ``kind``/``power`` is confirmed on a few probe points, so an object with
    a scale factor or a mislabelled kind falls back to the numeric routes.
    """
    kind = getattr(cost, "kind", None)
    if kind == "abs":
        p = 1.0
    elif kind == "square":
        p = 2.0
    elif kind == "pow":
        p = getattr(cost, "power", None)
        if p is None or isinstance(p, bool) or not isinstance(p, Real) or not (float(p) > 0):
            return None
        p = float(p)
    else:
        return None
    x = np.concatenate([-_PROBES[::-1], _PROBES])
    try:
        y = evaluate(cost, x)
    except Exception:  # noqa: BLE001 - an odd cost object just takes the numeric route
        return None
    if not np.allclose(y, np.abs(x) ** p, rtol=1e-13, atol=0.0):
        return None
    return p


#: Largest integer power handled by the c_k closed forms (beyond it the numeric routes are used).
MAX_CLOSED_POWER = 40


def integer_power_of(cost) -> int | None:
    p = power_of(cost)
    if p is not None and p.is_integer() and p <= MAX_CLOSED_POWER:
        return int(p)
    return None


def is_symmetric_nondecreasing(cost, sensitivity: float, domain: str) -> bool:
    """The hypothesis of the references' theorems ([Geng13] Property 2.1 / 2.3): L symmetric and
    nondecreasing in |x| on the whole domain, **proven** (``cost.is_symmetric_nondecreasing``);
    ``sensitivity`` is kept for the callers' signature (the proof does not depend on it)."""
    return bool(cost.is_symmetric_nondecreasing(integer=(domain == "integer")))


# --------------------------------------------------------------------------------------------
# series constants


def eulerian_row(m: int) -> list[int]:
    """Eulerian numbers A(m, j), j = 0..m-1 (A(0) = [1])."""
    row = [1]
    for n in range(1, m + 1):
        new = [0] * n
        for k in range(n):
            left = row[k - 1] if 0 <= k - 1 < len(row) else 0
            here = row[k] if k < len(row) else 0
            new[k] = (k + 1) * here + (n - k) * left
        row = new
    return row


def series_constants(b: float, u: float, m_max: int) -> np.ndarray:
    """``c_k = sum_{i>=0} i^k b^i`` for k = 0..m_max, with 0^0 = 1 and ``u = 1 - b``.

    c_0 = 1/u and, for k >= 1, c_k = Li_{-k}(b) = b * sum_j A(k, j) b^j / u^{k+1} with the
    (positive) Eulerian numbers A(k, j): every term is positive, so the relative error is a few
    ulp for all b in (0, 1) [derived; Geng13, App. A.4 lists c_0..c_3, which this reproduces].
    """
    c = np.empty(m_max + 1)
    c[0] = 1.0 / u
    for k in range(1, m_max + 1):
        poly = 0.0
        for coef in reversed(eulerian_row(k)):
            poly = poly * b + float(coef)
        c[k] = b * poly / u ** (k + 1)
    return c


def power_sums(q: int, n: np.ndarray) -> np.ndarray:
    """``S_q(n) = sum_{j=0}^{n-1} j^q`` (0^0 = 1) for an integer array ``n >= 0``."""
    n = np.asarray(n, dtype=np.int64)
    nf = n.astype(float)
    if q == 0:
        return nf
    if q == 1:
        return nf * (nf - 1.0) / 2.0
    if q == 2:
        return (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0
    if q == 3:
        s1 = nf * (nf - 1.0) / 2.0
        return s1 * s1
    top = int(n.max()) if n.size else 0
    j = np.arange(top, dtype=np.longdouble)
    jq = j.copy()
    for _ in range(q - 1):
        jq *= j
    cum = np.concatenate([[np.longdouble(0)], np.cumsum(jq)])  # extended precision where available
    return cum[n].astype(float)


# --------------------------------------------------------------------------------------------
# periodised cost


class ChebInterpolant:
    """Polynomial interpolant at the n+1 Chebyshev points of the second kind on [lo, hi].

    Coefficients by a type-I DCT of the node values and evaluation by Clenshaw's recurrence:
    both backward stable (error ~ ulp * n * max|f| for analytic f), unlike a Chebyshev series
    fitted through a Vandermonde matrix (numpy's ``Chebyshev.interpolate`` loses ~1e-14 here).
    """

    def __init__(self, f, lo: float, hi: float, n: int) -> None:
        from scipy.fft import dct

        self.lo, self.hi = float(lo), float(hi)
        t = np.cos(np.pi * np.arange(n + 1) / n)  # t_j = cos(jπ/n), from +1 down to -1
        values = np.asarray(f(self.lo + (self.hi - self.lo) * (t + 1.0) / 2.0), dtype=float)
        coef = dct(values, type=1) / n
        coef[0] /= 2.0
        coef[-1] /= 2.0
        self.coef = coef

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        t = (2.0 * (x.ravel() - self.lo) / (self.hi - self.lo) - 1.0)
        out = np.empty(t.size)
        step = 32768  # blocks that stay in cache during the recurrence
        for s in range(0, t.size, step):
            out[s : s + step] = np.polynomial.chebyshev.chebval(t[s : s + step], self.coef)
        return out.reshape(x.shape)


#: Largest number of cost evaluations a lattice sum may take before it is refused.
MAX_LATTICE_EVALUATIONS = 300_000_000


def check_lattice_cost(M: "PeriodSum", delta: int) -> None:
    """Refuse a lattice period sum that would need more than MAX_LATTICE_EVALUATIONS evaluations."""
    if not M.interpolated and delta > 1 and float(delta) * M.K > MAX_LATTICE_EVALUATIONS:
        raise ProblemTooLarge(
            f"lattice sum for sensitivity={delta} needs {delta * M.K:.1e} cost evaluations "
            f"(cost not smooth enough for interpolation); limit is {MAX_LATTICE_EVALUATIONS:.0e}"
        )


class SeriesDiverged(ArithmeticError):
    """The series sum_k b^k Lsym(k*period + o) does not converge (cost grows too fast)."""


#: Gregory coefficients: sum_{k>=0} f_k = ∫_0^∞ f + f_0/2 + sum_m GREGORY[m-1] Δ^m f_0 (forward differences).
GREGORY = np.array([-1 / 12, 1 / 24, -19 / 720, 3 / 160, -863 / 60480, 275 / 24192])


class PeriodSum:
    r"""``M(o) = sum_{k>=0} b^k Lsym(k*period + o)`` for offsets ``0 <= o <= period``, b = e^{-ε}.

    *Direct mode.*  The sum is cut at K periods by an envelope test: with
    e_k = b^k max_{o in probes} Lsym(k*period + o), stop once ``e_k rho/(1-rho) <= rtol sum_{j<=k} e_j``
    where rho < 1 is the largest ratio e_{j+1}/e_j over the last 8 periods (for a nondecreasing
    cost the probe o = period bounds the period; the geometric tail estimate assumes the ratios
    stay <= rho, true when L(x + period)/L(x) is eventually nonincreasing, cf. [Geng13] Property 2.2).

    *Tail mode* (when more than ``k_direct`` periods would be needed, i.e. ε ≲ 0.01): periods
    k < k0 = k_direct are summed directly and the rest by Gregory's formula,
    ``sum_{k>=k0} f(k) = ∫_{k0}^∞ f + f(k0)/2 + sum_{m=1}^{6} g_m Δ^m f(k0)``, with the integral by
    adaptive Gauss-Legendre.  The forward differences scale like (ε + p/k0)^m, so the neglected
    terms are < 1e-15 relative for costs smooth beyond k0 periods (polynomial-like growth); a
    cost with kinks far out is summed less accurately there.

    ``interpolate=True`` replaces the k >= 1 part (smooth in o for a cost smooth away from 0) by
    a Chebyshev interpolant when that reproduces the sum to 4e-15 relative at 48 check points.

    Raises :class:`SeriesDiverged` when the contributions overflow or the tail integral diverges.
    The result is a *numeric* reference: flagged exact=False.
    """

    def __init__(self, lsym, epsilon: float, period: float, *, rtol: float = 1e-17, interpolate: bool = False, k_direct: int = 4096) -> None:
        self.lsym, self.epsilon, self.period = lsym, float(epsilon), float(period)
        self.rtol = rtol
        self.K, self.tail_estimate, self.rel_tail = 0, 0.0, 0.0
        self.k0: int | None = None  # start of the Gregory tail (None: direct mode)
        if not self._find_K(k_direct):
            self.K = self.k0 = k_direct
            self._setup_tail()
        self._cheb = None
        if interpolate and self.K >= 2:
            self._build_interpolant()

    @property
    def interpolated(self) -> bool:
        return self._cheb is not None

    def describe(self) -> str:
        how = f"{self.K} periods" if self.k0 is None else f"{self.k0} periods + Gregory tail"
        return how + (" (Chebyshev-interpolated in the offset)" if self.interpolated else "")

    def _weighted(self, y: np.ndarray) -> np.ndarray:
        """e^{-ε y} Lsym(y * period), 0 where the weight underflows (y in periods)."""
        w = np.exp(-self.epsilon * y)
        with np.errstate(over="ignore", invalid="ignore"):
            v = w * self.lsym(y * self.period)
        return np.where(w > 0, v, 0.0)

    def _direct(self, o: np.ndarray, k_start: int) -> np.ndarray:
        # k runs along the last (contiguous) axis so that numpy's pairwise summation applies:
        # rounding error ~ log2(K) ulp instead of K ulp.
        o = np.asarray(o, dtype=float)
        out = np.empty(o.size)
        k = np.arange(k_start, self.K, dtype=float)
        w = np.exp(-self.epsilon * k)
        step = max(1, 4_000_000 // max(k.size, 1))
        for s in range(0, o.size, step):
            block = o[s : s + step]
            out[s : s + step] = (self.lsym(block[:, None] + k[None, :] * self.period) * w[None, :]).sum(axis=1)
        if self.k0 is not None:
            out += self._tail(o)
        return out

    def _setup_tail(self) -> None:
        k0 = float(self.k0)
        edges = k0 + np.concatenate([[0.0], 2.0 ** np.arange(0, 64)])
        cells, err = adaptive_gl(self._weighted, edges, rtol=1e-15)
        total = float(cells.sum())
        if not math.isfinite(total):
            raise SeriesDiverged("tail integral of cost x probability weight diverges")
        if cells[-8:].sum() > 1e-12 * total:
            raise SeriesDiverged("tail integral does not decay")
        self._G = total
        probe = self._tail(np.array([0.0, self.period]), estimate=True)
        self.tail_estimate = float(err) + float(np.max(probe))
        head = float(self._weighted(np.arange(0.0, k0 + 1.0)).sum())
        self.rel_tail = self.tail_estimate / max(head + total, 1e-300)

    def _tail(self, o: np.ndarray, estimate: bool = False) -> np.ndarray:
        """sum_{k>=k0} b^k Lsym(k*period + o) by Gregory's formula (tail mode only)."""
        k0 = float(self.k0)
        tau = np.asarray(o, dtype=float) / self.period
        # f_o(k0 + m), m = 0..6, with f_o(x) = e^{-εx} Lsym((x + τ) period)
        m = np.arange(7.0)
        f = self._weighted(k0 + m[None, :] + tau[:, None]) * np.exp(self.epsilon * tau)[:, None]
        diffs = [np.diff(f, n=j, axis=1)[:, 0] for j in range(1, 7)]
        if estimate:
            return np.abs(GREGORY[-1] * diffs[-1])
        greg = f[:, 0] / 2.0 + sum(g * d for g, d in zip(GREGORY, diffs))
        # ∫_{k0}^∞ f_o = e^{ετ} [G - ∫_{k0}^{k0+τ} e^{-εy} Lsym(y period) dy]
        x20, w20 = _GL20
        half = tau / 2.0
        nodes = k0 + half[:, None] * (1.0 + x20[None, :])
        short = half * (self._weighted(nodes) @ w20)
        return np.exp(self.epsilon * tau) * (self._G - short) + greg

    def _build_interpolant(self) -> None:
        # M(o) = Lsym(o) + M1(o) with M1 = sum_{k>=1}: for a cost analytic away from 0, M1 is
        # analytic on [0, period] (nearest singularity at o = -period), so a degree-48 Chebyshev
        # interpolant is accurate to rounding; it is kept only if it matches the direct sum to
        # 4e-15 (relative to max |M1|) at 48 check points, else the direct sum is used.
        fit = ChebInterpolant(lambda o: self._direct(o, 1), 0.0, self.period, 48)
        check = np.clip(np.linspace(0.0, self.period, 48) + self.period / 97.0 * np.sin(np.arange(48)), 0.0, self.period)
        direct = self._direct(check, 1)
        scale = float(np.max(np.abs(direct))) if direct.size else 0.0
        if scale > 0 and np.max(np.abs(fit(check) - direct)) <= 4e-15 * scale:
            self._cheb = fit

    def _find_K(self, cap: int) -> bool:
        """Direct-mode truncation; False if more than ``cap`` periods would be needed."""
        probes = self.period * np.array([0.0, 0.25, 0.5, 0.75, 1.0])
        e_all = np.zeros(0)
        chunk = 64
        while True:
            start = e_all.size
            k = np.arange(start, start + chunk, dtype=float)
            w = np.exp(-self.epsilon * k)
            with np.errstate(over="ignore", invalid="ignore"):
                e = w * self.lsym(k[:, None] * self.period + probes[None, :]).max(axis=1)
            if not np.all(np.isfinite(e)):
                raise SeriesDiverged("cost x probability weight overflows")
            e_all = np.concatenate([e_all, e])
            n = e_all.size
            cums = np.cumsum(e_all)
            if n > 9:
                safe = np.where(e_all[:-1] > 0, e_all[:-1], 1.0)
                ratio = np.where(e_all[:-1] > 0, e_all[1:] / safe, np.where(e_all[1:] > 0, np.inf, 0.0))
                # rho[i - 8] = max ratio e_j/e_{j-1} over j = i-7..i, for i = 8..n-1
                rho = np.lib.stride_tricks.sliding_window_view(ratio, 8).max(axis=1)
                idx = np.arange(8, n)
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    tail = np.where(rho < 1.0, e_all[idx] * rho / (1.0 - rho), np.inf)
                stop = (cums[idx] > 0) & (tail <= self.rtol * cums[idx])
                first = max(start - 8, 0)
                hits = np.flatnonzero(stop[first:])
                if hits.size:
                    i = int(idx[first + hits[0]])
                    self.K, self.tail_estimate = i + 1, float(tail[i - 8])
                    self.rel_tail = self.tail_estimate / float(cums[i])
                    return True
            if w[-1] == 0.0:  # the weights underflowed: nothing further can contribute
                self.K, self.tail_estimate = n, 0.0
                return True
            if n >= cap:
                return False
            chunk = min(chunk * 2, cap - n)

    def __call__(self, offsets) -> np.ndarray:
        o = np.asarray(offsets, dtype=float)
        flat = o.ravel()
        if self._cheb is not None:
            out = self.lsym(flat) + self._cheb(flat)
        else:
            out = self._direct(flat, 0)
        return out.reshape(o.shape)


# --------------------------------------------------------------------------------------------
# quadrature

_GL10 = np.polynomial.legendre.leggauss(10)
_GL20 = np.polynomial.legendre.leggauss(20)


def adaptive_gl(f, edges, *, rtol: float = 1e-14, max_levels: int = 60) -> tuple[np.ndarray, float]:
    """Integrate a vectorised ``f`` over each cell ``[edges[i], edges[i+1]]``.

    Each cell is refined by bisection until the 10- and 20-point Gauss-Legendre rules agree to
    ``rtol * max(|I_cell|, 1e-6 |total| width/span)``; the 20-point values are kept.  Returns the per-cell
    integrals and the summed |I20 - I10| error estimate (a pessimistic bound for smooth f).
    """
    edges = np.asarray(edges, dtype=float)
    lo, hi = edges[:-1].copy(), edges[1:].copy()
    owner = np.arange(lo.size)
    result = np.zeros(lo.size)
    err_total = 0.0
    span = float(edges[-1] - edges[0]) or 1.0
    scale = None
    x10, w10 = _GL10
    x20, w20 = _GL20
    for _level in range(max_levels):
        if lo.size == 0:
            break
        mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
        pts = np.concatenate([mid[:, None] + half[:, None] * x10, mid[:, None] + half[:, None] * x20], axis=1)
        vals = f(pts)
        i10 = half * (vals[:, :10] @ w10)
        i20 = half * (vals[:, 10:] @ w20)
        if scale is None:
            scale = float(np.abs(i20).sum())
        err = np.abs(i20 - i10)
        # relative to the cell's own value, with a small absolute floor for cells where f ~ 0
        floor = 1e-6 * max(scale, 1e-300) * (2.0 * half) / span
        ok = err <= rtol * np.maximum(np.abs(i20), floor)
        ok |= half <= 1e-15 * np.maximum(np.abs(mid), 1e-300)  # cannot split further
        np.add.at(result, owner[ok], i20[ok])
        err_total += float(err[ok].sum())
        bad = ~ok
        lo, hi, mid, owner = lo[bad], hi[bad], mid[bad], owner[bad]
        lo, hi, owner = np.concatenate([lo, mid]), np.concatenate([mid, hi]), np.concatenate([owner, owner])
    else:
        if lo.size:  # out of levels: keep the best values, report the error
            mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
            vals = f(mid[:, None] + half[:, None] * x20)
            i20 = half * (vals @ w20)
            np.add.at(result, owner, i20)
            err_total += float(np.abs(i20).sum())
    return result, err_total
