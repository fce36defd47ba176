r"""Report "Staircases for every norm": pure ε-DP noise on ℝ^d with the sensitivity in ℓ1, ℓ2 or ℓ∞ (issue 21).

**Matched pairs.** With the sensitivity Δ in a norm K and the cost ‖x‖_K^m (m = 1, 2), [MDA26] proves that a
staircase in K is optimal, for every norm and every cost nondecreasing in ‖x‖_K; [KSW25] proves the
[GKOV15] conjecture (ℓ1, every d), and [GKOV15] Thm 1 is the case ℓ1, d = 2.  optmech reduces these
problems exactly to one radial LP (:mod:`optmech.problems.radial`), the same for every norm, and brackets
V* to about 1e-6.  The staircase in K, with density ∝ g(‖x‖_K) and (Δ = 1, b = e^{−ε})

.. math:: g(r) = b^k \text{ on } [k, k + γ), \quad b^{k+1} \text{ on } [k + γ, k + 1),

has E‖X‖_K^m = d/(d+m) · Σ_k b^k [((k+γ)^{d+m} − k^{d+m}) + b((k+1)^{d+m} − (k+γ)^{d+m})] /
Σ_k b^k [((k+γ)^d − k^d) + b((k+1)^d − (k+γ)^d)] (the volume of the unit ball cancels, so the cost does not
depend on K).  This report recomputes it here by that series and minimises over γ
(:func:`staircase_cost`, :func:`best_staircase`), independently of :mod:`optmech.mechanisms.staircase_nd`, and
checks (a) the best staircase lies inside every certified bracket, (b) the brackets of ℓ1, ℓ2 and ℓ∞ are
identical at equal d, ε and m (the reduction says V* does not depend on K), (c) the recomputed cost equals
optmech's closed form.  Beside them: the i.i.d. Laplace (optmech's reference, scale cΔ/ε with c = 1, √d, d for
ℓ1, ℓ2, ℓ∞) and the ℓ2-Laplace p ∝ e^{−ε'‖x‖₂} [KHP15], ε-DP at ε' = ε/c₂ with c₂ = 1 for ℓ1 and ℓ2
sensitivity (‖t‖₂ <= ‖t‖₁) and c₂ = √d for ℓ∞ (‖t‖₂ <= √d‖t‖∞), whose cost
(:func:`optmech.mechanisms.laplace_nd.l2_laplace_cost`) is a closed form for ‖x‖₁, ‖x‖₂, ‖x‖₂² and a
quadrature for ‖x‖∞ (printed "≈", not a certified value); it has none for ‖x‖₁² and ‖x‖∞² ("—").

**Mismatched pairs** (ℓ1 sensitivity with cost ‖x‖₂², ℓ2 sensitivity with cost ‖x‖₁; in the full run also ℓ∞
sensitivity with ‖x‖₁ and ‖x‖₂): no theorem applies (the cost is not a function of the sensitivity's norm).  The
cell LP (:mod:`optmech.families.pure_nd`) brackets V*; the report prints the bracket, its relative gap, the
mechanism at the bracket's upper end (the best ε-DP law optmech found), the room (V_cand − lower)/V_cand below it
and the answer it proves ("optimal to within X %", and "the staircase in K is beaten by Y % by the audited LP
mechanism" where that is the upper end).  These are open questions: the bracket is what is proven.
"""

from __future__ import annotations

import math
import re

from optmech.reproduce.report import (Context, Section, bracket_errorbar, figure, fmt, fmt_bracket, legend_below,
                                       md_table, new_section, plural, ref, register)
from optmech.sources import citation, tags_in

__all__ = ["MATCHED", "MORE_OPEN", "OPEN", "staircase_cost", "best_staircase", "l2_laplace_value", "upper_end", "NormRow",
           "norm_rows", "open_rows"]

