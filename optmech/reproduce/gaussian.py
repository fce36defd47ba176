r"""Report "How far from optimal is the Gaussian?": published (ε, δ) noise against the certified optimum on ℝ.

For (ε, δ)-DP additive noise on ℝ (sensitivity Δ, here 1) the solver brackets the optimal expected cost
V* ∈ [lower, upper] (:mod:`optmech.families.approx_real`); each result also carries the exact costs of
reference mechanisms (:mod:`optmech.mechanisms.approx.references`).  This report puts each reference's
cost V_ref beside V* as the certified ratio interval

.. math:: V_\mathrm{ref}/V^* \in [V_\mathrm{ref}/\mathrm{upper},\ V_\mathrm{ref}/\mathrm{lower}],

never as a point: where the solver stops short of its target gap (status ``gap_not_reached``, e.g. at
ε = 5, and in d = 2) the interval is wide, and the text and the heatmap say so (a cell whose interval is
wider than :data:`WIDE` is marked "≥" and hatched; the heatmap shows the extra cost V_ref/V* − 1 at the
interval's lower end, see :func:`excess_text`).  Where the
certified lower bound is 0 (in d = 2, when no LP fits the problem's time limit the bracket is
[0, best closed-form reference]) the interval is unbounded above, [V_ref/upper, ∞), and is printed
"≥ V_ref/upper".  Printed intervals are rounded outward.  The references:

* the Gaussian N(0, σ²) with the classic calibration σ = Δ√(2 ln(1.25/δ))/ε [DR14, Thm A.1], valid for
  0 < ε < 1 only (shown as invalid otherwise), and with the analytic calibration [BW18, Thm 8], the
  smallest σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) <= δ;
* the truncated Laplace B e^{−|x|/λ} on [−A, A], λ = Δ/ε, A = λ ln(1 + (e^ε − 1)/(2δ)) [GDGK20], a 1-D
  mechanism (optmech's references have none in d ≥ 2: its d = 2 column is "—");
* the best ε-DP noise (the staircase [Geng13, Thm 2.4], or Laplace), δ = 0 hence (ε, δ)-DP.

The report recomputes the Gaussian and truncated-Laplace costs here, independently of
:mod:`optmech.mechanisms` (σ by root finding on the [BW18] equation with :func:`scipy.special.ndtr`;
E|Z| = σ√(2/π), E Z² = σ²; the truncated Laplace's E|X| = λ − A·2δ/(e^ε − 1) and
E X² = 2λ² − (A² + 2Aλ)·2δ/(e^ε − 1) [derived in :mod:`optmech.mechanisms.approx.truncated`]), and
checks them against the references' values.  Its statements: [BW18]'s "at least a third of the
variance" removed by the analytic calibration, [GDGK20]'s improvement of the truncated Laplace over
the optimal Gaussian and its vanishing gap at high privacy, and [SLW25]'s optimised noise beating the
published mechanisms.

In d = 2 (ℓ2 sensitivity, costs ‖x‖₂ and ‖x‖₂²) the Gaussian is N(0, σ²I₂) with the same σ, so
E‖Z‖₂ = σ√(π/2) and E‖Z‖₂² = 2σ².

The spec's rows are grouped by (dim, norm, cost): a table and a row of heatmap panels per group, and
the findings are computed per group (each sentence names its panel).  Where a (cost, ε, δ) has rows in
three or more dimensions (d = 1 with |x| or x², the ℓ2 rows with ‖x‖₂ or ‖x‖₂²), the panel in d
(:func:`d_lines`, :func:`draw_d_panel`) sets the analytic Gaussian's ratio intervals side by side along d,
with findings computed per line (the lower end's fall and its rate; an upper end below the d = 1 lower end
is a certified narrowing of the gap).  The d = 2 rows carry a per-problem
``time_limit`` (a sweep parameter, :mod:`optmech.sweep`), which the group's heading states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Context as _Decimals, Decimal

from optmech.reproduce.report import (Context, Section, figure, fmt, fmt_bracket, md_table, new_section, plural,
                                       ref, register)
from optmech.sources import citation, tags_in

__all__ = ["Ratio", "GapRow", "gap_rows", "gaussian_cost", "analytic_sigma", "classic_sigma",
           "truncated_laplace_cost", "interval_text", "WIDE",
           "draw_heatmap", "heatmap_panels", "excess_text", "excess_lower", "excess_norm", "excess_cmap",
           "draw_ratio_cells", "excess_colorbar", "d_lines", "draw_d_panel"]

#: a ratio interval wider than this (hi/lo − 1) is marked "≥" in the heatmap and hatched
WIDE = 0.01
#: a ratio interval narrower than this (hi/lo − 1) is also given as a point value
NARROW = 1e-3
#: the references' names in a result (:mod:`optmech.mechanisms.approx.references`)
AG, CG, TL = "analytic_gaussian", "gaussian", "truncated_laplace"
#: the ε-DP laws (δ = 0), the best of which is the "best ε-DP noise" column
PURE = ("staircase", "laplace")
#: the one name of each mechanism, in the tables, the text, the statements and the figure
NAMES = {AG: "analytic Gaussian [BW18]", CG: "classic Gaussian [DR14]", TL: "truncated Laplace [GDGK20]",
         "staircase": "staircase [Geng13]", "laplace": "Laplace"}
_COST = {"abs": "|x|", "square": "x²", "l2": "‖x‖₂", "l2sq": "‖x‖₂²", "l1": "‖x‖₁"}
#: the works this section cites (their full citations open it: the report's References list the source papers only)
WORKS = ("DR14", "BW18", "GDGK20", "SLW25")


# -- the references' costs, recomputed independently of optmech.mechanisms ----------------------


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ√(2 ln(1.25/δ))/ε [DR14, Thm A.1] ((ε, δ)-DP for 0 < ε < 1 only)."""
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The σ with Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) = δ [BW18, Thm 8], by bracketing and Brent's method.

    The left side falls from 1 (σ → 0) to 0 (σ → ∞), so the root is unique.

    >>> round(analytic_sigma(1.0, 1e-5), 6)
    3.730632
    """
    from scipy.optimize import brentq
    from scipy.special import ndtr

    D, e = float(sensitivity), float(epsilon)

    def excess(s: float) -> float:
        return float(ndtr(D / (2 * s) - e * s / D) - math.exp(e) * ndtr(-D / (2 * s) - e * s / D)) - delta

    lo = hi = D
    while excess(hi) > 0:
        hi *= 2
    while excess(lo) < 0:
        lo /= 2
    return brentq(excess, lo, hi, xtol=1e-15 * hi, rtol=1e-15, maxiter=500)


def gaussian_cost(sigma: float, cost: str, dim: int = 1) -> float | None:
    """E c(Z), Z ~ N(0, σ²I_d): |x| and ‖x‖₂ give σ√2 Γ((d+1)/2)/Γ(d/2) (σ√(2/π) in 1-D), x² and ‖x‖₂² give dσ²;
    None for another cost."""
    if cost in ("abs", "l2") and (dim == 1 or cost == "l2"):
        return sigma * math.sqrt(2.0) * math.exp(math.lgamma((dim + 1) / 2) - math.lgamma(dim / 2))
    if cost in ("square", "l2sq") and (dim == 1 or cost == "l2sq"):
        return dim * sigma * sigma
    return None


def truncated_laplace_cost(epsilon: float, delta: float, cost: str, sensitivity: float = 1.0) -> float | None:
    """E|X| or E X² of the truncated Laplace [GDGK20] in 1-D: with λ = Δ/ε, A = λ ln(1 + (e^ε − 1)/(2δ)) and
    e^{A/λ} − 1 = (e^ε − 1)/(2δ), E|X| = λ − A/(e^{A/λ} − 1) and E X² = 2λ² − (A² + 2Aλ)/(e^{A/λ} − 1); None for
    another cost."""
    lam = sensitivity / epsilon
    q = math.expm1(epsilon) / (2 * delta)          # e^{A/λ} − 1
    A = lam * math.log1p(q)
    if cost == "abs":
        return lam - A / q
    if cost == "square":
        return 2 * lam * lam - (A * A + 2 * A * lam) / q
    return None


# -- ratios as certified intervals ----------------------------------------------------------------


def _outward(x: float, digits: int, up: bool) -> str:
    """``x`` rounded to ``digits`` significant digits, up or down (so a printed interval contains the true one)."""
    x = Decimal(x)
    if not x.is_finite() or x == 0:
        return str(float(x))
    rounding = ROUND_CEILING if up else ROUND_FLOOR
    d = _Decimals(prec=digits, rounding=rounding).plus(x)
    d = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=rounding)   # trailing zeros kept
    return format(d, "f") if 1e-4 <= abs(d) < 1e6 else format(d, "e")


def interval_text(lo: float, hi: float, digits: int = 5) -> str:
    """``[lo, hi]`` rounded outward to ``digits`` significant digits; ``≥ lo`` when ``hi`` is infinite.

    >>> interval_text(1.4241234, 1.4242876)
    '[1.4241, 1.4243]'
    >>> interval_text(1.3990173, math.inf)
    '≥ 1.3990'
    """
    if not math.isfinite(hi):
        return f"≥ {_outward(lo, digits, False)}"
    return f"[{_outward(lo, digits, False)}, {_outward(hi, digits, True)}]"


@dataclass(frozen=True)
class Ratio:
    """V_ref / V* ∈ [lo, hi] = [V_ref/upper, V_ref/lower] for a certified bracket [lower, upper]."""

    lo: float
    hi: float

    @classmethod
    def of(cls, value: float | None, result: dict | None) -> "Ratio | None":
        """The ratio interval of ``value`` > 0 against a certified result with 0 <= lower <= upper, 0 < upper < ∞
        (lower = 0 gives hi = ∞: only the lower end is certified); None otherwise.  Never divides by zero."""
        if value is None or not result or not result.get("certified"):
            return None
        lo, hi = result.get("lower_bound"), result.get("upper_bound")
        if lo is None or hi is None or not (0 <= lo <= hi) or not (0 < hi < math.inf):
            return None
        if not (math.isfinite(value) and value > 0):
            return None
        return cls(value / hi, value / lo if lo > 0 else math.inf)

    @property
    def bounded(self) -> bool:
        """The interval has a finite upper end (the certified lower bound is positive)."""
        return math.isfinite(self.hi)

    @property
    def width(self) -> float:
        """hi/lo − 1: the relative width of the interval (that of the bracket); ∞ when unbounded."""
        return self.hi / self.lo - 1.0 if self.bounded else math.inf

    @property
    def wide(self) -> bool:
        return self.width > WIDE

    def text(self) -> str:
        """``≈1.424 [1.4240, 1.4242]`` (a point value only where the interval is narrower than :data:`NARROW`);
        ``≥ 1.3990`` where the interval is unbounded."""
        iv = interval_text(self.lo, self.hi)
        return f"≈{math.sqrt(self.lo * self.hi):#.4g} {iv}" if self.width <= NARROW else iv


@dataclass
class GapRow:
    """One (dim, norm, cost, ε, δ) problem: its result and the references' costs and ratio intervals."""

    dim: int
    norm: str
    cost: str
    epsilon: float
    delta: float
    result: dict | None
    values: dict[str, float | None]      # reference name -> its cost (None: absent)
    valid: dict[str, bool]               # reference name -> its side conditions hold
    ratios: dict[str, Ratio | None]      # reference name -> V_ref/V* interval (None: no certified bracket)
    pure: str | None                     # the cheaper of the ε-DP laws ("staircase" or "laplace")
    recomputed: dict[str, float | None]  # AG, CG, TL -> the cost recomputed here
    time_limit: float | None = None      # the problem's time limit (None: the solver's default)

    @property
    def group(self) -> tuple[int, str, str]:
        return (self.dim, self.norm, self.cost)

    @property
    def certified(self) -> bool:
        return bool(self.result and self.result.get("certified"))

    @property
    def status(self) -> str:
        return "failed" if self.result is None else str(self.result.get("status"))

    @property
    def gap(self) -> float | None:
        return None if self.result is None else self.result.get("relative_gap")

    @property
    def best_reference(self) -> tuple[str, float] | None:
        """The cheapest valid reference (name, cost), or None."""
        named = [(n, v) for n, v in self.values.items() if self.valid[n] and v is not None]
        return min(named, key=lambda t: t[1]) if named else None


