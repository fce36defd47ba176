r"""Exact privacy audit of additive noise with a pmf on ℤ (tails included).

A noise pmf p on the integers, added to an integer query of sensitivity Δ, is audited exactly:

* the realised pure ε [QHFL22, Thm 1, (7)–(9)]

  .. math:: \varepsilon = \max_{0<|s|\le\Delta}\ \sup_{k\in\mathbb Z} \log\frac{p(k)}{p(k+s)},

  all shifts 1..Δ included (the worst one need not be Δ), ``None`` when some ratio is unbounded
  (a zero within distance Δ of positive mass, e.g. any finite support);
* the hockey-stick profile, the exact replacement of [QHFL22, Thm 2, (10)–(12)]
  (whose sufficient condition is flawed as printed)

  .. math:: \delta(\varepsilon) = \max_{0<|s|\le\Delta}\ \sum_{k\in\mathbb Z}
            \bigl[p(k) - e^{\varepsilon} p(k+s)\bigr]_+ ,

  summed over the whole lattice, geometric tails in closed form, and its inverse ε(δ) by
  bisection.  δ(0) is the worst total variation max_s TV(p, p(·+s)).

Data model.  A pmf is a :class:`~optmech.certify.LatticeMechanism` on ``Grid1D.integer(W)``:
window weights on k_lo..k_hi plus periodic geometric tails of period W and ratio β per period
(``right_gen[r]·β^m`` at k = k_hi − W + 1 + r + mW and ``left_gen[r]·β^m`` at k = k_lo + r − mW,
m >= 1); p(k) = weight(k)/total.  This is what ``optmech solve --save`` writes (the ``mechanism``
field, kind ``lattice_pmf``).  :func:`finite_pmf` builds the finitely supported case (no tails).

What is exact and what is rounded.  Every number is about the pmf *as given*: window masses
are the given floats, tail masses are the exact reals gen·β^m/total of the tail rule.

* ε is an upper bound of the exact value, within a few ulps of it: extrema are found by exact
  float comparisons, the worst ratio and its logarithm are evaluated with ``log1p`` and
  inflated by their rounding error; tail masses are evaluated in extended precision
  (``numpy.longdouble``) with directed rounding.
* δ is a rigorous upper bound: e^ε is rounded down, every term [a − e^ε b]_+ is rounded up
  (tail masses rounded up where they enter as p(k), down where they enter as p(k+s)), the
  nonnegative terms are summed with ``math.fsum`` (correctly rounded) for every shift that can
  attain the maximum (other shifts are excluded with a cheaper sum carrying the a-priori bound
  γ_n = nU/(1 − nU)), and the geometric tail series are summed in closed form with β/(1 − β)
  rounded up.  The bound exceeds the exact value by a few units of roundoff of the mass
  involved (about 1e-15 absolute for a normalised pmf).  δ bounds both the masses as given and their renormalisation to total
  mass exactly 1 (they differ by the factor Σp, reported as ``mass_error``); it is clipped to
  [0, 1].  At and above the realised ε, δ = 0 exactly (that is a theorem, not a rounding).
* An ε given as a decimal string is taken at its exact decimal value (rounded down to a float
  before use, which can only raise δ).

Cost.  ε is O(N) (sliding window max/min).  δ at one ε is O(N) per shift and at most 2Δ
shifts (Δ for a symmetric pmf, where δ_s = δ_{−s}); :func:`delta_curve` and
:func:`epsilon_for_delta` skip shifts whose value is provably not the maximum, using that
δ_s is convex and nonincreasing in e^ε with a known limit, so a curve costs a few full sweeps.
Memory is O(N + Δ).
"""

from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Sequence

import numpy as np

from optmech.problems.lattice import LatticeMechanism
from optmech.errors import SpecError
from optmech.problems.lattice import Grid1D

#: The file readers (``read_pmf_csv``, ``load_pmf``, ``audit_file``) are in :mod:`optmech.audit_files`.

__all__ = [
    "hockey_stick_array",
    "PMF_SUM_TOL",
    "AuditReport",
    "finite_pmf",
    "realised_epsilon",
    "hockey_stick",
    "delta_curve",
    "epsilon_for_delta",
    "audit",
    "check_pmf",
    "check_sensitivity",
]

#: A CSV pmf must sum to 1 within this absolute tolerance.
PMF_SUM_TOL = 1e-9
#: Largest lattice range the audit materialises (window plus 2(2Δ + W) tail/padding points).
MAX_EXTENDED_POINTS = 10_000_000
#: Points of the default δ(ε) curve.
DEFAULT_CURVE_POINTS = 51
#: Relative tolerance of :func:`epsilon_for_delta` (on max(1, ε)).
EPSILON_TOL = 1e-10

U = 2.0**-53  # unit roundoff of float64
_LD = np.longdouble
_EPS_LD = float(np.finfo(np.longdouble).eps)
#: Relative error of a tail weight gen·β^m evaluated in long double (one powl, one product;
#: libm's powl is within a few ulps, so 16 eps is a wide margin).  On platforms where
#: long double is double this is 16 float64 eps, still rigorous.
_TAIL_RELERR = 16.0 * _EPS_LD
_TINY = 2.0**-1074  # smallest subnormal: bounds the absolute rounding error of an underflowing product


# ------------------------------------------------------------------------------------------------
# input validation
# ------------------------------------------------------------------------------------------------
def check_sensitivity(sensitivity: Any) -> int:
    """Integer Δ >= 1 (ints, integral floats and integer strings accepted)."""
    if isinstance(sensitivity, (bool, np.bool_)):
        raise SpecError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    try:
        if isinstance(sensitivity, str):
            value = int(sensitivity.strip())
        elif isinstance(sensitivity, (int, np.integer)):
            value = int(sensitivity)
        else:
            x = float(sensitivity)
            if not (math.isfinite(x) and x == int(x)):
                raise ValueError
            value = int(x)
    except (TypeError, ValueError, OverflowError):
        raise SpecError(f"sensitivity must be an integer >= 1, got {sensitivity!r}") from None
    if value < 1:
        raise SpecError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    return value


