"""
How far is the Gaussian mechanism from optimal?
===============================================

Under (ε, δ)-DP the Gaussian mechanism is the usual choice. Calibrated exactly, as the analytic
Gaussian [BW18, Thm 8], it adds N(0, σ²) noise with the smallest σ whose privacy profile meets δ
at ε. How much more does it cost than the best possible noise?

For the cost :math:`|x|` on ℝ (sensitivity Δ = 1, δ = 1e-5), optmech brackets V*, the least :math:`E|X|` of any
(ε, δ)-DP additive noise on ℝ. It solves a hockey-stick LP over cell-constant densities. The lower
bound comes from a repaired dual and holds for *every* density, not only cell-constant ones; the
upper bound is an audited density. A coarse target gap (1e-3) keeps each solve to a few seconds.
"""

# %%
# Solve for a few ε
# -----------------

import matplotlib.pyplot as plt
import numpy as np

import optmech
from optmech import ApproxDP, Continuous, Problem
from optmech.mechanisms import Gaussian

DELTA, SENSITIVITY = 1e-5, 1.0
epsilons = [0.25, 0.5, 1.0, 2.0]


def certified_ratio(cost: float, lower: float, upper: float, rel: float = 1e-12) -> tuple[float, float]:
    """An interval holding cost / V* when lower <= V* <= upper.

    ``cost`` (a closed form in floating point) is widened by ``rel`` on both sides, and each
    quotient is rounded outward with ``np.nextafter``.
    """
    return (
        float(np.nextafter(cost * (1 - rel) / upper, 0.0)),
        float(np.nextafter(cost * (1 + rel) / lower, np.inf)),
    )


results = {}
ratios = {"analytic_gaussian": [], "laplace": [], "staircase": []}
for eps in epsilons:
    r = optmech.solve(
        Problem(ApproxDP(eps, DELTA), cost="abs", sensitivity=SENSITIVITY, domain=Continuous()),
        target_gap=1e-3,
    )
    results[eps] = r
    refs = {ref.name: ref for ref in r.references}
    for name, bracket_list in ratios.items():
        bracket_list.append(certified_ratio(refs[name].value, r.lower_bound, r.upper_bound))
    lo, hi = ratios["analytic_gaussian"][-1]
    print(
        f"ε = {eps:<4}  V* ∈ [{r.lower_bound:.6g}, {r.upper_bound:.6g}]  ({r.status}, certified={r.certified}, "
        f"gap {r.relative_gap:.1e})  analytic Gaussian σ = {refs['analytic_gaussian'].parameters['sigma']:.4g}, "
        f"E|X| = {refs['analytic_gaussian'].value:.6g}, ratio to V* ∈ [{lo:.4f}, {hi:.4f}]"
    )

# %%
# What is certified: ``lower_bound ≤ V* ≤ upper_bound`` for each ε. The analytic Gaussian's
# :math:`E|X| = \sigma\sqrt{2/\pi}` is a closed form, so its ratio to V* lies in
# [:math:`E|X|` / upper, :math:`E|X|` / lower]. The error
# bars below are that interval, rounded outward. The pure ε-DP laws (Laplace, and the staircase,
# which is optimal for δ = 0) are (ε, δ)-DP too, and are drawn for scale.

eps_arr = np.array(epsilons)
fig, (ax_ratio, ax_pdf) = plt.subplots(1, 2, figsize=(11, 4.2))
styles = {
    "analytic_gaussian": ("o", "C3", "analytic Gaussian [BW18]"),
    "laplace": ("s", "C1", "Laplace (ε-DP)"),
    "staircase": ("^", "C2", "staircase (optimal for δ = 0)"),
}
for name, (marker, colour, label) in styles.items():
    lo = np.array([b[0] for b in ratios[name]])
    hi = np.array([b[1] for b in ratios[name]])
    ax_ratio.errorbar(
        eps_arr, (lo + hi) / 2, yerr=(hi - lo) / 2, fmt=marker + "-", color=colour, capsize=5, ms=5, label=label
    )
ax_ratio.axhline(1.0, color="0.3", lw=1, ls=":", label="V* (the certified optimum)")
ax_ratio.set_xscale("log")
ax_ratio.set_xticks(eps_arr, [f"{e:g}" for e in eps_arr])
ax_ratio.set_xticks([], minor=True)
ax_ratio.set_xlabel("ε")
ax_ratio.set_ylabel("E|X| / V*  (certified interval)")
ax_ratio.set_title(f"Cost relative to the optimum, δ = {DELTA:g}, Δ = 1", fontsize="medium")
ax_ratio.grid(True, alpha=0.3)
ax_ratio.legend(fontsize="small")

# The right panel, the two densities: at ε = 1 the optimum (the audited density of the bracket's
# upper end) is a staircase with a finite support: the δ lets it stop (its support is printed below).
# The Gaussian spends its δ on a much wider bell. (One cell draws both panels, so the gallery
# captures the finished figure.)

EPS_SHOWN = 1.0
mech = results[EPS_SHOWN].mechanism
gauss = Gaussian(epsilon=EPS_SHOWN, delta=DELTA, sensitivity=SENSITIVITY)
x = np.linspace(-14, 14, 4001)
ax_pdf.plot(x, mech.pdf(x), color="C0", lw=1.6, label=f"certified optimum (E|X| ≤ {results[EPS_SHOWN].upper_bound:.4f})")
ax_pdf.plot(x, gauss.pdf(x), color="C3", lw=1.6, ls="--", label=f"analytic Gaussian, σ = {gauss.sigma:.3f}")
ax_pdf.set_yscale("log")
ax_pdf.set_ylim(1e-7, 2)
ax_pdf.set_xlabel("noise x")
ax_pdf.set_ylabel("density (log scale)")
ax_pdf.set_title(f"Densities at ε = {EPS_SHOWN:g}, δ = {DELTA:g}", fontsize="medium")
ax_pdf.grid(True, alpha=0.3)
ax_pdf.legend(fontsize="small", loc="lower center")
fig.tight_layout()
plt.show()

# %%
# The audit behind the upper end: the hockey-stick divergence of the optimum, summed with outward
# rounding at every shift, is at most the target δ.
audit = results[EPS_SHOWN].audit
print(f"support of the optimum at ε = {EPS_SHOWN:g}: {mech.support()}")
print(f"realised δ = {audit['realised_delta']:.6g} ≤ target {audit['target_delta']:g}: {audit['passed']}")
