r"""Report "How far from optimal is deployed integer noise?": integer (ε, δ) noise laws against the certified V* on ℤ.

For (ε, δ)-DP additive noise on ℤ with integer sensitivity Δ and cost |x| the solver brackets the optimum
V* ∈ [lower, upper] (``privacy = approx``, ``domain = integer``).  Beside it this report puts the exact costs of
the deployed laws of :mod:`optmech.mechanisms.approx.deployed_integer`, each calibrated to the problem's (ε, δ, Δ) and
certified (δ(ε) <= δ audited or proven; E|X| enclosed in [cost_lo, cost_hi]):

* the discrete Laplace λ^{|x|}, λ = e^{−ε/Δ} (ε-DP);
* the truncated double geometric on [−T, T] with the smallest T, and its non-negative translate X + T;
* the discrete Gaussian [CKS20];
* round(Δ·N), N the Tulap canonical noise distribution of (ε, δ) [AV23].

Each ratio is the certified interval V_law/V* ∈ [cost_lo/upper, cost_hi/lower], rounded outward; where the
solver's lower bound is 0 (no LP within the time limit) only the lower end is certified ("≥").  A law whose cost
falls below the certified lower bound of V* would contradict the bracket: the report checks that none does.
"""

from __future__ import annotations

import math
import time

from optmech.mechanisms.approx.deployed_integer import LAW_NAMES, IntegerLaw, deployed_laws
from optmech.reproduce.gaussian import (Ratio, draw_ratio_cells, excess_cmap, excess_colorbar, excess_lower,
                                         excess_norm)
from optmech.reproduce.report import Context, Section, figure, fmt, fmt_bracket, md_table, new_section, register
from optmech.sources import citation

__all__ = ["IntegerRow", "integer_rows", "integer_noise_report", "SHORT"]

#: short column names of the laws
SHORT = {"discrete_laplace": "discrete Laplace", "truncated_geometric": "truncated geometric",
         "truncated_geometric_nonneg": "truncated geometric ≥ 0", "discrete_gaussian": "discrete Gaussian [CKS20]",
         "rounded_tulap": "rounded Tulap [AV23]"}


class IntegerRow:
    """One (Δ, ε, δ) problem: the solver's result, the laws and their certified ratio intervals."""

    def __init__(self, sensitivity: int, epsilon: float, delta: float, result: dict | None,
                 laws: dict[str, IntegerLaw], seconds: float) -> None:
        self.sensitivity, self.epsilon, self.delta, self.result = sensitivity, epsilon, delta, result
        self.laws, self.seconds = laws, seconds
        self.ratios: dict[str, Ratio | None] = {n: self._ratio(law) for n, law in laws.items()}

    def _ratio(self, law: IntegerLaw) -> Ratio | None:
        r = self.result
        if not r or not r.get("certified") or not law.private:
            return None
        lo, hi = r.get("lower_bound"), r.get("upper_bound")
        if lo is None or hi is None or not (0 <= lo <= hi) or not (0 < hi < math.inf):
            return None
        c_lo, c_hi = law.cost_abs
        a = math.nextafter(c_lo / hi, 0.0)
        b = math.nextafter(c_hi / lo, math.inf) if lo > 0 else math.inf
        return Ratio(a, b)

    @property
    def certified(self) -> bool:
        return bool(self.result and self.result.get("certified"))

    def below_lower(self) -> list[str]:
        """Laws whose certified cost lies below the certified lower bound of V* (would contradict the bracket)."""
        if not self.certified:
            return []
        return [n for n, law in self.laws.items() if law.cost_abs[1] < self.result["lower_bound"] * (1 - 1e-12)]


def integer_rows(ctx: Context) -> list[IntegerRow]:
    """One :class:`IntegerRow` per problem of the spec with cost |x| (failed solves too, result None)."""
    out = []
    for p, r in ctx.rows:
        if str(p.get("cost", "abs")) != "abs":
            continue
        D, eps, dlt = int(p.get("sensitivity", 1)), float(p["epsilon"]), float(p["delta"])
        t0 = time.perf_counter()
        laws = deployed_laws(eps, dlt, D)
        out.append(IntegerRow(D, eps, dlt, r, laws, time.perf_counter() - t0))
    return out