def _exact_nonneg(value: Any, what: str, upper: float = math.inf) -> tuple[str, float]:
    """(key, float rounded down) for an ε or δ given as a string or a number.

    A string is read at its exact decimal value (``Fraction``) and rounded *down* to a float;
    a number is exact as it is.  Raises SpecError unless it is finite, >= 0 and <= ``upper``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise SpecError(f"{what} must be a finite number >= 0, got {value!r}")
    if isinstance(value, str):
        key = value
        text = value.strip()
        try:
            x = float(text)
        except ValueError:
            raise SpecError(f"{what} must be a finite number >= 0, got {value!r}") from None
        if not (math.isfinite(x) and 0 <= x <= upper):
            raise SpecError(f"{what} must be a finite number in [0, {upper:g}], got {value!r}")
        try:
            exact = Fraction(text)
        except (ValueError, ZeroDivisionError):
            exact = Fraction(x)  # a form Fraction does not read (e.g. hex floats): float is exact
        if Fraction(x) > exact:
            x = math.nextafter(x, -math.inf)
        return key, max(x, 0.0)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{what} must be a finite number >= 0, got {value!r}") from None
    if not (math.isfinite(x) and 0 <= x <= upper):
        raise SpecError(f"{what} must be a finite number in [0, {upper:g}], got {value!r}")
    key = str(value) if isinstance(value, (int, np.integer)) else repr(x)
    return key, x


def check_pmf(pmf: LatticeMechanism) -> None:
    """Reject anything that is not a lattice pmf with a summable tail rule."""
    if not isinstance(pmf, LatticeMechanism):
        raise SpecError(f"the audit takes a LatticeMechanism (see finite_pmf), got {type(pmf).__name__}")
    if pmf.grid.kind != "integer":
        raise SpecError("the audit handles lattice pmfs on the integers, not piecewise-constant densities")
    W = int(pmf.grid.W)
    w = np.asarray(pmf.weights)
    if w.ndim != 1 or len(w) == 0:
        raise SpecError("the pmf window must be a non-empty 1-D array")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise SpecError("pmf weights must be finite and >= 0")
    for name in ("left_gen", "right_gen"):
        g = np.asarray(getattr(pmf, name))
        if g.shape != (W,) or not (np.all(np.isfinite(g)) and np.all(g >= 0)):
            raise SpecError(f"the tail generator {name} must hold {W} finite weights >= 0")
    beta = float(pmf.beta)
    has_tail = bool(np.any(pmf.left_gen > 0) or np.any(pmf.right_gen > 0))
    if not math.isfinite(beta) or beta < 0 or (has_tail and beta >= 1):
        raise SpecError(f"the tail ratio beta must lie in [0, 1), got {pmf.beta!r}")
    total = float(pmf.total)
    if not math.isnan(total) and not (math.isfinite(total) and total > 0):
        raise SpecError(f"the pmf normaliser 'total' must be finite and > 0, got {pmf.total!r}")
    if not (np.any(w > 0) or (has_tail and beta > 0)):
        raise SpecError("the pmf has no positive mass")


def finite_pmf(k: Sequence[int] | np.ndarray, p: Sequence[float] | np.ndarray) -> LatticeMechanism:
    """A finitely supported pmf p(k[i]) = p[i] as a tail-free :class:`LatticeMechanism`.

    ``k`` are distinct integers (gaps are zero mass; integral floats such as 3.0 are accepted),
    ``p`` finite and >= 0.  The masses are taken as given (``total = 1``): no renormalisation.
    """
    k_arr = np.asarray(k)
    p_arr = np.asarray(p, dtype=float)
    if k_arr.ndim != 1 or p_arr.ndim != 1 or len(k_arr) != len(p_arr) or len(k_arr) == 0:
        raise SpecError("finite_pmf needs two 1-D arrays k and p of the same nonzero length")
    if k_arr.dtype.kind in "iu":
        k_int = k_arr.astype(np.int64)
    else:
        kf = np.asarray(k_arr, dtype=float)
        if not (np.all(np.isfinite(kf)) and np.all(kf == np.round(kf)) and np.all(np.abs(kf) <= 2.0**53)):
            bad = kf[~(np.isfinite(kf) & (kf == np.round(kf)))]
            raise SpecError(f"pmf support points must be integers, got {bad[0] if len(bad) else kf[0]!r}")
        k_int = kf.astype(np.int64)
    if not (np.all(np.isfinite(p_arr)) and np.all(p_arr >= 0)):
        raise SpecError("pmf masses must be finite and >= 0")
    uniq, counts = np.unique(k_int, return_counts=True)
    if np.any(counts > 1):
        raise SpecError(f"pmf support point k = {int(uniq[np.argmax(counts > 1)])} appears more than once")
    k_lo, k_hi = int(uniq[0]), int(uniq[-1])
    if k_hi - k_lo + 1 > MAX_EXTENDED_POINTS:
        raise SpecError(
            f"pmf support spans {k_hi - k_lo + 1} integers; the audit handles at most {MAX_EXTENDED_POINTS}"
        )
    weights = np.zeros(k_hi - k_lo + 1)
    weights[k_int - k_lo] = p_arr
    mech = LatticeMechanism(Grid1D.integer(1), k_lo, weights, 0.0, np.zeros(1), np.zeros(1), total=1.0)
    check_pmf(mech)
    return mech


# ------------------------------------------------------------------------------------------------
# sliding extrema and the pure ε
# ------------------------------------------------------------------------------------------------
def _sliding(x: np.ndarray, size: int, op: np.ufunc, fill: Any) -> np.ndarray:
    """op-extremum of every window x[i : i + size], i = 0..n − size (van Herk / Gil–Werman).

    Works for any dtype (float64, long double, int8); ``fill`` is the identity of ``op``.
    O(n) regardless of ``size``.
    """
    n = len(x)
    if size <= 1:
        return x.copy()
    nb = -(-n // size)
    xp = np.full(nb * size, fill, dtype=x.dtype)
    xp[:n] = x
    blocks = xp.reshape(nb, size)
    pre = op.accumulate(blocks, axis=1).ravel()
    suf = op.accumulate(blocks[:, ::-1], axis=1)[:, ::-1].ravel()
    m = n - size + 1
    return op(suf[:m], pre[size - 1 : size - 1 + m])


@dataclass(frozen=True)
class _Scan:
    """Result of a sliding-window ratio scan over part of the extended lattice."""

    log_ratio: float  # upper bound of the largest log p(i)/p(j) over positive pairs, -inf if none
    pair: tuple[int, int] | None  # (i, j) lattice indices of a worst positive pair
    unbounded: tuple[int, int] | None  # (i, j) with p(i) > 0 = p(j), |i − j| <= Δ, if any


def _scan(hi: np.ndarray, lo: np.ndarray, size: int, k_first: int) -> _Scan:
    """Worst ratio over all pairs at distance < ``size`` inside the array.

    ``hi``/``lo`` are upper/lower bounds of the masses (equal where exact).  The window max of
    ``hi`` over the window min of ``lo`` bounds every ratio of the window from above, and a
    window's max and min form a pair within the window, so the largest window quotient is the
    largest pair ratio.  The quotient's logarithm is evaluated as log1p((max − min)/min) in the
    array's precision: the subtraction is exact (Sterbenz) or relative-rounded, the quotient
    and log1p add one rounding each, so the error is below 8 units of roundoff relative; the
    returned value is inflated by that and rounded up to float64.
    """
    dt = hi.dtype
    eps = float(np.finfo(dt).eps)
    pos = lo > 0
    mx = _sliding(hi, size, np.maximum, -np.inf)
    mn = _sliding(np.where(pos, lo, np.inf).astype(dt), size, np.minimum, np.inf)
    has_zero = _sliding((hi == 0).astype(np.int8), size, np.maximum, 0) > 0
    has_pos = mx > 0
    unbounded = None
    bad = has_zero & has_pos
    if np.any(bad):
        i = int(np.argmax(bad))
        seg = hi[i : i + size]
        unbounded = (k_first + i + int(np.argmax(seg)), k_first + i + int(np.argmax(seg == 0)))
    valid = np.isfinite(mn) & has_pos
    if not np.any(valid):
        return _Scan(-math.inf, None, unbounded)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        val = np.where(valid, np.log1p((mx - mn) / mn), -np.inf)
    i = int(np.argmax(val))
    top = val[i]
    if np.isinf(top) and dt != _LD:
        # quotient overflowed float64 (ratio > 1e308): redo this part in long double
        return _scan(hi.astype(_LD), lo.astype(_LD), size, k_first)
    if dt == np.float64 and _LD != np.float64 and top > 0:
        # re-evaluate every window that may be the largest in long double (float extrema are exact)
        cand = np.flatnonzero(val >= top * (1 - 32 * U))
        mxl, mnl = mx[cand].astype(_LD), mn[cand].astype(_LD)
        vl = np.log1p((mxl - mnl) / mnl)
        j = int(np.argmax(vl))
        i, top = int(cand[j]), vl[j]
        dt, eps = np.dtype(_LD), _EPS_LD
    # float64: two roundings (≤ 2.01U·val, since x/(1+x) <= log1p x) plus log1p within 1 ulp;
    # long double: the same with log1pl within 3 ulps.  4 or 8 eps (= 8 or 16 units) covers both.
    mult = 4 if dt == np.float64 else 8
    up = top * (1 + mult * eps) + dt.type(np.finfo(dt).smallest_subnormal) if top > 0 else dt.type(0)
    out = float(up)
    if dt.type(out) < up:
        out = math.nextafter(out, math.inf)
    if dt == np.float64:
        out = math.nextafter(out, math.inf)
    seg_hi, seg_lo = hi[i : i + size], np.where(pos[i : i + size], lo[i : i + size], np.inf)
    pair = (k_first + i + int(np.argmax(seg_hi)), k_first + i + int(np.argmin(seg_lo)))
    return _Scan(max(out, 0.0), pair, unbounded)


# ------------------------------------------------------------------------------------------------
# the extended lattice
# ------------------------------------------------------------------------------------------------
class _Lattice:
    """The pmf on a finite stretch of ℤ that represents the whole lattice for sensitivity Δ.

    With tails, the terms of δ are materialised for k in T = [k_lo − Δ − W, k_hi + Δ + W] and
    the masses on T ± Δ.  For k >= K0 = k_hi + Δ + 1 both k and k + s (|s| <= Δ) lie in the
    right tail, where p(k + W) = β p(k), so term(k + W) = β·term(k): the terms beyond K0 are W
    geometric series whose first terms are the last W terms of T ("heads"); the same holds
    on the left below K1 = k_lo − Δ − 1.  Without tails T is the window and the masses on T ± Δ
    are zero outside it.  Pure-ε pairs repeat with period W beyond the window, so pairs within
    T ± Δ (which contains every pair whose smaller index is in the first tail period) are all
    pairs up to scaling.
    """

    def __init__(self, pmf: LatticeMechanism, sensitivity: int) -> None:
        check_pmf(pmf)
        D = check_sensitivity(sensitivity)
        W = int(pmf.grid.W)
        w = np.asarray(pmf.weights, dtype=float)
        N = len(w)
        beta = float(pmf.beta)
        lg, rg = np.asarray(pmf.left_gen, dtype=float), np.asarray(pmf.right_gen, dtype=float)
        self.tails = beta > 0 and bool(np.any(lg > 0) or np.any(rg > 0))
        self.pmf, self.D, self.W, self.N, self.beta = pmf, D, W, N, beta
        tpad = D + W if self.tails else 0
        epad = tpad + D
        n_ext = N + 2 * epad
        if n_ext > MAX_EXTENDED_POINTS:
            raise SpecError(
                f"the audit would need {n_ext} lattice points (window {N}, sensitivity {D}, tail period {W}); "
                f"the limit is {MAX_EXTENDED_POINTS}"
            )
        self.k_lo, self.k_hi = int(pmf.k_lo), int(pmf.k_lo) + N - 1
        self.e0 = self.k_lo - epad  # lattice index of ext[0]
        self.t0, self.nt = epad - tpad, N + 2 * tpad  # term range inside ext
        self.epad = epad
        # float64 masses: tails rounded up (used as p(k)) and down (used as p(k+s))
        up = np.zeros(n_ext)
        up[epad : epad + N] = w
        dn = up.copy()
        # long-double masses of the two padded edges (upper and lower bounds), for the ε scan
        self.edge_ld: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for side in ("left", "right"):
            hi_ld = np.zeros(epad, dtype=_LD)
            lo_ld = np.zeros(epad, dtype=_LD)
            if self.tails:
                if side == "right":
                    kk = np.arange(self.k_hi + 1, self.k_hi + 1 + epad, dtype=np.int64)
                    m, r = np.divmod(kk - (self.k_hi - W + 1), W)
                    gen = rg[r]
                else:
                    kk = np.arange(self.e0, self.k_lo, dtype=np.int64)
                    m, r = np.divmod((self.k_lo + W - 1) - kk, W)
                    gen = lg[W - 1 - r]
                val = gen.astype(_LD) * np.power(_LD(beta), m.astype(_LD))
                if np.any((val == 0) & (gen > 0)):
                    raise SpecError("the tail rule decays too fast to audit (beta^m underflows in extended precision)")
                hi_ld = val * _LD(1 + _TAIL_RELERR)
                lo_ld = val * _LD(1 - _TAIL_RELERR)
                f_hi = hi_ld.astype(np.float64)
                f_lo = lo_ld.astype(np.float64)
                f_hi = np.where(f_hi.astype(_LD) < hi_ld, np.nextafter(f_hi, np.inf), f_hi)
                f_lo = np.where(f_lo.astype(_LD) > lo_ld, np.nextafter(f_lo, -np.inf), f_lo)
                sl = slice(0, epad) if side == "left" else slice(epad + N, n_ext)
                up[sl], dn[sl] = f_hi, f_lo
            self.edge_ld[side] = (hi_ld, lo_ld)
        self.up, self.dn = up, dn
        # closed-form tail factor β/(1 − β), rounded up
        if self.tails:
            g = beta / (1.0 - beta)
            self.gm1 = math.nextafter(math.nextafter(g * (1 + 4 * U), math.inf), math.inf)
        else:
            self.gm1 = 0.0
        # normalisers: the stored total, and the exact sum of the weights (lower bound)
        tail_w = (math.fsum(lg) + math.fsum(rg)) * (beta / (1.0 - beta)) if self.tails else 0.0
        self.weight_sum = math.fsum(w) + tail_w
        # fsum is correctly rounded (U); the tail part carries about 6 roundings
        ws_lo = self.weight_sum - (2 * U * self.weight_sum + 10 * U * tail_w)
        total = float(pmf.total)
        self.total = total if math.isfinite(total) else self.weight_sum
        self.z_lo = min(self.total, ws_lo) if math.isfinite(total) else ws_lo
        self.tail_mass = tail_w / self.total
        self.symmetric = bool(np.array_equal(w, w[::-1]) and (not self.tails or np.array_equal(rg, lg[::-1])))
        self._eps: tuple | None = None

    # -- pure ε ------------------------------------------------------------------------------
    def epsilon(self) -> tuple[float | None, float | None, tuple[int, int] | None]:
        """(ε upper bound or None, largest finite log-ratio upper bound or None, witness pair)."""
        if self._eps is not None:
            return self._eps
        D, N, size = self.D, self.N, self.D + 1
        win = np.asarray(self.pmf.weights, dtype=float)
        (lh, ll), (rh, rl) = self.edge_ld["left"], self.edge_ld["right"]
        scans = []
        if N >= size:
            scans.append(_scan(win, win, size, self.k_lo))
            # every window that reaches outside the window array (epad >= Δ >= 1)
            head, tail = win[:D].astype(_LD), win[N - D :].astype(_LD)
            scans.append(_scan(np.concatenate([lh, head]), np.concatenate([ll, head]), size, self.e0))
            scans.append(_scan(np.concatenate([tail, rh]), np.concatenate([tail, rl]), size, self.k_hi - D + 1))
        else:
            mid = win.astype(_LD)
            scans.append(_scan(np.concatenate([lh, mid, rh]), np.concatenate([ll, mid, rl]), size, self.e0))
        best = max(scans, key=lambda s: s.log_ratio)
        unb = next((s.unbounded for s in scans if s.unbounded is not None), None)
        lmax = best.log_ratio if best.pair is not None else None
        if unb is not None:
            self._eps = (None, lmax, unb)
        else:
            self._eps = (lmax if lmax is not None else 0.0, lmax, best.pair)
        return self._eps

    # -- δ for one shift ----------------------------------------------------------------------
    def term_sum(self, s: int, c3: float, buf: np.ndarray | None = None, *, exact_sum: bool = False) -> float:
        """Upper bound of Σ_k [w(k) − c·w(k+s)]_+ over ℤ (weight units) for c = e^ε, c3 = _c3(ε).

        Proof: u = fl(c3·b) <= c·b + 2^-1075 for b = the rounded-down w(k+s), so a − u (a the
        rounded-up w(k)) bounds the true term from above up to 2^-1075; fl(a − u) >= (a − u)(1 − U)
        when positive.  The nonnegative terms are summed either with ``np.add.reduce`` (any order:
        within γ_n = nU/(1 − nU) relative) or, with ``exact_sum``, with ``math.fsum`` (correctly
        rounded: within U).  Terms beyond the materialised range are W geometric series with
        ratio β whose first terms are the heads: their sum is multiplied by β/(1 − β) rounded up.
        """
        t0, nt = self.t0, self.nt
        a = self.up[t0 : t0 + nt]
        b = self.dn[t0 + s : t0 + s + nt]
        if buf is None:
            buf = np.empty(nt)
        np.multiply(b, c3, out=buf)
        np.subtract(a, buf, out=buf)
        np.maximum(buf, 0.0, out=buf)
        W = self.W
        if exact_sum:
            body = math.fsum(buf[buf > 0].tolist())
            heads = math.fsum(buf[:W].tolist()) + math.fsum(buf[nt - W :].tolist()) if self.tails else 0.0
            gamma = 2 * U
        else:
            body = float(np.add.reduce(buf))
            heads = float(np.add.reduce(buf[:W])) + float(np.add.reduce(buf[nt - W :])) if self.tails else 0.0
            n = nt + 4
            gamma = n * U / (1 - n * U)
        total = body + self.gm1 * heads
        bound = total * (1 + gamma) / (1 - U) * (1 + 4 * U) + (nt * (1 + self.gm1) + 1) * _TINY
        return math.nextafter(bound, math.inf)

    def to_delta(self, weight_bound: float) -> float:
        """Weight-unit upper bound → δ upper bound (divided by a lower bound of the normaliser)."""
        if weight_bound <= 0:
            return 0.0
        d = math.nextafter(weight_bound / self.z_lo * (1 + 2 * U), math.inf)
        return min(d, 1.0)


def _c3(epsilon_lo: float) -> float:
    """A float c3 with c3·(1 + 4U) <= e^ε, so that fl(c3·b) <= e^ε·b for every float b >= 0.

    math.exp is within one ulp, so two steps down give c <= e^ε; c3 = fl(c·(1 − 8U)) <=
    c(1 − 8U)(1 + U), hence c3·(1 + 4U) < c and fl(c3·b) <= c3·b(1 + U) <= c·b (up to
    underflow, handled separately).  The slack 8U leaves room for the level keys below.
    """
    if epsilon_lo == 0.0:
        return 1.0 - 8 * U  # e^0 = 1 exactly
    try:
        c = math.exp(epsilon_lo)
    except OverflowError:
        c = np.finfo(float).max
    if math.isinf(c):
        c = np.finfo(float).max
    c = math.nextafter(math.nextafter(c, 0.0), 0.0)
    return c * (1 - 8 * U)


# ------------------------------------------------------------------------------------------------
# δ over all shifts: branch and bound with convexity in c = e^ε
# ------------------------------------------------------------------------------------------------
class _DeltaEvaluator:
    """max_s δ_s(ε) for many ε without sweeping every shift every time.

    For each shift, f_s(c) = Σ_k [p(k) − c·p(k+s)]_+ is convex and nonincreasing in c = e^ε
    (a sum of max(0, affine)), equals its limit z_s = Σ_{p(k+s)=0} p(k) for c >= c_s =
    max ratio p(k)/p(k+s) over positive pairs, and is 0 from e^{ε_pure} on.  Hence for
    c_a <= c <= c_b, f_s(c) <= chord between upper bounds at c_a and c_b, and f_s(c) <= f_s(c_a).
    Every evaluated ε leaves a "level" (an upper bound for every shift at that c); a new ε
    bounds every shift from its neighbouring levels and the limit, then evaluates shifts in
    decreasing order of bound until the next bound cannot beat the best value found.  The
    result is the same rigorous upper bound a full sweep would give, up to which upper bound is
    kept per shift.
    """

    def __init__(self, lat: _Lattice, eps_pure: float | None) -> None:
        self.lat = lat
        D, nt = lat.D, lat.nt
        self.shifts = np.arange(1, D + 1) if lat.symmetric else np.concatenate([np.arange(-D, 0), np.arange(1, D + 1)])
        S = len(self.shifts)
        with np.errstate(divide="ignore"):
            self._la = np.log(lat.up)  # -inf where zero
            self._lb = np.log(np.where(lat.dn > 0, lat.dn, np.inf))  # +inf where zero
        fin = np.isfinite(self._la)
        # np.log is within a few ulps; 24U·max|log p| bounds the error of a log-ratio
        self._e_log = 24 * U * (1.0 + (float(np.max(np.abs(self._la[fin]))) if np.any(fin) else 0.0))
        self._zb = (lat.dn == 0).astype(np.float64)
        # per-shift limits, filled in lazily when a shift is first evaluated; until then the
        # global ones: f_s = 0 beyond e^{ε_pure} (pure), nothing known otherwise
        self.c_pure = math.exp(eps_pure) * (1 + 4 * U) if eps_pure is not None and eps_pure < 700 else math.inf
        self.c_right = np.full(S, self.c_pure)
        self.z = np.zeros(S) if eps_pure is not None else np.full(S, np.inf)
        self.known = np.zeros(S, dtype=bool)
        self.levels_c: list[float] = []  # sorted keys c of evaluated levels
        self.levels_u: list[np.ndarray] = []
        self.buf = np.empty(nt)
        self.evaluations = 0

    def _limits(self, i: int) -> None:
        """c_right_s (upper bound of the largest ratio p(k)/p(k+s) over positive pairs) and
        z_s (upper bound of Σ_{p(k+s)=0} p(k), weight units) for shift index i."""
        lat, s = self.lat, int(self.shifts[i])
        t0, nt, W = lat.t0, lat.nt, lat.W
        buf = self.buf
        np.subtract(self._la[t0 : t0 + nt], self._lb[t0 + s : t0 + s + nt], out=buf)
        lmax = float(np.max(buf))  # -inf when no pair (k, k+s) has both masses positive
        if lmax == -math.inf:
            c_right = 1.0
        elif lmax + self._e_log < 700.0:
            c_right = min(math.exp(lmax + self._e_log) * (1 + 4 * U), self.c_pure)
        else:
            c_right = self.c_pure
        a = lat.up[t0 : t0 + nt]
        zs = self._zb[t0 + s : t0 + s + nt]
        zsum = float(a @ zs)
        if lat.tails:
            zsum += lat.gm1 * (float(a[:W] @ zs[:W]) + float(a[nt - W :] @ zs[nt - W :]))
        n = nt + 8
        z = zsum * (1 + n * U / (1 - n * U)) * (1 + 8 * U) + _TINY * (nt + 1) if zsum > 0 else 0.0
        self.c_right[i] = c_right
        self.z[i] = min(self.z[i], z)
        self.known[i] = True

    @property
    def limit(self) -> float:
        """Upper bound of δ(∞) = max_s Σ_{p(k+s)=0} p(k) in weight units."""
        for i in np.flatnonzero(~self.known):
            self._limits(int(i))
        return float(np.max(self.z)) if len(self.z) else 0.0

    @staticmethod
    def _chord(ca: float, ua: np.ndarray, cb: np.ndarray | float, ub: np.ndarray, c: float) -> np.ndarray:
        """Upper bound of the chord through (ca, ua) and (cb, ub) at c (ua, ub >= 0 finite)."""
        lam = (c - ca) / (cb - ca)
        val = ua + (ub - ua) * lam
        return val * (1 + 1e-12) + 8 * U * (ua + ub) + 1e-300

    def _bounds(self, c: float) -> np.ndarray:
        """An upper bound of f_s(c) for every shift, from the levels and the limits."""
        j = bisect.bisect_left(self.levels_c, c)
        if j < len(self.levels_c) and self.levels_c[j] == c:
            return self.levels_u[j].copy()
        bound = np.full(len(self.shifts), np.inf)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if j > 0:
                ca, ua = self.levels_c[j - 1], self.levels_u[j - 1]
                bound = np.minimum(bound, ua)  # nonincreasing
                fin = np.isfinite(ua)
                ok = fin & (self.c_right > c) & np.isfinite(self.c_right)
                if np.any(ok):  # chord to the limit point (c_right, z)
                    chord = self._chord(ca, ua, self.c_right, self.z, c)
                    bound = np.where(ok, np.minimum(bound, chord), bound)
                if j < len(self.levels_c):  # chord to the next level
                    cb, ub = self.levels_c[j], self.levels_u[j]
                    ok2 = fin & np.isfinite(ub)
                    if np.any(ok2):
                        chord2 = self._chord(ca, ua, cb, ub, c)
                        bound = np.where(ok2, np.minimum(bound, chord2), bound)
        return np.where(c >= self.c_right, np.minimum(bound, self.z), bound)

    def weight_delta(self, c3: float) -> tuple[float, int | None]:
        """(weight-unit upper bound of max_s f_s(c), a worst shift) at c = e^ε, c3 = _c3(ε).

        A term sum computed with c3 bounds f_s(c) for every c >= c3·(1 + U); the level is keyed
        by c = next float above fl(c3·(1 + 2U)), which lies in [c3·(1 + U), c3·(1 + 4U)] and so
        below e^ε: the bounds stored there are bounds of f_s at that key, and f_s(e^ε) is no
        larger (f_s is nonincreasing).
        """
        c = math.nextafter(c3 * (1 + 2 * U), math.inf)
        bound = self._bounds(c)
        best, worst = 0.0, None
        level = bound.copy()
        # pass 1: fast sums (within γ_n) in decreasing order of bound; pass 2: the few shifts
        # that can still be the maximum are re-summed exactly (math.fsum, within U)
        for exact in (False, True):
            order = np.argsort(-level, kind="stable")
            best, worst = 0.0, None
            for i in order:
                if not level[i] > best:
                    break
                if not self.known[i] and c > 1.0:  # at ε = 0 every shift is summed anyway
                    self._limits(int(i))
                    if c >= self.c_right[i]:
                        level[i] = min(level[i], self.z[i])
                        if not level[i] > best:
                            continue
                v = min(self.lat.term_sum(int(self.shifts[i]), c3, self.buf, exact_sum=exact), float(level[i]))
                self.evaluations += 1
                level[i] = v
                if v > best:
                    best, worst = v, int(self.shifts[i])
        j = bisect.bisect_left(self.levels_c, c)
        if j < len(self.levels_c) and self.levels_c[j] == c:
            self.levels_u[j] = np.minimum(self.levels_u[j], level)
        else:
            self.levels_c.insert(j, c)
            self.levels_u.insert(j, level)
        return best, worst


class _Auditor:
    """One pmf and sensitivity: ε, δ at many ε, ε at a δ, sharing all precomputation."""

    def __init__(self, pmf: LatticeMechanism, sensitivity: int) -> None:
        self.lat = _Lattice(pmf, sensitivity)
        self.eps, self.lmax, self.witness = self.lat.epsilon()
        self._ev: _DeltaEvaluator | None = None

    @property
    def ev(self) -> _DeltaEvaluator:
        if self._ev is None:
            self._ev = _DeltaEvaluator(self.lat, self.eps)
        return self._ev

    def delta(self, epsilon_lo: float) -> tuple[float, int | None]:
        """(δ upper bound, worst shift) at ε = epsilon_lo (a float, exact)."""
        if self.eps is not None and epsilon_lo >= self.eps:
            return 0.0, None  # p(k) <= e^{ε_true} p(k+s) <= e^ε p(k+s) for every k, s
        wb, s = self.ev.weight_delta(_c3(epsilon_lo))
        return self.lat.to_delta(wb), s

    def deltas(self, eps_lo: Sequence[float]) -> tuple[list[float], list[int | None]]:
        """δ at several ε (evaluated in increasing order, which makes the bounds effective)."""
        out: list[float] = [0.0] * len(eps_lo)
        shifts: list[int | None] = [None] * len(eps_lo)
        for i in sorted(range(len(eps_lo)), key=lambda i: eps_lo[i]):
            out[i], shifts[i] = self.delta(eps_lo[i])
        return out, shifts

    def delta_limit(self) -> float:
        """Upper bound of lim_{ε→∞} δ(ε) = max_s Σ_{p(k+s)=0} p(k) (0 when pure)."""
        if self.eps is not None:
            return 0.0
        return self.lat.to_delta(self.ev.limit)

    def epsilon_for_delta(self, delta_lo: float, tol: float = EPSILON_TOL) -> float | None:
        """Smallest ε (to ``tol``·max(1, ε)) with δ(ε) <= delta_lo proven; None if none is."""
        d0, _ = self.delta(0.0)
        if d0 <= delta_lo:
            return 0.0
        if self.eps is not None:
            hi = self.eps
        else:
            if self.lmax is None or self.lmax <= 0:
                return None  # δ(ε) is constant = δ(0)
            hi = self.lmax * (1 + 1e-9) + 1e-9  # beyond every finite ratio: δ = its limit
            if self.delta(hi)[0] > delta_lo:
                return None
        lo = 0.0
        while hi - lo > tol * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi:
                break
            if self.delta(mid)[0] <= delta_lo:
                hi = mid
            else:
                lo = mid
        return hi


# ------------------------------------------------------------------------------------------------
# public functions
# ------------------------------------------------------------------------------------------------
def realised_epsilon(pmf: LatticeMechanism, sensitivity: int) -> float | None:
    r"""Realised pure ε of additive noise with this pmf at integer sensitivity Δ, or None.

    .. math:: \varepsilon = \log \max_{0<|s|\le\Delta} \sup_{k\in\mathbb Z} p(k)/p(k+s)

    [QHFL22, Thm 1, (7)–(8): the ε-DP condition is necessary and
    sufficient; singletons attain it [derived], so this is the tight ε].

    The supremum runs over the whole lattice, tails included.  It is exact on a finite range:
    beyond the window the tail rule gives p(k + W) = β·p(k) (right) and p(k − W) = β·p(k)
    (left), so shifting a pair that lies entirely in one tail by one period multiplies both
    masses by β and leaves the ratio unchanged.  Every pair (k, k + s), |s| <= Δ, is thus a
    copy of a pair whose inner point is in the window or the first tail period, and the
    window ± (W + Δ) contains all of those; the scan covers it with a sliding max/min over
    windows of Δ + 1 points (O(N), independent of Δ).

    Returns ``None`` when some ratio is unbounded: a zero within distance Δ of positive mass
    (every finitely supported pmf).  Otherwise the returned float is an upper bound of the
    exact value for the given float masses (and the exact tail rule), within a few ulps of it.
    """
    return _Auditor(pmf, sensitivity).eps


def hockey_stick(pmf: LatticeMechanism, shift: int, epsilon: float | str) -> float:
    r"""Upper bound of the hockey-stick divergence Σ_k [p(k) − e^ε p(k+s)]_+ over all of ℤ.

    The ε-term of the (ε, δ) guarantee between the outputs of x and x − s [QHFL22, Def. 2 (4);
    the exact form of Thm 2].  Tails are summed in closed form
    (geometric series of the last W terms, see ``_Lattice``).  Rigorous upper bound of the
    exact value, tight to about U times the mass involved; clipped to [0, 1].
    """
    if isinstance(shift, (bool, np.bool_)) or not isinstance(shift, (int, np.integer)) or int(shift) == 0:
        raise SpecError(f"shift must be a nonzero integer, got {shift!r}")
    _, eps = _exact_nonneg(epsilon, "epsilon")
    lat = _Lattice(pmf, abs(int(shift)))
    eps_pure = lat.epsilon()[0]
    if eps_pure is not None and eps >= eps_pure:
        return 0.0  # every ratio at distance <= |s| is <= e^ε: all terms vanish
    return lat.to_delta(lat.term_sum(int(shift), _c3(eps)))


def delta_curve(
    pmf: LatticeMechanism, sensitivity: int, epsilons: Iterable[float | str]
) -> np.ndarray:
    r"""δ(ε) = max_{0<|s|<=Δ} Σ_k [p(k) − e^ε p(k+s)]_+ at each ε (rigorous upper bounds).

    [QHFL22, Thm 2, corrected].  All shifts and all k, tails
    in closed form; δ = 0 exactly for ε at or above the realised pure ε.  Returns an array in
    the order of ``epsilons`` (strings are read at their exact decimal value).
    """
    aud = _Auditor(pmf, sensitivity)
    eps = [_exact_nonneg(e, "epsilon")[1] for e in _as_list(epsilons)]
    return np.asarray(aud.deltas(eps)[0], dtype=float)


def epsilon_for_delta(
    pmf: LatticeMechanism, sensitivity: int, delta: float | str, *, tol: float = EPSILON_TOL
) -> float | None:
    """Smallest ε (within ``tol``·max(1, ε)) at which δ(ε) <= delta is proven, by bisection.

    δ(ε) is nonincreasing in ε, so bisection on [0, ε_hi] applies, with ε_hi the realised pure
    ε (δ = 0 there) or, for a pmf that is not pure-DP, the largest finite log-ratio (beyond it
    δ is constant).  The returned ε satisfies δ(ε) <= delta rigorously; it exceeds the exact
    inverse by at most the tolerance plus the rounding of δ.  Returns None when even
    lim_{ε→∞} δ(ε) (the mass a shift moves onto zeros) exceeds ``delta``.
    """
    _, d = _exact_nonneg(delta, "delta", upper=1.0)
    return _Auditor(pmf, sensitivity).epsilon_for_delta(d, tol=tol)


# ------------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditReport:
    """Everything :func:`audit` established about one pmf and sensitivity.

    Attributes
    ----------
    sensitivity : int
    epsilon : float or None
        Realised pure ε (upper bound, within a few ulps); None when the pmf is not pure-DP.
    epsilon_witness : dict or None
        A worst pair: ``k`` and ``shift`` with the worst ratio p(k)/p(k + shift) (for a pmf
        that is not pure-DP, p(k) > 0 = p(k + shift)).
    max_finite_log_ratio : float or None
        Largest log p(k)/p(k+s) over positive pairs, |s| <= Δ (= ε when pure).
    delta_at : dict
        Requested ε (the string the caller gave) → δ(ε) upper bound.
    delta_worst_shift : dict
        Requested ε → a shift attaining δ (None where δ = 0).
    delta_curve : list
        [ε, δ] pairs on a default grid (0 to the realised ε, or to the largest finite
        log-ratio where δ stops changing).
    delta_limit : float
        lim_{ε→∞} δ(ε) (0 when pure).
    epsilon_at : dict
        Requested δ → smallest ε with δ(ε) <= δ proven (None if none).
    """

    sensitivity: int
    epsilon: float | None
    epsilon_witness: dict | None
    max_finite_log_ratio: float | None
    delta_at: dict[str, float]
    delta_worst_shift: dict[str, int | None]
    delta_curve: list[list[float]]
    delta_limit: float
    epsilon_at: dict[str, float | None]
    support: dict
    tail_rule: dict | None
    total_mass: float
    mass_error: float
    shifts_evaluated: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def worst_shift(self) -> int | None:
        return None if self.epsilon_witness is None else self.epsilon_witness["shift"]

    def to_dict(self) -> dict:
        """JSON-safe dict (every float finite; None for 'not pure-DP' / unbounded)."""
        return {
            "epsilon": self.epsilon,
            "pure": self.epsilon is not None,
            "sensitivity": self.sensitivity,
            "worst_shift": self.worst_shift,
            "epsilon_witness": self.epsilon_witness,
            "max_finite_log_ratio": self.max_finite_log_ratio,
            "delta_at": dict(self.delta_at),
            "delta_worst_shift": dict(self.delta_worst_shift),
            "delta_curve": [list(p) for p in self.delta_curve],
            "delta_limit": self.delta_limit,
            "epsilon_at": dict(self.epsilon_at),
            "support": self.support,
            "tail_rule": self.tail_rule,
            "total_mass": self.total_mass,
            "mass_error": self.mass_error,
            "shifts_evaluated": self.shifts_evaluated,
            "seconds": self.seconds,
            "notes": list(self.notes),
        }


_ROUNDING_NOTE = (
    "epsilon and every delta are outward-rounded upper bounds of the exact values for the pmf as given "
    "(window masses as stored, tail masses by the exact tail rule); delta also bounds the pmf renormalised "
    "to total mass 1"
)


def _as_list(values: Any) -> list:
    """None → [], a single string or number → [it], any other iterable → list."""
    if values is None:
        return []
    if isinstance(values, (str, bytes, int, float, np.number)):
        return [values]
    return list(values)


def _support(lat: _Lattice) -> dict:
    pmf, w = lat.pmf, np.asarray(lat.pmf.weights)
    left = lat.tails and bool(np.any(pmf.left_gen > 0))
    right = lat.tails and bool(np.any(pmf.right_gen > 0))
    nz = np.flatnonzero(w > 0)
    lo = lat.k_lo + int(nz[0]) if len(nz) else None
    hi = lat.k_lo + int(nz[-1]) if len(nz) else None
    return {
        "min": None if left else lo,
        "max": None if right else hi,
        "window": [lat.k_lo, lat.k_hi],
        "finite": not (left or right),
    }


def audit(
    pmf: LatticeMechanism,
    sensitivity: int,
    epsilons: Iterable[float | str] | None = None,
    *,
    deltas: Iterable[float | str] | None = None,
    curve_points: int = DEFAULT_CURVE_POINTS,
) -> AuditReport:
    """Full privacy audit of additive noise with pmf ``pmf`` at integer sensitivity Δ.

    Realised pure ε [QHFL22, Thm 1], exact hockey-stick δ(ε) [QHFL22, Thm 2, corrected]
    at the requested ε and on a default curve, and optionally
    ε(δ) at the requested δ.  See the module docstring for what is exact and what is rounded.
    """
    t_start = time.perf_counter()
    D = check_sensitivity(sensitivity)
    eps_in = [_exact_nonneg(e, "epsilon") for e in _as_list(epsilons)]
    del_in = [_exact_nonneg(d, "delta", upper=1.0) for d in _as_list(deltas)]
    if curve_points < 2:
        raise SpecError(f"curve_points must be >= 2, got {curve_points!r}")
    aud = _Auditor(pmf, D)
    lat = aud.lat
    if aud.eps is not None:
        top = aud.eps
    elif aud.lmax is not None and aud.lmax > 0:
        top = aud.lmax
    else:
        top = 1.0
    grid = [float(x) for x in np.linspace(0.0, top, curve_points)]
    grid[-1] = top
    values, shifts = aud.deltas([e for _, e in eps_in] + grid)
    n_req = len(eps_in)
    delta_at = {key: values[i] for i, (key, _) in enumerate(eps_in)}
    worst = {key: shifts[i] for i, (key, _) in enumerate(eps_in)}
    curve = [[grid[i], values[n_req + i]] for i in range(len(grid))]
    eps_at = {key: aud.epsilon_for_delta(d) for key, d in del_in}
    witness = None
    if aud.witness is not None:
        i, j = aud.witness
        witness = {"k": int(i), "shift": int(j - i)}
    tail_rule = None
    if lat.tails:
        tail_rule = {"period": lat.W, "beta": lat.beta, "tail_mass": lat.tail_mass}
    total_mass = lat.weight_sum / lat.total
    notes = [_ROUNDING_NOTE]
    if aud.eps is None:
        notes.append("not pure-DP: some mass lies within the sensitivity of a zero (ratio unbounded)")
    if abs(total_mass - 1.0) > PMF_SUM_TOL:
        notes.append(f"the masses sum to {total_mass!r}, not 1")
    return AuditReport(
        sensitivity=D,
        epsilon=aud.eps,
        epsilon_witness=witness,
        max_finite_log_ratio=aud.lmax,
        delta_at=delta_at,
        delta_worst_shift=worst,
        delta_curve=curve,
        delta_limit=aud.delta_limit(),
        epsilon_at=eps_at,
        support=_support(lat),
        tail_rule=tail_rule,
        total_mass=total_mass,
        mass_error=abs(total_mass - 1.0),
        shifts_evaluated=aud._ev.evaluations if aud._ev is not None else 0,
        seconds=time.perf_counter() - t_start,
        notes=notes,
    )


# ------------------------------------------------------------------------------------------------
# finitely supported pmfs on ℤ^d (arrays on a box)
# ------------------------------------------------------------------------------------------------
_U = 2.0**-53


def _two_product(c: float, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's TwoProduct: c·b = prod + err exactly (round-to-nearest binary64, no over- or underflow)."""
    split = 134217729.0  # 2^27 + 1
    cs = split * c
    c_hi = cs - (cs - c)
    c_lo = c - c_hi
    bs = split * b
    b_hi = bs - (bs - b)
    b_lo = b - b_hi
    prod = c * b
    err = ((c_hi * b_hi - prod) + c_hi * b_lo + c_lo * b_hi) + c_lo * b_lo
    return prod, err