def gap_rows(ctx: Context) -> list[GapRow]:
    """One :class:`GapRow` per problem of the spec (failed ones too, with ``result`` None), in spec order."""
    out = []
    for p, r in ctx.rows:
        dim, eps, delta = int(p.get("dim", 1)), float(p["epsilon"]), float(p["delta"])
        norm, cost, D = str(p.get("norm", "l1")), str(p.get("cost", "abs")), float(p.get("sensitivity", 1.0))
        values, valid = {}, {}
        for name in (AG, CG, TL, *PURE):
            # the Laplace column is the ℓ2-Laplace in d > 1 (named l2_laplace in every family)
            x = ref(r, name) or (ref(r, "l2_laplace") if name == "laplace" else None)
            values[name] = None if x is None or x.get("value") is None else float(x["value"])
            valid[name] = bool(x is not None and x.get("valid", True) and values[name] is not None
                               and math.isfinite(values[name]))
        ratios = {name: Ratio.of(values[name], r) if valid[name] else None for name in values}
        pures = [n for n in PURE if valid[n]]
        pure = min(pures, key=lambda n: values[n]) if pures else None
        recomputed = {AG: None, CG: None, TL: None}
        if eps > 0 and 0 < delta < 1:
            recomputed[AG] = gaussian_cost(analytic_sigma(eps, delta, D), cost, dim)
            recomputed[CG] = gaussian_cost(classic_sigma(eps, delta, D), cost, dim)
            recomputed[TL] = truncated_laplace_cost(eps, delta, cost, D) if dim == 1 else None
        tl = p.get("time_limit")
        out.append(GapRow(dim, norm, cost, eps, delta, r, values, valid, ratios, pure, recomputed,
                          None if tl is None else float(tl)))
    return out