#: (cost, sensitivity norm) -> the power m of the norm that the cost is (the pairs [MDA26] covers)
MATCHED = {("l1", "l1"): 1, ("l1sq", "l1"): 2, ("l2", "l2"): 1, ("l2sq", "l2"): 2, ("linf", "linf"): 1,
           ("linfsq", "linf"): 2}
#: (cost, sensitivity norm) pairs no theorem covers, reported as open questions
OPEN = (("l2sq", "l1"), ("l1", "l2"))
#: more mismatched pairs, ℓ∞ sensitivity with ‖x‖₁ or ‖x‖₂ (the full run only): reported like OPEN
MORE_OPEN = (("l1", "linf"), ("l2", "linf"))
NORMS = ("l1", "l2", "linf")
NORM_NAME = {"l1": "ℓ1", "l2": "ℓ2", "linf": "ℓ∞"}
COST_NAME = {"l1": "‖x‖₁", "l1sq": "‖x‖₁²", "l2": "‖x‖₂", "l2sq": "‖x‖₂²", "linf": "‖x‖∞", "linfsq": "‖x‖∞²"}
#: the one name of each mechanism, in the tables, the text, the statements and the figure
STAIR, LAP, L2LAP, OPT = "staircase in K", "i.i.d. Laplace", "ℓ2-Laplace [KHP15]", "certified V*"
#: relative agreement required between the staircase cost recomputed here and optmech's closed form
RECOMPUTE_TOL = 1e-9
#: the works this section cites beside the source papers (their full citations open it)
WORKS = ("MDA26", "KSW25")


# -- closed forms, recomputed here ---------------------------------------------------------------

def staircase_cost(epsilon: float, dim: int, power: int, gamma: float) -> float:
    """E‖X‖_K^m of the staircase in any norm K with Δ = 1 and parameter γ (module docstring), by its series.

    >>> b = math.exp(-1.0)                    # γ = 1, d = 1: density b^k on [k, k + 1), E|X| = b/(1 − b) + 1/2
    >>> abs(staircase_cost(1.0, 1, 1, 1.0) - (b / (1 - b) + 0.5)) < 1e-12
    True
    """
    b, d, m, g = math.exp(-epsilon), int(dim), int(power), float(gamma)
    # b^k k^{d+m} < 1e-17 relative beyond K
    K = int(math.ceil((40.0 + (d + m + 1) * math.log(200.0 / epsilon)) / epsilon)) + 2
    num, den = [], []
    for k in range(K):
        bk = b**k
        den.append(bk * (((k + g) ** d - k**d) + b * ((k + 1) ** d - (k + g) ** d)))
        num.append(bk * (((k + g) ** (d + m) - k ** (d + m)) + b * ((k + 1) ** (d + m) - (k + g) ** (d + m))))
    return d / (d + m) * math.fsum(num) / math.fsum(den)


def best_staircase(epsilon: float, dim: int, power: int) -> tuple[float, float]:
    """(γ, cost) of the best staircase (Δ = 1): a grid over γ ∈ (0, 1), then a bounded scalar minimisation.

    >>> g, v = best_staircase(1.0, 1, 1)      # d = 1: [Geng13]'s staircase, γ* = 1/(1 + e^{ε/2})
    >>> abs(g - 1 / (1 + math.exp(0.5))) < 1e-6, abs(v - 1 / (2 * math.sinh(0.5))) < 1e-12
    (True, True)
    """
    from scipy.optimize import minimize_scalar

    n = 200
    vals = [staircase_cost(epsilon, dim, power, i / n) for i in range(1, n)]
    i = min(range(len(vals)), key=vals.__getitem__) + 1
    res = minimize_scalar(lambda g: staircase_cost(epsilon, dim, power, g), method="bounded",
                          bounds=((i - 1) / n or 1e-12, min((i + 1) / n, 1 - 1e-12)), options={"xatol": 1e-12})
    if res.fun <= vals[i - 1]:
        return float(res.x), float(res.fun)
    return i / n, vals[i - 1]


