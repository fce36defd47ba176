"""Figures: the optimal pmf or density on a log scale, beside the best closed form."""

from __future__ import annotations

import math

import numpy as np

from optmech.result import Result


def _closed_form(result: Result):
    """The closed-form mechanism of the best reference, when it has a pmf/pdf (else None)."""
    from optmech.mechanisms import DiscreteLaplace, DiscreteStaircase, Laplace, Staircase

    pr = result.problem
    eps, delta = pr["epsilon"], pr["sensitivity"]
    refs = sorted((r for r in result.references if math.isfinite(r.value)), key=lambda r: r.value)
    for r in refs:
        p = r.parameters
        if r.name == "staircase" and "gamma" in p:
            return r, Staircase(epsilon=eps, sensitivity=delta, gamma=p["gamma"])
        if r.name == "discrete_staircase" and "r" in p:
            return r, DiscreteStaircase(epsilon=eps, sensitivity=int(delta), r=int(p["r"]))
        if r.name in ("discrete_laplace", "geometric"):
            return r, DiscreteLaplace(epsilon=eps, sensitivity=int(delta))
        if r.name == "laplace":
            return r, Laplace(epsilon=eps, sensitivity=delta)
    return None, None


def plot_result(result: Result, path: str) -> None:
    """Write a PNG of the certified mechanism (log scale) and the best closed form to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mech = result.mechanism
    if mech is None:
        raise ValueError("the result carries no mechanism to plot")
    grid = mech.grid
    k = np.arange(mech.k_lo, mech.k_hi + 1)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ref, closed = _closed_form(result)
    if grid.kind == "integer":
        ax.plot(k, mech.density(k), "o", ms=3, label=f"optmech (upper-bound mechanism), cost {result.upper_bound:.6g}")
        if closed is not None:
            ax.plot(k, closed.pmf(k), "-", lw=1, label=f"{ref.name} {ref.parameters}, cost {ref.value:.6g}")
        ax.set_ylabel("probability mass")
    else:
        x = np.concatenate([grid.left(k), grid.right(k[-1:])])
        ax.stairs(mech.density(k), x, label=f"optmech (upper-bound density), cost {result.upper_bound:.6g}")
        if closed is not None:
            xs = np.linspace(x[0], x[-1], 4001)
            ax.plot(xs, closed.pdf(xs), "--", lw=1, label=f"{ref.name}, cost {ref.value:.6g}")
        ax.set_ylabel("density")
    ax.set_yscale("log")
    ax.set_xlabel("noise x")
    pr = result.problem
    tag = "certified" if result.certified else "UNCERTIFIED"
    ax.set_title(
        f"ε={pr['epsilon']:g}, Δ={pr['sensitivity']:g}, cost {pr['cost']}: "
        f"[{result.lower_bound:.8g}, {result.upper_bound:.8g}] ({tag})",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
