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


_ROW_NAMES = {"dp_optimum": "ε-DP optimum\n(LP, Δ = 1)", "lipschitz_optimum": "ε-Lipschitz optimum\n(LP)",
              "laplace": "Laplace\n(closed form)"}


def plot_compare(c: dict, path=None, *, ax=None, fig=None):
    """Draw :func:`compare`'s costs as certified brackets (error bars spanning [lower, upper]; a
    closed form, lower = upper, is a diamond) and, in 1-D, the staircase and Laplace densities
    over the range holding all but 1e-6 of either's mass.

    Parameters
    ----------
    c : dict
        The output of :func:`compare` (its ``rows``, ``epsilon``, ``cost``, ``dim``, ``norm``).
    path : str or path-like, optional
        Also write the figure as a PNG there.
    ax : Axes or sequence of Axes, optional
        One Axes: the brackets panel only; two (1-D): the brackets and the densities.  The
        returned figure is the first Axes' figure.
    fig : Figure, optional
        Lay the panels out in this figure (default: a new pyplot-free Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> c = compare(1.0, "abs")
    >>> fig = plot_compare(c)
    >>> len(fig.axes), fig.axes[1].get_yscale()
    (2, 'log')
    """
    import numpy as np

    from optmech.plots import _floored, _legend_below, _log_limits, _new_figure, _num, mass_region

    one_d = c["dim"] == 1
    if ax is not None:
        axes = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if not 1 <= len(axes) <= (2 if one_d else 1):
            raise SpecError(f"plot_compare takes {'one or two Axes' if one_d else 'one Axes'} in d = {c['dim']}")
        fig = axes[0].figure
    else:
        fig = fig if fig is not None else _new_figure((12.5, 5.4) if one_d else (7.5, 5.4))
        axes = list(np.ravel(fig.subplots(1, 2 if one_d else 1, squeeze=False)))
    a = axes[0]
    for i, r in enumerate(c["rows"]):
        lo, up = float(r["lower_bound"]), float(r["upper_bound"])
        mid = 0.5 * (lo + up)
        ok = bool(r["certified"])
        color = "tab:red" if not ok else ("tab:blue", "tab:green", "tab:gray")[i % 3]
        exact = lo == up
        a.errorbar([i], [mid], yerr=[[mid - lo], [up - mid]], fmt="D" if exact else "none", ms=6, color=color,
                   ecolor=color, elinewidth=3, capsize=10, capthick=2,
                   label=f"{_ROW_NAMES.get(r['name'], r['name']).replace(chr(10), ' ')}: "
                         + (f"{lo:.8g} (exact)" if exact else f"[{lo:.8g}, {up:.8g}]")
                         + ("" if ok else " UNCERTIFIED"))
        a.annotate(f"{lo:.6g}" if exact else f"[{lo:.6g},\n {up:.6g}]", (i, mid), textcoords="offset points",
                   xytext=(12, 0), fontsize=8, va="center", color="k" if ok else "tab:red")
    a.set_xticks(range(len(c["rows"])), [_ROW_NAMES.get(r["name"], r["name"]) for r in c["rows"]], fontsize=8)
    a.set_xlim(-0.5, len(c["rows"]) - 0.2)
    a.margins(y=0.15)
    a.set_ylabel(f"expected cost ({c['cost']})")
    gain = c.get("dp_gain_over_laplace")
    extra = f"; Laplace / DP optimum = {gain:.4g}×" if gain is not None and gain == gain else ""
    a.set_title(f"ε = {_num(c['epsilon'], 6)}, cost {c['cost']}, d = {c['dim']}"
                + (f" ({c['norm']})" if c["dim"] > 1 else "") + f", sensitivity 1{extra}\n"
                "certified brackets [lower, upper]", fontsize=9)
    _legend_below(a)
    if one_d and len(axes) > 1:
        from optmech.mechanisms.laplace import Laplace
        from optmech.mechanisms.staircase import Staircase

        eps = float(c["epsilon"])
        st = Staircase.optimal(c["cost"], epsilon=eps, sensitivity=1.0)
        lap = Laplace(epsilon=eps, sensitivity=1.0)
        ends = [mass_region(m) for m in (st, lap)]
        x = np.linspace(min(e[0] for e in ends), max(e[1] for e in ends), 4001)
        ys = [st.pdf(x), lap.pdf(x)]
        top = max(float(np.max(y)) for y in ys)
        ys = [_floored(y, top) for y in ys]
        a2 = axes[1]
        a2.plot(x, ys[0], label=f"staircase, γ = {st.gamma:.4g} (ε-DP optimum [Geng13, Thm 2.4])")
        a2.plot(x, ys[1], "--", label=f"Laplace, scale = {_num(1 / eps)} (ε-Lipschitz optimum [KHP15])")
        _log_limits(a2, *ys)
        a2.set_xlim(x[0], x[-1])
        a2.set_xlabel("noise x")
        a2.set_ylabel("density")
        a2.set_title("densities, drawn over all but 1e-6 of the mass", fontsize=9)
        _legend_below(a2)
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