def l2_laplace_value(cost: str, norm: str, epsilon: float, dim: int) -> tuple[float | None, bool]:
    """(E L(X), exact) of the ℓ2-Laplace [KHP15] calibrated to be ε-DP for sensitivity 1 in ``norm``: ε/c₂ with
    c₂ = 1 (ℓ1, ℓ2), √d (ℓ∞); (None, False) where it has no cost formula (‖x‖₁², ‖x‖∞²). ``exact`` is False for
    ‖x‖∞ (a quadrature)."""
    from optmech.errors import SpecError
    from optmech.mechanisms.laplace_nd import l2_laplace_cost

    if cost in ("l1sq", "linfsq"):
        return None, False
    c2 = math.sqrt(dim) if norm == "linf" else 1.0
    try:
        v = l2_laplace_cost(cost, epsilon / c2, dim, 1.0)
    except SpecError:
        return None, False
    return float(v), cost != "linf"


#: (law, cost) whose reference value in a result is a quadrature: printed "≈"
_NUMERIC = {("laplace", "l2"), ("l2_laplace", "linf"), ("staircase:l1", "l2"), ("staircase:l2", "linf")}


def _value_text(v: float | None, exact: bool, digits: int = 7) -> str:
    if v is None:
        return "—"
    return fmt(v, digits) if exact else "≈ " + fmt(v, digits)


def upper_end(result: dict) -> tuple[str, float, dict]:
    """(name, expected cost, parameters) of the mechanism at a result's upper end: the closed-form law its audit
    names ("closed form: the staircase law ..."), else the LP's audited mechanism (cost: the upper bound)."""
    method = (result.get("audit") or {}).get("method") or ""
    m = re.search(r"closed form: the (\w+) law", method)
    if m:
        r = ref(result, m.group(1))
        if r is not None and r.get("value") is not None:
            return m.group(1), float(r["value"]), dict(r.get("parameters") or {})
        return m.group(1), float(result["upper_bound"]), {}
    return "audited LP mechanism", float(result["upper_bound"]), {}


# -- rows ------------------------------------------------------------------------------------------

class NormRow:
    """One matched problem: its parameters, result and the closed forms beside it."""

    def __init__(self, p: dict, r: dict):
        self.params, self.result = p, r
        self.dim, self.eps = int(p.get("dim", 1)), float(p["epsilon"])
        self.cost, self.norm = str(p["cost"]), str(p["norm"])
        self.power = MATCHED[(self.cost, self.norm)]
        self.lower, self.upper = float(r["lower_bound"]), float(r["upper_bound"])
        self.certified = bool(r.get("certified"))
        self.gamma_here, self.stair_here = best_staircase(self.eps, self.dim, self.power)
        st = ref(r, "staircase")
        self.stair = None if st is None else float(st["value"])
        self.gamma = None if st is None else (st.get("parameters") or {}).get("gamma")
        lap = ref(r, "laplace")
        self.lap = None if lap is None else float(lap["value"])
        self.lap_exact = ("laplace", self.cost) not in _NUMERIC
        self.l2lap, self.l2lap_exact = l2_laplace_value(self.cost, self.norm, self.eps, self.dim)
        self.builder = (r.get("lp") or {}).get("builder")

    @property
    def group(self) -> tuple[int, float, int]:
        return self.dim, self.eps, self.power

    @property
    def inside(self) -> bool:
        """The staircase (optmech's closed form) lies in the certified bracket."""
        v = self.stair
        return self.certified and v is not None and self.lower <= v <= self.upper

    @property
    def room(self) -> float | None:
        """(V_stair − lower)/V_stair: how much better than the staircase any ε-DP noise could be."""
        return None if self.stair is None or not self.certified else (self.stair - self.lower) / self.stair

    @property
    def agrees(self) -> bool:
        """The staircase cost recomputed here equals optmech's closed form (:data:`RECOMPUTE_TOL`)."""
        return self.stair is not None and abs(self.stair_here / self.stair - 1) <= RECOMPUTE_TOL