def _cell(row: IntegerRow, name: str) -> str:
    law = row.laws[name]
    r = row.ratios[name]
    return f"{fmt(law.cost_abs[1], 7)} · {r.text() if r else ('not private' if not law.private else '—')}"


def _table(rows: list[IntegerRow]) -> str:
    head = ["Δ", "ε", "δ", "certified bracket V*", "status", *[f"{SHORT[n]}: E|X| · /V*" for n in LAW_NAMES]]
    body = [[str(r.sensitivity), fmt(r.epsilon), fmt(r.delta), fmt_bracket(r.result, 8),
             "failed" if r.result is None else str(r.result.get("status")), *[_cell(r, n) for n in LAW_NAMES]]
            for r in rows]
    return md_table(head, body)


def _findings(rows: list[IntegerRow]) -> list[str]:
    out = []
    rated = [r for r in rows if r.certified]
    for n in LAW_NAMES:
        rs = [r for r in rated if r.ratios[n] is not None]
        if not rs:
            continue
        worst = max(rs, key=lambda r: r.ratios[n].lo)
        best = min(rs, key=lambda r: r.ratios[n].hi)
        out.append(f"**{SHORT[n]}:** at least {worst.ratios[n].lo:.4g} times V* at Δ = {worst.sensitivity}, "
                   f"ε = {fmt(worst.epsilon)}, δ = {fmt(worst.delta)} (the largest certified lower end over "
                   f"{len(rs)} cells); at most {best.ratios[n].hi:.4g} times V* at Δ = {best.sensitivity}, ε = "
                   f"{fmt(best.epsilon)}, δ = {fmt(best.delta)} (the smallest certified upper end).")
    wins = {}
    for r in rated:
        c = min((n for n in LAW_NAMES if r.laws[n].private), key=lambda n: r.laws[n].cost_abs[1], default=None)
        if c:
            wins[c] = wins.get(c, 0) + 1
    if wins:
        out.append("Cheapest deployed law per cell: " + ", ".join(f"{SHORT[n]} in {k}" for n, k in
                                                                 sorted(wins.items(), key=lambda t: -t[1])) + ".")
    return out


