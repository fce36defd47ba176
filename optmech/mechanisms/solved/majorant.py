r"""The β-majorant extension behind the pure d-D solver's laws on points and cells
(:class:`~optmech.mechanisms.solved.lattice_nd.MajorantLatticePMFND`,
:class:`~optmech.mechanisms.solved.cells.CellPMFND`): in floats (:class:`MajorantExtension`), in exact
rationals with the exact one-move audit (:class:`MajorantExactValues`) and the exact sampler
(:class:`MajorantExactLaw`), and the ε that audit proves (:func:`audited_majorant_epsilon`, also used by
the ℓ1-shell law).

``lattice_pmf_nd`` (pure, :class:`MajorantLatticePMFND`) and ``cell_pmf_nd`` (:class:`CellPMFND`)
    The pure d-D solver's mechanism (``_mechanism_nd`` of the pure d-D family; its module docstring
    and ``upper_from_lp`` state the rule): masses φ on a domain D of ℤ^d (points, or cell indices z
    of the cells h(z + [−½, ½)^d)), listed per orbit representative under the symmetry group
    ("none", "coordinate signs": representative = |x|, "signed permutations": sorted |x|), form a
    β-majorant for the layers' step sets (:func:`optmech.problems.pure_nd.layer_steps`).  The law
    is φ on D and, outside D, the β-majorant extension

    .. math:: P(x) = \max_{y \in D} \varphi(y)\, \beta^{\rho(x - y)},

    ρ(v) the least number of moves summing to v, a move being one step of each layer, normalised
    by Z = Σ_D φ + Σ_{x∉D} P(x) (solver outputs have Σ_D φ = 1 and Z − 1 below the solver's tail
    bound; Z sums the extension until its envelope remainder is below 1e-17).  ρ in closed form:

    * points, ℓ1 sensitivity n: a move is any v with ‖v‖₁ <= n, ρ = ⌈‖v‖₁/n⌉;
    * points or cells, ℓ∞ sensitivity n: ‖v‖∞ <= n, ρ = ⌈‖v‖∞/n⌉;
    * cells, ℓ1 with n cells per Δ: n − 1 layers of unit ℓ1 steps and one of {−1, 0, 1}^d, so m
      moves reach v iff Σ_i max(|v_i| − m, 0) <= m(n − 1) (the {−1,0,1}^d layers absorb up to m
      per coordinate, the unit steps the rest); ρ is the least such m (found by bisection);
    * ℓ2: the step set is the lattice ℓ2 ball (or its cell-connected version) and ρ has no
      closed form: pmf, pdf, sampling and costs of the ℓ2 outputs raise :class:`SpecError`.

    The max may be taken over the orbit representatives in D's boundary layer (points one move
    from the complement), because φ is audited (lazily, on first use) to be a β-majorant for
    one-move pairs inside D: any optimal path leaves D through that layer.  The sampler is a
    rejection sampler from the envelope "φ on D, A q^{‖x‖₁} outside" with q = β^{1/M} (M the
    largest ℓ1 length of a move) and A = max_y φ(y) q^{−‖y‖₁}: it proposes an orbit of D by its
    mass and a uniform point of it (always accepted), or a radius k outside with weight
    #{‖x‖₁ = k, x ∉ D}·A q^k and a uniform point of that set, accepted with probability
    P(x)/(A q^{‖x‖₁}) (rejected proposals restart).  The accepted draws have the law P/Z exactly
    (the tail table stops where its remaining envelope mass is below 1e-30, below what 53-bit
    uniforms resolve).  Cells: the cell index is drawn so, then a uniform point of the cell.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.discrete_staircase_nd import sphere_sizes
from optmech.mechanisms.solved.common import BLOCK_PAIRS, MAJORANT_SLACK, MAX_PAIRS, TAIL_TOL, decaying_table
from optmech.mechanisms.solved.points import (
    PointIndex,
    canonical_points,
    l1_ball_orbits,
    l1_shell_orbits,
    orbit_sizes,
    orbit_sizes_exact,
    random_images,
    uniform_lattice_l1_sphere,
)


class MajorantExtension:
    """The β-majorant extension of masses φ on a domain D ⊂ ℤ^d (module docstring).

    Holds canonical representatives with their masses; everything expensive (the audit, the
    boundary layer, the normaliser, the sampling tables) is computed on first use.
    """

    def __init__(self, reps: np.ndarray, mass: np.ndarray, group: str, *, norm: str, n: int, cells: bool,
                 beta: float, index: PointIndex, kind: str) -> None:
        from optmech.problems.pure_nd import layer_steps, reach

        self.reps, self.mass, self.group, self.norm, self.n, self.cells = reps, mass, group, norm, n, cells
        self.kind = kind
        self.d = reps.shape[1]
        self.index = index
        self.size = orbit_sizes(reps, group)
        self.layers = layer_steps(norm, self.d, n, upper_cells=cells)
        self.M = reach(self.layers)
        self.beta = beta
        self.q = beta ** (1.0 / self.M)
        self.closed = norm in ("l1", "linf")
        self._audit: tuple[float, np.ndarray] | None = None
        self._Z: float | None = None
        self._outside: tuple | None = None
        self._table: tuple | None = None

    # -- moves ---------------------------------------------------------------------------------
    def moves(self, a: np.ndarray) -> np.ndarray:
        """ρ for displacements with absolute values ``a`` (…, d), int64."""
        n = self.n
        if self.norm == "linf":
            return -(-a.max(axis=-1) // n)
        if not self.cells:
            return -(-a.sum(axis=-1) // n)
        lo = np.zeros(a.shape[:-1], dtype=np.int64)  # least m with Σ max(a_i − m, 0) <= m(n − 1)
        hi = a.max(axis=-1)
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            ok = np.maximum(a - mid[..., None], 0).sum(axis=-1) <= mid * (n - 1)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid + 1)
        return lo

    def move_set(self) -> np.ndarray:
        """Every displacement of one move (the Minkowski sum of the layers)."""
        acc = np.zeros((1, self.d), dtype=np.int64)
        for s in self.layers:
            acc = np.unique((acc[:, None, :] + s[None, :, :]).reshape(-1, self.d), axis=0)
        return acc

    def locate(self, pts: np.ndarray) -> np.ndarray:
        """Representative index of integer points (−1 outside D)."""
        return self.index.find(canonical_points(pts, self.group))

    # -- audit ---------------------------------------------------------------------------------
    def audit(self) -> tuple[float, np.ndarray]:
        """(largest log ratio φ(y)/φ(x) over one-move pairs inside D, boundary mask of the reps)."""
        if self._audit is None:
            V = self.move_set()
            worst = 0.0
            boundary = np.zeros(len(self.reps), dtype=bool)
            step = max(1, BLOCK_PAIRS // len(V))
            for s in range(0, len(self.reps), step):
                r = self.reps[s:s + step]
                j = self.locate(r[:, None, :] + V[None, :, :])
                boundary[s:s + step] = np.any(j < 0, axis=1)
                nb = np.where(j >= 0, self.mass[np.maximum(j, 0)], 0.0)
                here = self.mass[s:s + step, None]
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = np.where(nb > 0, nb / here, 0.0)
                if ratio.size:
                    worst = max(worst, float(ratio.max()))
            log_worst = math.log(worst) if worst > 0 else 0.0
            if log_worst > -math.log(self.beta) * (1 + MAJORANT_SLACK) + MAJORANT_SLACK:
                raise SpecError(f"the {self.kind} masses are not a beta-majorant on their domain (log ratio {log_worst:.6g} "
                                f"> -ln beta = {-math.log(self.beta):.6g} for a one-move pair): the extension rule does "
                                "not apply")
            self._audit = (log_worst, boundary)
        return self._audit

    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        _, boundary = self.audit()
        keep = boundary & (self.mass > 0)
        return self.reps[keep], self.mass[keep]

    # -- the extension ---------------------------------------------------------------------------
    def require_closed(self, what: str) -> None:
        if not self.closed:
            raise SpecError(f"{what} of the l2 {self.kind} extension is not supported: the number of moves between "
                            "two points (steps in the lattice l2 ball) has no closed form, so the law beyond the listed "
                            "domain cannot be evaluated exactly")

    def outside(self, pts: np.ndarray) -> np.ndarray:
        """P(x) = max_y φ(y) β^{ρ(x − y)} for integer points outside D (shape (Q, d))."""
        cand, cm = self._candidates()
        pts = canonical_points(np.asarray(pts, dtype=np.int64), self.group)
        out = np.zeros(len(pts))
        if len(cand) == 0 or len(pts) == 0:
            return out
        lb = math.log(self.beta)
        lm = np.log(cm)
        step = max(1, BLOCK_PAIRS // len(cand))
        for s in range(0, len(pts), step):
            a = np.abs(pts[s:s + step, None, :] - cand[None, :, :])
            out[s:s + step] = np.exp((lm[None, :] + lb * self.moves(a)).max(axis=1))
        return out

    def values(self, pts: np.ndarray) -> np.ndarray:
        """Unnormalised P at integer points (…, d): φ on D, the extension outside."""
        pts = np.asarray(pts, dtype=np.int64)
        shape = pts.shape[:-1]
        flat = pts.reshape(-1, self.d)
        idx = self.locate(flat)
        out = np.where(idx >= 0, self.mass[np.maximum(idx, 0)], 0.0)
        miss = idx < 0
        if np.any(miss):
            self.require_closed("the pmf")
            out[miss] = self.outside(flat[miss])
        return out.reshape(shape)

    def envelope(self) -> float:
        """A with P(x) <= A q^{‖x‖₁} outside D (slack 1e-9 for rounding)."""
        cand, cm = self._candidates()
        if len(cand) == 0:
            return 0.0
        return float(np.max(cm * np.exp(-np.log(self.q) * np.abs(cand).sum(axis=1)))) * (1 + 1e-9)

    def _domain_counts(self) -> np.ndarray:
        return np.bincount(np.abs(self.reps).sum(axis=1), weights=self.size)

    def _outside_counts(self, k: np.ndarray) -> np.ndarray:
        cnt = self._domain_counts()
        inside = np.where(k < len(cnt), cnt[np.minimum(k, len(cnt) - 1)], 0.0)
        return np.maximum(sphere_sizes(k, self.d) - inside, 0.0)

    def _tail_table(self, tol: float) -> tuple[np.ndarray, np.ndarray]:
        """(k, A·q^k·#{‖x‖₁ = k, x ∉ D}) from the first radius with points outside D on, until the
        remaining envelope mass is below tol · Σ_D φ."""
        A = self.envelope()
        cnt = self._domain_counts()
        k0 = int(np.argmax(self._outside_counts(np.arange(len(cnt) + 1)) > 0))
        lq = math.log(self.q)
        return decaying_table(k0, lambda k: A * np.exp(lq * k) * self._outside_counts(k), tol, len(cnt),
                               self.domain_mass())

    def domain_mass(self) -> float:
        return math.fsum(self.size * self.mass)

    def normaliser(self) -> float:
        """Z = Σ_D φ + Σ_{x∉D} P(x) (the outside summed until its envelope remainder is < 1e-17 of Z)."""
        if self._Z is None:
            pts, size, P = self.outside_table()
            self._Z = self.domain_mass() + math.fsum(size * P)
        return self._Z

    def outside_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(canonical points outside D with ‖x‖₁ up to where the envelope's remainder is below 1e-17
        of Σ_D φ, their orbit sizes, P at them), computed once."""
        if self._outside is None:
            self.require_closed("the pmf")
            ks, _ = self._tail_table(1e-17)
            K = int(ks[-1]) if len(ks) else int(np.abs(self.reps).sum(axis=1).max())
            cand, _ = self._candidates()
            if math.comb(K + self.d, self.d) * (2**self.d if self.group == "none" else 1) > 5 * MAX_PAIRS:
                raise SpecError(f"normalising the {self.kind} extension needs the l1 ball of radius {K} in dimension "
                                f"{self.d}: too many points; sampling does not need it")
            pts = l1_ball_orbits(self.d, K, self.group)
            pts = pts[self.index.find(pts) < 0]
            if len(pts) * len(cand) > MAX_PAIRS:
                raise SpecError(f"normalising the {self.kind} extension needs {len(pts) * len(cand):.2g} point pairs "
                                f"(> {MAX_PAIRS:.0g}); sampling does not need it")
            self._outside = (pts, orbit_sizes(pts, self.group), self.outside(pts))
        return self._outside

    # -- sampling ----------------------------------------------------------------------------------
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n integer points of the law P/Z (rejection from the envelope, module docstring)."""
        self.require_closed("sampling")
        if self._table is None:
            w_dom = self.size * self.mass
            ks, wk = self._tail_table(TAIL_TOL)
            self._table = (np.cumsum(w_dom), ks, np.cumsum(wk), math.fsum(w_dom), math.fsum(wk), self.envelope())
        cum_dom, ks, cum_tail, m_dom, m_tail, A = self._table
        out = np.zeros((n, self.d), dtype=np.int64)
        todo = np.arange(n)
        lq = math.log(self.q)
        while todo.size:
            u = rng.random(todo.size) * (m_dom + m_tail)
            dom = u < m_dom
            i = np.minimum(np.searchsorted(cum_dom, u[dom], side="right"), len(cum_dom) - 1)
            out[todo[dom]] = random_images(self.reps[i], self.group, rng)
            rest = todo[~dom]
            if rest.size == 0:
                break
            j = np.minimum(np.searchsorted(cum_tail, rng.random(rest.size) * cum_tail[-1], side="right"), len(ks) - 1)
            k = ks[j]
            x = uniform_lattice_l1_sphere(k, self.d, rng)
            bad = self.locate(x) >= 0
            while np.any(bad):  # uniform on {‖x‖₁ = k} \ D
                x[bad] = uniform_lattice_l1_sphere(k[bad], self.d, rng)
                bad = self.locate(x) >= 0
            accept = rng.random(rest.size) * A * np.exp(lq * k) < self.outside(x)
            out[rest[accept]] = x[accept]
            todo = rest[~accept]
        return out


class MajorantExactValues:
    r"""The values of a β-majorant law (:class:`MajorantLatticePMFND`, :class:`CellPMFND`; ℓ1 or ℓ∞
    sensitivity) in exact rational arithmetic, and its exact privacy audit (:meth:`audit`).

    The masses φ (floats read exactly), β (its float read exactly) and the extension
    P(x) = max_y φ(y) β^{ρ(x − y)} over the same candidates as the float pmf (the boundary layer of D,
    positive masses; x and y canonical, which attains the max over the orbits: ρ depends on |x − y|
    through an ℓ1 or ℓ∞ norm, minimised over signed permutations of y by the sorted matching) are exact
    rationals: the candidates are screened in floats, the max taken exactly among those within a
    relative 1e-9 of the float max (float errors are ~1e-13).  Cheap to build (no normaliser, no
    sampling tables): the audit behind ``privacy()`` of a loaded law needs only this; the
    sampler's :class:`MajorantExactLaw` adds the rest.
    """

    def __init__(self, ext: "MajorantExtension") -> None:
        from fractions import Fraction

        ext.require_closed("the exact audit")
        self.ext, self.d, self.group = ext, ext.d, ext.group
        self.beta = Fraction(float(ext.beta))
        self.phi = [Fraction(float(m)) for m in ext.mass]
        cand, cm = ext._candidates()  # runs the float audit (raises where φ is no β-majorant)
        self.cand, self.cm = cand, cm
        self.cand_f = [Fraction(float(v)) for v in cm]
        self.log_cm = np.log(cm) if len(cm) else np.zeros(0)
        self._bpow = [Fraction(1)]
        self._pair: dict[tuple[int, int], int] = {}
        self._ids: dict[Fraction, int] = {}
        self._vals: list[Fraction] = []
        self._rank: np.ndarray | None = None
        self._table = np.full((len(cand), 1), -1, dtype=np.int64)  # value id of (candidate, moves), −1 unknown

    def audit_pairs(self) -> int:
        """The number of point pairs :meth:`audit` evaluates in floats: every listed orbit
        representative with every move, and each neighbour outside the domain with every candidate."""
        moves = len(self.ext.move_set()) - 1
        _, boundary = self.ext.audit()
        return len(self.ext.reps) * moves + int(boundary.sum()) * moves * max(len(self.cand), 1)

    # -- exact values -----------------------------------------------------------------------------
    def _value_id(self, c: int, m: int) -> int:
        """Id of the exact value φ(cand c)·β^m (equal values share an id: the max compares few)."""
        key = (c, m)
        i = self._pair.get(key)
        if i is None:
            while len(self._bpow) <= m:
                self._bpow.append(self._bpow[-1] * self.beta)
            v = self.cand_f[c] * self._bpow[m]
            i = self._ids.get(v)
            if i is None:
                i = self._ids[v] = len(self._vals)
                self._vals.append(v)
                self._rank = None
            self._pair[key] = i
        return i

    def _ranks(self) -> np.ndarray:
        """Rank of each value id in the exact order of the values."""
        if self._rank is None or len(self._rank) != len(self._vals):
            order = sorted(range(len(self._vals)), key=self._vals.__getitem__)
            self._rank = np.empty(len(order), dtype=np.int64)
            self._rank[order] = np.arange(len(order))
            self._by_rank = np.array(order, dtype=np.int64)
        return self._rank

    def outside_ids(self, pts: np.ndarray) -> np.ndarray:
        """Value ids of P(x) = max_y φ(y) β^{ρ(x − y)} at integer points outside D (any points of their
        orbits), exactly: float screening, then the exact max among the near candidates; −1 for 0."""
        pts = canonical_points(np.asarray(pts, dtype=np.int64).reshape(-1, self.d), self.group)
        out = np.full(len(pts), -1, dtype=np.int64)
        if len(self.cand) == 0 or len(pts) == 0:
            return out
        lb = math.log(self.ext.beta)
        step = max(1, BLOCK_PAIRS // len(self.cand))
        for s in range(0, len(pts), step):
            mv = self.ext.moves(np.abs(pts[s:s + step, None, :] - self.cand[None, :, :]))
            lv = self.log_cm[None, :] + lb * mv
            best = lv.max(axis=1)
            ii, cc = np.nonzero(lv >= (best - 1e-9 * (1.0 + np.abs(best)))[:, None])
            mm = mv[ii, cc]
            if mm.size and int(mm.max()) >= self._table.shape[1]:
                grown = np.full((len(self.cand), 2 * int(mm.max()) + 1), -1, dtype=np.int64)
                grown[:, :self._table.shape[1]] = self._table
                self._table = grown
            ids = self._table[cc, mm]
            new = np.flatnonzero(ids < 0)
            if new.size:
                for c, m in np.unique(np.stack([cc[new], mm[new]], axis=1), axis=0).tolist():
                    self._table[c, m] = self._value_id(c, m)
                ids = self._table[cc, mm]
            rank = self._ranks()[ids]
            top = np.full(min(step, len(pts) - s), -1, dtype=np.int64)
            np.maximum.at(top, ii, rank)
            out[s:s + len(top)] = self._by_rank[top]
        return out

    def values_of(self, ids: np.ndarray) -> list:
        from fractions import Fraction

        return [self._vals[i] if i >= 0 else Fraction(0) for i in np.asarray(ids).tolist()]

    def outside(self, pts: np.ndarray) -> list:
        """P(x) exactly (Fractions) at integer points outside D (any points of their orbits)."""
        return self.values_of(self.outside_ids(pts))

    # -- the exact audit ------------------------------------------------------------------------------
    def audit(self):
        """The largest exact ratio P(x')/P(x) over one-move pairs (x' = x + v, v a move of the
        sensitivity ball) with x in D, x' in D or outside, both ways (a Fraction, or math.inf where a
        zero mass neighbours a positive one).  Pairs outside D are within 1/β by construction: ρ is
        subadditive, so P(x) >= β P(x') for one move between them."""
        from fractions import Fraction

        ext = self.ext
        V = ext.move_set()
        V = V[np.any(V != 0, axis=1)]
        reps, mass = ext.reps, ext.mass
        rows, nbs, inside, fvals = [], [], [], []
        step = max(1, BLOCK_PAIRS // max(len(V), 1))
        for s in range(0, len(reps), step):
            nb = (reps[s:s + step, None, :] + V[None, :, :]).reshape(-1, self.d)
            j = ext.locate(nb)
            f = np.where(j >= 0, mass[np.maximum(j, 0)], 0.0)
            out = j < 0
            if np.any(out):
                f[out] = ext.outside(nb[out])
            rows.append(np.repeat(np.arange(s, min(s + step, len(reps))), len(V)))
            nbs.append(nb)
            inside.append(j)
            fvals.append(f)
        if not rows:
            return Fraction(1)
        i = np.concatenate(rows)
        nb = np.concatenate(nbs)
        j = np.concatenate(inside)
        f = np.concatenate(fvals)
        h = mass[i]
        both0 = (f == 0) & (h == 0)
        if np.any((f == 0) != (h == 0)):
            return math.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(both0, 0.0, np.maximum(f / h, h / f))
        top = float(r.max()) if r.size else 0.0
        worst = Fraction(1)
        pick = np.flatnonzero(r >= top * (1 - 1e-9))
        out = pick[j[pick] < 0]
        P_out = dict(zip(out.tolist(), self.outside(nb[out]))) if out.size else {}
        for p in pick.tolist():
            a = self.phi[int(i[p])]
            b = self.phi[int(j[p])] if j[p] >= 0 else P_out[p]
            worst = max(worst, a / b, b / a)
        return worst


class MajorantExactLaw(MajorantExactValues):
    r"""The law of :class:`MajorantLatticePMFND` (ℓ1 or ℓ∞ sensitivity) in exact rational arithmetic,
    and its exact sampler.

    The masses φ (floats read exactly), β (its float read exactly) and the extension
    P(x) = max_y φ(y) β^{ρ(x − y)} over the same candidates as the float pmf (the boundary layer of D,
    positive masses; x and y canonical, which attains the max over the orbits: ρ depends on |x − y|
    through an ℓ1 or ℓ∞ norm, minimised over signed permutations of y by the sorted matching) are exact
    rationals: the candidates are screened in floats, the max taken exactly among those within a
    relative 1e-9 of the float max (float errors are ~1e-13).  Outcomes (:class:`optmech.exact.radial.HeadTail`):
    the orbits of D (mass |orbit|·φ) and the ℓ1 shells k0 <= k < T outside D (mass Σ |orbit|·P over
    its canonical points), by exact inversion over their integer weights; a drawn orbit gives a
    uniform point of it (a uniform group element), a drawn shell a canonical point by exact
    inversion over |orbit|·P, then a uniform image.  Beyond T (> every radius of D) the envelope
    P(x) <= A q^{‖x‖₁}, q = β^{1/M} (M the largest ℓ1 length of a move, so M ρ(v) >= ‖v‖₁) and
    A = max_y φ(y) q^{−‖y‖₁}, in rationals q_hi >= q >= q_lo, A_hi = max φ(y) q_lo^{−‖y‖₁}, and
    N_d(k) <= N_d(T) g^{k−T} (:func:`optmech.exact.radial.l1_growth`) give the geometric proposal
    e_k = A_hi N_d(T) q_hi^T ρ^{k−T}, ρ = q_hi g: a radius k, a uniform point x of its sphere,
    accepted with the exact probability P(x) N_d(k)/e_k <= 1.  T is the first radius whose envelope
    weighs <= 2^{−tail_bits} of the head, so proposals are rare.
    """

    def __init__(self, ext: "MajorantExtension", *, word_bits: int = 64, tail_bits: int = 30) -> None:
        from fractions import Fraction

        from optmech.exact.inversion import Inversion, integer_weights
        from optmech.exact.laws import l1_sphere_size
        from optmech.exact.radial import HeadTail, TailEnvelope, l1_growth, root_bounds

        ext.require_closed("the exact sampler")
        super().__init__(ext)
        cand = self.cand
        self.wb = int(word_bits)
        self._Inversion, self._integer_weights = Inversion, integer_weights
        self.size = orbit_sizes_exact(ext.reps, ext.group)
        moves = ext.move_set()
        self.M = max(int(ext.M), int(np.abs(moves).sum(axis=1).max()))
        self.q_lo, self.q_hi = root_bounds(self.beta, self.M)
        norms = np.abs(cand).sum(axis=1).tolist()
        self.A_hi = max((f / self.q_lo ** r for f, r in zip(self.cand_f, norms)), default=Fraction(0))
        # the domain per radius; the first radius with points outside D
        radii = np.abs(ext.reps).sum(axis=1)
        self.K_dom = int(radii.max())
        inside = [0] * (self.K_dom + 1)
        for r, s in zip(radii.tolist(), self.size):
            inside[r] += s
        k0 = 0
        while k0 <= self.K_dom and l1_sphere_size(k0, self.d) == inside[k0]:
            k0 += 1
        self.k0 = k0
        self._shells: dict[int, tuple] = {}
        self._shell_inv: dict[int, object] = {}
        self._acc: dict[tuple[int, int], Fraction] = {}
        head = [s * f for s, f in zip(self.size, self.phi)]
        self.n_orb = len(head)
        mass = sum(head, Fraction(0))
        T = max(self.K_dom + 1, self.d, 1, k0)
        for k in range(k0, T):
            head.append(self.shell(k)[3])
            mass += head[-1]
        while True:
            rho = self.q_hi * l1_growth(T, self.d)
            if rho < 1:
                first = self.A_hi * l1_sphere_size(T, self.d) * self.q_hi**T
                env = TailEnvelope(T, [first], rho, word_bits)
                if env.total * (1 << int(tail_bits)) <= mass:
                    break
            head.append(self.shell(T)[3])
            mass += head[-1]
            T += 1
            if T > 1 << 20:
                raise SpecError("the exact sampler's tail envelope does not close")
        self.T = T
        self.head_mass = mass
        self.law = HeadTail(head, env, word_bits)

    def shell(self, k: int) -> tuple:
        """(canonical points of ‖x‖₁ = k outside D, their value ids, orbit sizes, the shell's exact mass)."""
        if k not in self._shells:
            from fractions import Fraction

            pts = l1_shell_orbits(self.d, k, self.group)
            pts = pts[self.ext.index.find(pts) < 0]
            ids = self.outside_ids(pts)
            size = orbit_sizes_exact(pts, self.group)
            count: dict[int, int] = {}
            for i, s in zip(ids.tolist(), size):
                if i >= 0:
                    count[i] = count.get(i, 0) + s
            mass = sum((self._vals[i] * c for i, c in count.items()), Fraction(0))
            self._shells[k] = (pts, ids, size, mass)
        return self._shells[k]

    def total_bounds(self, bits: int = 64) -> tuple:
        """Rationals Z_lo <= Z <= Z_hi (Z = Σ_D |orbit| φ + Σ_{x∉D} P(x)) with Z_hi − Z_lo <= 2^{−bits} Z_lo:
        the exact sum over D and the shells up to some K, plus :func:`optmech.exact.radial.l1_envelope_tail`."""
        from optmech.exact.radial import l1_envelope_tail

        s = self.head_mass
        K = self.T - 1
        while True:
            t = l1_envelope_tail(self.A_hi, self.q_hi, K, self.d)
            if t is not None and t * (1 << int(bits)) <= s:
                return s, s + t
            K += 1
            s += self.shell(K)[3]
            if K > 1 << 20:
                raise SpecError("the exact normaliser's tail bound does not close")

    # -- sampling -----------------------------------------------------------------------------------
    def _images(self, reps: np.ndarray, source) -> np.ndarray:
        """A uniform point of each representative's orbit (a uniform group element), exactly."""
        from optmech.exact.laws import random_permutations, random_signs

        if self.group == "none" or len(reps) == 0:
            return reps.copy()
        x = random_permutations(reps, source) if self.group == "signed_permutations" else reps
        return random_signs(x, source)

    def _accept(self, k: np.ndarray, w: list, source):
        from optmech.exact.laws import l1_sphere_size, uniform_l1_sphere

        x = uniform_l1_sphere(k, self.d, source)
        if np.any(self.ext.locate(x) >= 0):
            raise AssertionError("a tail proposal fell in the domain")
        p = []
        for i, r, wi in zip(self.outside_ids(x).tolist(), k.tolist(), w):
            a = self._acc.get((i, r))
            if a is None:  # P(x)·N_d(k)/e_k (e_k depends on k only)
                a = self._acc[(i, r)] = (self._vals[i] if i >= 0 else 0) * l1_sphere_size(r, self.d) / wi
            p.append(a)
        return p, x

    def sample(self, n: int, source) -> np.ndarray:
        idx, _, tail = self.law.draw(int(n), source, self._accept)
        out = np.zeros((int(n), self.d), dtype=np.int64)
        orb = np.flatnonzero(idx < self.n_orb)
        out[orb] = self._images(self.ext.reps[idx[orb]], source)
        sh = np.flatnonzero((idx >= self.n_orb) & (idx < self.law.H))
        if sh.size:
            ks = self.k0 + idx[sh] - self.n_orb
            for k in np.unique(ks).tolist():
                sel = sh[ks == k]
                pts, ids, size, _ = self.shell(k)
                inv = self._shell_inv.get(k)
                if inv is None:
                    P = self.values_of(ids)
                    inv = self._shell_inv[k] = self._Inversion(
                        self._integer_weights([s * p for s, p in zip(size, P)], self.wb), self.wb)
                out[sel] = self._images(pts[inv.draw(sel.size, source)], source)
        tl = np.flatnonzero(idx == self.law.H)
        if tl.size:
            out[tl] = tail[tl]
        return out


def audited_majorant_epsilon(ratio, beta: float, target: float | None, what: str, describe) -> tuple[float, str]:
    """ε = max(−ln β, ln ``ratio``) rounded up (inf for an unbounded ratio) for a β-majorant law whose largest
    exact ratio at two points one move apart is ``ratio`` (a Fraction, or inf), and the note:
    ``describe(shown ratio)``, the rule, and whether the ``what`` (masses, densities) miss the recorded target.

    >>> eps, note = audited_majorant_epsilon(Fraction(2), 0.5, 1.0, "masses", lambda r: f"ratio {r}")
    >>> round(eps, 12), note.startswith("ratio 2; epsilon = max(-ln beta")
    (0.69314718056, True)
    """
    from optmech.exact.reals import log_upper

    eps = math.inf if ratio == math.inf else log_upper(max(ratio, 1 / Fraction(float(beta))))
    shown = "inf" if ratio == math.inf else f"{float(ratio):.17g}"
    note = describe(shown) + "; epsilon = max(-ln beta, ln of that ratio), rounded up"
    if target is not None and eps > target:
        note += f"; above the recorded target epsilon {target!r}: the {what} do not meet it"
    return eps, note