def norm_rows(ctx: Context) -> list[NormRow]:
    """The solved matched problems, ordered by (d, m, ε, norm)."""
    rows = [NormRow(p, r) for p, r in ctx.results() if (p.get("cost"), p.get("norm")) in MATCHED]
    return sorted(rows, key=lambda x: (x.dim, x.power, x.eps, NORMS.index(x.norm)))


class OpenRow:
    """One mismatched problem: bracket, the mechanism at its upper end and the other laws."""

    def __init__(self, p: dict, r: dict):
        self.params, self.result = p, r
        self.dim, self.eps = int(p.get("dim", 1)), float(p["epsilon"])
        self.cost, self.norm = str(p["cost"]), str(p["norm"])
        self.lower, self.upper = float(r["lower_bound"]), float(r["upper_bound"])
        self.certified = bool(r.get("certified"))
        self.gap = (self.upper - self.lower) / self.upper if self.upper > 0 else math.inf
        self.cand, self.cand_value, self.cand_params = upper_end(r)
        self.room = (self.cand_value - self.lower) / self.cand_value if self.cand_value > 0 else math.inf
        lap = ref(r, "laplace")
        self.lap = None if lap is None else float(lap["value"])
        self.lap_exact = ("laplace", self.cost) not in _NUMERIC
        self.l2lap, self.l2lap_exact = l2_laplace_value(self.cost, self.norm, self.eps, self.dim)
        lp = r.get("lp") or {}
        self.resolution = lp.get("resolution")
        claims = " ".join(r.get("claims") or [])
        self.lower_from = ("the norm comparison with the radial optimum" if "the lower bound is the norm comparison"
                           in claims else f"the cell LP (resolution {self.resolution})" if self.resolution else
                           "the cost's floor (no LP fitted the time limit)")

    @property
    def verdict(self) -> str:
        """The answer the bracket gives: the law at the upper end is optimal to within the room below it, and
        where the LP's audited density is that law, by how much it beats the staircase in the sensitivity's
        norm (its exact cost, listed among the references)."""
        who = self.cand_text if self.cand_text.startswith("the ") else f"the {self.cand_text}"
        within = f"{who} is optimal to within {100 * self.room:.2g} %"
        stair = ref(self.result, "staircase")
        if self.cand == "staircase" or stair is None or stair.get("value") is None:
            return within
        v = float(stair["value"])
        if not v > self.cand_value:
            return within
        return f"the {STAIR} ({fmt(v, 5)}) is beaten by {100 * (v - self.cand_value) / v:.2g} % by the {self.cand_text}; " + within

    @property
    def cand_text(self) -> str:
        if self.cand == "staircase":
            g = self.cand_params.get("gamma")
            return f"the staircase in {NORM_NAME[self.norm]}" + (f" (γ = {fmt(g, 4)})" if g is not None else "")
        return {"laplace": LAP, "l2_laplace": L2LAP}.get(self.cand, self.cand)


def open_rows(ctx: Context) -> list[OpenRow]:
    pairs = OPEN + MORE_OPEN
    rows = [OpenRow(p, r) for p, r in ctx.results() if (p.get("cost"), p.get("norm")) in pairs]
    return sorted(rows, key=lambda x: (pairs.index((x.cost, x.norm)), x.dim, x.eps))


# -- tables ------------------------------------------------------------------------------------------

def _matched_table(rows: list[NormRow]) -> str:
    body = []
    for x in rows:
        body.append([str(x.dim), fmt(x.eps), COST_NAME[x.cost], NORM_NAME[x.norm],
                     f"V* = V_stair = {fmt(x.stair_here, 10)} (γ = {fmt(x.gamma_here, 6)})",
                     fmt_bracket(x.result, 10), "—" if x.room is None else f"{x.room:.1e}",
                     _value_text(x.stair, True, 10), _value_text(x.lap, x.lap_exact),
                     _value_text(x.l2lap, x.l2lap_exact), "✅" if x.inside else "❌"])
    return md_table(["d", "ε", "cost", "K", f"paper states ([MDA26]): the {STAIR} is optimal",
                     "certified bracket V*", "room", f"{STAIR}: cost (optmech)", f"{LAP}: cost",
                     f"{L2LAP}: cost", "staircase in bracket"], body)