# -- text -----------------------------------------------------------------------------------------


def _group_name(g: tuple[int, str, str]) -> str:
    dim, norm, cost = g
    return f"{_COST.get(cost, cost)}, d = 1" if dim == 1 else f"{_COST.get(cost, cost)}, d = {dim}, {norm} sensitivity"


def _at(row: GapRow) -> str:
    return f"ε = {fmt(row.epsilon)}, δ = {fmt(row.delta)}"


def _status(row: GapRow) -> str:
    if row.result is None:
        return "failed"
    g = row.gap
    what = {"optimal": "target gap reached", "gap_not_reached": "gap not reached"}.get(row.status, row.status)
    if row.certified and row.result.get("lower_bound") == 0:
        return f"{what}: lower bound 0"
    return what if g is None else f"{what} (gap {g:.1e})"


def _ratio_cell(row: GapRow, name: str) -> str:
    if row.values.get(name) is None:
        return "—"
    if name == CG and not row.valid[CG]:
        return "invalid (ε ≥ 1)" if row.epsilon >= 1 else "invalid"
    r = row.ratios.get(name)
    return r.text() if r else ("no certified bracket" if row.result is not None else "—")


def _pure_cell(row: GapRow) -> str:
    if row.pure is None:
        return "—"
    r = row.ratios[row.pure]
    return f"{row.pure}: {r.text() if r else '—'}"


def _table(rows: list[GapRow]) -> str:
    head = ["ε", "δ", "certified bracket V*", "status", f"{NAMES[AG]}: cost", f"{NAMES[AG]} / V*",
            f"{NAMES[CG]} / V*", f"{NAMES[TL]} / V*", "best ε-DP noise / V*"]
    body = [[fmt(r.epsilon), fmt(r.delta), fmt_bracket(r.result, 7), _status(r), fmt(r.values[AG], 7),
             _ratio_cell(r, AG), _ratio_cell(r, CG), _ratio_cell(r, TL), _pure_cell(r)] for r in rows]
    return md_table(head, body)


def _findings(rows: list[GapRow]) -> list[str]:
    """Sentences computed from the certified ratios (nothing here is typed in by hand), one per (dim, norm, cost)
    panel over that panel's rows only, then one on the brackets of all panels."""
    out = []
    for g in _groups(rows):
        name = _group_name(g)
        grp = [r for r in rows if r.group == g]
        rs = [r for r in grp if r.ratios[AG] is not None]
        if not rs:
            continue
        worst = max(rs, key=lambda r: r.ratios[AG].lo)
        s = (f"**{name}:** the {NAMES[AG]} costs at least {worst.ratios[AG].lo:.3g} times the optimum at "
             f"{_at(worst)} (the largest certified lower end of this panel's {plural(len(rs), 'cell')}; interval "
             f"{interval_text(worst.ratios[AG].lo, worst.ratios[AG].hi, 4)})")
        bounded = [r for r in rs if r.ratios[AG].bounded]
        if bounded:
            best = min(bounded, key=lambda r: r.ratios[AG].hi)
            s += (f" and at most {best.ratios[AG].hi:.3g} times at {_at(best)} (the smallest certified upper end"
                  + (f" of the {plural(len(bounded), 'cell')} with a positive lower bound)." if len(bounded) < len(rs)
                     else ")."))
        else:
            s += "; no cell of this panel has a positive certified lower bound, so no ratio here has an upper end."
        up_eps, n_eps = _trend(rs, AG, along="epsilon", rising=True)
        up_dl, n_dl = _trend(rs, AG, along="delta", rising=False)
        parts = ([f"with ε at {up_eps} of {plural(n_eps, 'value')} of δ"] if n_eps else []) + \
                ([f"as δ shrinks at {up_dl} of {plural(n_dl, 'value')} of ε"] if n_dl else [])
        if parts:
            s += (f" In this panel the ratio grows {' and '.join(parts)} (certified: each interval above the one "
                  "before; where intervals overlap or are unbounded, growth is not certified).")
        tl = [r for r in grp if r.ratios[TL] is not None]
        if tl:
            near = [r for r in tl if r.ratios[TL].hi <= 1 + WIDE]
            tw = max(tl, key=lambda r: r.ratios[TL].lo)
            s += (f" The {NAMES[TL]} is within {WIDE:.0%} of the optimum (certified) in {len(near)} of {len(tl)} cells; "
                  f"its largest ratio is at least {tw.ratios[TL].lo:.3g}, at {_at(tw)}.")
        elif g[0] >= 2:
            s += f" The {NAMES[TL]} is a 1-D mechanism: it has no cell here."
        both = [r for r in grp if r.values[AG] and r.values[TL]]
        if both:
            f = [r.values[AG] / r.values[TL] for r in both]
            s += (f" The analytic Gaussian costs {min(f):.3g} to {max(f):.3g} times the truncated Laplace "
                  f"(exact costs, {plural(len(both), 'cell')}).")
        s += _brackets(grp)
        out.append(s)
    cells = [r for r in rows if r.result is not None]
    if cells:
        short = [r for r in cells if r.status != "optimal"]
        wide = [r for r in cells if r.ratios[AG] is not None and r.ratios[AG].wide]
        s = f"All panels: {len(cells) - len(short)} of {plural(len(cells), 'bracket')} reached the solver's target gap"
        if short:
            w = max(short, key=lambda r: r.gap if r.gap is not None else math.inf)
            s += (f"; the other {len(short)} stopped short (status {', '.join(sorted({r.status for r in short}))}) with "
                  f"a certified but wider bracket, widest at {_group_name(w.group)}, {_at(w)} (relative gap "
                  f"{fmt(w.gap, 2)})")
        s += (f". {plural(len(wide), 'cell')} of the heatmap {'has' if len(wide) == 1 else 'have'} a ratio interval "
              f"wider than {WIDE:.0%} (marked ≥ and hatched).")
        out.append(s)
    return out


