"""The catalogue entry "Staircases for every norm" (problems/comparison-staircase-norms.toml) and its report
(optmech/reproduce/norms.py): the spec in full and quick form, the staircase cost recomputed by the report, and
the report on real solves of the quick spec's d = 2 problems (six radial ones, < 1 s each, and the two open
mismatched pairs at ε = 2 on the cell LP, 1–5 s each): the staircase inside every bracket, the brackets equal
across norms, the open-question rows with certified brackets, no statement that differs; then the same rows
altered (a bracket that excludes the staircase, brackets that differ across norms, failed problems).
"""

from __future__ import annotations

import math

import pytest

from optmech.reproduce import catalogue_paths, load_catalogue
from optmech.reproduce.norms import (MATCHED, MORE_OPEN, OPEN, best_staircase, l2_laplace_value, norm_rows, open_rows,
                                     staircase_cost, upper_end)
from optmech.reproduce.report import ref
from optmech.reproduce.scope import spec_scope
from optmech.sweep import normalised, run_job
from test_reproduce_gaussian import report_section  # one way to build a report section from solved rows

NAME = "comparison-staircase-norms"
TITLE = "Staircases for every norm"


def _spec(quick: bool):
    return next(s for s in load_catalogue(quick=quick) if s.name == NAME)


# -- the spec ---------------------------------------------------------------------------------------

def test_spec_in_full_and_quick_form():
    from optmech.sources import section_tags
    from optmech.spec import Problem

    full, quick = _spec(False), _spec(True)
    assert full.reproduce["report"] == "staircase_norms" and full.reproduce["title"] == TITLE
    assert full.reproduce["seed"] == "comparison"
    cases = {(p["dim"], p["epsilon"], p["cost"], p["norm"]) for p in full.problems}
    matched = {(d, e, c, n) for d in (2, 3) for e in (0.5, 1.0, 2.0) for (c, n) in MATCHED}
    opened = {(2, e, c, n) for e in (1.0, 2.0) for (c, n) in OPEN}
    more = {(2, e, c, n) for e in (1.0, 2.0) for (c, n) in MORE_OPEN}  # the full run only
    assert cases == matched | opened | more and len(full.problems) == 44
    assert {(p["dim"], p["epsilon"], p["cost"], p["norm"]) for p in quick.problems} == \
        {c for c in matched | opened if c[1] == 2.0 and c[0] == 2}
    for p in full.problems + quick.problems:
        assert (p["privacy"], p["domain"], p["sensitivity"]) == ("pure", "continuous", 1)
        # the quick run's open pairs keep the cell LP's first resolution (10 s: the refinement does not fit)
        open_quick = p in quick.problems and (p["cost"], p["norm"]) in OPEN
        assert p["time_limit"] == (10 if open_quick else 120 if p["norm"] == "linf" and p["cost"] in ("l1", "l2") else 60)
    for p in full.problems:
        Problem.from_params({k: v for k, v in p.items() if k != "time_limit"})
    assert section_tags("comparison", full.reproduce["item"])[:2] == ["MDA26", "KSW25"]
    path = next(p for p in catalogue_paths() if p.stem == NAME)
    assert spec_scope(path) == ("Quick mode: 8 of 44 problems (ε = 2, d = 2, time limit (s) ∈ {60, 10}); the full run "
                                "adds ε ∈ {0.5, 1} and d = 3 and uses time limit (s) {60, 120} instead of {60, 10}.")


# -- closed forms recomputed by the report ------------------------------------------------------------

@pytest.mark.parametrize("eps, d, m", [(0.5, 2, 1), (1.0, 2, 2), (2.0, 3, 1), (1.0, 3, 2)])
def test_best_staircase_is_optmechs_closed_form(eps, d, m):
    from optmech.mechanisms.multidim import optimal_gamma_nd, staircase_nd_moment

    g, v = best_staircase(eps, d, m)
    g0 = optimal_gamma_nd(f"pow:{m}", eps, d)
    assert v == pytest.approx(float(staircase_nd_moment(m, eps, 1.0, g0, d)), rel=1e-12)
    assert g == pytest.approx(g0, abs=1e-5)
    assert staircase_cost(eps, d, m, 0.3) > v and staircase_cost(eps, d, m, 0.999) > v


