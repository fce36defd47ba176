"""Registry of known errata in the five source papers.

The papers are keyed by the codes of :data:`optmech.sources.TAGS` (full citations in
:data:`optmech.sources.REFERENCES` and in the README's References section):

* ``000`` [Geng13]: Geng's dissertation (staircase mechanism, (ε,δ)-DP for integer queries);
* ``001`` [GKOV15]: the multidimensional staircase paper;
* ``002`` [GV13]: the (ε,δ)-DP optimal-noise paper;
* ``003`` [QHFL22]: Qin, He, Fang and Lam, discrete noise with Wasserstein utility;
* ``004`` [KHP15]: Lipschitz privacy and the optimality of the Laplace mechanism.

``Erratum.seed`` holds the code; ``Erratum.where`` names the place by tag, e.g.
"(46) [GKOV15]; (B.13) [Geng13]". Each entry below was checked against the paper's own
text: the misprint, the wrong constant or the loose statement is present where
``where`` says. Candidate errata that could not be confirmed in the paper's text
were left out.

Every corrected numeric value (``Erratum.value``) is *computed* in this module
from its exact expression (``math`` and ``scipy.optimize.brentq``); no
corrected number is typed in as a literal. The ``printed`` and ``corrected``
texts go into markdown table cells, so they never contain a ``|`` character
(absolute values are written ``abs(·)``).

``topics`` names the catalogue experiments an erratum bears on; use
:func:`errata_for` to select the entries for one experiment. ``value_label`` says
what the corrected value is; :meth:`Erratum.sentence` is how the report prints an
entry ("WHERE. Printed: …. Corrected: …. Corrected value: 0.9375 (LABEL).").
"""

from __future__ import annotations

import math
from dataclasses import dataclass


__all__ = ["Erratum", "ERRATA", "TOPICS", "SEEDS", "errata_for", "c289", "g2_equal_regime"]

SEEDS: tuple[str, ...] = ("000", "001", "002", "003", "004")

TOPICS: tuple[str, ...] = (
    "000-fig2.5-gamma-square",
    "000-fig2.7-staircase-gain",
    "000-fig3.2-gamma-2d",
    "002-bound-tables",
    "002-cor4.12-4.15-limits",
    "002-thm4.25-cor4.28-multid",
    "003-fig7-optimum",
    "003-fig8-w-vs-epsilon",
    "003-fig9-w-vs-m",
    "004-mse",
    "conjecture-staircase-d3-5",
    "comparison-gaussian-gap",
    "comparison-integer-noise",
    "comparison-staircase-norms",
)


@dataclass(frozen=True)
class Erratum:
    """One erratum: where it is, what is printed, and what is correct."""

    seed: str  # the paper's code, "000" | "001" | "002" | "003" | "004" (optmech.sources.TAGS)
    where: str  # location in the paper(s), cited by tag
    printed: str  # what the paper prints (no '|')
    corrected: str  # the corrected statement (no '|')
    value: float | None = None  # corrected numeric value, computed in this module
    topics: tuple[str, ...] = ()  # catalogue experiment names
    value_label: str = ""  # what ``value`` is ("2/(2 − 4ln1.5 − 2ln²1.5)"); required with a value

    def value_text(self) -> str:
        """The corrected value with 6 significant digits, or an em dash."""
        if self.value is None:
            return "—"
        return f"{self.value:.6g}"

    def value_phrase(self) -> str:
        """The corrected value and what it is: ``"0.9375 (m/(m+Δ) at m = 15, Δ = 1)"``; an em dash without a value."""
        if self.value is None:
            return "—"
        return f"{self.value_text()} ({self.value_label})" if self.value_label else self.value_text()

    def sentence(self) -> str:
        """The erratum as sentences: where it is, what is printed, the correction and the corrected value.

        ``"(55) [GV13]. Printed: 𝒫_0(1+ε^ε)/2. Corrected: 𝒫_0(1+e^ε)/2, as in the dissertation's (4.20)."``
        """
        def stop(text: str) -> str:
            text = text.strip()
            return text if text.endswith((".", "?", "!")) else text + "."

        out = f"{stop(self.where)} Printed: {stop(self.printed)} Corrected: {stop(self.corrected)}"
        if self.value is not None:
            out += f" Corrected value: {stop(self.value_phrase())}"
        return out


# ---------------------------------------------------------------------------
# Exact constants (computed, never typed in)
# ---------------------------------------------------------------------------

_ALPHA = 1.5  # α = 3/2 in [GV13] App. L / [Geng13] App. C.12
_LN_ALPHA = math.log(_ALPHA)