def _brackets(grp: list[GapRow]) -> str:
    """What a panel's brackets are, where some stopped short of the target gap: the range of the relative gaps of
    those with a positive lower bound, those with lower bound 0 (the ratio has a lower end only), those whose upper
    end is no better than the best closed-form reference, and the failed problems."""
    cells = [r for r in grp if r.certified]
    short = [r for r in cells if r.status != "optimal"]
    failed = [r for r in grp if r.result is None]
    if not short and not failed:
        return ""
    zero = [r for r in cells if r.result.get("lower_bound") == 0]
    gaps = [r.gap for r in short if r not in zero and r.gap is not None]
    limit = {r.time_limit for r in grp if r.time_limit is not None}
    out = f" Of its {plural(len(grp), 'problem')}, {len(cells) - len(short)} reached the target gap"
    if gaps:
        out += (f"; {len(gaps)} stopped short with relative gaps {fmt(min(gaps), 2)} to {fmt(max(gaps), 2)}"
                if len(gaps) > 1 else f"; 1 stopped short with relative gap {fmt(gaps[0], 2)}")
    if zero:
        no_lp = [r for r in zero if not r.result.get("history")]     # the fallback bracket: no LP was solved
        memory = [r for r in no_lp if str(r.result.get("message", "")).startswith("memory limit")]
        why = ("no LP fitted the time limit" + (f" of {' or '.join(fmt(t) for t in sorted(limit))} s" if limit else "")
               if not memory else "no LP fitted the memory limit" if len(memory) == len(no_lp) else
               f"no LP fitted the time or memory limit ({len(memory)} memory)")
        out += (f"; {len(zero)} {'has' if len(zero) == 1 else 'have'} lower bound 0"
                + ((f" ({why})" if len(no_lp) == len(zero) else f" ({len(no_lp)} of them: {why})") if no_lp else "")
                + ", so the ratio there is a lower end only (≥)")
    if failed:
        out += f"; {len(failed)} failed (listed above)"
    out += "."
    ref_upper = [r for r in cells if r.best_reference is not None
                 and r.result["upper_bound"] >= r.best_reference[1] * (1 - 1e-9)]
    if ref_upper:
        names = sorted({NAMES.get(r.best_reference[0], r.best_reference[0]) for r in ref_upper})
        out += (f" In {len(ref_upper)} of {plural(len(cells), 'cell')} the certified upper bound is no better than the "
                f"best closed-form reference ({', '.join(names)}): there a ratio's lower end measures the mechanism "
                "against that reference, and how far the optimum lies below it is not resolved.")
    return out


def _trend(rows: list[GapRow], name: str, *, along: str, rising: bool) -> tuple[int, int]:
    """(k, n): of the n lines of the grid along ``along`` (ε at fixed δ, or δ at fixed ε) with two or more
    certified ratios, the k whose ratio intervals strictly increase as ``along`` rises (``rising``) or falls."""
    other = "delta" if along == "epsilon" else "epsilon"
    k = n = 0
    for v in sorted({getattr(r, other) for r in rows}):
        line = sorted((r for r in rows if getattr(r, other) == v and r.ratios[name] is not None),
                      key=lambda r: getattr(r, along), reverse=not rising)
        if len(line) >= 2:
            n += 1
            k += all(b.ratios[name].lo > a.ratios[name].hi for a, b in zip(line, line[1:]))
    return k, n


def _groups(rows: list[GapRow]) -> list[tuple[int, str, str]]:
    seen: list = []
    for r in rows:
        if r.group not in seen:
            seen.append(r.group)
    return seen


# -- the statements ---------------------------------------------------------------------------------