def _open_table(rows: list[OpenRow]) -> str:
    body = []
    for x in rows:
        body.append([f"{NORM_NAME[x.norm]} sensitivity, cost {COST_NAME[x.cost]}", str(x.dim), fmt(x.eps),
                     "open: no theorem (the cost is not a function of the sensitivity's norm)",
                     fmt_bracket(x.result, 7), f"{x.gap:.3g}", x.lower_from, x.cand_text, fmt(x.cand_value, 7),
                     f"{x.room:.3g}", x.verdict, _value_text(x.lap, x.lap_exact), _value_text(x.l2lap, x.l2lap_exact)])
    return md_table(["pair", "d", "ε", "paper states", "certified bracket V*", "relative gap", "lower end from",
                     "best candidate (upper end)", "its cost", "room (V_cand − lower)/V_cand", "answer",
                     f"{LAP}: cost", f"{L2LAP}: cost"], body)


# -- the figure ----------------------------------------------------------------------------------------

def draw_norms(fig, rows: list[NormRow]) -> None:
    """(a, top) each law's cost relative to the staircase, per norm K, with the certified V* as its bracket;
    (b, below) the room below the staircase, per norm, on a log scale: one tick per (d, ε, cost power)."""
    ax1 = fig.add_subplot(2, 1, 1)
    ax2 = fig.add_subplot(2, 1, 2, sharex=ax1)
    groups = sorted({x.group for x in rows})
    pos = {g: i for i, g in enumerate(groups)}
    shift = {"l1": -0.22, "l2": 0.0, "linf": 0.22}
    colour = {"l1": "C0", "l2": "C1", "linf": "C2"}
    for k in NORMS:
        xs = [x for x in rows if x.norm == k and x.stair]
        if not xs:
            continue
        at = [pos[x.group] + shift[k] for x in xs]
        bracket_errorbar(ax1, at, [x.lower / x.stair for x in xs], [x.upper / x.stair for x in xs], color="k",
                         fmt="_", ms=8, capsize=3, label=f"{OPT} [lower, upper]")
        lap = [(a, x.lap / x.stair) for a, x in zip(at, xs) if x.lap]
        if lap:
            ax1.plot(*zip(*lap), "^", color=colour[k], ms=5, label=f"{LAP}, K = {NORM_NAME[k]}")
        l2 = [(a, x.l2lap / x.stair) for a, x in zip(at, xs) if x.l2lap]
        if l2:
            ax1.plot(*zip(*l2), "o", mfc="none", color=colour[k], ms=5, label=f"{L2LAP}, K = {NORM_NAME[k]}")
        rooms = [max(x.room, 1e-16) if x.room is not None else float("nan") for x in xs]
        ax2.plot(at, rooms, "s", color=colour[k], ms=5)  # colours: K as in (a)
    ax1.axhline(1.0, color="0.6", lw=0.8, zorder=0)
    ax1.set_ylabel(f"E cost / E cost of the {STAIR}")
    ax1.set_title("(a) each law's cost relative to the staircase", fontsize=9)
    ax2.set_yscale("log")
    ax2.set_ylabel("(V_stair − certified lower) / V_stair")
    ax2.set_title("(b) room below the staircase (colour: K as in (a))", fontsize=9)
    labels = [f"d={d}, ε={fmt(e)}, {'‖x‖' if m == 1 else '‖x‖²'}" for d, e, m in groups]
    ax2.set_xticks(range(len(groups)))
    ax2.set_xticklabels(labels, rotation=40, ha="right", rotation_mode="anchor", fontsize=8)
    ax1.tick_params(labelbottom=False)
    ax2.set_xlim(-0.6, len(groups) - 0.4)
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, axis="y")
    legend_below(fig, ax1, ncol=3, fontsize=7)
    fig.suptitle("Staircases for every norm: pure ε-DP on ℝ^d,\nsensitivity 1 in K, cost ‖x‖_K or ‖x‖_K²", fontsize=10)


