"""The "How far from optimal is deployed integer noise?" section, run on its quick grid (Δ ∈ {1, 10}, ε = 1, δ = 1e-6).

The spec is built here from the same tables as the catalogue file (see optmech/reproduce/integer_noise.py); the
problems are solved by the sweep's own job function and the section is rendered into a temporary folder.
"""

from __future__ import annotations

import math
import re

import pytest

from optmech.reproduce import integer_noise
from optmech.reproduce.report import Context
from optmech.sweep import normalised, parse_spec, run_job

SPEC = {
    "name": "comparison-integer-noise",
    "description": "How far from optimal is deployed integer noise?",
    "reproduce": {"seed": "comparison", "item": "deployed integer noise against the certified V*",
                  "title": "How far from optimal is deployed integer noise?", "report": "integer_noise"},
    "problem": {"privacy": "approx", "domain": "integer", "cost": "abs", "time_limit": 60},
    "grid": {"sensitivity": [1, 10], "epsilon": [1.0], "delta": [1e-6]},
}


@pytest.fixture(scope="module")
def section_and_rows(tmp_path_factory):
    spec = parse_spec(SPEC)
    rows = [(normalised(p), run_job(p)) for p in spec.problems]
    ctx = Context(spec, rows, tmp_path_factory.mktemp("report"), True)
    return integer_noise.integer_noise_report(ctx), integer_noise.integer_rows(ctx), ctx


def test_table_parses_and_ratios_are_sound(section_and_rows):
    section, rows, ctx = section_and_rows
    table = next(b for b in section.body if b.startswith("| Δ"))
    lines = table.splitlines()
    assert len(lines) == 2 + len(rows)
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 5 + len(integer_noise.LAW_NAMES)
        assert re.fullmatch(r"\[[0-9.e+-]+, [0-9.e+-]+\]", cells[3])
    for r in rows:
        assert r.certified
        lower, upper = r.result["lower_bound"], r.result["upper_bound"]
        for name, law in r.laws.items():
            assert law.private
            # V* <= every private law's cost, so cost_hi >= lower and the ratio's upper end is >= 1
            assert law.cost_abs[1] >= lower * (1 - 1e-12)
            q = r.ratios[name]
            assert q is not None and q.hi >= 1 - 1e-12 and q.lo <= q.hi
            assert q.lo == pytest.approx(law.cost_abs[0] / upper, rel=1e-15)
    assert all(c.ok for c in section.checks), [c for c in section.checks if not c.ok]
    assert section.figures and (ctx.outdir / section.figures[0]).exists()


def test_delta1_discrete_laplace_closed_form(section_and_rows):
    """At Δ = 1 the discrete Laplace costs 2λ/(1 − λ²), λ = e^{−ε} (recomputed here)."""
    _, rows, _ = section_and_rows
    r = next(r for r in rows if r.sensitivity == 1)
    lam = math.exp(-r.epsilon)
    lo, hi = r.laws["discrete_laplace"].cost_abs
    assert lo <= 2 * lam / (1 - lam * lam) * (1 + 1e-15) and 2 * lam / (1 - lam * lam) * (1 - 1e-15) <= hi
