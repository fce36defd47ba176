"""``optmech compare``: the ε-DP optimum, the ε-Lipschitz optimum and Laplace noise side by side.

For one ε, one cost and sensitivity Δ = 1 (Lipschitz privacy is per unit distance, so Δ = 1 makes
the two notions comparable: an ε-Lipschitz mechanism is ε-DP for Δ = 1 [KHP15, §II]):

* the certified bracket of the optimal **ε-DP** noise on ℝ^d (the staircase [Geng13, Thm 2.4] in 1-D;
  the d-D LP of :mod:`optmech.families.pure_nd`, ℓ1 or ℓ2 sensitivity);
* the certified bracket of the optimal **ε-Lipschitz** noise (:mod:`optmech.families.lipschitz`);
* **Laplace** noise with scale 1/ε (i.i.d. per coordinate for ℓ1; the ℓ2-Laplace for ℓ2), which is
  both ε-DP and ε-Lipschitz, at its closed-form cost.

This is the view that explains why the staircase beats Laplace under DP — DP only bounds the
ratio of densities at distance <= Δ, so mass can sit on a plateau and fall in steps — while
Laplace is optimal under Lipschitz privacy, which bounds the log-density's slope everywhere
[KHP15, Thm 6–9].
"""

from __future__ import annotations

import math

from optmech.errors import SpecError

__all__ = ["compare"]


def _laplace(cost, eps: float, dim: int, norm: str) -> tuple[float, str]:
    from optmech.mechanisms.laplace_nd import l2_laplace_cost, laplace_nd_cost

    if dim == 1:
        from optmech.mechanisms.laplace import Laplace

        return float(Laplace(epsilon=eps, sensitivity=1.0).expected_cost(cost)), "Laplace(1/epsilon)"
    if norm == "l2":
        return float(l2_laplace_cost(cost, eps, dim, 1.0)), "l2-Laplace, density proportional to exp(-epsilon ||x||_2)"
    return float(laplace_nd_cost(cost, eps, 1.0, dim)), "i.i.d. Laplace(1/epsilon) per coordinate"


def compare(epsilon: float, cost: str, *, dim: int = 1, norm: str = "l1", resolution: int | None = None,
            time_limit: float | None = None) -> dict:
    """The three rows of the module docstring as a JSON-ready dict (``rows``: name, lower_bound,
    upper_bound, certified, relative_gap, notion, note; plus the DP and Lipschitz results).

    For cost |x| and ε = 1 the staircase optimum is e^{ε/2}/(e^ε − 1) [Geng13, Ch. 2] and the
    Lipschitz optimum is Laplace's 1/ε [KHP15]:

    >>> import math
    >>> rows = {r["name"]: r for r in compare(1.0, "abs")["rows"]}
    >>> dp, lip = rows["dp_optimum"], rows["lipschitz_optimum"]
    >>> dp["lower_bound"] <= math.exp(0.5) / (math.e - 1) <= dp["upper_bound"] < 1.0
    True
    >>> lip["lower_bound"] <= 1.0 <= lip["upper_bound"], rows["laplace"]["upper_bound"]
    (True, 1.0)
    """
    import optmech
    from optmech.spec import Problem

    if norm not in ("l1", "l2"):
        raise SpecError(f"compare takes --norm l1 or l2, got {norm!r}")
    if dim == 1 and norm != "l1":
        raise SpecError("--norm applies in d > 1 dimensions")
    common = {"epsilon": epsilon, "cost": cost, "dim": dim, "norm": norm, "domain": "continuous"}
    lip_problem = Problem.from_params(common | {"privacy": "lipschitz"})  # both checked before either solve
    dp_problem = Problem.from_params(common | {"privacy": "pure", "sensitivity": 1.0, "resolution": resolution})
    lip = optmech.solve(lip_problem, time_limit=time_limit)
    dp = optmech.solve(dp_problem, time_limit=time_limit)
    lap_value, lap_note = _laplace(dp.problem["cost"], epsilon, dim, norm)
    rows = []
    for name, r, notion in (("dp_optimum", dp, "epsilon-DP, sensitivity 1"),
                            ("lipschitz_optimum", lip, "epsilon-Lipschitz (per unit distance)")):
        rows.append({"name": name, "notion": notion, "lower_bound": r.lower_bound, "upper_bound": r.upper_bound,
                     "relative_gap": r.relative_gap, "certified": r.certified, "status": r.status})
    rows.append({"name": "laplace", "notion": "both (epsilon-DP for sensitivity 1 and epsilon-Lipschitz)",
                 "lower_bound": lap_value, "upper_bound": lap_value, "relative_gap": 0.0, "certified": True,
                 "status": "closed form", "note": lap_note})
    return {
        "epsilon": epsilon, "cost": dp.problem["cost"], "dim": dim, "norm": norm, "rows": rows,
        "dp_gain_over_laplace": lap_value / dp.upper_bound if dp.certified and dp.upper_bound > 0 else math.nan,
        "lipschitz_over_laplace": ([lip.lower_bound / lap_value, lip.upper_bound / lap_value]
                                   if lip.certified and lap_value > 0 else None),
        "dp": dp, "lipschitz": lip,
    }


def format_compare(c: dict) -> str:
    """A text table of :func:`compare`'s rows."""
    from optmech import __version__

    head = (f"optmech {__version__} — compare at epsilon={c['epsilon']:g}, cost {c['cost']}, dim {c['dim']}"
            + (f" ({c['norm']})" if c["dim"] > 1 else "") + ", sensitivity 1 / unit distance")
    rows = [head, f"  {'mechanism':<20}{'lower':<16}{'upper':<16}{'certified':<11}notion"]
    for r in c["rows"]:
        rows.append(f"  {r['name']:<20}{r['lower_bound']:<16.10g}{r['upper_bound']:<16.10g}"
                    f"{'yes' if r['certified'] else 'NO':<11}{r['notion']}")
    rows.append(f"  Laplace / DP optimum (upper end): {c['dp_gain_over_laplace']:.4g}x — the staircase's gain under DP")
    q = c["lipschitz_over_laplace"]
    if q is not None:
        rows.append(f"  Lipschitz optimum / Laplace:      [{q[0]:.6g}, {q[1]:.6g}] — contains 1 where Laplace is the "
                    "Lipschitz optimum [KHP15]")
    return "\n".join(rows)


def to_json(c: dict) -> dict:
    return {k: v for k, v in c.items() if k not in ("dp", "lipschitz")} | {
        "dp_result": c["dp"].to_dict(), "lipschitz_result": c["lipschitz"].to_dict()}