# -- the report -----------------------------------------------------------------------------------------

@register("staircase_norms")
def staircase_norms_report(ctx: Context) -> Section:
    """The staircase in the sensitivity's norm against the certified V* (matched pairs), and the open mismatched pairs."""
    s = new_section(ctx, "Staircases for every norm")
    cited = list(dict.fromkeys([*tags_in(ctx.spec.reproduce.get("item", "")), *WORKS]))
    s.add("**Works cited:** " + "  \n".join(citation(t) for t in cited if t in WORKS))
    rows, opens = norm_rows(ctx), open_rows(ctx)
    s.add("**A staircase in the sensitivity's norm K.** Each row: pure ε-DP noise on ℝ^d with sensitivity 1 in K and "
          "the cost ‖x‖_K or ‖x‖_K². The paper's column is the best staircase in K (density constant on the shells "
          "k ≤ ‖x‖_K < k + γ and k + γ ≤ ‖x‖_K < k + 1, falling by e^{−ε} from one to the next), its cost recomputed "
          "here from the radial series and minimised over γ; the certified bracket covers *all* ε-DP noise "
          "(optmech reduces these problems exactly to one radial LP, the same for every K); *room* = "
          "(V_stair − lower)/V_stair bounds how much better than the staircase any ε-DP noise could be. Beside "
          f"them the {LAP} (scale c/ε, c = 1, √d, d for K = ℓ1, ℓ2, ℓ∞) and the {L2LAP}, p ∝ e^{{−ε'‖x‖₂}}, "
          "ε-DP at ε' = ε for ℓ1 and ℓ2 sensitivity (‖t‖₂ ≤ ‖t‖₁) and at ε' = ε/√d for ℓ∞ (‖t‖₂ ≤ √d‖t‖∞); "
          "\"≈\" marks a cost computed by quadrature (not a certified value), \"—\" a cost with no formula.",
          _matched_table(rows) if rows else "No matched problem was solved.")
    if rows:
        _matched_checks(s, rows)
    s.add("**Open questions: mismatched pairs.** With ℓ1 sensitivity and the cost ‖x‖₂², or ℓ2 sensitivity and "
          "the cost ‖x‖₁ (and in the full run ℓ∞ sensitivity with ‖x‖₁ or ‖x‖₂), the cost is not a function of "
          "the sensitivity's norm and no theorem says which noise is optimal. The cell LP brackets V* (its default "
          "resolution, second-order prices; a lower bound from the LP or, where larger, from comparing the norms "
          "with the radial optimum); the best candidate is the ε-DP law at the bracket's upper end, and the room "
          "below it is how much any ε-DP noise could still gain. The answer column states what the bracket "
          "proves: the candidate is optimal to within the room, and where the LP's audited density is the "
          "candidate, by how much it beats the staircase in the sensitivity's norm. "
          "These are open: the bracket is what is proven, not the candidate's optimality.",
          _open_table(opens) if opens else "No mismatched problem was solved.")
    _open_checks(s, opens)
    if rows:
        ngroups = len({x.group for x in rows})
        figure(ctx, s, ctx.spec.name, lambda fig: draw_norms(fig, rows), size=(max(6.4, 0.5 * ngroups + 2.5), 7.0))
    return s


