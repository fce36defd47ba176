r"""Noise laws the solver produces: a pmf on ℤ, or a piecewise-constant density, with a tail rule.

The solver returns a :class:`~optmech.certify.LatticeMechanism`: weights on a window of lattice
indices plus periodic geometric tails (period W = steps per Δ, ratio β per period).  This module
makes it a :class:`~optmech.mechanisms.base.Mechanism` with the common API, and owns its JSON
form (the ``mechanism`` field that ``optmech solve --save`` writes).

* :class:`LatticePMF` (``kind = "lattice_pmf"``): P(X = k) = weight(k)/total.
* :class:`PiecewiseConstantDensity` (``kind = "piecewise_constant_density"``): density
  weight(k)/total on cell k = [qΔ + edges[r], qΔ + edges[r+1]), k = qW + r.

Everything is exact series: the cdf sums the window and the tails' geometric series in closed
form; ``expected_cost`` returns the midpoint of a rigorous enclosure (outward-rounded cost bounds
and tail series, :meth:`expected_cost_bounds`).  ``sample`` picks window / left tail / right tail
by their masses, then an index by inverse cdf (window) or a geometric period count and an offset
(tails), then (cells) a uniform point in the cell.  ``privacy()`` audits the law (window plus
two tail periods each side, which covers every pair within Δ; :func:`optmech.certify.audit_mechanism`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optmech.certify import audit_mechanism
from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.problems.lattice import (LatticeMechanism, lattice_mechanism_from_dict,  # noqa: F401  (re-exported)
                                      lattice_mechanism_to_dict, lattice_total)

__all__ = ["Tabulated", "LatticePMF", "PiecewiseConstantDensity", "SavedND", "ND_KINDS", "lattice_mechanism_to_dict",
           "lattice_mechanism_from_dict"]

#: Largest number of uniform steps per period on which :meth:`Tabulated.privacy` audits a cell density.
MAX_AUDIT_STEPS = 1 << 12


def _uniform_cell_masses(law: LatticeMechanism) -> tuple[np.ndarray, int] | None:
    """A finitely supported density on cells as masses on the uniform grid of step Δ/M: ``(masses, M)``,
    M the smallest number of steps per period that puts every edge on the grid (within 1e-12·Δ,
    M <= MAX_AUDIT_STEPS); None for a law with tails or edges off every such grid."""
    from fractions import Fraction

    if law.beta > 0 and (np.any(law.left_gen > 0) or np.any(law.right_gen > 0)):
        return None
    D, W = float(law.grid.period), int(law.grid.W)
    fr = [Fraction(float(e) / D).limit_denominator(MAX_AUDIT_STEPS) for e in law.grid.edges]
    if any(abs(float(f) - float(e) / D) > 1e-12 for f, e in zip(fr, law.grid.edges)):
        return None
    M = math.lcm(*(f.denominator for f in fr))
    if M > MAX_AUDIT_STEPS:
        return None
    off = [int(f * M) for f in fr]  # edges in steps
    w = np.asarray(law.weights, dtype=float)
    k = np.arange(law.k_lo, law.k_lo + len(w))
    q, r = np.divmod(k, W)
    start = q * M + np.asarray(off)[r]
    stop = q * M + np.asarray(off)[r + 1]
    lo = int(start.min())
    masses = np.zeros(int(stop.max()) - lo)
    step_mass = w * (D / M) / float(law.total)
    for a, b, m in zip((start - lo).tolist(), (stop - lo).tolist(), step_mass.tolist()):
        masses[a:b] = m
    return masses, M


class Tabulated(Mechanism):
    """A solver-produced noise law with a tail rule (see the module docstring).

    Parameters
    ----------
    law : LatticeMechanism
    epsilon : float, optional
        The privacy target it was built for (informational; :meth:`privacy` audits the law).
    delta : float, optional
        For an (ε, δ)-DP solver output (finite support): :meth:`privacy` then audits the
        hockey-stick divergence at ε for every shift up to the sensitivity.

    The integer-domain optimum for ε = 1, Δ = 1, |x| is the geometric law [Geng13, Thm 2.12]:

    >>> import math, optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
    >>> mech = r.mechanism
    >>> isinstance(mech, Tabulated), round(float(mech.pmf(0)), 6) == round(math.tanh(0.5), 6)
    (True, True)
    >>> Tabulated.from_dict(mech.to_dict()) == mech                 # the --save JSON form round-trips
    True
    >>> round(mech.entropy(), 6) == round(optmech.Geometric(epsilon=1).entropy(), 6)
    True
    """

    symmetric = False

    def __init__(self, law: LatticeMechanism, epsilon: float | None = None, delta: float = 0.0) -> None:
        if (law.grid.kind == "integer") != self.lattice:
            raise SpecError(f"{type(self).__name__} needs a {'lattice' if self.lattice else 'cell'} law")
        self.law = law
        if not (law.total > 0 and math.isfinite(law.total)):
            law.total = lattice_total(law)
        if not law.total > 0:
            raise SpecError("the mechanism has no mass")
        self._epsilon = math.nan if epsilon is None else float(epsilon)
        self._delta = float(delta)
        self._sensitivity = int(law.grid.period) if self.lattice else float(law.grid.period)
        W = law.grid.W
        k = np.arange(law.k_lo, law.k_hi + 1)
        self._k = k
        self._mass = law.mass(k)
        wl, wr = law._edge_widths()
        f = law.beta / (1.0 - law.beta) if law.beta > 0 else 0.0
        self._left_offsets = law.left_gen * wl / law.total  # mass of offset r in one left tail period (m = 1 scale 1)
        self._right_offsets = law.right_gen * wr / law.total
        self._left_mass = f * math.fsum(self._left_offsets)
        self._right_mass = f * math.fsum(self._right_offsets)
        self._W = W
        self._privacy: Privacy | None = None

    @classmethod
    def from_law(cls, law: LatticeMechanism, epsilon: float | None = None, delta: float = 0.0) -> "Tabulated":
        target = LatticePMF if law.grid.kind == "integer" else PiecewiseConstantDensity
        return target(law, epsilon, delta)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"steps_per_period": self._W, "window": [int(self.law.k_lo), int(self.law.k_hi)], "beta": self.law.beta}

    def to_dict(self) -> dict[str, Any]:
        d = {"name": self.name, **lattice_mechanism_to_dict(self.law)}
        if math.isfinite(self._epsilon):
            d["epsilon"] = self._epsilon
        if self._delta > 0:
            d["delta"] = self._delta
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Tabulated":
        law = lattice_mechanism_from_dict(d)
        eps = d.get("epsilon")
        return cls.from_law(law, None if eps is None else float(eps), float(d.get("delta", 0.0)))

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.law.k_lo, len(self.law.weights), self.law.beta))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(window=[{self.law.k_lo}, {self.law.k_hi}], steps_per_period={self._W}, beta={self.law.beta:.6g})"

    def privacy(self) -> Privacy:
        """The guarantee the law has, re-audited from its masses (computed once, then cached).

        * Pure ε-DP with the audited ε (outward-rounded), for sensitivity Δ = one period, when that
          ε is finite (:func:`optmech.certify.audit_mechanism`: window plus two tail periods).
        * Otherwise, with a known ε (the target it was built for) or a δ > 0: (ε, δ')-DP with δ'
          the audited hockey-stick divergence at ε, rounded up.  On ℤ it is the exact audit of
          :func:`optmech.audit.delta_curve` (every shift 0 < |s| <= Δ, tails in closed form); for a
          density on cells whose edges lie on a uniform grid of step Δ/M (the (ε, δ) solver's
          cells), the sums over the masses of that grid for the shifts 1..M, which is the audit of
          every real shift |t| <= Δ (the divergence is linear in t between multiples of the step).
        * Pure with ε = inf (vacuous) only when neither applies.
        """
        if self._privacy is None:
            self._privacy = self._audited_privacy()
        return self._privacy

    def _audited_privacy(self) -> Privacy:
        target = self._epsilon if math.isfinite(self._epsilon) else 1.0
        a = audit_mechanism(self.law, target)
        pure = Privacy("pure", a.realised_epsilon, 0.0, self._sensitivity, "abs",
                       f"audited: log max ratio of masses/densities within the sensitivity ({a.method}, outward-rounded)")
        if math.isfinite(a.realised_epsilon) or not math.isfinite(self._epsilon):
            return pure
        eps, D = self._epsilon, self._sensitivity
        if self.lattice:
            from optmech.audit import delta_curve

            real = float(delta_curve(self.law, int(D), [eps])[0])
            how = (f"by an exact hockey-stick audit over shifts 1..{int(D)} (both signs): delta(epsilon) = "
                   "max_s sum_k [p(k) - e^epsilon p(k+s)]_+ over all of Z, tails in closed form, rounded up")
        else:
            cells = _uniform_cell_masses(self.law)
            if cells is None:
                return pure
            from optmech.audit import hockey_stick_array

            masses, M = cells
            shifts = np.array([[s] for s in range(-M, M + 1) if s != 0])
            real = float(hockey_stick_array(masses, shifts, eps).max())
            how = (f"by a hockey-stick audit of the cell masses on the grid of step sensitivity/{M} for the shifts "
                   f"1..{M} (both signs), rounded up: the divergence of a cell-constant density is linear in the "
                   "shift between multiples of the step, so this covers every real shift |t| <= sensitivity")
        return Privacy("approx", eps, real, D, "abs",
                       f"audited: ({eps:.17g}, {real:.6g})-DP {how}"
                       + (f"; the law was saved for delta = {self._delta:.6g}" if self._delta > 0 else ""))

    # -- exact sampler -------------------------------------------------------------------------
    def _exact_sampler(self):
        """Exact draws of weight(k)/Σ weight, Σ exact: the window's dyadic weights and the tails
        right_tail[r]·β^m, left_tail[r]·β^m with β read exactly (a rational), sampled by exact
        inversion and an exact geometric period count (:class:`optmech.exact.laws.Periodic1D`).
        ``privacy()`` re-audits that exact law (pure: the exact largest ratio within the
        sensitivity; (ε, δ): the hockey-stick sums of the exactly normalised masses, outward-rounded)."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import Periodic1D, Tail

        if not self.lattice:
            raise SpecError("a piecewise-constant density has no exact sampler: solve the problem on the integer "
                            "lattice with the sensitivity in steps of 2^-k (docs: guide/mechanisms.md, Exact samplers, continuous mechanisms)")
        law = self.law
        W = law.grid.W
        beta = Fraction(float(law.beta))
        tails = []
        if beta > 0:
            tails = [Tail(law.k_hi + 1, 1, [Fraction(float(g)) * beta for g in law.right_gen], beta),
                     Tail(law.k_lo - 1, -1, [Fraction(float(law.left_gen[W - 1 - s])) * beta for s in range(W)], beta)]
        sampler = Periodic1D(law.k_lo, [Fraction(float(w)) for w in law.weights], tails)
        return ExactSampler(sampler.sample, dim=1, mechanism=repr(self), privacy=self._exact_law_privacy(beta),
                            law="solver pmf: dyadic window weights and rational geometric tails, exact inversion")

    def _exact_law_privacy(self, beta) -> Privacy:
        from fractions import Fraction

        from optmech.exact import TIMING_NOTE
        from optmech.exact.audit import exp_lower, hockey_stick_upper, max_ratio, probability_brackets
        from optmech.exact.reals import log_upper

        law, D = self.law, int(self._sensitivity)
        W = law.grid.W
        what = ("exact sampler: the law weight(k)/sum of weights with the sum exact and the tail ratio beta = "
                f"{float(beta)!r} read as an exact rational")
        if self._delta > 0 and beta == 0:
            p_lo, p_hi = probability_brackets([Fraction(float(w)) for w in law.weights])
            e_lo = exp_lower(self._epsilon)
            worst = 0.0
            for s in range(1, D + 1):
                pad = np.zeros(s)
                # Σ_k max(p(k) − e^ε p(k ∓ s), 0) for the shifts +s and −s
                worst = max(worst,
                            hockey_stick_upper(np.concatenate([p_hi, pad]), np.concatenate([pad, p_lo]), e_lo),
                            hockey_stick_upper(np.concatenate([pad, p_hi]), np.concatenate([p_lo, pad]), e_lo))
            return Privacy("approx", self._epsilon, worst, self._sensitivity, "abs",
                           f"{what}; audited: hockey-stick divergence at epsilon for every shift 0 < |s| <= sensitivity, "
                           f"exact masses, outward-rounded; {TIMING_NOTE}")
        first = law.k_lo - 2 * W
        k = np.arange(first, law.k_hi + 2 * W + 1)
        right, left = law.k_hi - W + 1, law.k_lo + W - 1
        vals = []
        for kk in k.tolist():
            if law.k_lo <= kk <= law.k_hi:
                vals.append(Fraction(float(law.weights[kk - law.k_lo])))
            elif kk > law.k_hi:
                m, r = divmod(kk - right, W)
                vals.append(Fraction(float(law.right_gen[r])) * beta**m)
            else:
                m, r = divmod(left - kk, W)
                vals.append(Fraction(float(law.left_gen[W - 1 - r])) * beta**m)
        ratio = max_ratio(vals, D)
        eps = math.inf if ratio is None else log_upper(ratio)
        return Privacy("pure", eps, 0.0, self._sensitivity, "abs",
                       f"{what}; audited exactly: log of the largest mass ratio within the sensitivity over the window "
                       f"and two tail periods each side (the tails repeat), rounded up; {TIMING_NOTE}")

    # -- distribution ----------------------------------------------------------------------
    def _index_cdf(self, k: np.ndarray) -> np.ndarray:
        """P(index <= k) for integer indices k, tails in closed form."""
        law = self.law
        k = np.asarray(k, dtype=np.int64)
        out = np.empty(k.shape, dtype=float)
        cum = np.cumsum(self._mass)
        inside = (k >= law.k_lo) & (k <= law.k_hi)
        out[inside] = self._left_mass + cum[k[inside] - law.k_lo]
        out[k > law.k_hi] = 1.0 - self._right_tail_above(k[k > law.k_hi])
        left = k < law.k_lo
        out[left] = self._left_tail_upto(k[left])
        return np.clip(out, 0.0, 1.0)

    def _left_tail_upto(self, k: np.ndarray) -> np.ndarray:
        """Mass of left-tail indices <= k (k < k_lo)."""
        law, W, b = self.law, self._W, self.law.beta
        off = (law.k_lo + W - 1) - k  # >= W
        m, r = np.divmod(off, W)  # k = k_lo + (W-1-r) - m W with m >= 1
        j = W - 1 - r  # offset of k in its period
        # indices <= k: offsets 0..j in period m, and all offsets in periods m+1, m+2, ...
        pre = np.concatenate([[0.0], np.cumsum(self._left_offsets)])
        bm = b ** m.astype(float)
        return bm * pre[j + 1] + bm * b / (1.0 - b) * pre[-1]

    def _right_tail_above(self, k: np.ndarray) -> np.ndarray:
        """Mass of right-tail indices > k (k > k_hi)."""
        law, W, b = self.law, self._W, self.law.beta
        off = k - (law.k_hi - W + 1)
        m, r = np.divmod(off, W)
        suf = np.concatenate([np.cumsum(self._right_offsets[::-1])[::-1], [0.0]])
        bm = b ** m.astype(float)
        return bm * suf[r + 1] + bm * b / (1.0 - b) * suf[0]

    def _locate(self, x: np.ndarray) -> np.ndarray:
        """Index of the cell containing x (cells) or x itself (points)."""
        g = self.law.grid
        if self.lattice:
            return np.asarray(x, dtype=np.int64)
        q = np.floor(x / g.period)
        r = np.searchsorted(g.edges, x - q * g.period, side="right") - 1
        r = np.clip(r, 0, self._W - 1)
        return (q.astype(np.int64) * self._W + r).astype(np.int64)

    def _pmf(self, k):
        return self.law.mass(np.asarray(k, dtype=np.int64))

    def _log_weight(self, k: np.ndarray) -> np.ndarray:
        """ln weight(k) − ln total: the log density (log mass on ℤ), tails as ln gen + m ln β."""
        law, W = self.law, self._W
        k = np.asarray(k, dtype=np.int64)
        out = np.full(k.shape, -np.inf)
        with np.errstate(divide="ignore"):
            log_beta = math.log(law.beta) if law.beta > 0 else -math.inf
            inside = (k >= law.k_lo) & (k <= law.k_hi)
            out[inside] = np.log(law.weights[k[inside] - law.k_lo])
            right = k > law.k_hi
            if np.any(right) and law.beta > 0:
                m, r = np.divmod(k[right] - (law.k_hi - W + 1), W)
                out[right] = np.log(law.right_gen[r]) + m * log_beta
            left = k < law.k_lo
            if np.any(left) and law.beta > 0:
                m, r = np.divmod((law.k_lo + W - 1) - k[left], W)
                out[left] = np.log(law.left_gen[W - 1 - r]) + m * log_beta
        return out - math.log(law.total)

    def _logpmf(self, k):
        return self._on_lattice(k, self._log_weight)

    def _logpdf(self, x):
        return self._log_weight(self._locate(x))

    def support(self) -> tuple[float, float]:
        """Unbounded with geometric tails (β > 0); else the span of the window's positive masses."""
        law = self.law
        if law.beta > 0:
            return (-math.inf, math.inf)
        nz = np.flatnonzero(self._mass > 0)
        k_first, k_last = law.k_lo + int(nz[0]), law.k_lo + int(nz[-1])
        g = law.grid
        return (float(g.left(np.array([k_first]))[0]), float(g.right(np.array([k_last]))[0]))

    def _entropy(self):
        # window: −Σ μ_k ln d_k (d = μ on ℤ, μ/width on cells); each tail offset r contributes
        # Σ_{m>=1} μ_r β^{m-1} (−ln(d_r β^{m-1})) = μ_r [−ln d_r/(1−β) − ln β · β/(1−β)²],
        # μ_r, d_r the mass and density of the first tail period
        law, W = self.law, self._W
        mu = self._mass
        pos = mu > 0
        terms = [-mu[pos] * self._log_weight(self._k[pos])]
        b = law.beta
        if b > 0:
            for first in (np.arange(law.k_hi + 1, law.k_hi + W + 1), np.arange(law.k_lo - W, law.k_lo)):
                m1 = law.mass(first)
                ok = m1 > 0
                ld = self._log_weight(first[ok])
                terms.append(m1[ok] * (-ld / (1.0 - b) - math.log(b) * b / (1.0 - b) ** 2))
        return math.fsum(np.concatenate(terms))

    def _pdf(self, x):
        return self.law.density(self._locate(x))

    def sf(self, x):
        y = 1.0 - np.asarray(self.cdf(x))
        return y[()] if np.ndim(y) == 0 else y

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        if self.lattice:
            y = self._index_cdf(np.floor(x).astype(np.int64))
        else:
            k = self._locate(x)
            g = self.law.grid
            below = self._index_cdf(k - 1)
            frac = (x - g.left(k)) / g.width(k)
            y = below + np.clip(frac, 0.0, 1.0) * self.law.mass(k)
        return y[()] if y.ndim == 0 else y

    def _sample(self, n, rng):
        law, W, b = self.law, self._W, self.law.beta
        u = rng.random(n)
        k = np.empty(n, dtype=np.int64)
        lm, rm = self._left_mass, self._right_mass
        left = u < lm
        right = u >= 1.0 - rm
        mid = ~(left | right)
        cum = np.cumsum(self._mass)
        k[mid] = law.k_lo + np.minimum(np.searchsorted(cum, u[mid] - lm, side="right"), len(cum) - 1)
        for sel, offsets, sign in ((left, self._left_offsets, -1), (right, self._right_offsets, +1)):
            cnt = int(np.count_nonzero(sel))
            if cnt == 0:
                continue
            m = rng.geometric(1.0 - b, size=cnt)  # P(m) ∝ β^m, m >= 1
            c = np.cumsum(offsets)
            r = np.minimum(np.searchsorted(c, rng.random(cnt) * c[-1], side="right"), W - 1)
            if sign > 0:
                k[sel] = law.k_hi - W + 1 + r + m * W
            else:
                k[sel] = law.k_lo + r - m * W
        if self.lattice:
            return k
        g = law.grid
        return g.left(k) + rng.random(n) * g.width(k)

    # -- costs ---------------------------------------------------------------------------------
    def expected_cost_bounds(self, cost) -> tuple[float, float]:
        """Rigorous (lower, upper) bounds of E L(X): outward-rounded cell/point costs and tails."""
        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        law, W, g = self.law, self._W, self.law.grid
        k = self._k
        if self.lattice:
            lo_k, hi_k = cost.enclose(g.left(k), g.right(k))
        else:
            lo_k, hi_k = g.cell_mean_lower(cost, k), g.cost_upper(cost, k)
        rb, lb = np.arange(law.k_hi - W + 1, law.k_hi + 1), np.arange(law.k_lo, law.k_lo + W)
        parts_lo, parts_hi = [self._mass * lo_k], [self._mass * hi_k]
        if law.beta > 0:
            for base, direction, offs in ((rb, +1, self._right_offsets), (lb, -1, self._left_offsets)):
                if self.lattice:
                    t_lo = g.tail_sums(cost, base, direction, law.beta, bound="lower")
                else:
                    t_lo = self._tail_cell_means_lower(cost, base, direction)
                t_hi = g.tail_sums(cost, base, direction, law.beta, bound="upper")
                parts_lo.append(offs * t_lo)
                parts_hi.append(offs * t_hi)
        with np.errstate(all="ignore"):
            lo = math.fsum(np.concatenate(parts_lo))
            hi_parts = np.concatenate(parts_hi)
            hi = math.fsum(hi_parts) if np.all(np.isfinite(hi_parts)) else math.inf
        return lo * (1 - 1e-12), hi * (1 + 1e-12)

    def _tail_cell_means_lower(self, cost, base: np.ndarray, direction: int) -> np.ndarray:
        """Σ_{m>=1} β^m · (lower bound of the mean of L on cell base + direction·m·W), truncated
        (a valid lower bound: every term is nonnegative)."""
        from optmech.problems.lattice import MAX_TAIL_TERMS

        g, b, W = self.law.grid, self.law.beta, self._W
        periods = int(math.log(1e-19) / math.log(b)) + 16 if b > 0 else 0
        periods = max(1, min(periods, MAX_TAIL_TERMS // (10 * max(W, 1))))
        ms = np.arange(1, periods + 1)
        k = base[None, :] + direction * W * ms[:, None]
        vals = g.cell_mean_lower(cost, k.ravel()).reshape(k.shape)
        with np.errstate(all="ignore"):
            return np.nan_to_num((b ** ms.astype(float))[:, None] * vals, nan=0.0, posinf=np.finfo(float).max).sum(axis=0)

    def _expected_cost(self, cost):
        lo, hi = self.expected_cost_bounds(cost)
        return hi if not math.isfinite(hi) else 0.5 * (lo + hi)

    def mean(self) -> float:
        """E[X] (exact series; the law need not be symmetric)."""
        from optmech.costs import parse_cost

        pos = self.expected_cost(parse_cost("max(x, 0)"))
        neg = self.expected_cost(parse_cost("max(-x, 0)"))
        return pos - neg


class LatticePMF(Tabulated):
    """A pmf on ℤ with periodic geometric tails (the integer-domain solver output).

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.IntegerLattice()))
    >>> type(r.mechanism).__name__, r.mechanism.lattice, r.mechanism.support()
    ('LatticePMF', True, (-inf, inf))
    >>> q = r.mechanism.ppf(0.9)                         # smallest k with cdf(k) >= 0.9
    >>> bool(r.mechanism.cdf(q) >= 0.9 > r.mechanism.cdf(q - 1))
    True
    """

    name = "lattice_pmf"
    lattice = True


class PiecewiseConstantDensity(Tabulated):
    """A piecewise-constant density with periodic geometric tails (the continuous solver output).

    >>> import optmech
    >>> r = optmech.solve(optmech.Problem(privacy=optmech.PureDP(1), cost="abs", domain=optmech.Continuous(4),
    ...                                   target_gap=1e-3))
    >>> mech = r.mechanism
    >>> type(mech).__name__, mech.lattice, float(mech.cdf(1e9))
    ('PiecewiseConstantDensity', False, 1.0)
    >>> mech.privacy().epsilon <= 1 + 1e-9                 # audited ε-DP
    True
    """

    name = "piecewise_constant_density"
    lattice = False


#: ``kind`` values of the d-D solver mechanisms (``optmech.families.pure_nd``, ``optmech.families.approx``).
ND_KINDS = ("lattice_pmf_nd", "cell_pmf_nd", "l1_shell_density_nd")


class SavedND:
    """A d-D mechanism saved by ``optmech solve --dim d --save``: a candidate for conjecture mode.

    The file holds the mechanism (``mechanism``, one of :data:`ND_KINDS`), the problem it was
    solved for, its certified upper bound and the audit done when it was solved.  What it offers
    is exactly that record: ``privacy()`` is the saved audit's realised ε (re-checked for
    consistency: pure DP, masses nonnegative and summing to at most 1), or ``privacy`` where given
    (the audit of the loaded masses, :func:`optmech.mechanisms.files.saved_result_mechanism`), and
    ``expected_cost`` is the saved certified upper bound of its cost, for the cost it was solved for
    only.  It has no sampler; sample from a mechanism-library law instead.
    """

    def __init__(self, record: dict, path: str = "", *, privacy: Privacy | None = None) -> None:
        mech, prob, audit = record.get("mechanism"), record.get("problem") or {}, record.get("audit") or {}
        where = f" in {path}" if path else ""
        if not isinstance(mech, dict) or mech.get("kind") not in ND_KINDS:
            raise SpecError(f"no d-dimensional solver mechanism{where}")
        if prob.get("privacy") != "pure" or not audit.get("passed"):
            raise SpecError(f"the mechanism{where} is not an audited pure-DP solver output")
        vals = np.asarray(mech.get("mass", mech.get("density", [])), dtype=float)
        if vals.size == 0 or not np.all(np.isfinite(vals)) or np.any(vals < 0):
            raise SpecError(f"malformed mechanism{where}: masses must be finite and nonnegative")
        try:
            self.dim = int(mech["dim"])
            self.epsilon = float(audit["realised_epsilon"])
            self.sensitivity = float(mech["sensitivity"])
            self.norm = str(mech["norm"])
            self.upper_bound = float(record["upper_bound"])
            self.cost = str(prob["cost"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError(f"malformed mechanism{where}: {type(exc).__name__} {exc}") from None
        self.kind = mech["kind"]
        self.lattice = self.kind == "lattice_pmf_nd" or (self.kind == "l1_shell_density_nd" and not mech.get("continuous"))
        self.name = f"saved {self.kind}"
        self.record = record
        self._privacy = privacy

    def privacy(self) -> Privacy:
        if self._privacy is not None:
            return self._privacy
        return Privacy("pure", self.epsilon, 0.0, self.sensitivity, self.norm,
                       "the realised epsilon of the exact audit done when the mechanism was solved (saved record)")

    def expected_cost(self, cost) -> float:
        spec = getattr(cost, "spec", cost)
        if str(spec) != self.cost:
            raise SpecError(f"the saved mechanism's cost is recorded for the cost {self.cost!r} only, not {spec!r}")
        return self.upper_bound

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "dim": self.dim, "epsilon": self.epsilon,
                "sensitivity": self.sensitivity, "norm": self.norm, "cost": self.cost}