def test_l2_laplace_calibration_per_norm():
    from optmech.mechanisms.multidim import l2_laplace_cost

    assert l2_laplace_value("l2", "l2", 1.0, 2) == (2.0, True)                     # Gamma(2, 1): E‖X‖₂ = 2
    assert l2_laplace_value("l2sq", "l1", 2.0, 2) == (1.5, True)                   # d(d + 1)/ε²
    v, exact = l2_laplace_value("linf", "linf", 2.0, 3)                            # ε/√d for ℓ∞ sensitivity
    assert not exact and v == l2_laplace_cost("linf", 2.0 / math.sqrt(3), 3, 1.0)
    assert l2_laplace_value("l1sq", "l1", 1.0, 2) == (None, False)
    assert l2_laplace_value("linfsq", "linf", 1.0, 2) == (None, False)


# -- the report on real solves ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def solved():
    """The quick spec's d = 2 problems (ε = 2): the six matched pairs and the two open ones, solved once."""
    spec = _spec(True)
    rows = [(normalised(p), run_job(normalised(p))) for p in spec.problems if p["dim"] == 2]
    assert len(rows) == 8
    return spec, rows


def _report(tmp_path, solved, change=None):
    return report_section(tmp_path, solved, "staircase_norms", change)


def test_report_on_real_solves(tmp_path, solved):
    ctx, sec = _report(tmp_path, solved)
    assert sec.title == TITLE and sec.name == NAME and sec.failed == 0
    text = "\n".join(sec.body)
    # the staircase in K lies inside every certified bracket, and the brackets do not depend on K
    rows = norm_rows(ctx)
    assert len(rows) == 6
    by_power: dict[int, set] = {}
    for x in rows:
        r = x.result
        assert r["certified"] and (r.get("lp") or {}).get("builder") == "radial"
        v = ref(r, "staircase")["value"]
        assert r["lower_bound"] <= v <= r["upper_bound"] and x.inside
        assert (v - r["lower_bound"]) / v < 1e-5
        by_power.setdefault(x.power, set()).add((r["lower_bound"], r["upper_bound"]))
    assert {m: len(b) for m, b in by_power.items()} == {1: 1, 2: 1}
    # the ℓ2-Laplace: "—" without a formula, "≈" for a quadrature, and the table row of l2sq under ℓ2 shows d(d+1)/ε²
    line = next(ln for ln in text.splitlines() if ln.startswith("| 2 | 2 | ‖x‖₂² | ℓ2 |"))
    assert line.split(" | ")[-2] == "1.5"
    assert next(ln for ln in text.splitlines() if ln.startswith("| 2 | 2 | ‖x‖₁² | ℓ1 |")).split(" | ")[-2] == "—"
    assert next(ln for ln in text.splitlines() if ln.startswith("| 2 | 2 | ‖x‖∞ | ℓ∞ |")).split(" | ")[-2].startswith("≈")
    # the open questions: both pairs, certified brackets with a positive lower end, the staircase at the upper end
    opens = open_rows(ctx)
    assert {(x.cost, x.norm) for x in opens} == set(OPEN)
    for x in opens:
        r = x.result
        assert r["certified"] and 0 < r["lower_bound"] < r["upper_bound"]
        assert (r.get("lp") or {}).get("builder", "").startswith("cells")      # the cell LP, not the radial one
        assert x.cand == "staircase" and x.cand_value <= r["upper_bound"]
        assert x.room == pytest.approx((x.cand_value - r["lower_bound"]) / x.cand_value)
        assert 0 < x.gap < 1
        assert x.verdict == f"{x.cand_text} is optimal to within {100 * x.room:.2g} %" and x.verdict in text
        assert x.cand_text.startswith("the ")
    assert "ℓ1 sensitivity, cost ‖x‖₂²" in text and "ℓ2 sensitivity, cost ‖x‖₁" in text
    assert "These are open: the bracket is what is proven" in text
    # the statements: the theorems agree, the open questions are not compared, none differs
    assert sec.differed == 0 and sec.agreed == 4, [(c.claim, c.optmech) for c in sec.checks]
    claims = {c.claim: c for c in sec.checks}
    assert any(c.startswith("[MDA26], [KSW25]") for c in claims)
    assert any(c.startswith("[GKOV15] Thm 1") for c in claims)
    assert claims["V* does not depend on the norm K (the radial reduction)"].ok is True
    openq = [c for c in sec.checks if c.claim.startswith("Open:")]
    assert len(openq) == 2 and all(c.ok is None and "V* ∈ [" in c.optmech for c in openq)
    # works cited in full, papers by tag only
    from optmech.sources import citation
    assert citation("MDA26") in text and citation("KSW25") in text
    assert ".md" not in text and "shared" not in text
    assert sec.figures == [f"figures/{NAME}.png"] and (tmp_path / sec.figures[0]).stat().st_size > 10_000