def _matched_checks(s: Section, rows: list[NormRow]) -> None:
    ins = sum(x.inside for x in rows)
    rooms = [x.room for x in rows if x.room is not None]
    ds = ", ".join(str(d) for d in sorted({x.dim for x in rows}))
    s.check("[MDA26], [KSW25]: a staircase in the sensitivity's norm is optimal for every norm and nondecreasing cost",
            "some staircase is optimal among additive ε-DP noise for every dimension, every norm and every cost "
            "nondecreasing in that norm ([MDA26]); the [GKOV15] conjecture, ℓ1 in every d ([KSW25])",
            f"d = {ds}, K = ℓ1, ℓ2, ℓ∞, cost ‖x‖_K and ‖x‖_K²: the best {STAIR} lies inside the certified bracket in "
            f"{ins} of {len(rows)} cases" + (f"; no ε-DP noise beats it by more than {max(rooms):.1e} relative"
                                             if rooms else ""),
            ins == len(rows), "numerical evidence for finitely many (d, ε, K, m) at the bracket's precision")
    thm1 = [x for x in rows if x.dim == 2 and x.norm == "l1" and x.cost == "l1"]
    if thm1:
        r1 = [x.room for x in thm1 if x.room is not None]
        s.check("[GKOV15] Thm 1: for d = 2 the staircase minimises E‖X‖₁ (ℓ1 sensitivity)",
                "the staircase is optimal (d = 2, ℓ1 sensitivity, cost ‖x‖₁)",
                f"inside the certified bracket at ε = {', '.join(fmt(x.eps) for x in thm1)} in "
                f"{sum(x.inside for x in thm1)} of {len(thm1)} cases" + (f", room ≤ {max(r1):.1e}" if r1 else ""),
                all(x.inside for x in thm1))
    groups: dict[tuple, dict[str, NormRow]] = {}
    for x in rows:
        groups.setdefault(x.group, {})[x.norm] = x
    full = {g: v for g, v in groups.items() if set(v) == set(NORMS)}
    same = [g for g, v in full.items() if len({(x.lower, x.upper) for x in v.values()}) == 1
            and all(x.certified for x in v.values())]
    if full:
        s.check("V* does not depend on the norm K (the radial reduction)",
                "the optimum is the same 1-D problem for every norm (rearrangement onto K-balls, Brunn–Minkowski); "
                "the staircase's cost does not depend on K",
                f"the certified brackets of ℓ1, ℓ2 and ℓ∞ are identical, to the last bit, in {len(same)} of "
                f"{plural(len(full), '(d, ε, cost power) group')}", len(same) == len(full),
                "compared exactly, as floats, from the stored results")
    agree = sum(x.agrees for x in rows)
    worst = max((abs(x.stair_here / x.stair - 1) for x in rows if x.stair), default=None)
    s.check("The best staircase's cost (closed form)",
            "V_stair = min over γ of the staircase's cost ([GKOV15] for ℓ1; the same radial series for every K)",
            f"recomputed here from the radial series: equal to optmech's closed form within {RECOMPUTE_TOL:g} in "
            f"{agree} of {len(rows)} cases" + (f" (largest relative difference {worst:.1e})" if worst is not None else ""),
            agree == len(rows))


def _open_checks(s: Section, opens: list[OpenRow]) -> None:
    for cost, norm in OPEN + MORE_OPEN:
        xs = [x for x in opens if (x.cost, x.norm) == (cost, norm)]
        what = f"{NORM_NAME[norm]} sensitivity, cost {COST_NAME[cost]}"
        if not xs:
            if (cost, norm) in OPEN:  # the ℓ∞ pairs belong to the full run only
                s.check(f"Open: the optimal noise for {what}", "no theorem", "not solved in this run", None)
            continue
        found = "; ".join(f"ε = {fmt(x.eps)}: V* ∈ {fmt_bracket(x.result, 5)}, best candidate {x.cand_text} at the upper "
                          f"end, room {x.room:.2g} ({x.verdict})" for x in xs)
        s.check(f"Open: the optimal noise for {what} (d = {', '.join(sorted({str(x.dim) for x in xs}))})",
                f"no theorem: {COST_NAME[cost]} is not a function of {COST_NAME[norm]}",
                found, None, "open question: the bracket is what is proven")