def _checks(s: Section, rows: list[GapRow]) -> None:
    # the references' costs, recomputed here
    diffs, n = [], 0
    for r in rows:
        for name in (AG, CG, TL):
            a, b = r.values[name], r.recomputed[name]
            if a is not None and b is not None:
                n += 1
                diffs.append(abs(a / b - 1))
    if n:
        s.check("The references' costs, recomputed here", "σ from the Φ equation [BW18, Thm 8]; σ = Δ√(2 ln(1.25/δ))/ε "
                "[DR14, Thm A.1]; λ = Δ/ε, A = λ ln(1 + (e^ε − 1)/(2δ)) [GDGK20]",
                f"{n} costs, largest relative difference {max(diffs):.1e} from optmech's references",
                max(diffs) <= 1e-9, "E|Z| = σ√(2/π), E Z² = σ² (in d = 2: E‖Z‖₂ = σ√(π/2), E‖Z‖₂² = 2σ²); "
                "truncated Laplace moments in closed form")
    # [BW18]: a third of the variance
    var = [(r, r.values[AG] / r.values[CG]) for r in rows
           if r.cost in ("square", "l2sq") and r.valid[CG] and r.values[AG] and r.values[CG]]
    if var:
        lo, hi = min(v for _, v in var), max(v for _, v in var)
        s.check("[BW18]: the analytic calibration against the classic one", "analytical calibration removes at "
                "least a third of the variance of the noise compared to the classical Gaussian mechanism (abstract, "
                "experiments)", f"variance ratio analytic/classic {lo:.3g} to {hi:.3g} over {plural(len(var), 'cell')} "
                "with ε < 1", hi <= 2 / 3, "exact costs; the classic calibration is valid for ε < 1 only")
    # [GDGK20]: truncated Laplace beats the optimal Gaussian
    both = [r for r in rows if r.values[AG] and r.values[TL]]
    if both:
        f = [r.values[AG] / r.values[TL] for r in both]
        below = sum(r.values[TL] < r.values[AG] for r in both)
        s.check("[GDGK20]: the truncated Laplace against the Gaussian", "numeric experiments show the improvement of "
                "the truncated Laplacian mechanism over the optimal Gaussian mechanism in all privacy regimes "
                "(abstract)", f"truncated Laplace cheaper in {below} of {len(both)} cells; analytic Gaussian / "
                f"truncated Laplace from {min(f):.3g} to {max(f):.3g}", below == len(both),
                "exact costs of both; the analytic calibration is the optimal Gaussian")
    # [GDGK20]: the gap vanishes at high privacy (checked as a trend in ε at each δ)
    trend = []
    for g in _groups(rows):
        for d in sorted({r.delta for r in rows if r.group == g}):
            rs = sorted((r for r in rows if r.group == g and r.delta == d and r.ratios[TL]), key=lambda r: r.epsilon)
            if len(rs) >= 2:
                trend.append((g, d, rs[0], rs[-1], rs[0].ratios[TL].hi < rs[-1].ratios[TL].lo))
    if trend:
        closest = min((t[2] for t in trend), key=lambda r: r.ratios[TL].hi)
        s.check("[GDGK20]: the truncated Laplace is optimal in the high-privacy limit", "the multiplicative gap of "
                "the lower bounds and upper bounds goes to zero in various high privacy regimes (abstract)",
                f"certified V_TLap/V* smaller at the smallest ε than at the largest in {sum(t[4] for t in trend)} of "
                f"{len(trend)} (cost, δ) rows; closest to 1 at {_COST.get(closest.cost, closest.cost)}, {_at(closest)}: "
                f"{interval_text(closest.ratios[TL].lo, closest.ratios[TL].hi, 5)}", all(t[4] for t in trend),
                "a limit checked as a trend on a finite grid: evidence, not the limit")
    # [SLW25]: optimised noise beats the published mechanisms
    cert = [r for r in rows if r.certified]
    if cert:
        names = (AG, CG, TL, *PURE)
        best = {id(r): min((r.values[n] for n in names if r.valid[n]), default=None) for r in cert}
        rated = [r for r in cert if best[id(r)] is not None]
        beaten = [r for r in rated if r.result["upper_bound"] < best[id(r)]]
        unsound = [r for r in rated if r.result["lower_bound"] > best[id(r)] * (1 + 1e-12)]
        if rated:
            gains = [best[id(r)] / r.result["upper_bound"] for r in beaten]
            s.check("[SLW25]: optimised noise against the published mechanisms", "our perturbations can outperform "
                    "the previously best results from the literature (abstract)",
                    f"the certified optimum's mechanism (upper end) beats the best reference in {len(beaten)} of "
                    f"{len(rated)} cells" + (f", by a factor up to {max(gains):.3g}" if gains else ""),
                    False if unsound else (True if beaten else None),
                    "\"can outperform\": some cell suffices; a cell whose bracket contains the best reference's cost "
                    "(the staircase, where δ is small) is not resolved at this gap")


# -- the figure -------------------------------------------------------------------------------------
#
# A heatmap cell shows the extra cost of a mechanism over the optimum, V_ref/V* − 1, from the certified ratio
# interval [lo, hi] (:class:`Ratio`).  lo and hi are floats from one division each (error at most half an ulp), so
# nextafter(lo, 0) − 1 and nextafter(hi, ∞) − 1 enclose the true extra cost; the subtraction and the percentage are
# done exactly in :class:`decimal.Decimal` and rounded down (lower end) or up (upper end) to the printed digits.
# Where the lower end is positive the cell is coloured and labelled by it ("≥" and hatched where the interval is
# wider than :data:`WIDE` or unbounded).  Where it is not (the bracket's upper end is no better than the
# reference), the lower end says nothing beyond V_ref >= V*: the cell gets the "under" colour and is labelled by
# its upper end ("≤ x %", the reference is optimal within x %) or, when that is unbounded too, "unresolved".


#: a cell's colour where the certified lower end of the extra cost is not positive (the colour bar's "under")
UNDER = "#cfe3ef"
#: a cell's colour where there is no certified ratio (no bracket, or no such mechanism)
MISSING = "0.85"
_EXACT = _Decimals(prec=80)


def _excess(x: float, up: bool) -> Decimal:
    """x − 1 for a ratio end x (a float quotient), widened by one ulp outward, exactly (no rounding)."""
    return _EXACT.subtract(Decimal(math.nextafter(x, math.inf if up else 0.0)), Decimal(1))


def _outward_decimal(x: Decimal, digits: int, up: bool) -> str:
    rounding = ROUND_CEILING if up else ROUND_FLOOR
    d = _Decimals(prec=digits, rounding=rounding).plus(x)
    d = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=rounding)
    return format(d, "f")


def excess_lower(q: Ratio) -> float:
    """The certified lower end of the extra cost q − 1 (as a float, for the colour; rounded down); 0 where not
    positive."""
    e = _excess(q.lo, False)
    return max(float(_Decimals(prec=17, rounding=ROUND_FLOOR).plus(e)), 0.0)


