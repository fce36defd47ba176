"""The 1-D cost class: named costs |x|, x², |x|^P and expressions, with enclosures, integrals over
cells, tail sums, growth bounds and proven properties.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np

from optmech.costs.expr import MAX_EXPONENT, parse_expr
from optmech.costs.interval import (CAP, INF, WIDEN_EXACT, WIDEN_LIBM, WIDEN_ROUNDED, add_rounded, breakpoints,
                                    clean_interval, evaluate_tree, exact_int, fraction_up, mig_mag, round_down,
                                    round_up, tight_enclosure, tree_enclosure)
from optmech.costs.proofs import EVEN, parity, proves_symmetric_nondecreasing
from optmech.costs.rewrite import canonical_name, canonical_text, recognise
from optmech.errors import CostError


def _pow_enc(u, ql, qh):
    """Enclosure of u**q for u >= 0 and q in [ql, qh] (exact values)."""
    p1, p2 = np.power(u, ql), np.power(u, qh)
    return np.maximum(round_down(np.minimum(p1, p2), WIDEN_EXACT), 0.0), round_up(np.maximum(p1, p2), WIDEN_EXACT)


def _pow_diff(u, v, ql, qh):
    """Enclosure of v**q − u**q for 0 <= u <= v and q in [ql, qh], q >= 1, without cancellation.

    For v − u <= u/q (so v <= 2u and v − u is exact by Sterbenz's lemma) it uses
    u^q·expm1(q·log1p((v − u)/u)) with q·log1p(·) <= 1; otherwise (v/u)^q >= 2 and the direct
    difference loses at most a factor 3 in relative accuracy.
    """
    ul, uh = _pow_enc(u, ql, qh)
    vl, vh = _pow_enc(v, ql, qh)
    r = (v - u) / u
    yl, yh = round_down(round_down(np.log1p(round_down(r)), WIDEN_EXACT) * ql), round_up(round_up(np.log1p(round_up(r)), WIDEN_EXACT) * qh)
    el, eh = np.maximum(round_down(np.expm1(yl), WIDEN_EXACT), 0.0), round_up(np.expm1(yh), WIDEN_EXACT)
    near = (u > 0) & (v - u <= u / qh)
    lo, hi = clean_interval(np.where(near, round_down(el * ul), round_down(vl - uh)), np.where(near, round_up(eh * uh), round_up(vh - ul)))
    same = u == v
    return np.where(same, 0.0, np.maximum(lo, 0.0)), np.where(same, 0.0, hi)


# -- the cost ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    """A cost L: ℝ → [0, ∞] of the added noise; build it with :func:`parse_cost`.

    Parameters
    ----------
    spec : str
        Normalised text: ``"abs"``, ``"square"``, ``"pow:P"`` or the expression (whitespace collapsed).
    kind : {"abs", "square", "pow", "expr"}
        Named costs are |x|^power; ``"expr"`` is a checked expression in x.
    power : float or None
        P for the named costs (1 for abs, 2 for square), None for expressions.

    An expression that :func:`parse_cost` proves to be |x|^P (:mod:`optmech.costs.rewrite`:
    ``abs(x)**3``, ``x*x``, ``sqrt(abs(x))``, ...) is the named cost: its ``kind`` and ``power``
    are those of ``abs``, ``square`` or ``pow:P`` while ``spec`` keeps the text as written
    (:attr:`canonical` is the name, :attr:`rewrite_note` says what was recognised).  One proven to
    be c·|x|^P with an exact c ≠ 1 (``2*abs(x)**3``) stays an expression whose values, enclosures,
    integrals, slopes and growth are c times those of the named cost (:attr:`monomial`).

    >>> c = parse_cost("min(abs(x), 2)")
    >>> c.kind, c.power, c(np.array([-3.0, 0.5]))
    ('expr', None, array([2. , 0.5]))
    >>> c.enclose(np.array([1.0]), np.array([3.0]))          # rigorous bounds of L on [1, 3]
    (array([1.]), array([2.]))
    >>> parse_cost("square").is_symmetric_nondecreasing(integer=False)
    True
    """

    spec: str
    kind: str
    power: float | None = None
    _tree: tuple | None = field(default=None, repr=False, compare=False)
    _monomial: tuple[Fraction, float] | None = field(default=None, repr=False, compare=False)
    _rewritten: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("abs", "square", "pow", "expr"):
            raise CostError(f"unknown cost kind {self.kind!r} (allowed: abs, square, pow, expr)")
        if self.kind in ("abs", "square"):
            object.__setattr__(self, "power", 1.0 if self.kind == "abs" else 2.0)
        elif self.kind == "pow" and not (isinstance(self.power, (int, float)) and 0 < self.power <= MAX_EXPONENT):
            raise CostError(f"pow:P needs 0 < P <= {MAX_EXPONENT:g}, got {self.power!r}")
        elif self.kind == "expr" and self._tree is None:
            object.__setattr__(self, "_tree", parse_expr(self.spec))

    def __str__(self) -> str:
        return self.spec

    def __call__(self, x) -> np.ndarray:
        """L(x) in float64, elementwise, with the shape of ``x`` (NaN where L is undefined)."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            if self.kind == "abs":
                return np.abs(x)
            if self.kind == "square":
                return x * x
            if self.kind == "pow":
                return np.abs(x) ** self.power
            if self._monomial is not None:
                c, p = self._monomial
                return float(c) * (np.abs(x) if p == 1.0 else x * x if p == 2.0 else np.abs(x) ** p)
            return np.array(np.broadcast_to(evaluate_tree(self._tree, x), x.shape), dtype=np.float64)

    def enclose(self, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure of L over each interval [lo, hi] (broadcast; ends may be ±inf).

        Returns (Llo, Lhi), never NaN, with Llo <= L(t) <= Lhi for every real t in [lo, hi], for
        the exact real value of L(t) (``exp(x)*0`` is 0 for every real x, although its float value
        at x = 800 is NaN).  The float64 evaluation ``self(t)`` can leave it by its own rounding:
        ``x - (x + 0.1)`` is −0.1 on ℝ and enclosed as [−0.1, −0.1] on a piece where its
        derivative is proven 0, while its float value at x = 0.5 is −0.09999999999999998; the
        nearest float to the real value is always inside (the ends are floats).

        Notes
        -----
        Interval arithmetic with outward rounding (``WIDEN_ROUNDED``/``WIDEN_LIBM`` above), made as tight as the
        function allows in three ways: an indicator product ``a*(cond)`` is compiled as
        ``where(cond, a, 0)``; [lo, hi] is cut at the breakpoints of every condition that compares
        a chain of x (x under ±, × ÷ by constants, abs, integer powers, exp) with a constant, and
        each branch of ``where`` is enclosed only over the part of the piece where it is taken;
        and on a piece where an interval derivative proves L monotone the enclosure is the
        enclosure of L at the piece's ends.  Named costs and even
        integer powers go through |t| and are tight ([−1, 2]**2 = [0, 4]); other dependencies
        (``x*x``, ``x - x``) are loose.  Division by an interval containing 0 and sqrt, log or a
        real power of an interval reaching below 0 give [−inf, inf]; a comparison gives [0, 0],
        [1, 1] or [0, 1], and [0, 1] when an operand may be NaN; ``where`` takes the hull of both
        branches when undecided.  Where the float value may be NaN anywhere in the interval the
        result is [−inf, inf].  A NaN end of [lo, hi] is read as unbounded.
        """
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
        with np.errstate(all="ignore"):
            lo = np.where(np.isnan(lo), -INF, np.minimum(lo, CAP))
            hi = np.where(np.isnan(hi), INF, np.maximum(hi, -CAP))
            if self.kind == "expr" and self._monomial is None:
                return tight_enclosure(self._tree, lo, hi)
            P = self._named_power()
            rlo, rhi = mig_mag(lo, hi)
            if P != 1.0:
                c = WIDEN_ROUNDED if P == 2.0 else WIDEN_LIBM
                rlo, rhi = np.maximum(round_down(np.power(rlo, P), c), 0.0), round_up(np.power(rhi, P), c)
            return self._scaled(rlo, rhi)

    def slopes(self, lo, hi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Enclosure (dlo, dhi, lipschitz) of the derivatives of L over each interval [lo, hi].

        Where ``lipschitz`` is True, L is continuous on the interval and every (one-sided, or
        Clarke-generalised at kinks) derivative lies in [dlo, dhi], so L(y) − L(x) lies between
        dlo·(y − x) and dhi·(y − x) for x <= y there.  Named costs |x|^P use P|x|^{P−1}·sign(x)
        (outward-rounded); expressions use interval derivatives
        (:func:`optmech.costs.interval.derivative_enclosure`).

        >>> c = parse_cost("square")
        >>> [float(v[0]) for v in c.slopes(np.array([1.0]), np.array([2.0]))[:2]]
        [1.999..., 4.000...]
        """
        lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
        with np.errstate(all="ignore"):
            if self.kind == "expr" and self._monomial is None:
                from optmech.costs.interval import derivative_enclosure

                _, (dlo, dhi), smooth = derivative_enclosure(self._tree, lo, hi)
                ok = np.broadcast_to(np.asarray(smooth, dtype=bool), lo.shape) & ~np.isnan(dlo) & ~np.isnan(dhi)
                return np.where(ok, dlo, -INF), np.where(ok, dhi, INF), ok
            P = self._named_power()
            a, b = np.abs(lo), np.abs(hi)
            near, far = np.where((lo < 0) & (hi > 0), 0.0, np.minimum(a, b)), np.maximum(a, b)
            if P == 1.0:
                gmin, gmax = np.ones_like(near), np.ones_like(far)
            else:
                gn, gf = np.power(near, P - 1.0), np.power(far, P - 1.0)  # |x|^{P-1} at the near and far ends
                gmin = np.maximum(round_down(P * round_down(np.minimum(gn, gf), WIDEN_LIBM)), 0.0)
                gmax = round_up(P * round_up(np.maximum(gn, gf), WIDEN_LIBM))
            dlo = np.where(hi <= 0, -gmax, np.where(lo >= 0, gmin, -np.where(a > 0, gmax, 0.0)))
            dhi = np.where(lo >= 0, gmax, np.where(hi <= 0, -gmin, np.where(b > 0, gmax, 0.0)))
            if self._monomial is not None:  # c·[dlo, dhi], c > 0 in [clo, chi]
                clo, chi = self._scale_bounds()
                dlo = np.where(dlo == 0, 0.0, round_down(dlo * np.where(dlo >= 0, clo, chi)))
                dhi = np.where(dhi == 0, 0.0, round_up(dhi * np.where(dhi >= 0, chi, clo)))
            ok = np.isfinite(dlo) & np.isfinite(dhi) & ~np.isnan(lo) & ~np.isnan(hi)
            return np.where(ok, dlo, -INF), np.where(ok, dhi, INF), ok

    def integral(self, a, b, *, pieces: int = 32) -> tuple[np.ndarray, np.ndarray]:
        """Rigorous enclosure (lo, hi) of ∫_a^b L(t) dt for finite a <= b (broadcast arrays).

        Named costs use the antiderivative sign(t)|t|^{P+1}/(P+1) on the parts of [a, b] left and
        right of 0 (they add), evaluated without cancellation (``_pow_diff``): relative width
        ~1e-14.  Expressions split [a, b] into ``pieces`` equal parts and sum width × enclosure
        with outward rounding, which is O(width) loose.
        """
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        if np.any(a > b):
            raise ValueError("integral(a, b) needs a <= b")
        with np.errstate(all="ignore"):
            if self.kind != "expr" or self._monomial is not None:
                P = self._named_power()
                q = P + 1.0
                ql, qh = (q, q) if Fraction(P) + 1 == Fraction(q) else (round_down(q), round_up(q))
                pl, ph = _pow_diff(np.maximum(a, 0.0), np.maximum(b, 0.0), ql, qh)
                nl, nh = _pow_diff(np.maximum(-b, 0.0), np.maximum(-a, 0.0), ql, qh)
                lo, hi = np.maximum(round_down(add_rounded(pl, nl, True) / qh), 0.0), round_up(add_rounded(ph, nh, False) / ql)
                lo, hi = self._scaled(lo, hi)
                return clean_interval(np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64))
            if int(pieces) < 1:
                raise ValueError(f"pieces must be >= 1, got {pieces}")
            a_, b_ = a[..., None], b[..., None]
            t = np.clip(a_ + (b_ - a_) * (np.arange(pieces + 1) / pieces), a_, b_)  # nondecreasing
            t[..., 0], t[..., -1] = a, b
            lo, hi = self.enclose(t[..., :-1], t[..., 1:])
            w = t[..., 1:] - t[..., :-1]
            wl, wh = np.maximum(round_down(w), 0.0), round_up(w)
            plo = np.where(w == 0, 0.0, round_down(np.where(lo >= 0, wl * lo, wh * lo)))
            phi = np.where(w == 0, 0.0, round_up(np.where(hi >= 0, wh * hi, wl * hi)))
            plo, phi = clean_interval(plo, phi)
            slo, shi = np.zeros(a.shape), np.zeros(a.shape)
            for k in range(pieces):
                slo, shi = clean_interval(add_rounded(slo, plo[..., k], True), add_rounded(shi, phi[..., k], False))
            return slo, shi

    def growth(self, x0: float) -> tuple[float, float, float] | None:
        """(C, P, R) with L(t) <= C (1+|t|)^P e^{R|t|} for all |t| >= x0, or None if unproven.

        Notes
        -----
        Named costs give (1, P, 0).  Expressions bound |f| on Ω = {|t| >= x0} recursively, C
        rounded up.  At every node an enclosure of f over Ω (cut into ~1000 geometric pieces per
        side) that is finite gives (max |f|, 0, 0).  Otherwise: constant c → (|c|, 0, 0);
        x → (1, 1, 0); a ± b → (Ca + Cb, max P, max R); a·b → (Ca·Cb, Pa + Pb, Ra + Rb);
        a/b → (Ca/m, Pa, Ra) with m = inf_Ω |b| > 0; −a, abs(a) → as a; sqrt(a) with a >= 0 on Ω
        → (√Ca, Pa/2, Ra/2); a**k, constant k > 0 (a >= 0 on Ω unless k is an integer) →
        (Ca^k, k·Pa, k·Ra); k < 0 → (m^k, 0, 0) with m = inf_Ω |a| > 0; exp(a) with Ra = 0 and
        Pa <= 1 → (e^Ca, 0, Ca), as a <= Ca(1+|t|); log(a) with a >= l > 0 on Ω → (K, 0, 0) if
        Pa = Ra = 0, else (K + Pa + Ra, 1, 0), K = |log l| + |log Ca| (log(1+|t|), |t| <= 1+|t|);
        min, max → the componentwise max over their arguments; where → the componentwise max over its
        two branches, each bounded only on the pieces of Ω where the condition's enclosure may select it
        (``where(x > 0, sqrt(x) + x, 2*abs(x))``: the square root is never read at x < 0).  Anything else
        (a non-constant exponent, exp of a faster than linear argument, ...) gives None.
        """
        x0 = float(x0)
        if math.isnan(x0):
            return None
        if self.kind != "expr":
            return (1.0, float(self.power), 0.0)
        if self._monomial is not None:
            return (fraction_up(self._monomial[0]), self._monomial[1], 0.0)
        g = np.concatenate([[0.0], np.geomspace(1e-3, 1e300, 1000)]) + max(x0, 0.0)
        right_hi = np.append(g[1:], INF)  # pieces [g_i, g_i+1] and [g_last, inf), then mirrored
        lo, hi = np.concatenate([g, -right_hi]), np.concatenate([right_hi, -g])
        with np.errstate(all="ignore"):
            res = tree_growth(self._tree, lo, hi)
        return res if res is not None and all(math.isfinite(v) and v >= 0 for v in res) else None

    def _named_power(self) -> float:
        """P of |x|^P for a named cost or a recognised c·|x|^P."""
        return float(self.power) if self.kind != "expr" else float(self._monomial[1])

    def _scale_bounds(self) -> tuple[float, float]:
        """Floats clo <= c <= chi around the exact factor c of a recognised c·|x|^P (1, 1 otherwise)."""
        if self._monomial is None:
            return 1.0, 1.0
        c = self._monomial[0]
        f = float(c)
        return (f if Fraction(f) <= c else math.nextafter(f, -math.inf)), (f if Fraction(f) >= c else math.nextafter(f, math.inf))

    def _scaled(self, lo, hi):
        """[lo, hi] (nonnegative) times the factor c of a recognised c·|x|^P, outward-rounded."""
        if self._monomial is None:
            return lo, hi
        clo, chi = self._scale_bounds()
        return np.maximum(round_down(lo * clo), 0.0), round_up(hi * chi)

    @property
    def canonical(self) -> str:
        """The named cost this cost is (``abs``, ``square``, ``pow:P``), also when it was written as an
        expression proven equal to it; ``c*NAME`` for a recognised c·|x|^P (c ≠ 1, c the exact
        rational factor); else the expression's text.

        >>> parse_cost("abs(x)**3").canonical, parse_cost("x*x").canonical, parse_cost("2*sqrt(abs(x))").canonical
        ('pow:3', 'square', '2*pow:0.5')
        """
        if self.kind != "expr":
            return canonical_name(Fraction(float(self.power))) or self.spec
        if self._monomial is not None:
            return f"{_number_text(self._monomial[0])}*{canonical_name(Fraction(self._monomial[1]))}"
        return self._rewritten or self.spec

    @property
    def monomial(self) -> tuple[Fraction, float] | None:
        """(c, P) when the cost is proven to be c·|x|^P (named costs: c = 1), else None."""
        if self.kind != "expr":
            return Fraction(1), float(self.power)
        return self._monomial

    @property
    def rewrite_note(self) -> str | None:
        """What :func:`parse_cost` recognised in an expression (None for named costs as named and for
        expressions solved as they are)."""
        if self.kind != "expr":
            name = self.canonical
            if self.spec.lower() == name:
                return None
            return (f"the expression {self.spec} is {_monomial_text(Fraction(1), float(self.power))}, proven symbolically from its text (exact rewrite rules, "
                    f"no sampling): solved as {name}")
        if self._rewritten is not None:
            return (f"the expression {self.spec} is {self._rewritten} on ℝ, proven symbolically from its text (exact "
                    f"rewrite rules, no sampling): evaluated and enclosed as {self._rewritten}, like every expression "
                    "these rules prove equal to it")
        if self._monomial is None:
            return None
        c, p = self._monomial
        name = canonical_name(Fraction(p))
        return (f"the expression {self.spec} is {_monomial_text(c, p)}, proven symbolically from its text (exact rewrite "
                f"rules, no sampling): its values, enclosures, cell integrals and growth are {_number_text(c)} times those "
                f"of {name}")

    def check_rewards_spread(self, scale: float, *, integer: bool = False) -> None:
        """Raise CostError when the cost is smaller far from 0 than anywhere near it.

        Then spreading the noise ever wider lowers the expected cost toward that far value, so
        no optimal noise exists and every LP window would be beaten by a wider one.  Far points
        are ±10^k·scale (k = 3..12); "near" is [−2·scale, 2·scale], sampled on 801 points on ℝ
        and at every integer of it on ℤ (``integer``: only the domain the problem lives on is
        looked at, so x**2 + x, nonnegative on ℤ but not on ℝ, passes there).
        A far value equal to the minimum near 0 also has no optimum (the infimum is only approached);
        a constant cost passes (every noise is optimal).
        """
        if integer:
            r = max(1, int(round(2.0 * scale)))
            near = np.arange(-r, r + 1, dtype=np.float64)
        else:
            near = np.linspace(-2.0, 2.0, 801) * scale
        far = np.outer([1.0, -1.0], 10.0 ** np.arange(3, 13)).ravel() * scale
        if integer:
            far = np.round(far)
        ln = self._check_near(near, integer)     # a negative cost is reported with its minimum
        with np.errstate(all="ignore"):
            lf = self(far)
        ok_far = lf[np.isfinite(lf)]
        flat = float(ln.max()) <= float(ln.min()) * (1 + 1e-12)      # a constant cost: every noise is optimal
        if ok_far.size and not flat and float(ok_far.min()) <= float(ln.min()) * (1 + 1e-9):
            x = float(far[np.isfinite(lf)][np.argmin(ok_far)])
            raise CostError(
                f"cost {self.spec!r} rewards large noise: L({x:.3g}) = {float(ok_far.min()):.6g} is not above its minimum "
                f"{float(ln.min()):.6g} near 0, so spreading the noise wider never costs more and no optimum exists; use a cost that "
                "grows away from 0")

    def _check_near(self, near: np.ndarray, integer: bool) -> np.ndarray:
        """L at the points near 0 of :meth:`check_rewards_spread`; CostError at the first NaN or
        infinite value, or, where L is negative there, one naming its minimum: the lowest value
        found (on ℝ refined on a finer grid around the lowest checked point) and a proven floor
        (:meth:`domain_minimum`), so the true minimum over the domain lies between them."""
        with np.errstate(all="ignore"):
            y = self(near)
        bad = ~np.isfinite(y)
        if bad.any():
            self.check_values(near[bad][:1], "the points near 0")
        if not (y < 0).any():
            return y
        i = int(np.argmin(y))
        x0 = float(near[i])
        if not integer and near.size > 1:  # refine between the neighbouring checked points
            step = float(near[1] - near[0])
            fine = np.linspace(max(x0 - step, float(near[0])), min(x0 + step, float(near[-1])), 401)
            with np.errstate(all="ignore"):
                yf = self(fine)
            ok = np.isfinite(yf)
            if ok.any() and float(np.min(yf[ok])) < float(y[i]):
                j = int(np.flatnonzero(ok)[np.argmin(yf[ok])])
                x0 = float(fine[j])
        _, top = self.enclose(np.array([x0]), np.array([x0]))
        floor = self.domain_minimum(integer=integer)
        where = "ℤ" if integer else "ℝ"
        proven = (f"its infimum over {where} is proven in [{floor:.6g}, {float(top[0]):.6g}] by interval arithmetic"
                  if math.isfinite(floor) else f"it is not proven bounded below on {where}")
        r = int(round(abs(float(near[-1]))))
        rule = (f"every integer |k| <= {r} = 2Δ" if integer else
                f"{near.size} points evenly spaced on [{float(near[0]):g}, {float(near[-1]):g}] = [-2Δ, 2Δ]")
        raise CostError(
            f"cost {self.spec!r} is negative: its minimum near 0 is about {float(self(np.array([x0]))[0]):.6g} at "
            f"x = {x0 + 0.0:.6g} ({proven}); a cost must be finite and >= 0 at the points checked near 0 ({rule}); "
            "negative values farther out are accepted, with the cost's proven floor in the bounds, unless the cost is "
            "as low far away (±10^3Δ to ±10^12Δ) as near 0")

    def check_values(self, x, where: str = "the grid") -> np.ndarray:
        """Return L(x), or raise CostError at the first x where L is negative, NaN or infinite."""
        x = np.asarray(x, dtype=np.float64)
        y = self(x)
        bad = np.flatnonzero(~(np.isfinite(y) & (y >= 0)))
        if bad.size:
            xv, yv = float(x.ravel()[bad[0]]), float(y.ravel()[bad[0]])
            what = "NaN" if math.isnan(yv) else "infinite" if math.isinf(yv) else f"negative ({yv:.6g})"
            raise CostError(f"cost {self.spec!r} is {what} at x={xv!r} on {where}")
        return y

    def domain_minimum(self, *, integer: bool) -> float:
        """A proven lower bound of L over the whole domain, ℤ (``integer``) or ℝ, and +0.0 or
        more when L is proven nonnegative there; named costs give 0.0.

        Interval arithmetic (:meth:`enclose`) over pieces that cover the domain: on ℤ every
        integer with |k| <= 4096 exactly, then integer ranges growing geometrically to ±∞; on ℝ
        geometric pieces around 0 out to ±∞, where pieces with a negative lower end are
        bisected (a few rounds) so that a touching zero at a dyadic point, (x-1)**2 written
        x**2 - 2*x + 1, is still proven nonnegative.  The value may be below the true minimum
        (never above it); the certificates use it where they need a floor for the cost on
        parts of the domain they do not enumerate.
        """
        return _domain_minimum(self, bool(integer))

    def is_symmetric_nondecreasing(self, *, integer: bool = False) -> bool:
        """Whether L(x) = L(−x) for every x and L is nondecreasing in |x|, **proven** on the whole
        domain (ℤ when ``integer``, else ℝ) — never merely sampled.

        Named costs and recognised c·|x|^P (:attr:`monomial`) are both by construction.  Expressions: evenness by construction
        (:func:`parity`: x only under abs, even powers, or as an odd factor of an odd factor, ...),
        monotonicity on [0, ∞) by an interval derivative >= 0 on a cover of each stretch between
        the breakpoints of the ``where`` conditions (out to +∞) and upward jumps at those
        breakpoints; on ℤ also L(k) <= L(k+1) at the first integers with monotonicity beyond.
        False means "not proven" (the caller then uses no reduction that needs it): a cost can be
        symmetric and nondecreasing without a proof being found, e.g. ``abs(x)/(1+abs(x))``
        (interval dependency) or a step at a decimal that is not a float (``abs(x) > 0.76``).
        """
        if self.kind != "expr" or self._monomial is not None:  # c·|x|^P, c > 0, proven by the rewrite
            return True
        return proves_symmetric_nondecreasing(self._tree, bool(integer))

    def breakpoints(self) -> tuple[float, ...]:
        """Where the cost may jump: the finite ends of the condition sets of its ``where`` and
        comparisons (outward-rounded, so a jump at a decimal lies between two listed floats),
        sorted; () for named costs and for conditions that are not chains of x (then unknown)."""
        return () if self.kind != "expr" else breakpoints(self._tree)

    def is_even(self) -> bool:
        """Whether L(x) = L(−x) for every real x, proven by construction (:func:`parity`); named
        costs and recognised c·|x|^P are even."""
        return self.kind != "expr" or self._monomial is not None or bool(parity(self._tree) & EVEN)


def _number_text(c: Fraction) -> str:
    """An exact rational as its shortest decimal when that is exact (``0.1``, ``2``), else ``n/d``."""
    if c.denominator == 1:
        return str(c.numerator)
    f = repr(float(c))
    return f if "e" not in f and Fraction(f) == c else str(c)


def _monomial_text(c: Fraction, p: float) -> str:
    """c·|x|^p as text: ``|x|``, ``|x|^3``, ``2·|x|^0.5``."""
    body = "|x|" if p == 1.0 else f"|x|^{int(p) if p.is_integer() else repr(p)}"
    return body if c == 1 else f"{_number_text(c)}·{body}"


@lru_cache(maxsize=256)
def _domain_minimum(cost: "Cost", integer: bool) -> float:
    if cost.kind != "expr":
        return 0.0
    g = np.geomspace(1e-300, 1e300, 2400)
    with np.errstate(all="ignore"):
        if integer:
            k = np.arange(-4096.0, 4097.0)
            lo_pts, _ = cost.enclose(k, k)
            e = np.unique(np.ceil(np.concatenate([[4097.0], g[g > 4097.0]])))
            a, b = e, np.append(e[1:] - 1.0, np.inf)   # [e_i, e_{i+1} − 1], [e_last, ∞)
            a, b = np.concatenate([a, -b]), np.concatenate([b, -a])
            lo, _ = cost.enclose(a, b)
            return float(min(np.min(lo_pts), np.min(lo)))
        a = np.concatenate([[0.0], g])
        b = np.append(g, np.inf)
        a, b = np.concatenate([a, -b]), np.concatenate([b, -a])
        lo, _ = cost.enclose(a, b)
        for _ in range(48):  # bisect the pieces that are not yet proven nonnegative
            bad = lo < 0
            if not bad.any() or bad.sum() > 4096:
                break
            a_bad, b_bad = a[bad], b[bad]
            fin = np.isfinite(a_bad) & np.isfinite(b_bad)
            mid = np.where(fin, 0.5 * a_bad + 0.5 * b_bad, np.where(np.isfinite(a_bad), 2 * np.abs(a_bad) + 1, -2 * np.abs(b_bad) - 1))
            a = np.concatenate([a[~bad], a_bad, mid])
            b = np.concatenate([b[~bad], mid, b_bad])
            lo, _ = cost.enclose(a, b)
        return float(np.min(lo))


def tree_growth(t: tuple, wlo, whi) -> tuple[float, float, float] | None:
    """Growth rule of :meth:`Cost.growth` for node t over the pieces [wlo, whi] of Ω (tuples of
    per-variable arrays for x1..xd, where |t| reads ‖x‖₁).

    >>> tree_growth(parse_expr("x*x"), np.array([1.0]), np.array([np.inf]))      # x² <= 1·(1+|x|)^2
    (1.0, 2.0, 0.0)
    >>> tree_growth(parse_expr("2*abs(x)**3"), np.array([1.0]), np.array([np.inf]))  # 2|x|³ <= 2(1+|x|)^3
    (2.0, 3.0, 0.0)
    """
    op = t[0]
    if op == "const":
        return (max(abs(t[2]), abs(t[3])), 0.0, 0.0)
    if op in ("x", "var"):  # |x_i| <= ‖x‖₁ <= 1 + ‖x‖₁ in d dimensions
        return (1.0, 1.0, 0.0)

    def rng(c):  # (inf f, inf |f|, sup |f|) of node c over Ω
        clo, chi = tree_enclosure(c, wlo, whi)
        mig, mag = mig_mag(clo, chi)
        return float(np.min(clo)), float(np.min(mig)), float(np.max(mag))

    mag = rng(t)[2]
    if math.isfinite(mag):
        return (mag, 0.0, 0.0)
    if op == "where":  # each branch only on the pieces where the condition may select it
        clo, chi = tree_enclosure(t[1], wlo, whi)
        sub = [_growth_on(t[2], wlo, whi, np.asarray(chi > 0)), _growth_on(t[3], wlo, whi, np.asarray(clo <= 0))]
        if None in sub or not all(map(math.isfinite, sub[0] + sub[1])):
            return None
        return tuple(max(a, b) for a, b in zip(*sub))
    if op in ("add", "sub", "mul", "min", "max"):
        sub = [tree_growth(c, wlo, whi) for c in t[1:]]
        if None in sub or not all(map(math.isfinite, sub[0] + sub[1])):
            return None
        (ca, pa, ra), (cb, pb, rb) = sub
        F = Fraction
        if op == "mul":
            return (fraction_up(F(ca) * F(cb)), fraction_up(F(pa) + F(pb)), fraction_up(F(ra) + F(rb)))
        return (fraction_up(F(ca) + F(cb)) if op in ("add", "sub") else max(ca, cb), max(pa, pb), max(ra, rb))
    base = tree_growth(t[1], wlo, whi)
    if op == "sq":
        if base is None or not all(map(math.isfinite, base)):
            return None
        return (fraction_up(Fraction(base[0]) ** 2), fraction_up(Fraction(base[1]) * 2), fraction_up(Fraction(base[2]) * 2))
    if op == "pow":
        return _grow_pow(t, base, *rng(t[1])[:2])
    if base is None or op in ("neg", "abs"):
        return base
    ca, pa, ra = base
    if op == "div":
        m = rng(t[2])[1]
        return (float(round_up(ca / m)), pa, ra) if m > 0 else None
    if op == "sqrt":
        return (float(round_up(math.sqrt(ca))), pa / 2, ra / 2) if rng(t[1])[0] >= 0 else None
    if op == "exp":
        return (float(round_up(np.exp(ca), WIDEN_LIBM)), 0.0, ca) if ra == 0 and pa <= 1 else None
    if op == "log":
        low = rng(t[1])[0]
        if not (low > 0 and ca > 0):
            return None
        k = float(round_up(round_up(abs(math.log(low)), WIDEN_LIBM) + round_up(abs(math.log(ca)), WIDEN_LIBM)))
        return (k, 0.0, 0.0) if pa == 0 and ra == 0 else (float(round_up(k + pa + ra)), 1.0, 0.0)
    return None


def _growth_on(t: tuple, wlo, whi, keep) -> tuple[float, float, float] | None:
    """:func:`tree_growth` of node t on the pieces where ``keep`` holds ((0, 0, 0) on none of them: the
    node is then never the value on Ω)."""
    keep = np.broadcast_to(keep, np.shape(wlo[0] if isinstance(wlo, tuple) else wlo))
    if not keep.any():
        return (0.0, 0.0, 0.0)
    take = (lambda w: tuple(a[keep] for a in w)) if isinstance(wlo, tuple) else (lambda w: w[keep])
    return tree_growth(t, take(wlo), take(whi))


def _grow_pow(t: tuple, base, low: float, mig: float) -> tuple[float, float, float] | None:
    """Growth of a**k for a constant k in [kl, kh]; ``low``, ``mig`` are inf a and inf |a| on Ω."""
    if t[2][0] != "const" or (exact_int(t[2]) is None and low < 0):
        return None
    kl, kh, n = t[2][2], t[2][3], exact_int(t[2])
    if kl > 0 and base is not None and all(map(math.isfinite, base)):
        ca, pa, ra = base
        c = fraction_up(Fraction(ca) ** n) if n is not None else float(round_up(max(np.power(ca, kl), np.power(ca, kh)), WIDEN_LIBM))
        return (c, fraction_up(Fraction(pa) * Fraction(kh)), fraction_up(Fraction(ra) * Fraction(kh)))
    if kh < 0 and mig > 0:
        return (float(round_up(max(np.power(mig, kl), np.power(mig, kh)), WIDEN_LIBM)), 0.0, 0.0)
    return None


CostLike = Cost | str


def parse_cost(text: str) -> Cost:
    """Parse ``abs``, ``square``, ``pow:P`` (0 < P <= 64) or an expression in x (or ``x1``, the same).

    An expression proven to be |x|^P by the exact rewrite rules of :mod:`optmech.costs.rewrite`
    becomes the named cost (``spec`` keeps its text); one proven to be c·|x|^P, c ≠ 1, an expression
    with that monomial's closed forms (see :class:`Cost`).

    Raises
    ------
    CostError
        One line naming the offending construct or value.

    >>> parse_cost("abs"), parse_cost(" POW:3 ").spec
    (Cost(spec='abs', kind='abs', power=1.0), 'pow:3')
    >>> parse_cost("x*x + 1")(np.array([2.0]))
    array([5.])
    >>> c = parse_cost("sqrt(abs(x))")
    >>> c.spec, c.kind, c.power, c.canonical
    ('sqrt(abs(x))', 'pow', 0.5, 'pow:0.5')
    >>> parse_cost("__import__('os')")
    Traceback (most recent call last):
    ...
    optmech.errors.CostError: ...
    """
    if not isinstance(text, str):
        raise CostError(f"cost must be a string, got {type(text).__name__}")
    s = text.strip()
    key = s.lower()
    if key in ("abs", "square"):
        return Cost(key, key, 1.0 if key == "abs" else 2.0)
    if key.startswith("pow:"):
        try:
            p = float(key[4:])
        except ValueError:
            raise CostError(f"pow:P needs a number P, got {s[4:]!r}") from None
        if not (0.0 < p <= MAX_EXPONENT):
            raise CostError(f"pow:P needs 0 < P <= {MAX_EXPONENT:g}, got {s[4:].strip()!r}")
        return Cost(f"pow:{int(p) if p.is_integer() else repr(p)}", "pow", p)
    tree = parse_expr(text)
    spec = " ".join(s.split())
    m = recognise(s)
    if m is None:
        return Cost(spec, "expr", None, tree)
    if len(m.plus) == 1 and m.plus == m.minus and m.plus[0][1] > 0:  # c·|x|^p
        p, c = m.plus[0]
        name = canonical_name(p)
        if name is not None and c == 1:
            return Cost(spec, name.split(":")[0], float(p), tree)
        if name is not None:
            return Cost(spec, "expr", None, tree, (c, float(p)))
    if all(c > 0 for _, c in m.plus + m.minus):  # sums of positive powers of |x|: no cancellation
        canon = canonical_text(m)
        if canon != spec:
            return Cost(spec, "expr", None, parse_expr(canon), None, canon)
    return Cost(spec, "expr", None, tree)


def as_cost(obj: CostLike) -> Cost:
    """Return ``obj`` if it is a :class:`Cost`, else :func:`parse_cost` of the string.

    >>> c = parse_cost("abs")
    >>> as_cost(c) is c, as_cost("pow:1.5").power
    (True, 1.5)
    """
    if isinstance(obj, Cost):
        return obj
    if isinstance(obj, str):
        return parse_cost(obj)
    raise CostError(f"cost must be a Cost or a string, got {type(obj).__name__}")

