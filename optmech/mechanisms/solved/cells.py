r"""The solvers' laws on ℝ^d constant on cubes: the pure d-D solver's cell density (``cell_pmf_nd``,
:class:`CellPMFND`) and the (ε, δ) ℝ^d solver's finite cube density (``cube_pmf_nd``,
:class:`CubePMFND`).

``cell_pmf_nd`` (:class:`CellPMFND`)
    Masses φ on the cells h(z + [−½, ½)^d) of a domain D of cell indices, extended outside D by the
    β-majorant rule for the cells' step sets (:mod:`optmech.mechanisms.solved.majorant`, which states
    the rule, ρ in closed form and the sampler); the density is P(z)/(Z h^d) on cell z.  The cell index
    is drawn as the lattice law's point, then a uniform point of the cell.

``cube_pmf_nd`` (:class:`CubePMFND`)
    Finitely many cubes C_z = h(z + [−½, ½)^d) with masses (every cube, or one per signed-permutation
    orbit), density mass(z)/(Z h^d) on C_z and 0 elsewhere; the class docstring states the fields,
    the exact pdf and sampler, the costs and the load-time audit ([GV13, (18)]; equation (1) of
    :mod:`optmech.problems.approx_cells_nd`).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Privacy
from optmech.mechanisms.base_nd import NDMechanism
from optmech.mechanisms.solved.common import (
    BLOCK_PAIRS,
    MAX_PAIRS,
    SolvedMechanism,
    cost_nd,
    cube_means_closed,
    gauss_legendre,
    load_audit_limit,
    read_number,
    read_width,
)
from optmech.mechanisms.solved.lattice_nd import MajorantND
from optmech.mechanisms.solved.points import canonical_points, orbit_sizes, random_images, read_listed_points


class CellPMFND(MajorantND):
    """The pure d-D solver's density on ℝ^d, constant on the cells h(z + [−½, ½)^d): density
    P(z)/(Z h^d) with P the β-majorant extension of the cell masses for the cells' step sets
    (:mod:`optmech.mechanisms.solved.majorant`).  Exact pdf and sampler for ℓ1 and ℓ∞ sensitivity; ℓ2 raises."""

    name = "cell_pmf_nd"
    lattice = False
    _cells = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._build(d, epsilon)

    def _pdf_nd(self, x):
        z = np.floor(np.asarray(x, dtype=float) / self.h + 0.5).astype(np.int64)
        return self.ext.values(z) / (self.ext.normaliser() * self.h**self.dim)

    def _sample(self, n, rng):
        z = self.ext.sample(n, rng)
        return self.h * (z + rng.random(z.shape) - 0.5)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pdf)")

    sf = cdf



# ------------------------------------------------------------------------------------------------
# cube_pmf_nd: the (ε, δ) ℝ^d solver's finite cube density
# ------------------------------------------------------------------------------------------------
#: Gauss–Legendre nodes per axis of :meth:`CubePMFND.expected_cost` for costs without closed-form cube means.
CUBE_QUADRATURE_NODES = 8



class CubePMFND(SolvedMechanism, NDMechanism):
    r"""The (ε, δ)-DP solver's noise on ℝ^d (``kind = "cube_pmf_nd"``, the ℝ^d family
    :mod:`optmech.families.approx_real_nd`): finitely many cubes C_z = h(z + [−½, ½)^d) with masses.

    Fields: ``dim``, ``norm`` (the sensitivity's, ``l1`` or ``l2``), ``sensitivity`` Δ,
    ``cell_width`` h (Δ/h must be an integer n), ``symmetry`` (``"none"``: ``representatives``
    lists every cube index z with positive mass; ``"signed permutations"``: it lists the sorted |z|
    of each orbit, and every cube of the orbit carries that mass), ``mass`` (per cube), and the
    solver's ``epsilon``, ``delta`` and optional ``realised_delta`` (its audit).  The law has density
    mass(z)/(Z h^d) on C_z and 0 off the listed cubes, Z = Σ over cubes of the masses (1 up to
    rounding for solver outputs).

    Exact pdf and sampler (a cube by its mass: an orbit by its total mass, then a uniform point of
    the orbit; then a uniform point of the cube); ``expected_cost`` exact for ``l1`` and ``l2sq``
    (closed-form cube means), numeric (tensor Gauss–Legendre, :data:`CUBE_QUADRATURE_NODES` per axis)
    for ``l2``, ``linf`` and, with symmetry "none", expressions.  ``privacy()`` repeats the solver's
    audit on the loaded masses (:meth:`audited_delta`): (ε, δ)-DP for shifts of norm <= Δ in ``norm``
    (equation (1) of :mod:`optmech.problems.approx_cells_nd`: the exact lattice audit at the corners
    ‖(|v| − 1)₊‖ <= n covers every real shift of a cube-constant density).
    """

    name = "cube_pmf_nd"
    lattice = False
    symmetric = False

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon, delta)
        read_listed_points(self, d)
        if self.group not in ("none", "signed_permutations"):
            raise SpecError("cube_pmf_nd lists every cube (symmetry 'none') or signed-permutation orbits")
        if self.norm not in ("l1", "l2"):
            raise SpecError(f"cube_pmf_nd: the sensitivity's norm is l1 or l2, got {self.norm!r}")
        self.h, self._sensitivity, self.cells_per_sensitivity = read_width(d, "cell_width")
        self.sizes = orbit_sizes(self.reps, self.group)
        self.weights = self.mass * self.sizes  # each orbit's total mass
        self.Z = math.fsum(self.weights)
        if not self.Z > 0:
            raise SpecError("the solver mechanism has no mass")
        rd = d.get("realised_delta")
        self.realised_delta = None if rd is None else read_number(d, "realised_delta")
        self._cum: np.ndarray | None = None

    # law -----------------------------------------------------------------------------------------
    def _pdf_nd(self, x):
        z = np.floor(np.asarray(x, dtype=float) / self.h + 0.5)
        big = np.any(np.abs(z) > 2.0**52, axis=-1)
        z = np.where(big[..., None], 0.0, z).astype(np.int64)
        idx = self.index.find(canonical_points(z, self.group))
        return np.where((idx >= 0) & ~big, self.mass[np.maximum(idx, 0)], 0.0) / (self.Z * self.h**self.dim)

    def _sample(self, n, rng):
        if self._cum is None:
            self._cum = np.cumsum(self.weights)
        i = np.minimum(np.searchsorted(self._cum, rng.random(n) * self._cum[-1], side="right"), len(self.reps) - 1)
        z = random_images(self.reps[i], self.group, rng)
        return self.h * (z + rng.random(z.shape) - 0.5)

    def support(self) -> tuple[float, float]:
        """The range of a coordinate: the listed cubes' extent."""
        r = float(np.abs(self.reps[self.mass > 0]).max())
        lo = float(self.reps[self.mass > 0].min()) if self.group == "none" else -r
        hi = float(self.reps[self.mass > 0].max()) if self.group == "none" else r
        return (self.h * (lo - 0.5), self.h * (hi + 0.5))

    def _entropy(self):
        """Differential entropy −Σ_z P_z ln(P_z/h^d), P_z the cube masses."""
        p = self.mass / self.Z
        keep = p > 0
        return -math.fsum(self.sizes[keep] * p[keep] * (np.log(p[keep]) - self.dim * math.log(self.h)))

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pdf)")

    sf = cdf

    # moments and costs ---------------------------------------------------------------------------
    def mean(self) -> np.ndarray:
        """E X per coordinate (exact: the cubes' centres h z weighted by their masses)."""
        if self.group != "none":
            return np.zeros(self.dim)
        return np.array([math.fsum(self.mass * self.h * self.reps[:, i]) / self.Z for i in range(self.dim)])

    def var(self) -> np.ndarray:
        """Per-coordinate variance (exact: E X_i² = Σ P_z h²(z_i² + 1/12), minus the mean squared)."""
        if self.group != "none":
            return np.full(self.dim, self.expected_cost("l2sq") / self.dim)
        m = self.mean()
        return np.array([math.fsum(self.mass * self.h**2 * (self.reps[:, i] ** 2 + 1.0 / 12.0)) / self.Z - m[i] ** 2
                         for i in range(self.dim)])

    def expected_cost(self, cost) -> float:
        """E L(X): exact cube means for ``l1`` and ``l2sq``; tensor Gauss–Legendre
        (:data:`CUBE_QUADRATURE_NODES` per axis, numeric) for ``l2``, ``linf`` and expressions
        (expressions need symmetry "none": they are not invariant under the orbits)."""
        c = cost_nd(cost, self.dim)
        if c.kind in ("l1", "l2sq"):
            return float(math.fsum(self.weights * cube_means_closed(c.kind, self.h, self.reps)) / self.Z)
        if c.kind == "expr" and self.group != "none":
            raise self._refuse(f"the expected cost {c.spec!r}", "an expression is not invariant under the listed orbits")
        m = CUBE_QUADRATURE_NODES
        if m**self.dim * len(self.reps) > MAX_PAIRS:
            raise self._refuse(f"the expected cost {c.spec!r}", f"{m}^{self.dim} quadrature nodes per cube is too many")
        t, w = gauss_legendre(m)
        grids = np.meshgrid(*([t - 0.5] * self.dim), indexing="ij")
        u = np.stack([g.ravel() for g in grids], axis=-1)
        wu = np.prod(np.stack(np.meshgrid(*([w] * self.dim), indexing="ij"), axis=-1).reshape(-1, self.dim), axis=1)
        step = max(1, BLOCK_PAIRS // len(u))
        means = np.empty(len(self.reps))
        for s in range(0, len(self.reps), step):
            z = self.reps[s:s + step].astype(float)
            vals = c.check_values(self.h * (z[:, None, :] + u[None, :, :]), "the cubes")
            means[s:s + step] = vals @ wu
        return float(math.fsum(self.weights * means) / self.Z)

    def box_masses(self) -> np.ndarray:
        """The masses of every cube z with ‖z‖∞ <= r (r the listed cubes' largest |z_i|), orbits expanded,
        as an array of shape (2r + 1,)^d indexed by z + r (0 off the listed cubes)."""
        import itertools

        r = int(np.abs(self.reps).max()) if len(self.reps) else 0
        box = np.zeros((2 * r + 1,) * self.dim)
        if self.group == "none":
            box[tuple((self.reps + r).T)] = self.mass
            return box
        for perm in itertools.permutations(range(self.dim)):
            for signs in itertools.product((-1, 1), repeat=self.dim):
                box[tuple((self.reps[:, list(perm)] * np.array(signs) + r).T)] = self.mass
        return box

    def audited_delta(self) -> tuple[float | None, str]:
        """(δ(ε) of the loaded masses, "") by the family's audit (:func:`optmech.audit.hockey_stick_array`
        at the corners :func:`optmech.problems.approx_cells_nd.audit_shifts`: outward-rounded, every real
        shift of norm <= Δ), computed once; (None, why) where it is not computed (ε unknown, or more
        cube × shift terms than :data:`~optmech.mechanisms.solved.LOAD_AUDIT_PAIRS`)."""
        cached = self.__dict__.get("_audited")
        if cached is None:
            from optmech.audit import hockey_stick_array
            from optmech.problems.approx_cells_nd import audit_shifts

            if math.isnan(self._epsilon):
                cached = (None, "epsilon unknown")
            else:
                r = int(np.abs(self.reps).max()) if len(self.reps) else 0
                shifts = audit_shifts(self.dim, self.cells_per_sensitivity, self.norm)
                terms = (2 * r + 1) ** self.dim * len(shifts)
                limit = load_audit_limit()
                if terms > limit:
                    cached = (None, f"{terms} cube x shift terms above the load-time audit limit of {limit}")
                else:
                    box = self.box_masses()
                    total = math.fsum(box.ravel())
                    pad = 0.0
                    if total > 1:  # the audit bounds the masses as given and their renormalisation to 1 when
                        # they sum to <= 1; here the law is box/total, within a relative 2^-53 per mass of the
                        # floats audited, and δ moves by at most (1 + e^ε) Σ|Δp| <= (1 + e^ε) 2^-53
                        box = box / total
                        pad = (1.0 + math.exp(self._epsilon)) * 2.0**-52
                    worst = float(hockey_stick_array(box, shifts, self._epsilon).max())
                    cached = (min(1.0, math.nextafter(worst + pad, math.inf)) if pad else worst, "")
            self.__dict__["_audited"] = cached
        return cached

    def privacy(self) -> Privacy:
        """(ε, δ)-DP for shifts of norm <= Δ in ``norm``: δ(ε) audited on the loaded masses
        (:meth:`audited_delta`, the solver's own audit: equation (1) of
        :mod:`optmech.problems.approx_cells_nd`, the exact lattice audit at the corners
        ‖(|v| − 1)₊‖ <= n, covers every real shift of a cube-constant density), at the dict's or the
        keywords' ε.  Where the audit does not run the recorded δ is stated (NaN where unknown), with a
        note saying it was not re-audited."""
        how = (f"hockey-stick sums of the cube masses at every lattice corner v with ||(|v| - 1)_+||_{self.norm[1]} <= "
               f"{self.cells_per_sensitivity} (outward rounding), which covers every real shift of {self.norm} norm <= "
               "the sensitivity for a cube-constant density (multilinear interpolation of the corners' divergences) "
               "[GV13, (18)]")
        delta, why = self.audited_delta()
        if delta is not None:
            note = f"{self.kind}: audited at load on the loaded masses: {how}: delta({self._epsilon:.17g}) = {delta:.17g}"
            if self.realised_delta is not None:
                note += f" (the solve recorded {self.realised_delta:.17g})"
            if not math.isnan(self._delta) and delta > self._delta:
                note += f"; above the recorded target delta {self._delta!r}: the masses do not meet it"
            return Privacy("approx", self._epsilon, delta, self.sensitivity, self.norm, note)
        note = f"{self.kind}: as recorded by the solve, not re-audited ({why}): the solver's {how}"
        recorded = self._delta
        if self.realised_delta is not None:
            note += f"; audited delta(epsilon) = {self.realised_delta:.17g}"
            recorded = self.realised_delta if math.isnan(recorded) else max(recorded, self.realised_delta)
        if math.isnan(self._epsilon) or math.isnan(recorded):
            note += "; epsilon/delta unknown: not recorded in the dict (pass epsilon= and delta=)"
        return Privacy("approx", self._epsilon, recorded, self.sensitivity, self.norm, note)