def g2_equal_regime() -> float:
    """2 − 4 ln(3/2) − 2 ln²(3/2): [GV13] (218), the ℓ2 V_LB·ε²/Δ² at ε = δ → 0."""
    return 2.0 - 4.0 * _LN_ALPHA - 2.0 * _LN_ALPHA**2


def gamma_app_l() -> float:
    """γ solving γα(ln α − 1) = −(1 + ln γ), [GV13] (283) / [Geng13] App. C.12, α = 3/2."""
    from scipy.optimize import brentq  # lazy: scipy's first import costs the command line about 0.2 s

    def f(g: float) -> float:
        return g * _ALPHA * (_LN_ALPHA - 1.0) + 1.0 + math.log(g)

    return brentq(f, 1.0, 3.0, xtol=1e-15, rtol=4 * 2.0**-52)


def c289() -> float:
    """The constant of [GV13] (289): 2ln²α − 2 − 2αγ lnα + 2αγ − 2lnγ − ln²γ."""
    g = gamma_app_l()
    lg = math.log(g)
    return (
        2.0 * _LN_ALPHA**2
        - 2.0
        - 2.0 * _ALPHA * g * _LN_ALPHA
        + 2.0 * _ALPHA * g
        - 2.0 * lg
        - lg**2
    )


def _cor3_leading_coefficient() -> float:
    """Coefficient of Δe^{−ε/3} in the d = 2 staircase cost as ε → ∞.

    From (3.7) of [Geng13], V/Δ ≈ (2/3)(γ + b/γ²) for small b = e^{−ε}; the minimum is
    at γ³ = 2b and equals (2b)^{1/3}, i.e. 2^{1/3}e^{−ε/3}.
    """
    return 2.0 ** (1.0 / 3.0)


def _binned_laplace_eps_ratio(m: int, delta: int) -> float:
    """Actual ε over nominal ε for the floor-binned Laplacian of [QHFL22] at λ = (m+Δ)/ε.

    The binned pmf is a two-sided geometric with ratio e^{−Δ/λ} per lattice step,
    so its tight ε for adjacency m is m/λ; the paper's (19) gives (m+Δ)/λ.
    """
    lam_times_eps = m + delta  # λ·ε for the paper's calibration λ = (m+Δ)/ε
    tight_eps_times_lam = m
    return tight_eps_times_lam / lam_times_eps


def _gkov_min_mean_abs(eps: float, d: int) -> float:
    """min over r of E abs(θ) for the discrete staircase P_r ([Geng13] (2.17), Thm 2.13).

    Uses E abs(θ) = 2a(r) Σ_{j<D} w_j (D b/(1−b)² + j/(1−b)), w_j = 1 (j < r) or b.
    """
    b = math.exp(-eps)
    best = math.inf
    for r in range(1, d + 1):
        a = (1.0 - b) / (2.0 * r + 2.0 * b * (d - r) - (1.0 - b))
        s = 0.0
        for j in range(d):
            w = 1.0 if j < r else b
            s += w * (d * b / (1.0 - b) ** 2 + j / (1.0 - b))
        best = min(best, 2.0 * a * s)
    return best


_K2 = g2_equal_regime()
_C289 = c289()

# ---------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------

