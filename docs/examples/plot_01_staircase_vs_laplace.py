"""
The staircase against Laplace on the real line
==============================================

For pure ε-DP noise on ℝ with sensitivity Δ = 1 and cost :math:`L(x) = |x|`, the optimal noise is the
staircase mechanism, and its cost has a closed form, V* = Δ e^{ε/2}/(e^ε − 1) [Geng13, Thm 2.5].
Laplace noise of scale Δ/ε costs Δ/ε.

Here optmech solves the problem numerically, without being told the answer. Each solve returns a
*certified bracket* [lower, upper] ∋ V*. The lower end comes from a dual-feasible point of a
relaxation, checked with outward rounding. The upper end is the exact cost of an audited ε-DP
density. We check that the closed form lies inside every bracket, then plot how far Laplace is
from optimal.
"""

# %%
# Solve for a few ε
# -----------------
# The default target gap on ℝ is 1e-4 (relative), so each solve takes well under a second.

import math

import matplotlib.pyplot as plt
import numpy as np

import optmech
from optmech import Continuous, Problem, PureDP
from optmech.mechanisms import Laplace, laplace_cost_abs, staircase_optimal_cost_abs

SENSITIVITY = 1.0
epsilons = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]


def certified_ratio(cost: float, lower: float, upper: float, rel: float = 1e-12) -> tuple[float, float]:
    """An interval holding cost / V* when lower <= V* <= upper.

    ``cost`` is a closed form in floating point: it is widened by ``rel`` (relative) on both
    sides, and each quotient is rounded outward with ``np.nextafter``.
    """
    lo = np.nextafter(cost * (1 - rel) / upper, 0.0)
    hi = np.nextafter(cost * (1 + rel) / lower, np.inf)
    return float(lo), float(hi)


results = {}
rows = []
for eps in epsilons:
    r = optmech.solve(Problem(PureDP(eps), cost="abs", sensitivity=SENSITIVITY, domain=Continuous()))
    results[eps] = r
    closed = staircase_optimal_cost_abs(eps, SENSITIVITY)
    lap = laplace_cost_abs(eps, SENSITIVITY)
    ratio = certified_ratio(lap, r.lower_bound, r.upper_bound)
    rows.append((eps, r.lower_bound, r.upper_bound, closed, ratio))
    print(
        f"ε = {eps:<5}  V* ∈ [{r.lower_bound:.9g}, {r.upper_bound:.9g}]  "
        f"({r.status}, certified={r.certified}, gap {r.relative_gap:.1e})  "
        f"staircase closed form {closed:.9g} inside: {r.lower_bound <= closed <= r.upper_bound}  "
        f"Laplace/V* ∈ [{ratio[0]:.6f}, {ratio[1]:.6f}]"
    )

# %%
# What is certified: for each ε, ``lower_bound ≤ V* ≤ upper_bound`` (``certified=True``), so
# Laplace/V* lies in [Δ/ε / upper, Δ/ε / lower], which the loop above rounds outward. The closed
# form of [Geng13] falls inside every bracket: the solver rediscovers the staircase.
#
# The price of Laplace
# --------------------
# As ε grows Laplace loses more and more: the staircase's cost falls like e^{−ε/2}, Laplace's only
# like 1/ε. At small ε the two agree to first order.

eps_arr = np.array([row[0] for row in rows])
ratio_lo = np.array([row[4][0] for row in rows])
ratio_hi = np.array([row[4][1] for row in rows])
fine = np.geomspace(eps_arr[0], eps_arr[-1], 200)
closed_ratio = np.array([laplace_cost_abs(e, SENSITIVITY) / staircase_optimal_cost_abs(e, SENSITIVITY) for e in fine])

fig, (ax_ratio, ax_pdf) = plt.subplots(1, 2, figsize=(11, 4.2))
ax_ratio.plot(fine, closed_ratio, color="0.6", lw=1.5, label="closed form  (Δ/ε) / V*_staircase")
ax_ratio.errorbar(
    eps_arr,
    (ratio_lo + ratio_hi) / 2,
    yerr=[(ratio_hi - ratio_lo) / 2, (ratio_hi - ratio_lo) / 2],
    fmt="o",
    color="C0",
    capsize=4,
    label="certified Laplace / V*  (bracket)",
)
ax_ratio.set_xscale("log")
ax_ratio.set_xticks(eps_arr, [f"{e:g}" for e in eps_arr])
ax_ratio.set_xticks([], minor=True)
ax_ratio.set_xlabel("ε")
ax_ratio.set_ylabel("E|X| of Laplace / V*")
ax_ratio.set_title("How far Laplace is from optimal (|x|, Δ = 1)")
ax_ratio.grid(True, which="both", alpha=0.3)
ax_ratio.legend(fontsize="small")

# The right panel: ``result.mechanism`` is the audited density of the bracket's upper end, piecewise
# constant, flat on [−γΔ, γΔ] and dropping by e^{−ε} at each step; Laplace's density is smooth.
# (One cell draws both panels, so the gallery captures the finished figure.)

EPS_SHOWN = 2.0
mech = results[EPS_SHOWN].mechanism
x = np.linspace(-3.5, 3.5, 2001)
ax_pdf.plot(x, mech.pdf(x), color="C0", lw=1.8, label=f"certified optimum (E|X| ≤ {results[EPS_SHOWN].upper_bound:.4f})")
ax_pdf.plot(
    x,
    Laplace(epsilon=EPS_SHOWN, sensitivity=SENSITIVITY).pdf(x),
    color="C3",
    lw=1.5,
    ls="--",
    label=f"Laplace, scale Δ/ε (E|X| = {laplace_cost_abs(EPS_SHOWN, SENSITIVITY):.4f})",
)
ax_pdf.set_yscale("log")
ax_pdf.set_xlabel("noise x")
ax_pdf.set_ylabel("density (log scale)")
ax_pdf.set_title(f"Optimal density vs Laplace at ε = {EPS_SHOWN:g}")
ax_pdf.grid(True, alpha=0.3)
ax_pdf.legend(fontsize="small", loc="lower center")
fig.tight_layout()
plt.show()

# %%
# Check by hand: the closed form's γ* = 1/(1 + e^{ε/2}) puts the edge of the flat centre at
# γ*Δ; at ε = 2 that is about 0.269.
print(f"γ* at ε = {EPS_SHOWN:g}: {1 / (1 + math.exp(EPS_SHOWN / 2)):.4f}")