#: masses below this are audited with the plain widening (Dekker's splitting needs no underflow)
_TINY = 2.0**-900


def hockey_stick_1d(p: np.ndarray, shifts: np.ndarray, epsilon: float, *, renormalise: bool = True) -> np.ndarray:
    r"""1-D :func:`hockey_stick_array` with rounding errors relative to each term, not to the masses.

    Each term p(x) − c·p(x+v) (c = e^ε rounded down, so the exact term is at most this) is
    evaluated as (p(x) − prod) − err with c·p(x+v) = prod + err exactly (Dekker's TwoProduct,
    :func:`_two_product`).  a − prod is exact when prod/2 <= a <= 2·prod (Sterbenz's lemma) and
    otherwise off by at most u·|a − prod|; the final subtraction is off by at most u·|t|.  So the
    computed t plus 2u|t| (plus u|a − prod| outside Sterbenz's range) bounds the exact term, and a
    near-tie p(x) ≈ e^ε p(x + v) (a quarter to a half of all terms at an (ε, δ) optimum) costs
    ~1e-16·|t| instead of ~1e-16·p(x): the audit's own slack stays relative to δ, also at
    δ = 1e-10.  Masses below 2^-900 get the plain widening 3u(a + c·b) (no underflow in the
    splitting).  The points whose partner leaves the window contribute their masses, summed
    directly (no cancellation); every sum is ``math.fsum`` (correctly rounded), widened by 4u and
    rounded up, then scaled by the renormalisation bound as in :func:`hockey_stick_array`
    (``renormalise=False``: not scaled, a bound for the masses exactly as given — a window of a law whose
    mass outside it the caller accounts for).
    """
    c = float(np.nextafter(np.nextafter(math.exp(epsilon), 0.0), 0.0))
    n = p.size
    total = math.fsum(p)
    scale = 1.0 / min(1.0, total * (1.0 - 4 * _U)) if total > 0 and renormalise else 1.0
    out = np.empty(len(shifts))
    for i, s in enumerate(np.asarray(shifts, dtype=np.int64)):
        s = int(s)
        if abs(s) >= n:
            inside, outside = 0.0, total
        else:
            a, b = (p[: n - s], p[s:]) if s >= 0 else (p[-s:], p[: n + s])
            prod, err = _two_product(c, b)
            d1 = a - prod
            t = d1 - err
            sterbenz = (prod <= 2 * a) & (a <= 2 * prod)
            bound = t + 2 * _U * np.abs(t) + np.where(sterbenz, 0.0, _U * np.abs(d1))
            tiny = (a < _TINY) | (b < _TINY)
            if tiny.any():
                bound = np.where(tiny, a - c * b + 3 * _U * (a + c * b), bound)
            inside = math.fsum(bound[bound > 0.0])
            edge = p[n - s:] if s >= 0 else p[: -s]  # x whose x + v leaves the window
            outside = math.fsum(edge)
        value = (inside + outside) * (1 + 4 * _U)
        out[i] = min(1.0, float(np.nextafter(value * scale, np.inf)))
    return out


