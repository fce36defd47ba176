r"""Privacy loss distributions (PLDs) for dp_accounting, built from a mechanism's exact law.

``privacy_loss_distribution(mechanism, sensitivity)`` returns a
``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`` whose ε-hockey-stick
divergence is, for every ε, at least that of every pair of output laws the mechanism can produce
for two query values at distance at most Δ (a *dominating pair* [ZDW22]), so that
``pld.compose(other)`` / ``pld.self_compose(k)`` give pessimistic (ε, δ) for compositions with any
other mechanism accounted in dp_accounting [ZDW22, Thm 10: dominating pairs compose adaptively].
:func:`composed_delta` and :func:`calibrate_for_compositions` are the k-fold self-composition
shortcuts that ``optmech recommend --compositions k`` uses.

Notation.  For an upper law P and a lower law Q the privacy loss is L = ln(dP/dQ) under P; the
hockey stick is H_x(P‖Q) = Σ_o [P(o) − x Q(o)]_+ = E_P[(1 − x e^{−L})_+] with x = e^ε, and
δ(ε) = H_{e^ε}.  dp_accounting's "pessimistic estimate" rounds every loss *up* to a multiple of
the discretisation interval h (``value_discretization_interval``, default 1e-4) and puts mass it
cannot place at L = +∞; both only raise E_P[(1 − x e^{−L})_+], whose integrand is nondecreasing
in L.

Which pair, per family
----------------------
* **Laplace, Gaussian** (continuous): dp_accounting's own constructors,
  ``from_laplace_mechanism(parameter=Δ/ε, sensitivity=t)`` and
  ``from_gaussian_mechanism(standard_deviation=σ, sensitivity=t)`` (the pair P, P shifted by t).
  Both densities are log-concave, so the location family has a monotone likelihood ratio and by
  Neyman–Pearson the optimal rejection sets are half-lines:
  H_x(P‖P_θ) = sup_u [F(u) − x F(u − θ)], and F(u − θ) is nonincreasing in θ >= 0, so H_x is
  nondecreasing in |θ| (both signs agree by symmetry of the law): the pair at t = Δ dominates every
  shift |θ| <= Δ.  [derived here; the MLR/Neyman–Pearson step is standard, e.g. Lehmann & Romano,
  Testing Statistical Hypotheses, Thm 3.4.1.]

* **Laws on ℤ** (``lattice``: LatticePMF from the solver, DiscreteLaplace, Geometric,
  DiscreteStaircase, DiscreteGaussian, ...).  A noise pmf p added to an integer query is private
  for the pairs (P, P_s), P_s(k) = p(k + s), for *every* shift 0 < |s| <= Δ, and for a
  non-monotone or asymmetric p the pair at s = Δ need not dominate.  The default builds one PLD
  that dominates all of them (the *profile construction* below); ``shift=s`` builds the PLD of the
  single pair (P, P_s) (and its reverse (P_s, P) = the pair at −s, dp_accounting's "add" side),
  privacy buckets with losses rounded up.

  *Window and tails.*  The pmf is materialised on a window [lo, hi] with P(X < lo) + P(X > hi) <= τ
  (``tail_mass``, default 1e-15; read from the law's cdf/sf, plus 4u absolute for their rounding).
  Every point whose partner k + s leaves the window, every point with p(k) > 0 = p(k + s), and the
  whole mass outside the window go to L = +∞.  Pessimistic: for the true pair each such point
  contributes [p(k) − x p(k+s)]_+ <= p(k), which is what L = +∞ gives.

  *Profile construction* (Connect the Dots, [DGKKM22, Alg. 1]).  Let
  δ*(ε) = max_{0<|s|<=Δ} H_{e^ε}(P‖P_s).  As a function of x = e^ε each H_x(P‖P_s) =
  sup_S P(S) − x P_s(S) is a supremum of affine functions, so it is convex and nonincreasing, with
  value 1 at x = 0; the maximum over s keeps all three properties.  Take ε_1 < … < ε_n on the
  h-grid (the floor, ceiling and nearest multiple of every finite loss of every shift, so
  ε_1 <= every loss and ε_n >= every finite loss; the grid only affects tightness, never validity) and upper bounds u_i >= δ*(ε_i) (below).  Replace u by its running
  minimum (still an upper bound: δ* is nonincreasing) and drop grid points until the piecewise
  linear interpolant g of (0, 1), (x_1, u_1), …, (x_n, u_n) in x, constant = u_n for x >= x_n, is
  convex.  *Any* subset of the points gives g >= δ*: between two kept points the chord of u lies
  above the chord of δ*, which lies above δ* by convexity; on [0, x_1] the chord starts at
  δ*(0) = 1; beyond x_n, δ* <= δ*(ε_n) <= u_n.  A convex, nonincreasing g with g(0) = 1 is the
  hockey-stick curve of the discrete pair whose PLD puts mass
  p_i = x_i (g'(x_i+) − g'(x_i−)) >= 0 at ε_i and u_n at +∞ — exactly the masses
  ``pld_pmf.create_pmf_pessimistic_connect_dots`` assigns (its y_{i−1} + z_i is this slope jump,
  with y_0 = 1 − u_1 the chord from (0, 1)); they sum to 1 (telescoping, since
  1/(e^{−d} − 1) + 1/(e^{d} − 1) = −1), and the lower law has total mass
  Σ p_i e^{−ε_i} = −g'(0+) <= 1 (g'(0+) = (u_1 − 1)/x_1 after the repairs, >= the slope
  −P_s(supp P) >= −1 of δ* at 0), so a valid pair (P', Q') exists.  Its curve g dominates
  H_x(P‖P_s) for every x >= 0 and every shift, so (P', Q') is a dominating pair for the whole
  neighbouring relation, in both directions (the shift set is closed under s → −s, which swaps the
  pair), and the PLD is symmetric.  The dropping step removes only points where the upper bounds
  are non-convex by their rounding margins; it cannot make g smaller than δ*.
  Accuracy: the grid also holds every multiple of h with |ε| <= min(largest |loss|,
  ``UNIFORM_POINTS``·h/2) (10 at h = 1e-4).  On [x_a, x_b] with x_b = x_a e^h,
  g(x) <= max(u_a, u_b) = u_a <= δ*(ε − h) + margins (δ* nonincreasing), so
  δ*(ε) <= δ_PLD(ε) <= δ*(ε − h) + margins at one composition, for ε in that range.  (The loss
  points alone would not do: a maximum over shifts has breakpoints where two shifts' curves
  cross, which are not losses.)  Beyond the range only the loss points are used: still an upper
  bound, with no stated accuracy.

  *The upper bounds u_i.*  For shift s, with the finite losses L_k = ln p(k) − ln p(k + s) sorted,
  δ_s(ε) = Σ_{L_k > ε} (p(k) − e^ε p(k+s)) + (mass at +∞), evaluated for all grid ε at once from
  suffix sums (O((N + G) log N)).  e^ε is rounded down; the slack added is
  2 m·Σp + 2(N + 4)u·Σ_{L>ε} p (m the largest rounding margin of a computed loss, which bounds
  the terms a misclassification near L ≈ ε can move; the second term the recursive-summation error
  γ_N [Higham, Thm 4.4]).

* **Densities constant on cells whose boundaries are invariant under the shift** (the staircase
  [Geng13, (2.13)] at t = mΔ; the solver's ``PiecewiseConstantDensity`` at t = mΔ).  If both f
  and f(· − t) are constant on every cell c of a partition, the privacy loss
  L(y) = ln f(y)/f(y − t) is a function of the cell, and the law of L under P is Σ_c P(c)
  δ_{L_c} with P(c)/P_t(c) = f_c/f_{c−t}: the PLD of the density pair *equals* the PLD of the
  cell-mass pair (P(c), P(c − t)), a pair on ℤ handled as above.  For the staircase the cells are
  cut at ℤΔ ∪ (ℤΔ + γΔ) ∪ (ℤΔ − γΔ) (the density is symmetric, so the negative side has its
  steps at −kΔ − γΔ; the union is invariant under ±Δ, and up to three cells per period); for a
  ``PiecewiseConstantDensity`` the law's own cells (W per period Δ).  The PLD is the profile
  construction above for the cell pairs at ±t (for a symmetric law the two coincide).  Only the shifts ±t are
  covered: for 0 < |θ| < Δ the cells do not align, and whether the pair at Δ dominates them is
  **not proven here** for these two families (a ``PiecewiseConstantDensity``'s own ``privacy()``
  audits every real shift; the staircase is ε-DP for all of them [Geng13]).

Floating point.  Masses are the law's floats; the rounding margins above make the grid values
upper bounds of the exact profile of those masses.  dp_accounting's own arithmetic (the FFT
convolutions of ``self_compose``, its sums in ``get_delta_for_epsilon``) is plain float64, not
outward-rounded: its δ are pessimistic up to about 1e-15 absolute, **uncertified** beyond that.

References: [DGKKM22] Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter
Discrete Approximations of Privacy Loss Distributions", PETS 2022 (arXiv:2207.04380), Alg. 1 and
Thm 3.3; [ZDW22] Zhu, Dong, Wang, "Optimal Accounting of Differential Privacy via Characteristic
Function", AISTATS 2022, Def. 7 and Thm 10; [Geng13]; [BW18].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optmech.errors import SpecError

__all__ = [
    "WindowLaw",
    "lattice_window",
    "cell_window",
    "shift_profile",
    "connect_dots_pld",
    "pair_pld",
    "privacy_loss_distribution",
    "composed_delta",
    "calibrate_for_compositions",
]

U = 2.0**-53
#: Largest window (points or cells) the construction materialises.
MAX_POINTS = 4_000_000
#: Points of the uniform h-grid of the profile construction (|ε| <= UNIFORM_POINTS·h/2).
UNIFORM_POINTS = 200_000
INSTALL_HINT = "privacy loss distributions need dp_accounting: pip install optmech[interop]"


def dp_modules():
    """``(privacy_loss_distribution, pld_pmf)`` of dp_accounting, or a one-line SpecError."""
    try:
        from dp_accounting.pld import pld_pmf
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        raise SpecError(INSTALL_HINT) from None
    return pld, pld_pmf


@dataclass(frozen=True)
class WindowLaw:
    """Masses ``p`` on consecutive indices (points of ℤ or cells), ``tail`` an upper bound of the
    mass outside them, ``shifts`` the index shifts s of the pairs (P, P_s), P_s(k) = p(k + s).

    >>> law = WindowLaw(np.array([0.25, 0.5, 0.25]), 0.0, (1,))
    >>> float(shift_profile(law, np.array([0.0]))[0]) >= 0.25      # TV of the pair at shift 1
    True
    """

    p: np.ndarray
    tail: float
    shifts: tuple[int, ...]


def _window_bounds(mechanism, tail_mass: float) -> tuple[int, int]:
    lo = float(mechanism.ppf(tail_mass / 2.0))
    hi = float(mechanism.ppf(1.0 - tail_mass / 2.0))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise SpecError(f"cannot find a window holding all but {tail_mass:g} of the mass of {mechanism!r}")
    return int(lo), int(hi)


def lattice_window(mechanism, tail_mass: float = 1e-15) -> tuple[np.ndarray, int, float]:
    """``(p, lo, tail)``: the pmf of a 1-D lattice law on ``lo..lo+len(p)−1`` and an upper bound
    of the mass outside (cdf/sf of the law plus 4u for their rounding).

    >>> from optmech.mechanisms import DiscreteLaplace
    >>> p, lo, tail = lattice_window(DiscreteLaplace(epsilon=1, sensitivity=1))
    >>> lo == -(p.size - 1) // 2, tail < 1e-14
    (True, True)
    """
    lo, hi = _window_bounds(mechanism, tail_mass)
    if hi - lo + 1 > MAX_POINTS:
        raise SpecError(f"the window holding all but {tail_mass:g} of the mass has {hi - lo + 1} points "
                        f"(limit {MAX_POINTS}); raise tail_mass")
    k = np.arange(lo, hi + 1, dtype=float)
    p = np.asarray(mechanism.pmf(k), dtype=float)
    tail = float(mechanism.cdf(lo - 1.0)) + float(mechanism.sf(float(hi)))
    return p, lo, max(0.0, tail) + 4 * U


def cell_window(mechanism, tail_mass: float = 1e-15) -> tuple[np.ndarray, int, float]:
    """``(masses, cells_per_period, tail)`` of a density constant on cells (see the module
    docstring): the staircase (cells cut at ℤΔ ∪ (ℤΔ ± γΔ)) or a ``PiecewiseConstantDensity``.

    >>> from optmech.mechanisms import Staircase
    >>> masses, per, tail = cell_window(Staircase(epsilon=1, sensitivity=1, gamma=0.3))
    >>> per, bool(abs(masses.sum() + tail - 1) < 1e-12)            # cells at 0, 0.3, 0.7 per period
    (3, True)
    """
    D = float(mechanism.sensitivity)
    name = getattr(mechanism, "name", "")
    if name == "staircase":
        g = float(mechanism.gamma)
        cuts = np.unique(np.array([0.0] + [c for c in (g, 1.0 - g) if 0.0 < c < 1.0] + [1.0]))
        Q = int(math.ceil(math.log(4.0 / tail_mass) / mechanism.epsilon)) + 2
        if 2 * Q * (len(cuts) - 1) > MAX_POINTS:
            raise SpecError(f"the staircase window needs {2 * Q * (len(cuts) - 1)} cells (limit {MAX_POINTS}); raise tail_mass")
        q = np.arange(-Q, Q, dtype=float)
        left = ((q[:, None] + cuts[None, :-1]) * D).ravel()
        right = ((q[:, None] + cuts[None, 1:]) * D).ravel()
        masses = np.asarray(mechanism.pdf(0.5 * (left + right)), dtype=float) * (right - left)
        tail = float(mechanism.sf(Q * D)) + float(mechanism.cdf(-Q * D))
        return masses, len(cuts) - 1, max(0.0, tail) + 4 * U
    law = getattr(mechanism, "law", None)
    if name == "piecewise_constant_density" and law is not None:
        W = int(law.grid.W)
        lo_x, hi_x = float(mechanism.ppf(tail_mass / 2.0)), float(mechanism.ppf(1.0 - tail_mass / 2.0))
        k_lo = min(int(law.k_lo), int(math.floor(lo_x / D)) * W) - W
        k_hi = max(int(law.k_hi), (int(math.floor(hi_x / D)) + 1) * W) + W
        if k_hi - k_lo + 1 > MAX_POINTS:
            raise SpecError(f"the window needs {k_hi - k_lo + 1} cells (limit {MAX_POINTS}); raise tail_mass")
        k = np.arange(k_lo, k_hi + 1)
        masses = np.asarray(law.mass(k), dtype=float)
        tail = float(mechanism.cdf(float(law.grid.left(np.array([k_lo]))[0]))) + \
            float(mechanism.sf(float(law.grid.right(np.array([k_hi]))[0])))
        return masses, W, max(0.0, tail) + 4 * U
    raise SpecError(f"no cell form for {type(mechanism).__name__}")


def _pair_terms(p: np.ndarray, s: int):
    """For the pair (P, P_s) on the window: (a, b) with a = p(k) > 0 = upper, b = p(k+s) > 0 = lower
    masses of the finite-loss points, their losses and rounding margins, and the window mass at +∞."""
    n = p.size
    if abs(s) >= n:
        return np.empty(0), np.empty(0), np.empty(0), np.empty(0), math.fsum(p)
    a, b = (p[: n - s], p[s:]) if s >= 0 else (p[-s:], p[: n + s])
    edge = p[n - s:] if s >= 0 else p[: -s]
    fin = (a > 0) & (b > 0)
    inf_mass = math.fsum(edge) + math.fsum(a[(a > 0) & (b <= 0)])
    a, b = a[fin], b[fin]
    la, lb = np.log(a), np.log(b)
    loss = la - lb
    margin = np.where(a == b, 0.0, 4 * U * (np.abs(la) + np.abs(lb)) + 2.0**-1070)
    return a, b, loss, margin, inf_mass


def shift_profile(law: WindowLaw, epsilons: np.ndarray) -> np.ndarray:
    r"""Upper bounds of max_{s in law.shifts} Σ_k [p(k) − e^ε p(k+s)]_+ (+ the tail), at each ε
    (any real ε; the module docstring states the slack added).

    >>> law = WindowLaw(np.array([0.5, 0.5]), 0.0, (1, -1))
    >>> [round(float(d), 12) for d in shift_profile(law, np.array([0.0, 5.0]))]   # half the mass leaves
    [0.5, 0.5]
    """
    eps = np.asarray(epsilons, dtype=float)
    c = np.nextafter(np.nextafter(np.exp(eps), 0.0), 0.0)  # e^ε rounded down
    best = np.zeros(eps.shape)
    for s in law.shifts:
        a, b, loss, margin, inf_mass = _pair_terms(law.p, int(s))
        order = np.argsort(loss, kind="stable")
        loss, a, b = loss[order], a[order], b[order]
        sa = np.concatenate([np.cumsum(a[::-1])[::-1], [0.0]])  # Σ_{i>=j} a_i
        sb = np.concatenate([np.cumsum(b[::-1])[::-1], [0.0]])
        j = np.searchsorted(loss, eps, side="right")  # first index with loss > ε
        val = sa[j] - c * sb[j]
        mrg = float(margin.max()) if margin.size else 0.0
        slack = 2.0 * mrg * (sa[0] if sa.size else 0.0) + 2.0 * (a.size + 4) * U * sa[j]
        total = (np.maximum(val, 0.0) + slack + inf_mass + law.tail) * (1.0 + 8 * U)
        best = np.maximum(best, total)
    return np.minimum(best, 1.0)


def _connect_dots_masses(r: np.ndarray, d: np.ndarray, h: float) -> np.ndarray:
    """The masses ``pld_pmf.create_pmf_pessimistic_connect_dots`` assigns (same float operations)."""
    ed = np.diff(r) * h
    dd = np.diff(d)
    return np.append(1 - d[0], dd / np.expm1(-ed)) + np.append(dd / np.expm1(ed), 0.0)


def connect_dots_pld(law: WindowLaw, value_discretization_interval: float = 1e-4):
    """The dominating PLD of the profile construction (module docstring) for all pairs of ``law``.

    >>> law = WindowLaw(np.array([0.2, 0.3, 0.5]), 0.0, (1, -1))
    >>> pld = connect_dots_pld(law)
    >>> bool(pld.get_delta_for_epsilon(0.1) >= shift_profile(law, np.array([0.1]))[0] - 1e-12)
    True
    """
    pld, pld_pmf = dp_modules()
    h = float(value_discretization_interval)
    grid = []
    for s in law.shifts:
        _, _, loss, margin, _ = _pair_terms(law.p, int(s))
        grid.append(np.floor((loss - margin) / h))
        grid.append(np.ceil((loss + margin) / h))
        grid.append(np.round(loss / h))  # the nearest grid point: exact at losses on the grid
    pts = np.concatenate(grid + [np.zeros(1)])
    reach = min(float(np.abs(pts).max()), UNIFORM_POINTS / 2.0)  # the uniform part: |ε| <= reach·h
    uniform = np.arange(-math.ceil(reach), math.ceil(reach) + 1, dtype=float)
    r = np.unique(np.concatenate([pts, uniform])).astype(np.int64)
    d = np.minimum.accumulate(shift_profile(law, r * h))
    while r.size > 1:  # drop non-convex points (any subset keeps the curve above the profile)
        probs = _connect_dots_masses(r, d, h)
        bad = probs[:-1] < 0
        if not bad.any():
            break
        keep = np.append(~bad, True)
        r, d = r[keep], d[keep]
    return pld.PrivacyLossDistribution(pld_pmf.create_pmf_pessimistic_connect_dots(h, r, d))


def pair_pld(law: WindowLaw, shift: int, value_discretization_interval: float = 1e-4, *, symmetric: bool = False):
    """The PLD of the single pair (P, P_s) ("remove") and its reverse (P_s, P) = the pair at −s
    ("add"), privacy buckets with every loss rounded up (pessimistic), window and tail as in
    the module docstring; ``symmetric=True`` (a symmetric law) keeps one side.

    >>> law = WindowLaw(np.array([0.2, 0.3, 0.5]), 0.0, (1,))
    >>> d = float(pair_pld(law, 1).get_delta_for_epsilon(0.0))   # TV = 0.5, losses rounded up by <= h
    >>> 0.5 <= d < 0.5 + 1e-4
    True
    """
    pld, _ = dp_modules()
    h = float(value_discretization_interval)

    def rounded(s: int) -> tuple[dict, float]:
        a, _, loss, margin, inf_mass = _pair_terms(law.p, s)
        q = (loss + margin) / h
        idx = np.ceil(q + 4 * U * np.abs(q)).astype(np.int64)
        keys, inv = np.unique(idx, return_inverse=True)
        mass = np.bincount(inv, weights=a, minlength=keys.size)
        return dict(zip(keys.tolist(), mass.tolist())), (inf_mass + law.tail) * (1.0 + 8 * U)

    rem, inf_rem = rounded(int(shift))
    if symmetric:
        return pld.PrivacyLossDistribution.create_from_rounded_probability(rem, inf_rem, h, True)
    add, inf_add = rounded(-int(shift))
    return pld.PrivacyLossDistribution.create_from_rounded_probability(rem, inf_rem, h, True, add, inf_add,
                                                                       symmetric=False)


def _check_positive_int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) and not (
            isinstance(value, float) and value.is_integer()):
        raise SpecError(f"{what} must be a positive integer, got {value!r}")
    if int(value) < 1:
        raise SpecError(f"{what} must be a positive integer, got {value!r}")
    return int(value)


def _check_positive(value: Any, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{what} must be a positive number, got {value!r}") from None
    if isinstance(value, (bool, np.bool_)) or not (v > 0 and math.isfinite(v)):
        raise SpecError(f"{what} must be a positive number, got {value!r}")
    return v


def privacy_loss_distribution(mechanism, sensitivity=None, *, shift=None, value_discretization_interval: float = 1e-4,
                              tail_mass: float = 1e-15):
    r"""A pessimistic dp_accounting ``PrivacyLossDistribution`` of additive noise from ``mechanism``.

    Parameters
    ----------
    mechanism : optmech Mechanism (1-D)
        Laplace, Gaussian, Staircase, PiecewiseConstantDensity, or any 1-D lattice law
        (LatticePMF, DiscreteLaplace, Geometric, DiscreteStaircase, DiscreteGaussian, ...).
    sensitivity : number, optional
        Δ (default: the mechanism's).  Lattice laws: an integer; Staircase and
        PiecewiseConstantDensity: an integer multiple of the mechanism's own Δ.
    shift : int, optional
        Lattice laws only: the PLD of the single pair (P, P shifted by ``shift``) and its reverse,
        instead of the default that dominates every shift 0 < |s| <= Δ.
    value_discretization_interval : float
        h, dp_accounting's loss grid (losses are rounded up to multiples of h).
    tail_mass : float
        Lattice and cell laws: the mass left outside the materialised window (counted at L = +∞).

    The construction per family and its proofs are in the module docstring.

    >>> from optmech.mechanisms import DiscreteLaplace
    >>> pld = privacy_loss_distribution(DiscreteLaplace(epsilon=1, sensitivity=2))
    >>> float(pld.get_delta_for_epsilon(1.0)) < 1e-12             # pure 1-DP: δ(1) = 0 up to rounding
    True
    """
    pld, _ = dp_modules()
    h = _check_positive(value_discretization_interval, "value_discretization_interval")
    tau = _check_positive(tail_mass, "tail_mass")
    if getattr(mechanism, "dim", 1) != 1:
        raise SpecError(f"privacy loss distributions are built for 1-D mechanisms, got dim = {mechanism.dim}")
    name = getattr(mechanism, "name", "")
    if shift is not None and not getattr(mechanism, "lattice", False):
        raise SpecError("shift= is for lattice laws only")
    if getattr(mechanism, "lattice", False):
        D = _check_positive_int(mechanism.sensitivity if sensitivity is None else sensitivity, "sensitivity")
        p, _, tail = lattice_window(mechanism, tau)
        if shift is not None:
            s = int(shift) if isinstance(shift, (int, np.integer)) and not isinstance(shift, bool) else 0
            if s == 0:
                raise SpecError(f"shift must be a nonzero integer, got {shift!r}")
            return pair_pld(WindowLaw(p, tail, (s,)), s, h, symmetric=bool(mechanism.symmetric))
        shifts = tuple(range(1, D + 1)) if mechanism.symmetric else tuple(
            s for s in range(-D, D + 1) if s != 0)
        return connect_dots_pld(WindowLaw(p, tail, shifts), h)
    t = _check_positive(mechanism.sensitivity if sensitivity is None else sensitivity, "sensitivity")
    if name == "laplace":
        return pld.from_laplace_mechanism(parameter=float(mechanism.scale), sensitivity=t,
                                          value_discretization_interval=h)
    if name == "gaussian":
        return pld.from_gaussian_mechanism(standard_deviation=float(mechanism.sigma), sensitivity=t,
                                           value_discretization_interval=h)
    if name in ("staircase", "piecewise_constant_density"):
        m = t / float(mechanism.sensitivity)
        if abs(m - round(m)) > 1e-12 * m or round(m) < 1:
            raise SpecError(f"{type(mechanism).__name__}: the sensitivity must be an integer multiple of the "
                            f"mechanism's own ({mechanism.sensitivity!r}) so the cells align, got {t!r}")
        masses, per, tail = cell_window(mechanism, tau)
        s = int(round(m)) * per
        return connect_dots_pld(WindowLaw(masses, tail, (s,) if mechanism.symmetric else (s, -s)), h)
    raise SpecError(f"no privacy loss distribution for {type(mechanism).__name__}: supported are 1-D lattice laws, "
                    "laplace, gaussian, staircase and piecewise_constant_density")


def composed_delta(mechanism, sensitivity, compositions: int, epsilon: float, **kwargs) -> float:
    """δ of the ``compositions``-fold (adaptive) self-composition at total ε, from the pessimistic
    PLD (``kwargs`` go to :func:`privacy_loss_distribution`); dp_accounting's float arithmetic
    is not outward-rounded (module docstring).

    >>> from optmech.mechanisms import Laplace
    >>> composed_delta(Laplace(epsilon=1, sensitivity=1), None, 2, 2.0) < 1e-9     # 2 × 1-DP is 2-DP
    True
    """
    k = _check_positive_int(compositions, "compositions")
    eps = float(epsilon)
    if not (eps >= 0 and math.isfinite(eps)):
        raise SpecError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    one = privacy_loss_distribution(mechanism, sensitivity, **kwargs)
    many = one if k == 1 else one.self_compose(k)
    return float(min(1.0, max(0.0, float(many.get_delta_for_epsilon(eps)))))


def calibrate_for_compositions(make: Callable[[float], Any], lo: float, hi: float, compositions: int, epsilon: float,
                               delta: float, *, sensitivity=None, rel_tol: float = 1e-3, max_iter: int = 200,
                               **kwargs) -> tuple[float, Any, float]:
    """The smallest scale (within ``rel_tol``) in [lo, hi] whose k-fold composition meets (ε, δ).

    ``make(scale)`` builds the mechanism; larger scales are assumed more private (δ of the
    composition nonincreasing in the scale).  Geometric bisection keeps ``hi`` feasible:
    returns ``(scale, make(scale), achieved δ)`` with achieved δ <= ``delta``.

    >>> from optmech.mechanisms import Laplace
    >>> s, mech, d = calibrate_for_compositions(lambda b: Laplace(epsilon=1 / b, sensitivity=1), 0.5, 20, 4, 1.0, 1e-6)
    >>> d <= 1e-6 and 1 < s < 20
    True
    """
    lo, hi = _check_positive(lo, "lo"), _check_positive(hi, "hi")
    if not lo < hi:
        raise SpecError(f"need lo < hi, got lo = {lo!r}, hi = {hi!r}")
    target = float(delta)
    if not 0 <= target < 1:
        raise SpecError(f"delta must be in [0, 1), got {delta!r}")

    def d_of(scale: float) -> tuple[Any, float]:
        mech = make(scale)
        return mech, composed_delta(mech, sensitivity, compositions, epsilon, **kwargs)

    mech_hi, d_hi = d_of(hi)
    if d_hi > target:
        raise SpecError(f"even scale = {hi:g} gives delta = {d_hi:.3g} > {target:g} after {compositions} compositions "
                        "at this epsilon: raise hi")
    mech_lo, d_lo = d_of(lo)
    if d_lo <= target:
        return lo, mech_lo, d_lo
    for _ in range(max_iter):
        if hi <= lo * (1.0 + rel_tol):
            break
        mid = math.sqrt(lo * hi)
        mech_mid, d_mid = d_of(mid)
        if d_mid <= target:
            hi, mech_hi, d_hi = mid, mech_mid, d_mid
        else:
            lo = mid
    return hi, mech_hi, d_hi
