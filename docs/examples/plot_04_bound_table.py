"""
A bound table for (ε, δ)-DP on the integers
===========================================

[GV13] bound the least expected absolute value of (ε, δ)-DP integer noise from both sides. Below
is a theorem's lower bound ([GV13] Thm 8, valid under side conditions). Above are the costs of simple
mechanisms: Laplace and the staircase (pure ε-DP, hence (ε, δ)-DP) and the discrete Gaussian
[CKS20]. :func:`optmech.build_table` puts these next to the certified bracket on V* itself. It
solves the exact hockey-stick LP on ℤ for every cell of a grid, in worker processes.
"""

# %%
# Build the table
# ---------------
# A 2 × 4 grid: sensitivities Δ ∈ {1, 4}, four ε, δ = 1e-6. Each row is solved to the default
# target gap on ℤ (1e-9), a fraction of a second each.

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import optmech

DELTA = 1e-6
table = optmech.build_table(
    "approx",
    cost="abs",
    sensitivities=[1, 4],
    epsilons=[0.25, 0.5, 1.0, 2.0],
    deltas=[DELTA],
    domain="integer",
    workers=2,
)
frame = table.to_frame()
for row in frame.itertuples():
    print(
        f"Δ = {row.sensitivity}, ε = {row.epsilon:<4}: V* ∈ [{row.v_star_lower:.10g}, {row.v_star_upper:.10g}] "
        f"certified={row.certified}, gap {row.relative_gap:.1e}"
    )

# %%
# What is certified: in each row ``v_star_lower ≤ V* ≤ v_star_upper`` (``certified`` is True).
# The lower end is a repaired LP dual, valid for every (ε, δ)-DP noise law on ℤ. The upper end is
# the cost of a pmf audited at every shift 1..Δ with outward rounding. The table as a DataFrame
# (``Table.to_frame()``, which needs pandas), with the columns that matter here:

pd.set_option("display.precision", 6)
frame[
    [
        "sensitivity",
        "epsilon",
        "v_star_lower",
        "v_star_upper",
        "lb_theorem",
        "lb_theorem_valid",
        "ub_laplace",
        "ub_staircase",
        "ub_discrete_gaussian",
        "ratio_best_simple_to_v_star",
    ]
]

# %%
# The bounds against the certified optimum
# ----------------------------------------
# Each bound divided by V* (the certified bracket's upper end; the brackets are far narrower than
# the markers). The theorem's lower bound is drawn hollow where its side conditions fail
# (``lb_theorem_valid`` is False). There it is no bound at all: at Δ = 1 it lies above V*.

Y_TICKS = [0.8, 1, 1.5, 2, 3, 4, 6, 8]
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, (delta_s, rows) in zip(axes, frame.groupby("sensitivity")):
    eps = rows["epsilon"].to_numpy()
    v_star = rows["v_star_upper"].to_numpy()
    width = (rows["v_star_upper"] - rows["v_star_lower"]).to_numpy() / v_star
    ax.errorbar(eps, np.ones_like(eps), yerr=width, fmt="D-", color="C0", ms=5, label="certified V* bracket")
    for column, marker, colour, label in [
        ("ub_laplace", "s--", "C1", "Laplace (upper)"),
        ("ub_staircase", "^--", "C2", "discrete staircase (upper)"),
        ("ub_discrete_gaussian", "v--", "C3", "discrete Gaussian [CKS20] (upper)"),
    ]:
        ax.plot(eps, rows[column].to_numpy() / v_star, marker, color=colour, ms=5, label=label)
    valid = rows["lb_theorem_valid"].to_numpy(dtype=bool)
    ratio_theorem = rows["lb_theorem"].to_numpy() / v_star
    ax.plot(eps, ratio_theorem, ":", color="C4", lw=1)
    ax.plot(eps[valid], ratio_theorem[valid], "o", color="C4", ms=6, label="[GV13] Thm 8 lower bound")
    ax.plot(
        eps[~valid],
        ratio_theorem[~valid],
        "o",
        mfc="none",
        color="C4",
        ms=6,
        label="[GV13] Thm 8, conditions not met",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(eps, [f"{e:g}" for e in eps])
    ax.set_xticks([], minor=True)
    ax.set_yticks(Y_TICKS, [f"{y:g}" for y in Y_TICKS])
    ax.set_yticks([], minor=True)
    ax.set_xlabel("ε")
    ax.set_title(f"Δ = {delta_s}, δ = {DELTA:g}, cost |x| on ℤ", fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("bound / V*")
axes[0].legend(fontsize="x-small", loc="upper left")
fig.tight_layout()
plt.show()
