"""The one engine against the code it replaced: every README benchmark's optmech solves, timed on
this tree and on a baseline commit in the same run (through ``benchmarks/harness.py``).

Each case is one ``optmech.solve`` (or, for the baseline's Lipschitz and Wasserstein families, the
old ``solve_lipschitz``/``solve_wasserstein``), after an untimed warm-up solve that loads the
imports; the harness runs every repeat in a fresh ``python`` with ``PYTHONPATH`` pointing at the
tree being measured, alternates the two trees and reports the median of ``--repeats``.  Reported:
seconds on each tree, the ratio new/baseline, and both certified brackets (they must overlap; the
harness flags disjoint ones).  Target: no case slower than 1.10×.

    python -m benchmarks.harness run benchmarks/bench_engine.py --baseline-commit <sha> [--repeats 3] [--only W1]
    python benchmarks/bench_engine.py --baseline-commit <sha>          # the same
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import COMMIT, add_case, main  # noqa: E402

ASYM = "where(x > 0, x, 2*abs(x))"

#: name -> (kind, parameters): the optmech solves behind the README's benchmark table
CASES: dict[str, tuple[str, dict]] = {
    "naive: Δ 50, asymmetric, ℤ": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=50, domain="integer")),
    "naive: Δ 50, |x|, ℤ": ("cost", dict(privacy="pure", epsilon=1.0, cost="abs", sensitivity=50, domain="integer")),
    "scale: Δ 1000, general": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=1000, domain="integer",
                                            target_gap=1e-8, symmetry="off")),
    "scale: Δ 3000, general": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, sensitivity=3000, domain="integer",
                                            target_gap=1e-8, symmetry="off")),
    "scale: Δ 1e6, |x|": ("cost", dict(privacy="pure", epsilon=1.0, cost="abs", sensitivity=10**6, domain="integer",
                                       target_gap=1e-8)),
    "continuous: |x|, ε 0.1": ("cost", dict(privacy="pure", epsilon=0.1, cost="abs", domain="continuous")),
    "continuous: x², ε 10": ("cost", dict(privacy="pure", epsilon=10.0, cost="square", domain="continuous")),
    "continuous: asymmetric, ε 1, gap 1e-3": ("cost", dict(privacy="pure", epsilon=1.0, cost=ASYM, domain="continuous",
                                                          target_gap=1e-3)),
    "(ε,δ): Δ 16, ε 0.1, δ 0.01": ("cost", dict(privacy="approx", epsilon=0.1, delta=0.01, cost="abs", sensitivity=16,
                                                 domain="integer")),
    "(ε,δ): Δ 5, ε 1, δ 0.05, ℓ2": ("cost", dict(privacy="approx", epsilon=1.0, delta=0.05, cost="square", sensitivity=5,
                                                 domain="integer")),
    "(ε,δ): ℤ², Δ 2, ε 0.5, δ 0.05": ("cost", dict(privacy="approx", epsilon=0.5, delta=0.05, cost="l1", sensitivity=2,
                                                    domain="integer", dim=2)),
    "ℤ³, ℓ1, Δ 4, ε 2": ("cost", dict(privacy="pure", epsilon=2.0, cost="l1", sensitivity=4, domain="integer", dim=3)),
    "ℝ², ℓ1, n 4, ε 1": ("cost", dict(privacy="pure", epsilon=1.0, cost="l1", sensitivity=1, domain="continuous", dim=2,
                                      resolution=4)),
    "W1: Poisson(5), m 15, ε 2": ("wasserstein", dict(input="poisson:5:0:30", epsilon=2.0, sensitivity=15)),
    "W1: Poisson(20), m 30, ε 1": ("wasserstein", dict(input="poisson:20:0:60", epsilon=1.0, sensitivity=30)),
    "Lipschitz: ℝ, |x|": ("lipschitz", dict(epsilon=1.0, cost="abs", domain="continuous")),
    "Lipschitz: ℝ², l2sq radial, n 40": ("lipschitz", dict(epsilon=1.0, cost="l2sq", dim=2, norm="l2",
                                                           domain="continuous", resolution=40)),
}


def warm(kind: str, params: dict) -> None:
    """Untimed: a small solve of the same family, so that imports and solver start-up are not timed."""
    import optmech

    if kind == "cost":
        from optmech.spec import IntegerLattice, Problem, PureDP

        optmech.solve(Problem(privacy=PureDP(params["epsilon"]), cost="abs", sensitivity=1, domain=IntegerLattice()))
    elif kind == "wasserstein":
        from optmech.inputs import parse_input_spec

        solve_wasserstein = _wasserstein()
        solve_wasserstein(parse_input_spec(params["input"]), params["epsilon"], 2, target_gap=1e-3)
    else:
        _lipschitz()(1.0, "abs")


def _wasserstein():  # the function moved between commits
    try:
        from optmech.drive import solve_wasserstein
    except ImportError:
        from optmech.solve_wasserstein import solve_wasserstein
    return solve_wasserstein


def _lipschitz():
    try:
        from optmech.drive import solve_lipschitz
    except ImportError:
        from optmech.solve_lipschitz import solve_lipschitz
    return solve_lipschitz


def solve_case(kind: str, params: dict) -> dict:
    """The timed solve; returns optmech's certified bracket."""
    import optmech

    if kind == "cost":
        from optmech.spec import ApproxDP, Continuous, IntegerLattice, Problem, PureDP

        p = dict(params)
        privacy = ApproxDP(p.pop("epsilon"), p.pop("delta")) if p.pop("privacy") == "approx" \
            else PureDP(p.pop("epsilon"))
        dom = p.pop("domain")
        domain = IntegerLattice() if dom == "integer" else Continuous(p.pop("resolution", None))
        r = optmech.solve(Problem(privacy=privacy, cost=p.pop("cost"), domain=domain, **p))
    elif kind == "wasserstein":
        from optmech.inputs import parse_input_spec

        r = _wasserstein()(parse_input_spec(params["input"]), params["epsilon"], params["sensitivity"])
    else:
        p = dict(params)
        r = _lipschitz()(p.pop("epsilon"), p.pop("cost"), **p)
    return {"lower": r.lower_bound, "upper": r.upper_bound, "certified": bool(r.certified),
            "status": str(r.status), "gap": r.relative_gap}


for _name, (_kind, _params) in CASES.items():
    add_case(solve_case, _name, baseline=COMMIT, params={"kind": _kind, "params": _params}, warmup=warm)


if __name__ == "__main__":
    sys.exit(main(["run", __file__, *sys.argv[1:]]))
