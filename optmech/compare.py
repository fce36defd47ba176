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
    from optmech.mechanisms.multidim import l2_laplace_cost, laplace_nd_cost

    if dim == 1:
        from optmech.mechanisms.laplace import Laplace

        return float(Laplace(epsilon=eps, sensitivity=1.0).expected_cost(cost)), "Laplace(1/epsilon)"
    if norm == "l2":
        return float(l2_laplace_cost(cost, eps, dim, 1.0)), "l2-Laplace, density proportional to exp(-epsilon ||x||_2)"
    return float(laplace_nd_cost(cost, eps, 1.0, dim)), "i.i.d. Laplace(1/epsilon) per coordinate"


def compare(epsilon: float, cost: str, *, dim: int = 1, norm: str = "l1", resolution: int | None = None,
            time_limit: float | None = None) -> dict:
    """The three rows of the module docstring as a JSON-ready dict (``rows``: name, lower_bound,
    upper_bound, certified, relative_gap, notion, note; plus the DP and Lipschitz results)."""
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


def plot_compare(c: dict, path: str) -> None:
    """Costs with their certified brackets; in 1-D also the staircase and Laplace densities."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    one_d = c["dim"] == 1
    fig, axes = plt.subplots(1, 2 if one_d else 1, figsize=(11 if one_d else 6, 4.2), squeeze=False)
    ax = axes[0][0]
    names = [r["name"] for r in c["rows"]]
    lo = np.array([r["lower_bound"] for r in c["rows"]])
    up = np.array([r["upper_bound"] for r in c["rows"]])
    ax.bar(names, up, color=["tab:blue", "tab:green", "tab:gray"], alpha=0.6)
    ax.errorbar(names, (lo + up) / 2, yerr=(up - lo) / 2, fmt="none", ecolor="k", capsize=6, label="certified bracket")
    ax.set_ylabel(f"E cost ({c['cost']})")
    ax.set_title(f"ε = {c['epsilon']:g}, d = {c['dim']}", fontsize=9)
    ax.legend(fontsize=8)
    if one_d:
        from optmech.mechanisms.laplace import Laplace
        from optmech.mechanisms.staircase import Staircase

        eps = c["epsilon"]
        x = np.linspace(-6 / eps, 6 / eps, 1201)
        st = Staircase.optimal(c["cost"], epsilon=eps, sensitivity=1.0)
        ax2 = axes[0][1]
        ax2.plot(x, st.pdf(x), label=f"staircase γ={st.gamma:.3g} (DP optimum [Geng13, Thm 2.4])")
        ax2.plot(x, Laplace(epsilon=eps, sensitivity=1.0).pdf(x), label="Laplace (Lipschitz optimum [KHP15])")
        ax2.set_yscale("log")
        ax2.set_xlabel("x")
        ax2.set_ylabel("density")
        ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