def test_a_bracket_that_excludes_the_staircase_differs(tmp_path, solved):
    def raise_lower(p, r):
        if (p["cost"], p["norm"]) == ("l2", "l2"):
            r["lower_bound"] = r["upper_bound"] * (1 + 1e-6)
            r["upper_bound"] = r["lower_bound"] * (1 + 1e-6)
        return r
    _, sec = _report(tmp_path, solved, raise_lower)
    claims = {c.claim.split(":")[0]: c for c in sec.checks}
    assert claims["[MDA26], [KSW25]"].ok is False and "5 of 6 cases" in claims["[MDA26], [KSW25]"].optmech
    assert claims["V* does not depend on the norm K (the radial reduction)"].ok is False
    assert claims["[GKOV15] Thm 1"].ok is True                      # the ℓ1 row is untouched
    assert "❌" in "\n".join(sec.body)


def test_brackets_one_ulp_apart_are_not_norm_independent(tmp_path, solved):
    def nudge(p, r):
        if (p["cost"], p["norm"]) == ("linfsq", "linf"):
            r["upper_bound"] = math.nextafter(r["upper_bound"], math.inf)
        return r
    _, sec = _report(tmp_path, solved, nudge)
    c = next(c for c in sec.checks if c.claim.startswith("V* does not depend"))
    assert c.ok is False and "in 1 of 2 (d, ε, cost power) groups" in c.optmech


def test_failed_problems_are_listed_and_the_rest_reported(tmp_path, solved):
    _, sec = _report(tmp_path, solved, lambda p, r: None if (p["cost"], p["norm"]) in OPEN else r)
    assert sec.failed == 2 and "2 problems failed" in "\n".join(sec.body)
    assert sec.differed == 0 and sec.agreed == 4 and sec.figures
    assert all("not solved in this run" in c.optmech for c in sec.checks if c.claim.startswith("Open:"))
    _, sec = _report(tmp_path, solved, lambda p, r: None)
    assert sec.failed == 8 and not sec.figures and sec.differed == 0


def test_upper_end_names_the_closed_form_law_or_the_lp_mechanism():
    r = {"upper_bound": 2.0, "audit": {"method": "closed form: the l2_laplace law (its own privacy proof)"},
         "references": [{"name": "l2_laplace", "value": 1.999, "parameters": {"scale": 1.0}}]}
    assert upper_end(r) == ("l2_laplace", 1.999, {"scale": 1.0})
    r["audit"]["method"] = "majorant fixed point on the domain, outward-rounded"
    assert upper_end(r) == ("audited LP mechanism", 2.0, {})


def test_the_answer_states_the_room_and_what_the_lp_mechanism_beats():
    """The verdict: an audited LP mechanism at the upper end that undercuts the staircase in K reads "beaten by Y %"
    (Y from the staircase's listed cost) and "optimal to within X %" (X the room); a staircase at the upper end reads
    only the latter (the ℓ∞ pair with ‖x‖₂ at ε = 1 measured [2.2523, 2.2858] against the staircase's 2.444)."""
    from optmech.reproduce.norms import OpenRow

    p = {"dim": 2, "epsilon": 1.0, "cost": "l2", "norm": "linf"}
    r = {"lower_bound": 2.2523, "upper_bound": 2.2858, "certified": True,
         "audit": {"method": "majorant fixed point on the domain, outward-rounded"},
         "references": [{"name": "staircase", "value": 2.444, "parameters": {"gamma": 0.4}}]}
    x = OpenRow(p, r)
    room = (2.2858 - 2.2523) / 2.2858
    beat = (2.444 - 2.2858) / 2.444
    assert x.verdict == (f"the staircase in K (2.444) is beaten by {100 * beat:.2g} % by the audited LP mechanism; "
                         f"the audited LP mechanism is optimal to within {100 * room:.2g} %")
    r["audit"]["method"] = "closed form: the staircase law (its own privacy proof)"
    r["upper_bound"] = 2.444
    y = OpenRow(p, r)
    assert y.cand == "staircase" and y.verdict.startswith("the staircase in ℓ∞") and "beaten" not in y.verdict
