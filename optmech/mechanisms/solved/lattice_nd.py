r"""The solvers' pmfs on ℤ^d (``kind = "lattice_pmf_nd"``, :class:`LatticePMFND`), and the shared base
of the pure d-D laws on points and cells (:class:`MajorantND`).

``lattice_pmf_nd`` with ``tail_factor == 0`` (:class:`FiniteLatticePMFND`)
    The (ε, δ)-DP solver's pmf on ℤ^d (``_mechanism_nd`` of the (ε, δ) family): finite support,
    P(x) = mass[i] / Σ mass at x = representatives[i], 0 elsewhere.  pmf, sampler (categorical
    over the listed points) and every cost are exact.

``lattice_pmf_nd`` (pure, :class:`MajorantLatticePMFND`)
    The pure d-D solver's pmf: masses φ on a domain D of ℤ^d and the β-majorant extension
    P(x) = max_{y ∈ D} φ(y) β^{ρ(x − y)} outside D, normalised; the rule, ρ in closed form and the
    sampler are stated in :mod:`optmech.mechanisms.solved.majorant`.

:meth:`LatticePMFND.from_dict` reads the kind and returns whichever of the two laws the dict holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.discrete_staircase_nd import sphere_sizes
from optmech.mechanisms.base_nd import NDMechanism
from optmech.mechanisms.solved.common import (
    MAX_PAIRS,
    SolvedMechanism,
    cost_nd,
    cube_means_closed,
    decaying_table,
    load_audit_limit,
    read_number,
    read_width,
    solver_dict,
)
from optmech.mechanisms.solved.majorant import (
    MajorantExactLaw,
    MajorantExactValues,
    MajorantExtension,
    audited_majorant_epsilon,
)
from optmech.mechanisms.solved.points import orbit_sizes, read_listed_points


class LatticePMFND(SolvedMechanism, NDMechanism):
    """A solver pmf on ℤ^d (``kind = "lattice_pmf_nd"``): constructing this class returns a
    :class:`FiniteLatticePMFND` (``tail_factor == 0``) or a :class:`MajorantLatticePMFND`."""

    name = "lattice_pmf_nd"
    lattice = True
    symmetric = False

    def __new__(cls, d: dict, **kwargs):
        if cls is LatticePMFND:
            finite = isinstance(d, dict) and read_number(d, "tail_factor") == 0.0
            cls = FiniteLatticePMFND if finite else MajorantLatticePMFND
        return super().__new__(cls)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
        """The law of a ``lattice_pmf_nd`` dict, from whichever of its classes this is called:
        :class:`FiniteLatticePMFND` where ``tail_factor == 0``, else :class:`MajorantLatticePMFND`."""
        return LatticePMFND(solver_dict(d, "lattice_pmf_nd"), epsilon=epsilon, delta=delta)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pmf)")

    sf = cdf


class FiniteLatticePMFND(LatticePMFND):
    """The (ε, δ)-DP solver's pmf on ℤ^d: P(x) = mass[i]/Σ mass at x = representatives[i] (symmetry
    "none"), 0 elsewhere (``_mechanism_nd`` of the (ε, δ) family).  Everything is exact."""

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon, delta)
        if read_number(d, "tail_factor") != 0.0:
            raise SpecError("FiniteLatticePMFND needs tail_factor == 0 (finite support)")
        read_listed_points(self, d)
        self._sensitivity = int(read_number(d, "sensitivity", integer=True, positive=True))
        if self.group != "none":
            raise SpecError("a finite lattice_pmf_nd must list every point (symmetry 'none')")
        total = math.fsum(self.mass)
        if not total > 0:
            raise SpecError("the solver mechanism has no mass")
        self.p = self.mass / total
        self._cum: np.ndarray | None = None

    def _pmf_nd(self, k):
        idx = self.index.find(np.asarray(k).astype(np.int64))
        return np.where(idx >= 0, self.p[np.maximum(idx, 0)], 0.0)

    def _sample(self, n, rng):
        if self._cum is None:
            self._cum = np.cumsum(self.p)
        i = np.minimum(np.searchsorted(self._cum, rng.random(n) * self._cum[-1], side="right"), len(self.p) - 1)
        return self.reps[i].copy()

    def expected_cost(self, cost) -> float:
        """Σ_x P(x) L(x) over the listed points (exact up to rounding; any d-D cost)."""
        vals = cost_nd(cost, self.dim).check_values(self.reps.astype(float), "the support")
        return float(math.fsum(self.p * vals))

    def mean(self) -> np.ndarray:
        """E X per coordinate (exact sum)."""
        return np.array([math.fsum(self.p * self.reps[:, i]) for i in range(self.dim)])

    def support(self) -> tuple[float, float]:
        """The range of the coordinates of the points with positive mass."""
        pts = self.reps[self.p > 0]
        return (float(pts.min()), float(pts.max()))

    def _entropy(self):
        p = self.p[self.p > 0]
        return -math.fsum(p * np.log(p))

    def var(self) -> np.ndarray:
        m = self.mean()
        return np.array([math.fsum(self.p * (self.reps[:, i] - m[i]) ** 2) for i in range(self.dim)])

    def _exact_sampler(self):
        """Exact draws of mass/Σ mass over the listed points (Σ exact; :class:`optmech.exact.laws.Finite`);
        ``privacy()`` re-audits that law: the hockey-stick sums at ε for every integer shift in the
        sensitivity ball of ``norm``, exact masses, outward-rounded."""
        from fractions import Fraction

        from optmech.exact import TIMING_NOTE, ExactSampler
        from optmech.exact.audit import exp_lower, hockey_stick_upper, probability_brackets
        from optmech.exact.laws import Finite

        if math.isnan(self._epsilon):
            raise SpecError("the exact sampler's audit needs epsilon: pass epsilon= (the dict does not record it)")
        law = Finite(self.reps, [Fraction(float(m)) for m in self.mass])
        p_lo, p_hi = probability_brackets([Fraction(float(m)) for m in self.mass])
        e_lo = exp_lower(self._epsilon)
        D = int(self.sensitivity)
        grid = np.stack(np.meshgrid(*[np.arange(-D, D + 1)] * self.dim, indexing="ij"), axis=-1).reshape(-1, self.dim)
        size = {"l1": np.abs(grid).sum(axis=1), "linf": np.abs(grid).max(axis=1),
                "l2": np.sqrt((grid.astype(float) ** 2).sum(axis=1))}.get(self.norm)
        if size is None:
            raise SpecError(f"no audit for the norm {self.norm!r}")
        shifts = grid[(size <= D) & (np.abs(grid).sum(axis=1) > 0)]
        worst = 0.0
        for s in shifts:
            j = self.index.find(self.reps - s)
            q = np.where(j >= 0, p_lo[np.maximum(j, 0)], 0.0)
            worst = max(worst, hockey_stick_upper(p_hi, q, e_lo))
        note = (f"exact sampler: the law mass/sum of masses over the listed points, the sum exact; audited: hockey-stick "
                f"divergence at epsilon for every integer shift with ||s||_{self.norm[1:]} <= sensitivity, exact masses, "
                f"outward-rounded; {TIMING_NOTE}")
        return ExactSampler(law.sample, dim=self.dim, mechanism=repr(self),
                            privacy=Privacy("approx", self._epsilon, worst, self.sensitivity, self.norm, note),
                            law="solver pmf on finitely many points, exact inversion")

    def privacy(self) -> Privacy:
        """(ε, δ')-DP for sensitivity Δ in ``norm``, δ' re-audited from the masses at the known ε (the
        exact sampler's audit: hockey-stick sums of the exact masses for every integer shift of the
        ball, outward-rounded); the recorded (ε, δ) with a note where ε is unknown."""
        if not math.isnan(self._epsilon):
            worst = self.exact_sampler().privacy().delta
            return Privacy("approx", self._epsilon, worst, self.sensitivity, self.norm,
                           f"audited: ({self._epsilon:.17g}, {worst:.6g})-DP by the hockey-stick divergence at epsilon "
                           f"of the exact masses for every integer shift with ||s||_{self.norm[1:]} <= sensitivity, "
                           "rounded up [GV13, (18)]")
        note = ("(epsilon, delta)-DP for l1 shifts up to the sensitivity, audited by the solver with outward rounding "
                "(hockey-stick condition [GV13, (18)])")
        if math.isnan(self._epsilon) or math.isnan(self._delta):
            note += "; epsilon/delta unknown: not recorded in the dict (pass epsilon= and delta=)"
        return Privacy("approx", self._epsilon, self._delta, self.sensitivity, self.norm, note)


class MajorantND(SolvedMechanism, NDMechanism):
    """Shared code of the pure d-D outputs on points (:class:`MajorantLatticePMFND`) and cells
    (:class:`~optmech.mechanisms.solved.cells.CellPMFND`): the listed masses with their β-majorant
    extension (:class:`~optmech.mechanisms.solved.majorant.MajorantExtension`), its audited privacy
    and its costs."""

    symmetric = False
    _cells = False

    def _build(self, d: dict, epsilon: float | None) -> None:
        self._keep(d, epsilon)
        read_listed_points(self, d)
        A, q = read_number(d, "tail_factor"), read_number(d, "tail_rate")
        if not (A > 0 and 0 < q < 1):
            raise SpecError("a pure d-D solver mechanism needs tail_factor > 0 and 0 < tail_rate < 1")
        if self._cells:
            self.h, self._sensitivity, n = read_width(d, "cell_width")
        else:
            self._sensitivity = int(read_number(d, "sensitivity", integer=True, positive=True))
            n = self._sensitivity
        from optmech.problems.pure_nd import NORMS, layer_steps, reach

        if self.norm not in NORMS:
            raise SpecError(f"unknown norm {self.norm!r} (known: {', '.join(NORMS)})")
        beta = d.get("beta")
        if beta is None:  # the solver's q = β^{1/M}, M = the largest ℓ1 length of a move
            beta = q ** reach(layer_steps(self.norm, self.dim, int(n), upper_cells=self._cells))
        beta = float(beta)
        if not 0 < beta < 1:
            raise SpecError(f"beta must be in (0, 1), got {beta!r}")
        self.ext = MajorantExtension(self.reps, self.mass, self.group, norm=self.norm, n=int(n), cells=self._cells,
                                     beta=beta, index=self.index, kind=self.kind)

    @property
    def beta(self) -> float:
        return self.ext.beta

    def normaliser(self) -> float:
        """Z = Σ over ℤ^d of the extended masses (1 on the listed domain plus the extension)."""
        return self.ext.normaliser()

    def privacy(self) -> Privacy:
        """Pure ε-DP for sensitivity Δ in ``norm``, audited on the loaded masses (:meth:`audited_ratio`):
        ε = max(−ln β, ln of the largest exact ratio of the law at two points one move apart), rounded
        up; every shift of the sensitivity ball (on cells: every real shift) is one move, and pairs
        outside the listed domain are within 1/β by construction.  Where the audit does not run (ℓ2
        sensitivity: the extension has no closed form; more than
        :data:`~optmech.mechanisms.solved.LOAD_AUDIT_PAIRS` pairs) the solver's recorded target is stated (−ln β where none is recorded), with a note saying so.
        Raises :class:`SpecError` where the listed masses are no β-majorant (the law is undefined)."""
        ratio, why = self.audited_ratio()
        target = None if math.isnan(self._epsilon) else self._epsilon
        where = "cells" if self._cells else "points"
        if ratio is None:
            if target is None:
                eps = -math.log(self.beta)
                note = ("-ln beta: the beta-majorant extension's rate (the listed masses meet it up to float rounding; "
                        "audit on the domain: log ratio <= %.17g); not re-audited exactly (%s)" % (self.ext.audit()[0], why))
            else:
                eps = target
                note = (f"as recorded by the solve, not re-audited ({why}): the solver's audited target, beta-majorant "
                        "extension with beta = e^(-epsilon + margin)")
            return Privacy("pure", eps, 0.0, self.sensitivity, self.norm, f"{self.kind}: {note}")
        shift = ("every real shift of" if self._cells else "every shift of") + f" {self.norm} norm <= the sensitivity"
        eps, note = audited_majorant_epsilon(
            ratio, self.beta, target, "masses",
            lambda shown: f"{self.kind}: audited at load, exactly on the loaded masses (the floats read exactly): the "
                          f"largest ratio of the law at two {where} one move apart ({shift} is one move) inside the "
                          f"listed domain and between it and the beta-majorant extension, both ways, is {shown}; pairs "
                          "outside the domain are within 1/beta by construction (rho is subadditive)")
        return Privacy("pure", eps, 0.0, self.sensitivity, self.norm, note)

    def audited_ratio(self) -> tuple[Any, str]:
        """(the largest exact ratio P(x')/P(x) over one-move pairs touching the listed domain, "") by
        :meth:`MajorantExactValues.audit`, computed once; (None, why) where it is not computed: ℓ2
        sensitivity, or more pairs than :data:`~optmech.mechanisms.solved.LOAD_AUDIT_PAIRS`."""
        cached = self.__dict__.get("_audited")
        if cached is None:
            if not self.ext.closed:
                cached = (None, "the l2 extension beyond the listed domain has no closed form")
            else:
                law = self.__dict__.get("_exact_law") or MajorantExactValues(self.ext)
                pairs = law.audit_pairs()
                limit = load_audit_limit()
                if pairs > limit:
                    cached = (None, f"{pairs} point pairs above the load-time audit limit of {limit}")
                else:
                    cached = (law.audit(), "")
            self.__dict__["_audited"] = cached
        return cached

    def mean(self) -> np.ndarray:
        """0 under a symmetry group (P(x) = P(−x) coordinatewise); raises for symmetry "none"."""
        if self.group == "none":
            raise self._refuse("the mean", "only the symmetric outputs (coordinate signs, signed permutations) give it")
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        if self.group != "signed_permutations":
            raise self._refuse("the variance", "only signed-permutation symmetric outputs give it (E||X||_2^2 / d)")
        return np.full(self.dim, self.expected_cost("l2sq") / self.dim)

    # costs --------------------------------------------------------------------------------------
    def _cell_costs(self, c, pts: np.ndarray) -> np.ndarray:
        """Cost of each point (lattice) or mean cost over each cell (cells: l1 and l2sq only)."""
        if not self._cells:
            return np.asarray(c(pts.astype(float)), dtype=float)
        if c.kind in ("l1", "l2sq"):
            return cube_means_closed(c.kind, self.h, pts)
        raise self._refuse(f"the expected cost {c.spec!r}", "cells have closed-form means for l1 and l2sq only; use the "
                           "solve's certified upper bound")

    def _orbit_cost_sums(self, c, pts: np.ndarray) -> np.ndarray:
        """Σ of the (cell-mean) cost over the orbit of each canonical point."""
        size = orbit_sizes(pts, self.group)
        if self.group == "none" or c.kind != "expr":
            return size * self._cell_costs(c, pts)
        import itertools

        d = self.dim
        perms = list(itertools.permutations(range(d))) if self.group == "signed_permutations" else [tuple(range(d))]
        signs = np.array(list(itertools.product((-1, 1), repeat=d)))
        if len(perms) * len(signs) * len(pts) > MAX_PAIRS:
            raise self._refuse(f"the expected cost {c.spec!r}", "the expression is not symmetric by construction and the "
                               "orbits are too large to expand")
        acc = np.zeros(len(pts))
        for p in perms:
            for s in signs:
                acc += self._cell_costs(c, pts[:, list(p)] * s)
        return acc * size / (len(perms) * len(signs))  # each orbit point is hit |G|/size times

    def expected_cost(self, cost) -> float:
        """E L(X): exact sum over the listed domain plus the extension summed until its envelope
        remainder, priced with the cost's growth bound, is below 1e-12 of the value (raises where
        the growth is unproven).  Cells: named costs l1 and l2sq (exact cell means)."""
        self.ext.require_closed("the expected cost")
        c = cost_nd(cost, self.dim)
        g = c.growth()
        if g is None:
            raise self._refuse(f"the expected cost {c.spec!r}", "its growth is unproven; use the certified upper bound")
        C, P, r = g
        ext = self.ext
        lq = -math.log(ext.q)
        scale = self.h if self._cells else 1.0
        shift = self.dim / 2.0 if self._cells else 0.0
        if r * scale >= lq:
            raise self._refuse(f"the expected cost {c.spec!r}", "the cost grows as fast as the tail decays")
        inside = math.fsum(self.mass * self._orbit_cost_sums(c, self.reps))
        pts, _, P_out = ext.outside_table()
        out = math.fsum(P_out * self._orbit_cost_sums(c, pts)) if len(pts) else 0.0
        K = int(np.abs(pts).sum(axis=1).max()) if len(pts) else int(np.abs(self.reps).sum(axis=1).max())
        A = ext.envelope()
        ks, rem = decaying_table(K + 1, lambda k: A * sphere_sizes(k, self.dim) * np.exp(-lq * k) * C
                                  * (1.0 + scale * (k + shift)) ** P * np.exp(r * scale * (k + shift)), 1e-6)
        value = (inside + out) / ext.normaliser()
        bound = math.fsum(rem) * (1 + 2e-6) / ext.normaliser()
        if bound > 1e-12 * max(abs(value), 1e-300):
            raise self._refuse(f"the expected cost {c.spec!r}", f"the tail beyond the summed region may add {bound:.3g}")
        return float(value)


class MajorantLatticePMFND(MajorantND, LatticePMFND):
    """The pure d-D solver's pmf on ℤ^d: listed masses on the domain, β-majorant extension outside
    (:mod:`optmech.mechanisms.solved.majorant`).  Exact pmf and sampler for ℓ1 and ℓ∞ sensitivity; ℓ2 raises."""

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._build(d, epsilon)

    def _pmf_nd(self, k):
        k = np.asarray(k).astype(np.int64)
        return self.ext.values(k) / self.ext.normaliser()

    def _sample(self, n, rng):
        return self.ext.sample(n, rng)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_exact_law", None)  # a cache, rebuilt on demand
        return state

    def exact_law(self) -> MajorantExactLaw:
        """The law in exact rationals (:class:`MajorantExactLaw`), built once; ℓ2 raises."""
        law = self.__dict__.get("_exact_law")
        if law is None:
            law = self.__dict__["_exact_law"] = MajorantExactLaw(self.ext)
        return law

    def _exact_sampler(self):
        """Exact draws of the law φ on the orbits of D and the β-majorant extension outside
        (:class:`MajorantExactLaw`); ``privacy()`` is re-audited on that exact law
        (:meth:`MajorantExactLaw.audit`): ε = max(−ln β, ln of the largest exact one-move ratio), rounded up."""
        from optmech.exact import TIMING_NOTE, ExactSampler
        from optmech.exact.reals import log_upper

        law = self.exact_law()
        worst = law.audit()
        rate = 1 / law.beta
        eps = math.inf if worst == math.inf else log_upper(max(worst, rate))
        shown = "inf" if worst == math.inf else f"{float(worst):.17g}"
        note = (f"{self.kind} exact sampler: the law phi on the listed orbits and the beta-majorant extension "
                "max_y phi(y) beta^rho(x - y) outside them, in exact rationals (the floats read exactly), normalised "
                "exactly; audited exactly on that law: the largest ratio over one-move pairs (every move of the "
                f"sensitivity ball) inside the domain and between the domain and the extension, both ways, is {shown}; "
                "pairs outside the domain are within 1/beta by construction (rho is subadditive); epsilon = "
                f"max(-ln beta, ln of that ratio), rounded up; {TIMING_NOTE}")
        return ExactSampler(law.sample, dim=self.dim, mechanism=repr(self),
                            privacy=Privacy("pure", eps, 0.0, self.sensitivity, self.norm, note),
                            law="pure d-D solver pmf: orbits and near shells by exact inversion, far shells by exact "
                                "rejection from a rational geometric envelope, uniform orbit images")