def excess_text(q: Ratio) -> str:
    """A heatmap cell's label for the ratio interval ``q``: the extra cost V_ref/V* − 1 in percent.

    ``42.3%`` (the certified lower end, rounded down), ``≥42.3%`` where the interval is wider than :data:`WIDE` or
    unbounded; where the lower end is not positive, ``≤0.012%`` (the upper end, rounded up) or ``unresolved``.

    >>> excess_text(Ratio(1.4231, 1.4232)), excess_text(Ratio(1.6, math.inf)), excess_text(Ratio(0.999, 1.0001))
    ('42.3%', '≥59.9%', '≤0.0101%')
    >>> excess_text(Ratio(0.999, math.inf))
    'unresolved'
    """
    lo = _excess(q.lo, False)
    if lo > 0:
        return ("≥" if q.wide else "") + _percent_down(lo)
    if not q.bounded:
        return "unresolved"
    return "≤" + _percent_up(_excess(q.hi, True))


def _scaled(x: Decimal) -> Decimal:
    return _EXACT.multiply(x, Decimal(100))


def _percent_down(x: Decimal) -> str:
    p = _scaled(x)
    if p < Decimal("0.001"):
        return _sci(p, False) + "%"
    return _outward_decimal(p, 3, False) + "%"


def _percent_up(x: Decimal) -> str:
    p = _scaled(x)
    if p < Decimal("0.001"):
        return _sci(p, True) + "%"
    return _outward_decimal(p, 3, True) + "%"


def _sci(p: Decimal, up: bool) -> str:
    """p > 0 with 2 significant digits in e-notation, rounded up or down (``1.2e-5``)."""
    rounding = ROUND_CEILING if up else ROUND_FLOOR
    d = _Decimals(prec=2, rounding=rounding).plus(p)
    mant = d.scaleb(-d.adjusted())
    return f"{mant:.1f}e{d.adjusted()}"


def excess_norm(ratios):
    """A log colour scale (whole decades) over the positive certified lower ends of the extra costs of ``ratios``
    (1e-4 to 1 where there is none)."""
    from matplotlib.colors import LogNorm

    pos = [v for v in (excess_lower(q) for q in ratios if q is not None) if v > 0]
    lo = 10.0 ** math.floor(math.log10(min(pos))) if pos else 1e-4
    hi = 10.0 ** math.ceil(math.log10(max(pos))) if pos else 1.0
    return LogNorm(vmin=lo, vmax=max(hi, 10 * lo))


def excess_cmap():
    """YlOrRd with the "under" colour :data:`UNDER` and the missing colour :data:`MISSING`."""
    from matplotlib import colormaps

    return colormaps["YlOrRd"].with_extremes(bad=MISSING, under=UNDER)


def draw_ratio_cells(ax, cells: dict, shape: tuple[int, int], norm, cmap, fontsize: float = 8.0):
    """Draw one heatmap panel: ``cells`` maps (row, column) to a :class:`Ratio`, or to a string for a cell without
    one (drawn grey, the string as its label); returns the image.  Coloured by :func:`excess_lower` on ``norm``
    (the "under" colour where it is 0), labelled by :func:`excess_text`, hatched where the interval is wide."""
    import numpy as np
    from matplotlib.patches import Rectangle

    grid = np.full(shape, np.nan)
    for (yi, xi), q in cells.items():
        if isinstance(q, Ratio):
            v = excess_lower(q)
            grid[yi, xi] = v if v > 0 else norm.vmin / 10
    im = ax.imshow(np.ma.masked_invalid(grid), origin="lower", cmap=cmap, norm=norm, aspect="auto")
    for (yi, xi), q in cells.items():
        if not isinstance(q, Ratio):
            ax.text(xi, yi, q, ha="center", va="center", fontsize=fontsize, color="0.3")
            continue
        if q.wide:
            ax.add_patch(Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, hatch="///", edgecolor="0.45", lw=0))
        v = excess_lower(q)
        dark = v > 0 and norm(v) > 0.6
        ax.text(xi, yi, excess_text(q), ha="center", va="center", fontsize=fontsize,
                color="white" if dark else "black", fontweight="bold" if q.wide else "normal",
                bbox=None if not q.wide else {"boxstyle": "round,pad=0.15", "fc": "0.2" if dark else "white",
                                                   "ec": "none", "alpha": 0.6})
    return im


def excess_colorbar(fig, cax, im, under: bool, what: str = "V_ref/V* − 1"):
    """The colour bar of :func:`draw_ratio_cells` panels in ``cax``: labelled with what the colour is, ticks in
    percent; an "under" triangle where some cell's certified lower end is not positive."""
    from matplotlib.ticker import FuncFormatter

    def percent(v: float, _pos) -> str:
        p = 100 * v
        return f"{p:g}%" if p >= 1e-3 else f"$10^{{{round(math.log10(p))}}}$%"

    cb = fig.colorbar(im, cax=cax, extend="min" if under else "neither")
    cb.set_label(f"extra cost {what}\n(certified lower end, log scale)", fontsize=8)
    cb.ax.yaxis.set_major_formatter(FuncFormatter(percent))
    cb.ax.tick_params(labelsize=7)
    return cb


def heatmap_panels(rows: list[GapRow]) -> list[tuple[tuple[int, str, str], str]]:
    """The panels of :func:`draw_heatmap`, (group, reference) in order: the analytic Gaussian and the truncated
    Laplace per (dim, norm, cost) group, each only where some cell has a certified ratio (no empty panel: the
    truncated Laplace has no d = 2 panel)."""
    return [(g, name) for g in _groups(rows) for name in (AG, TL)
            if any(r.group == g and r.ratios[name] is not None for r in rows)]