def draw_heatmap(fig, rows: list[IntegerRow]) -> None:
    """One panel per ε (two a row): rows (Δ, δ), columns the laws, on one colour scale: the law's extra cost over
    the optimum E|X|/V* − 1, coloured and annotated by the certified lower end
    (:func:`optmech.reproduce.gaussian.excess_text`: "≥" and hatched where the interval is wider than 1 % or
    unbounded; "≤ x" the upper end where the lower end is not positive); grey: no certified bracket ("—") or a law
    that is not private at that cell.  Sets the figure's size from the grid."""
    ys = sorted({(r.sensitivity, r.delta) for r in rows}, key=lambda t: (t[0], -t[1]))
    xs = [e for e in sorted({r.epsilon for r in rows}) if any(r.epsilon == e and r.certified for r in rows)]
    if not xs:
        raise ValueError("no certified ratio to draw")
    names = LAW_NAMES
    ncols = 1 if len(xs) == 1 else 2
    nrows = -(-len(xs) // ncols)
    w, h = 1.6 + 1.05 * len(names), max(2.4, 1.6 + 0.32 * len(ys))
    fig.set_size_inches(ncols * w + 1.3, nrows * h + 0.9)
    gs = fig.add_gridspec(nrows, ncols + 1, width_ratios=[1.0] * ncols + [0.04])
    norm, cmap = excess_norm([q for r in rows for q in r.ratios.values()]), excess_cmap()
    under = False
    for k, e in enumerate(xs):
        ax = fig.add_subplot(gs[k // ncols, k % ncols])
        cells = {}
        for r in (r for r in rows if r.epsilon == e):
            for xi, n in enumerate(names):
                q = r.ratios[n]
                cells[(ys.index((r.sensitivity, r.delta)), xi)] = q if q is not None else (
                    "failed" if r.result is None else "not private" if n in r.laws and not r.laws[n].private
                    else "—")
                under = under or (q is not None and excess_lower(q) <= 0)
        im = draw_ratio_cells(ax, cells, (len(ys), len(names)), norm, cmap, fontsize=7.5)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([SHORT[n].replace(" [", "\n[") for n in names], fontsize=7.5, rotation=30, ha="right")
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels([f"Δ = {d}, δ = {fmt(dl)}" for d, dl in ys] if k % ncols == 0 else [], fontsize=7.5)
        ax.set_xlabel("deployed law", fontsize=8)
        if k % ncols == 0:
            ax.set_ylabel("sensitivity Δ, δ", fontsize=8)
        ax.set_title(f"({'abcdefghijklmnopqrstuvwxyz'[k]}) ε = {fmt(e)}", fontsize=9)
    excess_colorbar(fig, fig.add_subplot(gs[:, -1]), im, under, "E|X|/V* − 1")
    fig.suptitle("How far from optimal is deployed integer noise? Extra cost E|X|/V* − 1 over the certified optimum"
                 "\nnumbers: certified lower ends; ≥ and hatched: interval wider than 1 % or unbounded; "
                 "≤ (pale blue): upper end, where the lower end is not above 0", fontsize=9)


@register("integer_noise")
def integer_noise_report(ctx: Context) -> Section:
    """The certified ratios of the deployed integer laws to V* over the spec's Δ × ε × δ grid (cost |x|)."""
    s = new_section(ctx, "How far from optimal is deployed integer noise?")
    rows = integer_rows(ctx)
    s.add("**Works cited:** " + "  \n".join(citation(t) for t in ("CKS20", "AV23", "AR23")))
    s.add("Each cell gives the law's certified E|X| (upper end) and its ratio to V* as the certified interval "
          "[cost_lo/upper, cost_hi/lower], rounded outward (≈ a point value where it is narrower than 0.1 %). Every "
          "law is calibrated to the cell's (ε, δ) at sensitivity Δ and its δ(ε) certified: an outward-rounded "
          "hockey-stick audit over the shifts 1..Δ (a subsample of shifts at the largest windows, where δ_s is "
          "proven monotone in s or covered by [AV23]'s theorem), or the closed form in interval arithmetic. The "
          "rounded Tulap is calibrated at δ' a hair below δ (it is tight, so the float audit needs a margin). "
          "The non-negative truncated geometric X + T has E|X + T| = T; it is compared here with the optimum over "
          "all noise on ℤ, not with a one-sided optimum (support ⊆ ℕ is not yet a solver domain), so its ratio "
          "measures the price of non-negativity plus suboptimality.")
    s.add(_table(rows))
    s.add(*_findings(rows))
    bad = [(r, n) for r in rows for n in r.below_lower()]
    n_cmp = sum(len(r.laws) for r in rows if r.certified)
    s.check("Every deployed law costs at least the certified lower bound of V*", "V* is the optimum over all (ε, δ)-DP "
            "noise on ℤ", f"{n_cmp - len(bad)} of {n_cmp} (law, cell) pairs at or above the lower bound",
            not bad, "a law below the lower bound would contradict the certificate")
    one = [r for r in rows if r.sensitivity == 1 and r.ratios.get("rounded_tulap") is not None]
    if one:
        gap = max(abs(r.ratios["rounded_tulap"].lo - 1) for r in one)
        s.check("[AR23]: the rounded CND is optimal at Δ = 1", "the rounded canonical noise is stochastically smallest "
                "among integer (ε, δ)-DP noises at sensitivity 1", f"rounded Tulap / V* within {gap:.1e} of 1 in "
                f"{len(one)} cells", gap <= 1e-6, "cost |x|; the Tulap is calibrated at δ(1 − 2⁻³⁰) or a hair lower")
    slow = max(rows, key=lambda r: r.seconds, default=None)
    if slow:
        s.add(f"Computing the laws took {sum(r.seconds for r in rows):.1f} s in all, at most {slow.seconds:.1f} s "
              f"(Δ = {slow.sensitivity}, ε = {fmt(slow.epsilon)}, δ = {fmt(slow.delta)}; the discrete Gaussian's "
              "all-shift δ audit dominates at large Δσ).")
    if any(r.certified for r in rows):
        figure(ctx, s, ctx.spec.name, lambda fig: draw_heatmap(fig, rows))   # sized by draw_heatmap
    return s
