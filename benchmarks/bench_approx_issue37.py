"""(ε, δ) on ℤ at scale (issue 37): the issue's target cases under their time limits, in one run.

Each case is solved with its time limit by this checkout and, against :data:`harness.COMMIT`
(``--baseline-commit SHA`` or ``--baseline-tree PATH``), by that tree in the same run, through the
harness (``benchmarks/harness.py``): each repeat of each side in its own process after an untimed
warm-up at Δ = 2 (a tree that refuses the domain or δ fails there: its side is recorded as
failed with the ``SpecError``).  Recorded: the
certified relative gap reached (the table's gap column), the seconds, the status, and in the note
the best closed-form law's cost relative to the certified upper bound (the discrete Laplace, or on
ℕ the truncated geometric moved onto ℕ: what a practitioner would deploy without optmech).  The
former ``--naive`` column is a case of its own, ``<case>, naive LP``, with the naive hockey-stick
LP (``bench_approx_scale.naive_case``: every shift, every point, scipy + HiGHS, not certified) as
its callable baseline, for the ε = 0.1, δ = 0.01 cases on ℤ with Δ ≤ 64 (the former
``--naive-max-delta``).

Cases (cost, ε, δ, Δ, time limit, domain):

* |x| at ε = 0.1, δ = 0.01, Δ ∈ {64, 128, 256} under 10 s and 60 s (target: Δ = 256 to 1e-8 in 10 s);
* |x| and x² at ε = 1, δ = 1e-8, Δ = 1024 under 60 s (target 1e-6); δ = 1e-10 at Δ = 256;
* ``where(x >= 0, x, 2*abs(x))`` on ℕ (``domain=nonnegative``), ε = 0.1, δ = 0.01, Δ ∈ {16, 32, 256}
  under 60 s (target: Δ = 256 to 1e-6).

Each repeat is killed after the time limit + 240 s.  Results:
``benchmarks/results/bench_approx_issue37.jsonl``::

    python -m benchmarks.harness run benchmarks/bench_approx_issue37.py --baseline-commit <sha> --repeats 1 [--only d1e-8]
    python benchmarks/bench_approx_issue37.py [same options]            # the same
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import result_summary  # noqa: E402
from bench_approx_scale import naive_case  # noqa: E402
from harness import COMMIT, add_case, against, main  # noqa: E402

ASYM = "where(x >= 0, x, 2*abs(x))"
#: (name, cost, ε, δ, Δ, time limit, domain)
CASES = [
    ("abs e0.1", "abs", 0.1, 0.01, 64, 10.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 128, 60.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 256, 10.0, "integer"),
    ("abs e0.1", "abs", 0.1, 0.01, 256, 60.0, "integer"),
    ("abs e1 d1e-8", "abs", 1.0, 1e-8, 1024, 60.0, "integer"),
    ("square e1 d1e-8", "square", 1.0, 1e-8, 1024, 60.0, "integer"),
    ("abs e1 d1e-10", "abs", 1.0, 1e-10, 256, 60.0, "integer"),
    ("asym on N", ASYM, 0.1, 0.01, 16, 60.0, "nonnegative"),
    ("asym on N", ASYM, 0.1, 0.01, 32, 60.0, "nonnegative"),
    ("asym on N", ASYM, 0.1, 0.01, 256, 60.0, "nonnegative"),
]
#: The naive LP runs for the ε = 0.1, δ = 0.01 cases on ℤ up to this Δ.
NAIVE_MAX_DELTA = 64


def _problem(cost: str, epsilon: float, delta: float, sensitivity: int, domain: str):
    from optmech.spec import Problem

    return Problem.from_params({"privacy": "approx", "epsilon": epsilon, "delta": delta, "sensitivity": sensitivity,
                                "domain": domain, "cost": cost, "target_gap": 1e-8})


def case(cost: str, epsilon: float, delta: float, sensitivity: int, time_limit: float, domain: str) -> dict:
    """One solve under its time limit: the certified bracket, and the best closed form against its upper end."""
    import optmech

    t0 = time.perf_counter()
    r = optmech.solve(_problem(cost, epsilon, delta, sensitivity, domain), time_limit=time_limit)
    out = {**result_summary(r), "wall_s": time.perf_counter() - t0, "upper_bound": r.upper_bound,
           "lower_bound": r.lower_bound}
    closed = [ref for ref in r.references if getattr(ref, "kind", "") == "upper" and ref.valid
              and math.isfinite(ref.value) and ref.name in ("discrete_laplace", "truncated_geometric_nonnegative")]
    note = f"{r.status} in {r.seconds:.3g} s"
    if closed:
        best = min(closed, key=lambda ref: ref.value)
        out["closed_form"] = {"name": best.name, "value": best.value, "over_upper": best.value / r.upper_bound - 1.0}
        note += f"; {best.name} +{100 * out['closed_form']['over_upper']:.2f} % over upper"
    out["note"] = note
    return out


def case_warmup(cost: str, epsilon: float, delta: float, domain: str) -> None:
    """Untimed: a solve at Δ = 2 (imports, solver start-up); raises ``SpecError`` where a tree refuses the problem."""
    import optmech

    optmech.solve(_problem(cost, epsilon, delta, 2, domain))


for _name, _cost, _eps, _dlt, _D, _limit, _domain in CASES:
    _params = dict(cost=_cost, epsilon=_eps, delta=_dlt, sensitivity=_D, time_limit=_limit, domain=_domain)
    add_case(case, f"{_name} Δ {_D}, {_limit:g} s", baseline=COMMIT, params=_params, warmup=case_warmup,
             timeout=_limit + 240)
    if _domain == "integer" and (_eps, _dlt) == (0.1, 0.01) and _D <= NAIVE_MAX_DELTA:
        add_case(case, f"{_name} Δ {_D}, {_limit:g} s, naive LP", params=_params, warmup=case_warmup,
                 baseline=against(naive_case, label="naive hockey-stick LP"), timeout=_limit + 240)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