def draw_heatmap(fig, rows: list[GapRow]) -> None:
    """The panels of :func:`heatmap_panels` (two a row) over each group's ε × δ grid, on one colour scale: the
    extra cost V_ref/V* − 1 of the reference, coloured and annotated by the certified lower end (see
    :func:`excess_text`); a cell without a certified bracket is grey, marked "—" (or "failed").  Sets the figure's
    size from the grid."""
    panels = heatmap_panels(rows)
    if not panels:
        raise ValueError("no certified ratio to draw")
    ncols = 1 if len(panels) == 1 else 2
    nrows = -(-len(panels) // ncols)
    neps = max(len({r.epsilon for r in rows if r.group == g}) for g, _ in panels)
    ndls = max(len({r.delta for r in rows if r.group == g}) for g, _ in panels)
    w, h = max(3.6, 1.2 + 0.95 * neps), max(2.0, 1.1 + 0.5 * ndls)
    fig.set_size_inches(ncols * w + 1.3, nrows * h + 0.9)
    gs = fig.add_gridspec(nrows, ncols + 1, width_ratios=[1.0] * ncols + [0.045])
    norm, cmap = excess_norm([r.ratios[n] for g, n in panels for r in rows if r.group == g]), excess_cmap()
    under = False
    for k, (g, name) in enumerate(panels):
        ax = fig.add_subplot(gs[k // ncols, k % ncols])
        grp = [r for r in rows if r.group == g]
        eps, dls = sorted({r.epsilon for r in grp}), sorted({r.delta for r in grp})
        cells = {}
        for r in grp:
            q = r.ratios[name]
            cells[(dls.index(r.delta), eps.index(r.epsilon))] = q if q is not None else (
                "failed" if r.result is None else "—")
            under = under or (q is not None and excess_lower(q) <= 0)
        im = draw_ratio_cells(ax, cells, (len(dls), len(eps)), norm, cmap)
        ax.set_xticks(range(len(eps)))
        ax.set_xticklabels([fmt(e) for e in eps], fontsize=8)
        ax.set_yticks(range(len(dls)))
        ax.set_yticklabels([fmt(d) for d in dls], fontsize=8)
        ax.set_xlabel("ε", fontsize=9)
        ax.set_ylabel("δ", fontsize=9)
        short = "analytic Gaussian" if name == AG else "truncated Laplace"
        ax.set_title(f"({'abcdefghijklmnopqrstuvwxyz'[k]}) {short}, {_group_name(g)}", fontsize=9)
    excess_colorbar(fig, fig.add_subplot(gs[:, -1]), im, under, "V_ref/V* − 1")
    fig.suptitle("How far from optimal is the Gaussian? Extra cost of each mechanism over the certified optimum V* "
                 f"(Δ = 1)\nnumbers: certified lower ends; ≥ and hatched: interval wider than {WIDE:.0%} or unbounded; "
                 "≤ (pale blue): upper end, where the lower end is not above 0", fontsize=9)


# -- the panel in d ---------------------------------------------------------------------------------------

#: the d-dimensional cost of each 1-D cost: a 1-D row of |x| (x²) is the d = 1 point of the ‖x‖₂ (‖x‖₂²) line
_RADIAL = {"abs": "l2", "square": "l2sq", "l2": "l2", "l2sq": "l2sq"}


def d_lines(rows: list[GapRow]) -> dict[tuple[str, float, float], dict[int, GapRow]]:
    """The rows of the panel in d: for each (radial cost, ε, δ), the row at each dimension (1-D rows of |x| and x²,
    and the ℓ2-sensitivity rows of ‖x‖₂ and ‖x‖₂² in d >= 2), kept where the line has three or more dimensions."""
    lines: dict[tuple[str, float, float], dict[int, GapRow]] = {}
    for r in rows:
        if r.cost in _RADIAL and (r.dim == 1 or r.norm == "l2"):
            lines.setdefault((_RADIAL[r.cost], r.epsilon, r.delta), {})[r.dim] = r
    return {k: v for k, v in lines.items() if len(v) >= 3}


def _d_table(lines: dict) -> str:
    dims = sorted({d for line in lines.values() for d in line})
    head = ["cost", "ε", "δ", *[f"d = {d}" for d in dims]]
    body = [[_COST[c], fmt(e), fmt(dl), *[(lambda r: "—" if r is None else _ratio_cell(r, AG))(line.get(d))
                                        for d in dims]]
            for (c, e, dl), line in sorted(lines.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[0][2]))]
    return md_table(head, body)


def _d_findings(lines: dict) -> list[str]:
    """Per line: the certified lower end of the analytic Gaussian's ratio at its smallest and largest dimension,
    whether the lower ends fall at every step in d, and the upper ends' range; then how many lines fall."""
    out, falling, n = [], 0, 0
    for (c, e, dl), line in sorted(lines.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[0][2])):
        pts = [(d, line[d].ratios[AG]) for d in sorted(line) if line[d].ratios[AG] is not None]
        if len(pts) < 2:
            continue
        n += 1
        lows = [q.lo for _, q in pts]
        down = all(b < a for a, b in zip(lows, lows[1:]))
        falling += down
        (d0, q0), (d1, q1) = pts[0], pts[-1]
        his = [q.hi for _, q in pts if q.bounded]
        s = (f"{_COST[c]}, ε = {fmt(e)}, δ = {fmt(dl)}: the certified lower end of {NAMES[AG]}/V* is {q0.lo:.3g} at "
             f"d = {d0} and {q1.lo:.3g} at d = {d1}" + (", falling at every step in d" if down else
                                                        ", not falling at every step in d"))
        if q1.lo > 1 and q0.lo > 1 and d1 > d0:
            rate = math.log((q1.lo - 1) / (q0.lo - 1)) / math.log(d1 / d0)
            s += f" (its excess over 1 scales like d^{rate:.2f} between them)"
        s += (f"; the upper ends lie in [{min(his):.3g}, {max(his):.3g}]" if his else "; no upper end is certified")
        below = [d for d, q in pts if d != d0 and q.bounded and q.hi < q0.lo]
        if below:
            s += (f"; at d = {', '.join(str(d) for d in below)} the upper end lies below the d = {d0} lower end, so the "
                  f"Gaussian's gap there is certified smaller than at d = {d0}")
        out.append(s + ".")
    if n:
        out.insert(0, f"**The Gaussian's gap against d.** In {falling} of {plural(n, 'line')} the certified lower end of "
                      f"{NAMES[AG]}/V* falls at every step in d. What is certified is that the Gaussian costs at least "
                      "the lower end times the optimum: a falling lower end shows that the known upper ends on V* (the "
                      "radial shell laws and the closed forms) leave the Gaussian less room as d grows, not that the gap "
                      "itself closes. The upper ends of the ratio come from the lower bounds on V*: the cube-cell LPs where one "
                      "fits (d <= 3), else the marginal bound, with which the ratio's upper end is the 1-D one (E‖Z‖₂ and "
                      "V*_1D/E|U₁| scale alike in d), so that it cannot show the gap closing; where an upper end falls "
                      "below the d = 1 lower end, the line says so.")
    return out


def draw_d_panel(fig, lines: dict) -> None:
    """The certified lower end of the analytic Gaussian's ratio to V* against d (log scale), a line per
    (cost, ε, δ); the upper ends, where certified, dashed."""
    ax = fig.add_subplot(1, 1, 1)
    fig.set_size_inches(6.4, 4.2)
    for (c, e, dl), line in sorted(lines.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[0][2])):
        pts = [(d, line[d].ratios[AG]) for d in sorted(line) if line[d].ratios[AG] is not None]
        if len(pts) < 2:
            continue
        h = ax.plot([d for d, _ in pts], [q.lo for _, q in pts], marker="o", ms=3, lw=1.2,
                    label=f"{_COST[c]}, ε = {fmt(e)}, δ = {fmt(dl)}")
        up = [(d, q.hi) for d, q in pts if q.bounded]
        if len(up) >= 2:
            ax.plot([d for d, _ in up], [v for _, v in up], ls="--", lw=0.8, color=h[0].get_color())
    ax.set_xscale("log")
    ax.axhline(1.0, color="0.5", lw=0.6)
    ax.set_xlabel("dimension d (ℓ2 sensitivity 1; d = 1: |x| and x²)", fontsize=9)
    ax.set_ylabel("analytic Gaussian / V*", fontsize=9)
    ax.set_title("The Gaussian's gap against d: certified lower ends (solid), upper ends (dashed)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)


# -- the report ---------------------------------------------------------------------------------------


@register("gaussian_gap")
def gaussian_gap_report(ctx: Context) -> Section:
    """The certified ratio V_ref/V* of the Gaussian (classic, analytic), the truncated Laplace and the ε-DP
    optima, over the spec's ε × δ grid, per (dim, norm, cost)."""
    s = new_section(ctx, "How far from optimal is the Gaussian?")
    rows = gap_rows(ctx)
    cited = [t for t in dict.fromkeys([*tags_in(ctx.spec.reproduce.get("item", "")),
                                       *tags_in(ctx.spec.description or ""), *WORKS])]
    s.add("**Works cited:** " + "  \n".join(citation(t) for t in cited))
    s.add("Each ratio V_ref/V* is a certified interval [V_ref/upper, V_ref/lower], rounded outward; a point value "
          f"(≈) is added where the interval is narrower than {NARROW:.1%}, and where the certified lower bound is 0 "
          "the interval is unbounded and printed \"≥ V_ref/upper\". V_ref is the reference's exact expected "
          "cost; [lower, upper] is the certified bracket on the optimum V* over all (ε,δ)-DP additive noise on ℝ "
          "(ℝ^d in a d = 2 panel; a lattice LP per resolution: a certified dual lower bound, an exactly audited "
          "mechanism above). "
          "[SLW25] computes optimal (ε,δ) noise on ℝ in floating point (upper- and lower-bounding hierarchies on a "
          "fixed grid, solver tolerances); the intervals below are certified.")
    multi = [r for r in rows if r.dim >= 2]
    if multi:
        gaps = [r.gap for r in multi if r.certified and r.result.get("lower_bound", 0) > 0 and r.gap is not None]
        limits = sorted({r.time_limit for r in multi if r.time_limit is not None})
        s.add(f"**The ℓ2 panels in d = {', '.join(str(d) for d in sorted({r.dim for r in multi}))}.** The Gaussian is "
              "N(0, σ²I) with the σ of the 1-D calibrations (both hold for ℓ2 sensitivity), so E‖Z‖₂ = σ√2 "
              "Γ((d+1)/2)/Γ(d/2) and E‖Z‖₂² = dσ²; it is compared with the certified optimum on ℝ^d. "
              + (f"Where the certified lower bound is positive these brackets have relative gaps {fmt(min(gaps), 2)} to "
                 f"{fmt(max(gaps), 2)}; each" if gaps else "Each") + " problem has a time limit"
              + (f" of {' or '.join(fmt(t) for t in limits)} s" if limits else "") + ": where no LP fits it, the "
              "bracket is [0, best closed-form reference] and a ratio is only bounded below (≥). The truncated "
              "Laplace [GDGK20] is a 1-D mechanism (optmech's references have no d-dimensional one): its column "
              "is \"—\".")
    for g in _groups(rows):
        grp = [r for r in rows if r.group == g]
        limits = sorted({r.time_limit for r in grp if r.time_limit is not None})
        tl = f"; time limit {' or '.join(fmt(t) for t in limits)} s per problem" if limits and g[0] >= 2 else ""
        s.add(f"**{_group_name(g)}** ({plural(len(grp), 'problem')}{tl}):", _table(grp))
    if not multi:
        s.add("This run has d = 1 rows only" + (" (quick mode leaves out the spec's ℓ2 panel in d = 2)."
                                                 if ctx.quick else "."))
    s.add(*_findings(rows))
    lines = d_lines(rows)
    if lines:
        s.add("**The panel in d.** The analytic Gaussian's certified ratio to V* along the dimension, for each cost, "
              "ε and δ with three or more dimensions (the 1-D rows of |x| and x² are its d = 1 points):", _d_table(lines))
        s.add(*_d_findings(lines))
    _checks(s, rows)
    if heatmap_panels(rows):     # draw_heatmap sizes the figure from its panels
        figure(ctx, s, ctx.spec.name, lambda fig: draw_heatmap(fig, rows))
    if lines:
        figure(ctx, s, f"{ctx.spec.name}-d", lambda fig: draw_d_panel(fig, lines))
    return s