def hockey_stick_array(p: np.ndarray, shifts: np.ndarray, epsilon: float) -> np.ndarray:
    r"""δ_v = Σ_x [p(x) − e^ε p(x+v)]_+ for a pmf on a box of ℤ^d (zero outside), every shift v.

    ``p`` has shape (n_1, …, n_d) (the masses as given; a rigorous bound for them and for their
    renormalisation to total mass 1, whichever is larger); ``shifts`` has shape (K, d).  Each
    value is an upper bound of the exact one: e^ε is rounded down, every term is widened by its
    rounding error before [·]_+, the terms are summed with ``math.fsum`` and the sum rounded up.
    Terms with x + v outside the box are p(x) itself.  Cost O(K·N) time, O(N) memory.
    """
    p = np.asarray(p, dtype=float)
    shifts = np.atleast_2d(np.asarray(shifts, dtype=np.int64))
    if shifts.shape[1] != p.ndim:
        raise SpecError(f"shifts must have {p.ndim} columns, got shape {shifts.shape}")
    if p.ndim == 1:
        return hockey_stick_1d(p, shifts[:, 0], epsilon)
    c = float(np.nextafter(np.nextafter(math.exp(epsilon), 0.0), 0.0))
    total = math.fsum(p.ravel())
    scale = 1.0 / min(1.0, total * (1.0 - 4 * _U)) if total > 0 else 1.0
    out = np.empty(len(shifts))
    for i, v in enumerate(shifts):
        src, dst = [], []
        for axis, s in enumerate(v):
            n = p.shape[axis]
            s = int(s)
            if abs(s) >= n:
                src.append(slice(0, 0))
                dst.append(slice(0, 0))
            elif s >= 0:  # x in [0, n − s) has x + s in the box
                src.append(slice(0, n - s))
                dst.append(slice(s, n))
            else:
                src.append(slice(-s, n))
                dst.append(slice(0, n + s))
        a = p[tuple(src)]
        b = p[tuple(dst)]
        with np.errstate(invalid="ignore"):
            t = a - c * b
            t = np.maximum(t + 3 * _U * (a + c * b), 0.0)
        inside = math.fsum(t.ravel())
        # x whose x + v leaves the box: the whole mass p(x) counts
        outside = total - math.fsum(a.ravel()) if a.size else total
        value = (inside + max(0.0, outside) * (1 + 4 * _U) + 8 * _U * total) * (1 + 4 * _U)
        out[i] = min(1.0, float(np.nextafter(value * scale, np.inf)))
    return out