ERRATA: tuple[Erratum, ...] = (
    # ---- [Geng13] / [GKOV15]: staircase, multidimensional ------------------------------
    Erratum(
        seed="001",
        where="Cor 3, low-privacy regime [GKOV15]; Cor 3.2 [Geng13]",
        printed="leading term ∛(2Δ)e^{−ε/3} [GKOV15]; ∛2·Δ·ε^{−ε/3} [Geng13]",
        corrected=(
            "2^{1/3}Δe^{−ε/3}: the cost is linear in Δ, and minimising (3.7) as ε → ∞ gives "
            "γ* ≈ (2e^{−ε})^{1/3}"
        ),
        value=_cor3_leading_coefficient(),
        value_label="the coefficient 2^{1/3} of Δe^{−ε/3}",
        topics=("000-fig3.2-gamma-2d",),
    ),
    Erratum(
        seed="001",
        where="(46) [GKOV15]; (B.13) [Geng13]",
        printed="b_0/b_{i−1} = e^ε, in a condition on the density sequence {a_k}",
        corrected="a_0/a_{i−1} = e^ε",
        topics=("conjecture-staircase-d3-5",),
    ),
    Erratum(
        seed="000",
        where="App. B.1.5 (Step 4), proof of Lemma B.6 [Geng13]",
        printed="h_k first increases as k increases, and then decreases",
        corrected=(
            "h_k first decreases and then increases, as [GKOV15] §IV states and as the same proof "
            "later uses (h_k increasing for k > k(i))"
        ),
        topics=("conjecture-staircase-d3-5",),
    ),
    Erratum(
        seed="001",
        where="Proof of Lemma 5, zero pattern (31) [GKOV15]",
        printed="pattern captioned k1 = 2 and Δ′ = 3",
        corrected=(
            "the printed matrix has 16 = 4k2 columns, so k2 = 4 and Δ′ = k2 − k1 = 2"
        ),
        topics=("conjecture-staircase-d3-5",),
    ),
    Erratum(
        seed="000",
        where="Proof of Lemma A.5 [Geng13]",
        printed="P({x}) ≥ e^{−ε} for x in [x0, x0 + Δ]",
        corrected="P({x}) ≥ e^{−ε}p0, where p0 = P({x0}) > 0",
    ),
    Erratum(
        seed="000",
        where="App. A.6, Step 1 and Step 4 [Geng13]",
        printed="L(·) is symmetric and monotonically decreasing for i ≥ 0",
        corrected=(
            "L(·) is monotonically increasing for i ≥ 0 (Property 2.3), which the conclusion "
            "w_0 ≤ w_1 ≤ … ≤ w_{Δ−1} needs"
        ),
    ),
    # ---- [GV13]: (ε,δ)-DP, 1-D ---------------------------------------------------
    Erratum(
        seed="002",
        where="(55) [GV13]",
        printed="𝒫_0(1+ε^ε)/2",
        corrected="𝒫_0(1+e^ε)/2, as in the dissertation's (4.20)",
        topics=("002-bound-tables",),
    ),
    Erratum(
        seed="002",
        where="Thm 8, (60) [GV13]; Thm 4.8 [Geng13]",
        printed="assume an integer n with Σ_{k<n} a b^k = 1/2",
        corrected=(
            "n = ln(1 + (e^ε − 1)/(2δ))/ε is generically not an integer; place the leftover "
            "mass 1/2 − Σ_{k<⌊n⌋} a b^k on the atom 1 + ⌊n⌋Δ (partial-atom form)"
        ),
        topics=("002-bound-tables",),
    ),
    Erratum(
        seed="002",
        where="Cors 4, 5, 12–15 [GV13]; Cors 4.4, 4.5, 4.12–4.15 [Geng13]",
        printed="closed forms stated without Thm 2's condition (28) or Thm 8's condition (61)",
        corrected=(
            "(28) and (61) fail for Δ ∈ {1, 2} with the ℓ1 and ℓ2 costs (the summand of (61) is Δ − 2, "
            "resp. (2i−1)Δ(Δ−2) − 2), and the formulas are then not lower bounds: for Δ = 1, (33) "
            "gives 1/(4δ) + 1/2 > V* = 1/(4δ) (Thm 1), and the gap (35) is negative. The limit "
            "ratios survive"
        ),
        topics=("002-bound-tables", "002-cor4.12-4.15-limits"),
    ),
    Erratum(
        seed="002",
        where="Cor 13, (68), (221)–(222) [GV13]; Cor 4.13, App. C.6 [Geng13]",
        printed="1/(12(2 − 4ln1.5 − 2ln²1.5)) ≈ 5/3",
        corrected="1/(12(2 − 4ln1.5 − 2ln²1.5)), about 1.689, not 5/3",
        value=1.0 / (12.0 * _K2),
        value_label="the exact constant",
        topics=("002-cor4.12-4.15-limits",),
    ),
    Erratum(
        seed="002",
        where="Cor 15, (70), (240)–(241) [GV13]; Cor 4.15, App. C.8 [Geng13]",
        printed="2/(2 − 4ln1.5 − 2ln²1.5) ≈ 40",
        corrected="2/(2 − 4ln1.5 − 2ln²1.5), about 40.54",
        value=2.0 / _K2,
        value_label="the exact constant",
        topics=("002-cor4.12-4.15-limits",),
    ),
    Erratum(
        seed="002",
        where="(219), (236) [GV13]; App. C.6, C.8 [Geng13]",
        printed="V_LB ≈ (Δ²/ε²)(2 − 4ln1.5 − 2ln²1.5) ≈ Δ²/(20ε²)",
        corrected=(
            "the coefficient is 2 − 4ln1.5 − 2ln²1.5, about 0.04934 = 1/20.27, not 1/20; use the exact expression"
        ),
        value=_K2,
        value_label="the coefficient 2 − 4ln1.5 − 2ln²1.5",
        topics=("002-cor4.12-4.15-limits",),
    ),
    Erratum(
        seed="002",
        where="Cor 15 statement [GV13]; Cor 4.15 [Geng13]; also the subscripts of (234), (240)–(241)",
        printed="in the regime ε ≤ δ, lim as δ → 0 (ratio with the Laplace upper bound)",
        corrected=(
            "the regime δ ≤ ε, ε → 0: Cor 15 sits in §IV-C2 (δ ≤ ε) and App. H reuses Cor 14's "
            "δ ≤ ε argument; the dissertation's App. C.8 writes ε → 0"
        ),
        topics=("002-cor4.12-4.15-limits",),
    ),
    # ---- [GV13]: multidimensional ------------------------------------------------
    Erratum(
        seed="002",
        where="(71), (72) [GV13]; (4.26) [Geng13]",
        printed="(ε,δ) constraint 𝒫_S ≤ 𝒫_{S+v} + δ (no e^ε)",
        corrected="𝒫_S ≤ e^ε 𝒫_{S+v} + δ, as in (103); the printed form is (0,δ)-DP",
        topics=("002-thm4.25-cor4.28-multid",),
    ),
    Erratum(
        seed="002",
        where="(73)–(75), (104) [GV13]; (4.27), (4.30) [Geng13]",
        printed="constraints for all k ∈ ℕ",
        corrected=(
            "for all k ∈ ℤ, as the duals (105)–(108) and App. I assume; with k ∈ ℕ and no "
            "symmetry the LP is trivial (all mass at i_m = −1, value at most d)"
        ),
        topics=("002-thm4.25-cor4.28-multid",),
    ),
    Erratum(
        seed="002",
        where="(253), App. J [GV13]",
        printed="i = kΔ, for 1 ≤ k ≥ 1/(2δ)",
        corrected="1 ≤ k ≤ 1/(2δ), as in the dissertation's App. C.10",
        topics=("002-thm4.25-cor4.28-multid",),
    ),
    Erratum(
        seed="002",
        where="(172) [GV13]; (C.6) [Geng13]",
        printed="dual of the min-LP (54)–(57) labelled V_LB := min",
        corrected="the dual is a maximisation: V_LB := max",
        topics=("002-bound-tables",),
    ),
    Erratum(
        seed="002",
        where="App. L, (286)–(290) [GV13]; App. C.12 [Geng13]",
        printed="(287) uses an undefined m′; (289) quoted only as ≈ 0.0177",
        corrected=(
            "only the end value is reproducible: (289) = 2ln²α − 2 − 2αγlnα + 2αγ − 2lnγ − ln²γ "
            "with α = 3/2 and γ ≈ 1.7468 from (283); it equals (288)"
        ),
        value=_C289,
        value_label="the constant (289)",
        topics=("002-thm4.25-cor4.28-multid",),
    ),
    Erratum(
        seed="002",
        where="Cor 28, (132) [GV13]; Cor 4.28 [Geng13]",
        printed="2/0.0177 ≈ 113 (uses the rounded constant)",
        corrected=(
            "2/c with c the exact (289): about 112.94 (2/0.0177 = 112.99); ≈ 113 holds to "
            "3 digits"
        ),
        value=2.0 / _C289,
        value_label="2/c with c the exact (289)",
        topics=("002-thm4.25-cor4.28-multid",),
    ),
    # ---- [QHFL22]: discrete noise, Wasserstein utility -----------------------------
    Erratum(
        seed="003",
        where="§V-A simulation setup [QHFL22]",
        printed="noise parameters uniquely determined according to Table IV",
        corrected=(
            "Table V is meant (Table IV lists only the estimation methods); with Table V the "
            "Laplacian gets λ = (m+Δ)/ε and the staircase ρ = e^{−ε/⌈m/(aΔ)⌉}"
        ),
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="(19), Table V, Laplacian [QHFL22]",
        printed="ε = (m+Δ)/λ",
        corrected=(
            "the tight ε is m/λ (the binned pmf is a two-sided geometric with ratio e^{−Δ/λ}); calibrated "
            "with λ = (m+Δ)/ε, the Laplacian runs at ε·m/(m+Δ)"
        ),
        value=_binned_laplace_eps_ratio(15, 1),
        value_label="m/(m+Δ), the realised over the nominal ε, at m = 15 and Δ = 1",
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="§IV-B staircase text before (21) [QHFL22]",
        printed="c_b = 1/ρ^c for caΔ < m ≤ (c+1)aΔ, with a, c ∈ ℤ⁺",
        corrected=(
            "c_b = 1/ρ^{c+1} = ρ^{−⌈m/(aΔ)⌉}, as (21) and Table V give; c = 0 must be allowed"
        ),
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="(22), Table V, Uniform [QHFL22]",
        printed="δ = mΔ/(b − a + Δ)",
        corrected=(
            "δ = m/(b − a + Δ) (capped at 1), for every ε ≥ 0; it equals the printed form only when Δ = 1"
        ),
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="(23)–(24), Table V, Exponential [QHFL22]",
        printed="p(k) = ηe^{−ηk} on k ∈ Z_Δ⁺ is ε-DP with ε = ηm",
        corrected=(
            "the pmf is not normalised and is one-sided, so no finite ε holds (output x + Δ is "
            "impossible under input x + m); the argument only checks k > m0"
        ),
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="Thm 2, (10), App. B (42) [QHFL22]",
        printed="(ε,δ)-DP if Σ_{θ∈Θ0} p(k) ≤ δ and the ratio bound holds on Θ1",
        corrected=(
            "the Θ0 mass must be taken under the shifted (numerator) pmf; as printed, taking Θ0 = the "
            "zero-probability points certifies the uniform noise as (0,0)-DP. Use the "
            "hockey-stick divergence instead"
        ),
        topics=("003-fig8-w-vs-epsilon", "003-fig9-w-vs-m"),
    ),
    Erratum(
        seed="003",
        where="(30b) and §IV-C [QHFL22]",
        printed="P0 constraint ε ≤ log(c_b); P0 called non-convex",
        corrected=(
            "log(c_b) ≤ ε; P0 is convex (a sum of absolute values of affine functions of p_θ) "
            "and is an exact LP"
        ),
        topics=("003-fig7-optimum",),
    ),
    Erratum(
        seed="003",
        where="§V-B, Fig. 7, Remark 4 [QHFL22]",
        printed=(
            "optimal stairs at ε = 2, m = 15 differ in height and width between Gaussian and "
            "Poisson inputs"
        ),
        corrected=(
            "P2's objective W2 equals E abs(θ)/Δ for every input, so its optimum is the same "
            "discrete staircase ([Geng13] Thm 2.13, r = 5) for both"
        ),
        value=_gkov_min_mean_abs(2.0, 15),
        value_label="E abs(θ) of that staircase at ε = 2, m = 15",
        topics=("003-fig7-optimum",),
    ),
    # ---- [KHP15]: Lipschitz privacy -----------------------------------------------
    Erratum(
        seed="004",
        where="Prop 3 display [KHP15]",
        printed="P(Qu ∈ S) ≤ e^ε P(Qu′ ∈ S) for ‖u − u′‖ ≤ α",
        corrected="P(Qu ∈ S) ≤ e^{αε} P(Qu′ ∈ S), i.e. αε-DP as the statement says",
        topics=("004-mse",),
    ),
    Erratum(
        seed="004",
        where="§IV-D text and Thm 9 proof [KHP15]",
        printed="dual term (n−1)/r_i; ∀v ∈ ℝ^n; users indexed n ∈ {1, …, n}",
        corrected=(
            "(m−1)/r_i (each block is m-dimensional); ∀v ∈ ℝ^{nm}; i ∈ {1, …, n}. The MSE "
            "nm(m+1)/ε² is right"
        ),
        topics=("004-mse",),
    ),
    Erratum(
        seed="004",
        where="Appendix, discretised proof of Thm 6 [KHP15]",
        printed="v_i = −M + iν, i ∈ {1, …, N}, ν = 2M/(N−1); κ_i, μ_i ≥ 0 for i ∈ {1, …, N}",
        corrected=(
            "i ∈ {0, …, N−1} (or v_i = −M + (i−1)ν) so the grid spans [−M, M]; the sign "
            "constraints are for i ∈ {1, …, N−1}, where κ_i, μ_i are defined"
        ),
        topics=("004-mse",),
    ),
    Erratum(
        seed="004",
        where="Fig. 2 caption [KHP15]",
        printed="η(v) solves the IVP in r; boundary condition lim_{v→∞} η(v) ≥ 0",
        corrected="η(r) and lim_{r→∞} η(r) ≥ 0: the radial variable is r",
        topics=("004-mse",),
    ),
)


def errata_for(topic: str) -> list[Erratum]:
    """The entries whose ``topics`` contain ``topic``, in registry order."""
    return [e for e in ERRATA if topic in e.topics]
