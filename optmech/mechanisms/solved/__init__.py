r"""Library mechanisms for the solvers' d-dimensional and Lipschitz outputs.

The d-dimensional and Lipschitz solvers describe their audited upper-bound mechanism as a JSON dict
(the ``mechanism`` field of ``optmech solve --save``).  :func:`mechanism_from_solver_dict` turns such
a dict into a :class:`~optmech.mechanisms.base.Mechanism`; every class here keeps the dict it was
built from, and ``to_dict()`` returns exactly that dict (same keys, same values: a ``kind`` key, no
``name`` key), so the JSON output is unchanged.  Each class is registered under ``name`` = its kind,
so :meth:`Mechanism.from_dict` rebuilds it from the solver dict once this module is imported.

Optional keys the solvers may add and that are read here: ``epsilon`` (the privacy target the law
was audited for), ``delta`` ((ε, δ) outputs), ``beta`` (the majorant ratio β of the pure d-D
outputs) and ``dim`` (Lipschitz outputs).  The keyword arguments ``epsilon``/``delta`` of
:func:`mechanism_from_solver_dict` fill them in when the dict lacks them (they are not added to
``to_dict()``).

Kinds and their laws
--------------------
``lattice_pmf_nd`` with ``tail_factor == 0`` (:class:`FiniteLatticePMFND`)
    The (ε, δ)-DP solver's pmf on ℤ^d (``_mechanism_nd`` of the (ε, δ) family): finite support,
    P(x) = mass[i] / Σ mass at x = representatives[i], 0 elsewhere.  pmf, sampler (categorical
    over the listed points) and every cost are exact.

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

``l1_shell_density_nd`` (:class:`ShellDensityND`)
    The layered (ℓ1-shell) solver output: density a_k (lattice: mass per point of the sphere
    ‖x‖₁ = k; continuous: density on k h <= ‖x‖₁ < (k+1) h) for the listed shells, extended by the
    same β-majorant rule on the chain of shells, whose moves are |k − j| <= n (n = Δ, or Δ/h
    shells per Δ): P(k) = max_j a_j β^{⌈|k − j|/n⌉}, so P(k + n) = β P(k) beyond the list.  Exact
    pmf/pdf (normaliser summed until the remaining mass is below 1e-30) and sampler (shell by
    inverse cdf, then a uniform point of the lattice sphere, or radius ∝ r^{d−1} on the shell and
    a uniform direction on the ℓ1 sphere).

``lipschitz_points`` / ``lipschitz_cells`` (:class:`LipschitzPoints`, :class:`LipschitzCells`)
    The Lipschitz solver's 1-D laws (``upper_points``/``upper_cells`` of the Lipschitz family,
    [KHP15]): a pmf on ℤ with masses ``values`` at the integer ``knots`` and geometric tails
    P(x_K + m) = v_K e^{−λm}, P(x_0 − m) = v_0 e^{−λm}; or a density interpolating ``values`` at
    the equally spaced ``knots`` log-linearly, with exponential tails of rate λ = ``tail_rate``.
    The solver normalises the window only up to a 1e-11 margin, so the normaliser is recomputed
    here in closed form (log-mean piece masses, geometric/exponential tail sums).  Exact pmf/pdf,
    cdf and sampler (piece by its mass, then inverse cdf of the exponential-linear piece or a
    geometric/exponential tail offset).

``lipschitz_radial`` / ``lipschitz_shells`` (:class:`LipschitzRadial`)
    ℓ2-Lipschitz noise on ℝ^d (``upper_radial``): density c·f(‖x‖₂) with the profile f
    log-linear through ``values`` at r_k = ``knots``[k] and an exponential tail of rate λ beyond
    the last knot; ``dim`` gives d (1 if absent).  Exact sampler: a piece by its radial mass
    ∫ f(r) r^{d−1} dr (Gauss-Legendre, exact to rounding for these smooth integrands; the tail in
    closed form), r on the piece by rejection from ∝ r^{d−1} (acceptance >= e^{−λh}), the tail
    as a mixture of Gamma laws, the direction uniform on the sphere.

``per_coordinate: true`` (:class:`LipschitzProduct`)
    ℓ1-Lipschitz noise in d = ``dim`` dimensions (required): d i.i.d. copies of the 1-D law above
    (§8 of [KHP15]; the Lipschitz family's ℓ1 product).

Privacy: pure outputs give ``Privacy("pure", ε, 0, Δ, norm)``, the (ε, δ) outputs
``Privacy("approx", ε, δ, Δ, norm)`` (NaN where ε/δ are unknown), Lipschitz outputs
``Privacy("lipschitz", ε, 0, None, norm)``.  The laws loaded from a saved dict state what an audit of
their loaded masses proves, not the target they were solved for (the dict's ``epsilon``/``delta`` or
the keywords): the β-majorant laws (points, cells, ℓ1 shells) ε = max(−ln β, ln of the largest exact
ratio of the law at two points one move apart, tails included), rounded up; the finite pmf on ℤ^d
and the cube density on ℝ^d δ(ε) by the hockey-stick sums of their masses at the recorded ε.  Laws
whose audit is not evaluated at load (ℓ2 majorant extensions; more than :data:`LOAD_AUDIT_PAIRS`
pairs) state the recorded audit and say that it was not re-audited.  Lipschitz outputs report the
recorded rate or, where the knots exceed it, the law's realised maximal log-slope.

The samplers are floating-point samplers (see :mod:`optmech.mechanisms.rng`): exact laws up to the
resolution of 53-bit uniforms, not protected against floating-point attacks.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from scipy.special import comb, exprel, gammaln

from optmech.errors import SpecError
from optmech.mechanisms.base import REGISTRY, Mechanism, Privacy
from optmech.mechanisms.discrete_staircase_nd import sphere_l2sq_sums, sphere_sizes
from optmech.mechanisms.multidim import NDMechanism

__all__ = [
    "SOLVER_KINDS",
    "SolvedMechanism",
    "LatticePMFND",
    "FiniteLatticePMFND",
    "MajorantLatticePMFND",
    "CellPMFND",
    "ShellDensityND",
    "LipschitzPoints",
    "LipschitzCells",
    "LipschitzRadial",
    "LipschitzShells",
    "LipschitzProduct",
    "mechanism_from_solver_dict",
    "CubePMFND",
    "CUBE_QUADRATURE_NODES",
    "PointIndex",
    "canonical_points",
    "orbit_sizes",
    "uniform_lattice_l1_sphere",
]

#: The ``kind`` values :func:`mechanism_from_solver_dict` accepts.
SOLVER_KINDS = ("lattice_pmf_nd", "cell_pmf_nd", "l1_shell_density_nd", "lipschitz_points", "lipschitz_cells",
                "lipschitz_radial", "lipschitz_shells", "cube_pmf_nd")
#: Symmetry names of the solver dicts → group names of :mod:`optmech.problems.pure_nd`.
GROUPS = {"none": "none", "coordinate signs": "signs", "signed permutations": "signed_permutations"}
#: Truncation of the tail tables and normaliser series: remaining (envelope) mass below this.
TAIL_TOL = 1e-30
#: Relative slack of the majorant audit (the solver's fixed point holds up to float rounding).
MAJORANT_SLACK = 1e-9
#: Most candidate × point pairs one normaliser or cost series may evaluate.
MAX_PAIRS = 10**8
#: Pairs per vectorised block.
BLOCK_PAIRS = 1 << 21
#: Most point pairs (or cube × shift terms) ``privacy()`` audits when a law is loaded; a larger law
#: states the audit recorded by its solve, saying that it was not re-audited.
LOAD_AUDIT_PAIRS = 20_000_000


# ------------------------------------------------------------------------------------------------
# field parsing
# ------------------------------------------------------------------------------------------------
def _need(d: dict, key: str):
    try:
        return d[key]
    except KeyError:
        raise SpecError(f"solver mechanism {d.get('kind')!r} lacks the field {key!r}") from None


def _number(d: dict, key: str, *, default=None, positive: bool = False, integer: bool = False) -> float:
    v = d.get(key, default) if default is not None else _need(d, key)
    try:
        if isinstance(v, bool):
            raise TypeError
        f = float(v)
    except (TypeError, ValueError):
        raise SpecError(f"solver mechanism field {key!r} must be a number, got {v!r}") from None
    if not math.isfinite(f) or f < 0 or (positive and f == 0):
        raise SpecError(f"solver mechanism field {key!r} must be finite and {'>' if positive else '>='} 0, got {v!r}")
    if integer and f != int(f):
        raise SpecError(f"solver mechanism field {key!r} must be an integer, got {v!r}")
    return f


def _array(d: dict, key: str, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(_need(d, key), dtype=float)
    except (TypeError, ValueError):
        raise SpecError(f"solver mechanism field {key!r} must be an array of numbers") from None
    if a.ndim != ndim or a.size == 0 or not np.all(np.isfinite(a)):
        raise SpecError(f"solver mechanism field {key!r} must be a nonempty {ndim}-D array of finite numbers")
    return a


def _optional(d: dict, key: str, given: float | None) -> float | None:
    """The dict's value of ``key`` or the keyword ``given`` (they must agree when both are set)."""
    v = d.get(key)
    if v is None:
        return None if given is None else float(given)
    v = _number(d, key)
    if given is not None and float(given) != v:
        raise SpecError(f"{key}={given!r} contradicts the solver mechanism's {key} {v!r}")
    return v


# ------------------------------------------------------------------------------------------------
# points, orbits, enumeration
# ------------------------------------------------------------------------------------------------
class PointIndex:
    """Exact lookup of rows of an (N, d) integer array (mixed-radix keys over the bounding box)."""

    def __init__(self, pts: np.ndarray) -> None:
        pts = np.asarray(pts, dtype=np.int64)
        self.lo, self.hi = pts.min(axis=0), pts.max(axis=0)
        span = [int(v) for v in self.hi - self.lo + 1]
        if math.prod(span) >= 2**62:
            raise SpecError("the listed points span too large a box to index")
        mult = np.ones(len(span), dtype=np.int64)
        for i in range(len(span) - 2, -1, -1):
            mult[i] = mult[i + 1] * span[i + 1]
        self.mult = mult
        keys = ((pts - self.lo) * mult).sum(axis=1)
        self.order = np.argsort(keys, kind="stable")
        self.keys = keys[self.order]
        if np.any(np.diff(self.keys) == 0):
            raise SpecError("the solver mechanism lists a point (representative) twice")

    def find(self, q: np.ndarray) -> np.ndarray:
        """Row index of each point of ``q`` (shape (..., d)), −1 where it is not listed."""
        q = np.asarray(q, dtype=np.int64)
        inside = np.all((q >= self.lo) & (q <= self.hi), axis=-1)
        k = ((np.clip(q, self.lo, self.hi) - self.lo) * self.mult).sum(axis=-1)
        pos = np.minimum(np.searchsorted(self.keys, k), len(self.keys) - 1)
        return np.where(inside & (self.keys[pos] == k), self.order[pos], -1)


def canonical_points(pts: np.ndarray, group: str) -> np.ndarray:
    """Orbit representatives: the points (``none``), |x| (``signs``) or sorted |x| (``signed_permutations``)."""
    if group == "signed_permutations":
        return np.sort(np.abs(pts), axis=-1)
    return np.abs(pts) if group == "signs" else pts


def orbit_sizes(reps: np.ndarray, group: str) -> np.ndarray:
    """Number of points in the orbit of each representative (2^{nonzeros}·d!/Π multiplicities!)."""
    reps = np.asarray(reps)
    if group == "none":
        return np.ones(len(reps))
    size = 2.0 ** np.count_nonzero(reps, axis=1)
    if group == "signed_permutations":
        d = reps.shape[1]
        run = np.ones(len(reps))
        denom = np.ones(len(reps))
        for i in range(1, d):  # Π mult! = Π over positions of (its rank within its run of equal values)
            run = np.where(reps[:, i] == reps[:, i - 1], run + 1.0, 1.0)
            denom *= run
        size *= math.factorial(d) / denom
    return size


def _random_images(reps: np.ndarray, group: str, rng: np.random.Generator) -> np.ndarray:
    """A uniform point of each representative's orbit (a uniform group element applied to it)."""
    if group == "none" or len(reps) == 0:
        return reps.copy()
    out = reps
    if group == "signed_permutations":
        perm = np.argsort(rng.random(reps.shape), axis=1)
        out = np.take_along_axis(reps, perm, axis=1)
    return out * np.where(rng.random(reps.shape) < 0.5, -1, 1)


def _nonneg_vectors(d: int, K: int, *, ascending: bool) -> np.ndarray:
    """All v ∈ ℕ^d with Σ v <= K (ascending: v_1 <= ... <= v_d), vectorised by coordinate."""
    rows = np.zeros((1, 0), dtype=np.int64)
    total = np.zeros(1, dtype=np.int64)
    for i in range(d):
        left = d - i
        prev = rows[:, -1] if (ascending and i > 0) else np.zeros(len(rows), dtype=np.int64)
        top = (K - total) // left if ascending else K - total
        cnt = np.maximum(top - prev + 1, 0)
        rep = np.repeat(np.arange(len(rows)), cnt)
        start = np.repeat(np.cumsum(cnt) - cnt, cnt)
        val = prev[rep] + (np.arange(rep.size) - start)
        rows = np.concatenate([rows[rep], val[:, None]], axis=1)
        total = total[rep] + val
    return rows


def _with_signs(base: np.ndarray) -> np.ndarray:
    """Every sign pattern of the nonnegative points ``base`` (a zero coordinate keeps one sign)."""
    d = base.shape[1]
    parts = []
    for mask in range(2**d):
        neg = ((mask >> np.arange(d)) & 1).astype(bool)
        keep = np.all(base[:, neg] != 0, axis=1)
        parts.append(np.where(neg, -base[keep], base[keep]))
    return np.concatenate(parts)


def _l1_ball_orbits(d: int, K: int, group: str) -> np.ndarray:
    """Canonical points of the ℓ1 ball ‖x‖₁ <= K under ``group`` (every point for ``none``)."""
    base = _nonneg_vectors(d, K, ascending=group == "signed_permutations")
    if group != "none":
        return base
    return _with_signs(base)


def uniform_lattice_l1_sphere(k: np.ndarray, d: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform points of the lattice spheres {x ∈ ℤ^d : ‖x‖₁ = k_i}, shape (len(k), d).

    |S_k| = Σ_j 2^j C(d, j) C(k−1, j−1) (j nonzero coordinates, signs, a composition of k into j
    positive parts): j is drawn by these weights, the composition by j − 1 distinct uniform cut
    points in 1..k−1 (duplicates redrawn), the coordinates carrying the parts by a uniform random
    order and the signs uniformly (as :class:`~optmech.mechanisms.discrete_staircase_nd.DiscreteStaircaseND`).
    """
    k = np.asarray(k, dtype=np.int64)
    m = k.size
    out = np.zeros((m, d), dtype=np.int64)
    pos = np.flatnonzero(k > 0)
    if pos.size == 0:
        return out
    kk = k[pos]
    js = np.arange(1, d + 1)
    w = (2.0**js * comb(d, js))[None, :] * comb(kk[:, None] - 1, js[None, :] - 1)
    cw = np.cumsum(w, axis=1)
    j = np.minimum(1 + (rng.random(pos.size)[:, None] * cw[:, -1:] >= cw).sum(axis=1), d)
    width = max(d - 1, 1)
    big = np.iinfo(np.int64).max
    cuts = np.zeros((pos.size, width), dtype=np.int64)
    todo = np.arange(pos.size)
    while todo.size:
        c = rng.integers(1, np.maximum(kk[todo], 2)[:, None], size=(todo.size, width))
        c = np.where(np.arange(width)[None, :] < (j[todo] - 1)[:, None], c, big)
        c.sort(axis=1)
        dup = np.any((np.diff(c, axis=1) == 0) & (c[:, 1:] != big), axis=1)
        cuts[todo[~dup]] = c[~dup]
        todo = todo[dup]
    idx = np.arange(d)[None, :]
    lo = np.concatenate([np.zeros((pos.size, 1), dtype=np.int64), cuts], axis=1)[:, :d]
    hi = np.concatenate([cuts, np.zeros((pos.size, 1), dtype=np.int64)], axis=1)[:, :d]
    hi = np.where(idx == (j - 1)[:, None], kk[:, None], hi)
    parts = np.where(idx < j[:, None], hi - lo, 0)
    perm = np.argsort(rng.random((pos.size, d)), axis=1)
    vals = np.zeros((pos.size, d), dtype=np.int64)
    np.put_along_axis(vals, perm, parts, axis=1)
    out[pos] = vals * np.where(rng.random((pos.size, d)) < 0.5, -1, 1)
    return out


def _l1_directions(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform points of the unit ℓ1 sphere of ℝ^d (i.i.d. ±Exp(1), normalised: cone measure)."""
    g = rng.standard_exponential((n, d))
    g /= g.sum(axis=1, keepdims=True)
    return g * np.where(rng.random((n, d)) < 0.5, -1.0, 1.0)


def _decaying_table(k0: int, weight: Callable[[np.ndarray], np.ndarray], tol: float,
                    k_end: int = 0, scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(k, w) for k = k0, k0+1, ... until the weights, decaying with a decreasing ratio from ``k_end``
    on, leave a remainder <= tol · scale (default scale Σw), bounded by the last term times r/(1 − r),
    r the last ratio; the shortest such prefix."""
    L = max(64, 2 * (k_end - k0 + 2))
    while True:
        k = np.arange(k0, k0 + L, dtype=np.int64)
        w = np.asarray(weight(k), dtype=float)
        total = math.fsum(w)
        if not (total > 0):
            return k, w
        r = w[-1] / w[-2] if len(w) > 1 and w[-2] > 0 else 0.0
        beyond = w[-1] * r / (1 - r) if r < 1 else math.inf
        limit = tol * (total if scale is None else scale)
        if beyond <= limit:  # keep the shortest prefix whose remainder is still <= limit
            rest = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]]) + beyond
            last = int(np.argmax(rest <= limit)) + 1
            last = max(last, int(np.searchsorted(k, k_end, side="right")))
            return k[:last], w[:last]
        if L > 10**8:
            raise SpecError("a tail series of the solver mechanism does not decay")
        L *= 2


def _categorical(weights: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n indices drawn with probabilities ∝ weights (inverse cdf)."""
    c = np.cumsum(weights)
    return np.minimum(np.searchsorted(c, rng.random(n) * c[-1], side="right"), len(c) - 1)


def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1]."""
    x, w = np.polynomial.legendre.leggauss(n)
    return 0.5 * (x + 1.0), 0.5 * w


# ------------------------------------------------------------------------------------------------
# the common base
# ------------------------------------------------------------------------------------------------
class SolvedMechanism:
    """Mixin of the solver-output mechanisms: keeps the solver dict, which ``to_dict`` returns.

    ``epsilon``/``delta`` are the dict's keys of that name or the keywords; they are not added to
    ``to_dict()``.  A ``name`` key equal to ``kind`` (as :meth:`Mechanism.from_dict` adds it) is dropped.
    """

    kind: str = ""
    _source: dict

    def _keep(self, d: dict, epsilon: float | None, delta: float | None = None) -> None:
        if not isinstance(d, dict):
            raise SpecError("a solver mechanism must be a dict")
        self._source = copy.deepcopy({k: v for k, v in d.items() if not (k == "name" and v == d.get("kind"))})
        self.kind = str(d.get("kind"))
        eps = _optional(d, "epsilon", epsilon)
        self._epsilon = math.nan if eps is None else eps
        dl = _optional(d, "delta", delta)
        self._delta = math.nan if dl is None else dl
        self._hash: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The solver dict this mechanism was built from (a copy, unchanged)."""
        return copy.deepcopy(self._source)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Mechanism":
        """Rebuild from a solver dict (dispatch on ``kind``, see :func:`mechanism_from_solver_dict`)."""
        return mechanism_from_solver_dict(d)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": getattr(self, "dim", 1)}

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((type(self).__name__, json.dumps(self._source, sort_keys=True, default=str)))
        return self._hash

    def __repr__(self) -> str:
        eps = "" if math.isnan(self._epsilon) else f", epsilon={self._epsilon!r}"
        return f"{type(self).__name__}(kind={self.kind!r}, dim={getattr(self, 'dim', 1)}{eps})"

    def _refuse(self, what: str, why: str) -> SpecError:
        return SpecError(f"{what} of the {self.kind} mechanism is not supported: {why}")


def _cost_nd(cost, dim: int):
    from optmech.costs_nd import as_cost_nd

    return as_cost_nd(cost, dim)


# ------------------------------------------------------------------------------------------------
# lattice_pmf_nd: finite support, or the β-majorant extension
# ------------------------------------------------------------------------------------------------
class LatticePMFND(SolvedMechanism, NDMechanism):
    """A solver pmf on ℤ^d (``kind = "lattice_pmf_nd"``): constructing this class returns a
    :class:`FiniteLatticePMFND` (``tail_factor == 0``) or a :class:`MajorantLatticePMFND`."""

    name = "lattice_pmf_nd"
    lattice = True
    symmetric = False

    def __new__(cls, d: dict, **kwargs):
        if cls is LatticePMFND:
            finite = isinstance(d, dict) and _number(d, "tail_factor") == 0.0
            cls = FiniteLatticePMFND if finite else MajorantLatticePMFND
        return super().__new__(cls)

    def _head(self, d: dict) -> None:
        self._init_dim(int(_number(d, "dim", integer=True, positive=True)))
        self.norm = str(d.get("norm", "l1"))
        self.group = GROUPS.get(d.get("symmetry", "none"))
        if self.group is None:
            raise SpecError(f"unknown symmetry {d.get('symmetry')!r} (known: {', '.join(GROUPS)})")
        reps = _array(d, "representatives", 2)
        if reps.shape[1] != self.dim or np.any(reps != np.round(reps)):
            raise SpecError(f"representatives must be integer points of dimension {self.dim}")
        self.reps = reps.astype(np.int64)
        self.mass = _array(d, "mass", 1)
        if len(self.mass) != len(self.reps) or np.any(self.mass < 0):
            raise SpecError("mass must be one nonnegative number per representative")
        if np.any(canonical_points(self.reps, self.group) != self.reps):
            raise SpecError(f"representatives must be canonical for the symmetry {d.get('symmetry')!r}")
        self.index = PointIndex(self.reps)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pmf)")

    sf = cdf


class FiniteLatticePMFND(LatticePMFND):
    """The (ε, δ)-DP solver's pmf on ℤ^d: P(x) = mass[i]/Σ mass at x = representatives[i] (symmetry
    "none"), 0 elsewhere (``_mechanism_nd`` of the (ε, δ) family).  Everything is exact."""

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon, delta)
        if _number(d, "tail_factor") != 0.0:
            raise SpecError("FiniteLatticePMFND needs tail_factor == 0 (finite support)")
        self._head(d)
        self._sensitivity = int(_number(d, "sensitivity", integer=True, positive=True))
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
        vals = _cost_nd(cost, self.dim).check_values(self.reps.astype(float), "the support")
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


class MajorantExtension:
    """The β-majorant extension of masses φ on a domain D ⊂ ℤ^d (see the module docstring).

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
        return _decaying_table(k0, lambda k: A * np.exp(lq * k) * self._outside_counts(k), tol, len(cnt),
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
            pts = _l1_ball_orbits(self.d, K, self.group)
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
            out[todo[dom]] = _random_images(self.reps[i], self.group, rng)
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


def _l1_shell_orbits(d: int, k: int, group: str) -> np.ndarray:
    """Canonical points of the ℓ1 sphere ‖x‖₁ = k under ``group`` (every point for ``none``)."""
    asc = group == "signed_permutations"
    if d == 1:
        base = np.array([[k]], dtype=np.int64)
    else:
        head = _nonneg_vectors(d - 1, k, ascending=asc)
        last = k - head.sum(axis=1)
        keep = last >= head[:, -1] if asc else np.ones(len(head), dtype=bool)
        base = np.concatenate([head[keep], last[keep, None]], axis=1)
    if group != "none":
        return base
    return _with_signs(base)


def _orbit_sizes_exact(pts: np.ndarray, group: str) -> list[int]:
    """:func:`orbit_sizes` as Python ints (its floats are exact integers up to d = 12)."""
    if pts.shape[1] <= 12:
        return [int(v) for v in np.rint(orbit_sizes(pts, group))]
    out = []
    for p in np.abs(pts).tolist():
        s = 2 ** sum(1 for v in p if v)
        if group == "signed_permutations":
            s *= math.factorial(len(p))
            for c in {v: p.count(v) for v in p}.values():
                s //= math.factorial(c)
        out.append(s if group != "none" else 1)
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
        self.size = _orbit_sizes_exact(ext.reps, ext.group)
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

            pts = _l1_shell_orbits(self.d, k, self.group)
            pts = pts[self.ext.index.find(pts) < 0]
            ids = self.outside_ids(pts)
            size = _orbit_sizes_exact(pts, self.group)
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


def _audited_majorant_epsilon(ratio, beta: float, target: float | None, what: str, describe) -> tuple[float, str]:
    """ε = max(−ln β, ln ``ratio``) rounded up (inf for an unbounded ratio) for a β-majorant law whose largest
    exact ratio at two points one move apart is ``ratio`` (a Fraction, or inf), and the note:
    ``describe(shown ratio)``, the rule, and whether the ``what`` (masses, densities) miss the recorded target.

    >>> eps, note = _audited_majorant_epsilon(Fraction(2), 0.5, 1.0, "masses", lambda r: f"ratio {r}")
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


class _MajorantND(SolvedMechanism, NDMechanism):
    """Shared code of the pure d-D outputs on points and cells."""

    symmetric = False
    _cells = False

    def _build(self, d: dict, epsilon: float | None) -> None:
        self._keep(d, epsilon)
        LatticePMFND._head(self, d)
        A, q = _number(d, "tail_factor"), _number(d, "tail_rate")
        if not (A > 0 and 0 < q < 1):
            raise SpecError("a pure d-D solver mechanism needs tail_factor > 0 and 0 < tail_rate < 1")
        if self._cells:
            self.h = _number(d, "cell_width", positive=True)
            self._sensitivity = _number(d, "sensitivity", positive=True)
            n = round(self._sensitivity / self.h)
            if n < 1 or abs(n * self.h - self._sensitivity) > 1e-9 * self._sensitivity:
                raise SpecError("cell_width must divide the sensitivity")
        else:
            self._sensitivity = int(_number(d, "sensitivity", integer=True, positive=True))
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
        sensitivity: the extension has no closed form; more than :data:`LOAD_AUDIT_PAIRS` pairs) the
        solver's recorded target is stated (−ln β where none is recorded), with a note saying so.
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
        eps, note = _audited_majorant_epsilon(
            ratio, self.beta, target, "masses",
            lambda shown: f"{self.kind}: audited at load, exactly on the loaded masses (the floats read exactly): the "
                          f"largest ratio of the law at two {where} one move apart ({shift} is one move) inside the "
                          f"listed domain and between it and the beta-majorant extension, both ways, is {shown}; pairs "
                          "outside the domain are within 1/beta by construction (rho is subadditive)")
        return Privacy("pure", eps, 0.0, self.sensitivity, self.norm, note)

    def audited_ratio(self) -> tuple[Any, str]:
        """(the largest exact ratio P(x')/P(x) over one-move pairs touching the listed domain, "") by
        :meth:`MajorantExactValues.audit`, computed once; (None, why) where it is not computed: ℓ2
        sensitivity, or more pairs than :data:`LOAD_AUDIT_PAIRS`."""
        cached = self.__dict__.get("_audited")
        if cached is None:
            if not self.ext.closed:
                cached = (None, "the l2 extension beyond the listed domain has no closed form")
            else:
                law = self.__dict__.get("_exact_law") or MajorantExactValues(self.ext)
                pairs = law.audit_pairs()
                if pairs > LOAD_AUDIT_PAIRS:
                    cached = (None, f"{pairs} point pairs above the load-time audit limit of {LOAD_AUDIT_PAIRS}")
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
        a, b = self.h * (pts - 0.5), self.h * (pts + 0.5)
        if c.kind == "l1":
            m = np.where(a >= 0, 0.5 * (a + b), np.where(b <= 0, -0.5 * (a + b), (a * a + b * b) / (2 * (b - a))))
            return m.sum(axis=-1)
        if c.kind == "l2sq":
            return ((a * a + a * b + b * b) / 3.0).sum(axis=-1)
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
        c = _cost_nd(cost, self.dim)
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
        ks, rem = _decaying_table(K + 1, lambda k: A * sphere_sizes(k, self.dim) * np.exp(-lq * k) * C
                                  * (1.0 + scale * (k + shift)) ** P * np.exp(r * scale * (k + shift)), 1e-6)
        value = (inside + out) / ext.normaliser()
        bound = math.fsum(rem) * (1 + 2e-6) / ext.normaliser()
        if bound > 1e-12 * max(abs(value), 1e-300):
            raise self._refuse(f"the expected cost {c.spec!r}", f"the tail beyond the summed region may add {bound:.3g}")
        return float(value)


class MajorantLatticePMFND(_MajorantND, LatticePMFND):
    """The pure d-D solver's pmf on ℤ^d: listed masses on the domain, β-majorant extension outside
    (module docstring).  Exact pmf and sampler for ℓ1 and ℓ∞ sensitivity; ℓ2 raises."""

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


class CellPMFND(_MajorantND):
    """The pure d-D solver's density on ℝ^d, constant on the cells h(z + [−½, ½)^d): density
    P(z)/(Z h^d) with P the β-majorant extension of the cell masses for the cells' step sets
    (module docstring).  Exact pdf and sampler for ℓ1 and ℓ∞ sensitivity; ℓ2 raises."""

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
# l1_shell_density_nd
# ------------------------------------------------------------------------------------------------
class ShellDensityND(SolvedMechanism, NDMechanism):
    """The layered (ℓ1-shell) solver output with its β-majorant extension over shells (module docstring)."""

    name = "l1_shell_density_nd"
    symmetric = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        from optmech.problems.pure_nd import shell_sizes

        self._keep(d, epsilon)
        self._init_dim(int(_number(d, "dim", integer=True, positive=True)))
        self.norm = str(d.get("norm", "l1"))
        if self.norm != "l1":
            raise SpecError(f"l1_shell_density_nd is for l1 sensitivity, got norm {self.norm!r}")
        self.continuous = bool(d.get("continuous", False))
        self.lattice = not self.continuous
        self.h = _number(d, "shell_width", positive=True) if self.continuous else 1.0
        if self.continuous:
            self._sensitivity = _number(d, "sensitivity", positive=True)
            n = round(self._sensitivity / self.h)
            if n < 1 or abs(n * self.h - self._sensitivity) > 1e-9 * self._sensitivity:
                raise SpecError("shell_width must divide the sensitivity")
        else:
            self._sensitivity = int(_number(d, "sensitivity", integer=True, positive=True))
            n = self._sensitivity
        self.n = int(n)
        self.a = _array(d, "density", 1)
        if np.any(self.a < 0) or not np.any(self.a > 0):
            raise SpecError("density must be nonnegative with some mass")
        A, q = _number(d, "tail_factor"), _number(d, "tail_rate")
        if not (A > 0 and 0 < q < 1):
            raise SpecError("l1_shell_density_nd needs tail_factor > 0 and 0 < tail_rate < 1")
        self.beta = float(d["beta"]) if d.get("beta") is not None else q**self.n
        if not 0 < self.beta < 1:
            raise SpecError(f"beta must be in (0, 1), got {self.beta!r}")
        self.R = len(self.a) - 1
        unit = self.h**self.dim
        self._size = (lambda k: unit * shell_sizes(k, self.dim, True)) if self.continuous else (
            lambda k: sphere_sizes(k, self.dim))
        self._table: tuple | None = None

    # -- the law ---------------------------------------------------------------------------------
    def _beyond(self) -> np.ndarray:
        """P(R + i), i = 1..n: max_j a_j β^{⌈(R + i − j)/n⌉}."""
        i = np.arange(1, self.n + 1)[:, None]
        j = np.arange(self.R + 1)[None, :]
        steps = -(-(self.R + i - j) // self.n)
        with np.errstate(divide="ignore"):
            return np.exp((np.log(self.a)[None, :] + math.log(self.beta) * steps).max(axis=1))

    def _audit(self) -> float:
        """Largest log(a_j/a_k) over |k − j| <= n (must not exceed −ln β)."""
        worst = 0.0
        for s in range(1, min(self.n, self.R) + 1):
            x, y = self.a[:-s], self.a[s:]
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.maximum(np.where(y > 0, y / x, 0.0), np.where(x > 0, x / y, 0.0))
            worst = max(worst, float(np.max(r)))
        lw = math.log(worst) if worst > 0 else 0.0
        if lw > -math.log(self.beta) * (1 + MAJORANT_SLACK) + MAJORANT_SLACK:
            raise SpecError(f"the shell densities are not a beta-majorant (log ratio {lw:.6g} > -ln beta "
                            f"{-math.log(self.beta):.6g}): the extension rule does not apply")
        return lw

    def shell_density(self, k: np.ndarray) -> np.ndarray:
        """Unnormalised density (per point or per unit volume) on shell k (any k >= 0)."""
        k = np.asarray(k, dtype=np.int64)
        out = self.a[np.minimum(k, self.R)].astype(float)
        far = k > self.R
        if np.any(far):
            off = k[far] - self.R - 1
            out[far] = self._beyond()[off % self.n] * self.beta ** (off // self.n).astype(float)
        return out

    def _tables(self) -> tuple:
        if self._table is None:
            self._audit()
            beyond = self._beyond()
            lb = math.log(self.beta)
            listed = self.a * self._size(np.arange(self.R + 1))
            # beyond: shell R + 1 + i + m n has weight beyond[i] β^m size; per residue i the ratio of
            # consecutive periods, β size(k + n)/size(k), decreases in k, so the last one bounds the rest
            M = 16
            while True:
                k = self.R + 1 + np.arange(M)[:, None] * self.n + np.arange(self.n)[None, :]
                wt = beyond[None, :] * np.exp(lb * np.arange(M, dtype=float))[:, None] * self._size(k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    r = np.where(wt[-2] > 0, wt[-1] / wt[-2], 0.0)
                rest = float(np.sum(np.where(r < 1, wt[-1] * r / (1 - r), np.inf)))
                if rest <= TAIL_TOL * math.fsum(listed):
                    break
                if M > 10**7 // self.n:
                    raise SpecError("the shell extension's series does not decay")
                M *= 2
            w = np.concatenate([listed, wt.ravel()])
            self._table = (w, math.fsum(w))
        return self._table

    def normaliser(self) -> float:
        return self._tables()[1]

    def _shell_of(self, x: np.ndarray) -> np.ndarray:
        r = np.abs(x).sum(axis=-1)
        return (r if self.lattice else np.floor(r / self.h)).astype(np.int64)

    def _pmf_nd(self, k):
        return self.shell_density(self._shell_of(k)) / self.normaliser()

    def _pdf_nd(self, x):
        return self.shell_density(self._shell_of(x)) / self.normaliser()

    def _sample(self, n, rng):
        w, _ = self._tables()
        k = _categorical(w, n, rng)
        if self.lattice:
            return uniform_lattice_l1_sphere(k, self.dim, rng)
        d = self.dim
        kf = k.astype(float)
        r = self.h * (kf**d + rng.random(n) * ((kf + 1.0) ** d - kf**d)) ** (1.0 / d)
        return _l1_directions(n, d, rng) * r[:, None]

    def expected_cost(self, cost) -> float:
        """E L(X) for l1, l2sq (and linf on the continuous domain): exact per-shell averages summed over
        the listed shells and the extension (truncated where the remaining mass is < 1e-30)."""
        c = _cost_nd(cost, self.dim)
        w, Z = self._tables()
        k = np.arange(len(w), dtype=np.int64)
        kf, d = k.astype(float), self.dim
        if self.lattice:
            if c.kind == "l1":
                v = kf
            elif c.kind == "l2sq":
                v = np.where(k > 0, sphere_l2sq_sums(k, d) / sphere_sizes(k, d), 0.0)
            else:
                raise self._refuse(f"the expected cost {c.spec!r}", "lattice shells price l1 and l2sq only")
        else:
            def moment(m: int) -> np.ndarray:  # E ‖x‖₁^m on the shell: density ∝ r^{d−1}
                return self.h**m * d / (d + m) * ((kf + 1) ** (d + m) - kf ** (d + m)) / ((kf + 1) ** d - kf**d)

            if c.kind == "l1":
                v = moment(1)
            elif c.kind == "l2sq":
                v = 2.0 / (d + 1) * moment(2)  # E θ² summed over a uniform ℓ1 direction = 2/(d+1)
            elif c.kind == "linf":
                v = moment(1) * sum(1.0 / i for i in range(1, d + 1)) / d  # mean largest of d uniform spacings
            else:
                raise self._refuse(f"the expected cost {c.spec!r}", "continuous shells price l1, l2sq and linf only")
        return float(math.fsum(w * v) / Z)

    def mean(self) -> np.ndarray:
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.expected_cost("l2sq") / self.dim)

    def privacy(self) -> Privacy:
        """Pure ε-DP for ℓ1 sensitivity Δ, audited on the loaded densities: a shift of ℓ1 length <= Δ moves
        the shell by at most n, so ε = max(−ln β, ln of the largest exact ratio profile(j)/profile(k) over
        |k − j| <= n touching the listed shells) (:meth:`exact_audit`), rounded up.  More than
        :data:`LOAD_AUDIT_PAIRS` shell pairs: the solver's recorded target (−ln β where none is
        recorded), with a note saying it was not re-audited.  Raises :class:`SpecError` where the
        listed densities are no β-majorant (the law is undefined)."""
        lw = self._audit()
        target = None if math.isnan(self._epsilon) else self._epsilon
        pairs = (self.R + 1) * self.n
        head = f"{self.kind}: beta-majorant over shells; "
        if pairs > LOAD_AUDIT_PAIRS:
            why = f"{pairs} shell pairs above the load-time audit limit of {LOAD_AUDIT_PAIRS}"
            if target is None:
                eps, note = -math.log(self.beta), (f"-ln beta (listed shells audited in floats: log ratio <= {lw:.17g}); "
                                                   f"not re-audited exactly ({why})")
            else:
                eps, note = target, f"the solver's audited target, as recorded by the solve, not re-audited ({why})"
            return Privacy("pure", eps, 0.0, self.sensitivity, "l1", head + note)
        worst = self.__dict__.get("_audited")
        if worst is None:
            worst = self.__dict__["_audited"] = self.exact_audit()
        eps, note = _audited_majorant_epsilon(
            worst, self.beta, target, "densities",
            lambda shown: f"audited at load, exactly on the loaded densities (the floats read exactly): a shift of l1 "
                          f"norm <= the sensitivity moves the shell by at most {self.n}, and the largest ratio "
                          f"profile(j)/profile(k) over |k - j| <= {self.n} touching the listed shells is {shown}; beyond "
                          "them the extension is nonincreasing and drops by beta per n shells")
        return Privacy("pure", eps, 0.0, self.sensitivity, "l1", head + note)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind}")

    sf = cdf

    # -- exact sampler (lattice shells) ---------------------------------------------------------------
    def exact_profile(self) -> tuple:
        """(β, [profile(0), ..., profile(R + n)]) as exact rationals: a_k (floats read exactly) up to R,
        then max_j a_j β^{⌈(k − j)/n⌉}; beyond, profile(k + n) = β profile(k)."""
        from fractions import Fraction

        beta = Fraction(float(self.beta))
        a = [Fraction(float(v)) for v in self.a]
        R, n = self.R, self.n
        pw = [Fraction(1)]
        for _ in range((R + n) // n + 1):
            pw.append(pw[-1] * beta)
        prof = a + [max(a[j] * pw[-(-(R + i - j) // n)] for j in range(R + 1)) for i in range(1, n + 1)]
        return beta, prof

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_exact_law", None)  # a cache, rebuilt on demand
        return state

    def exact_law(self):
        """The lattice law in exact rationals (:class:`optmech.exact.radial.RadialL1Rational`), built once."""
        law = self.__dict__.get("_exact_law")
        if law is None:
            from optmech.exact.radial import RadialL1Rational

            if not self.lattice:
                raise self._refuse("the exact law", "continuous shells have a density (release on a lattice instead)")
            self._audit()
            beta, prof = self.exact_profile()
            law = self.__dict__["_exact_law"] = RadialL1Rational(prof, self.n, beta, self.R, self.dim)
        return law

    def exact_audit(self):
        """The largest exact ratio profile(j)/profile(k) over |k − j| <= n with min(j, k) <= R (a Fraction,
        or math.inf where a zero neighbours a positive value); beyond R the extension is nonincreasing and
        drops by at most β per n shells, so those pairs are within 1/β.  The pairs (and the maximising
        j of each extension value) are screened in floats (logarithms, errors ~1e-13); the exact ratios
        (the floats read exactly, β^m exactly) are taken among those within 1e-8 of the float maximum,
        once per distinct pair of listed values."""
        R, n = self.R, self.n
        lb = math.log(self.beta)
        with np.errstate(divide="ignore"):
            la = np.log(self.a)
        lbeyond = np.empty(n)
        rows = max(1, BLOCK_PAIRS // (R + 1))
        j = np.arange(R + 1)[None, :]
        for s in range(0, n, rows):
            i = np.arange(s + 1, min(s + rows, n) + 1)[:, None]
            lbeyond[s:s + rows] = (la[None, :] + lb * -(-(R + i - j) // n)).max(axis=1)
        lp = np.concatenate([la, lbeyond])  # log profile(0..R + n); only listed shells can be 0 (−inf)
        zero = np.isneginf(lp)
        diffs, pairs = [], []
        for s in range(1, n + 1):
            x, y = lp[:R + 1], lp[s:R + 1 + s]
            if np.any(zero[:R + 1] != zero[s:R + 1 + s]):
                return math.inf
            both = zero[:R + 1] & zero[s:R + 1 + s]
            with np.errstate(invalid="ignore"):
                dv = np.where(both, -np.inf, np.abs(x - y))
            diffs.append(dv)
            pairs.append(s)
        top = max((float(dv.max()) for dv in diffs), default=-math.inf)
        if top == -math.inf:
            return Fraction(1)
        beta = Fraction(float(self.beta))
        exact: dict[int, Fraction] = {}

        def value(k: int) -> Fraction:
            if k not in exact:
                if k <= R:
                    exact[k] = Fraction(float(self.a[k]))
                else:  # max_j a_j β^⌈(k − j)/n⌉ over the j whose float value is near the max
                    jj = np.arange(R + 1)
                    st = -(-(k - jj) // n)
                    lv = la + lb * st
                    near = np.flatnonzero(lv >= lv.max() - 1e-8 * (1.0 + abs(float(lv.max()))))
                    terms = set(zip(self.a[near].tolist(), st[near].tolist()))  # distinct (a_j, steps)
                    exact[k] = max(Fraction(u) * beta**m for u, m in terms)
            return exact[k]

        worst = Fraction(1)
        listed = set()  # pairs of listed shells: their exact ratio depends on the two floats only
        for s, dv in zip(pairs, diffs):
            k = np.flatnonzero(dv >= top - 1e-8)
            inside = k + s <= R
            listed.update(zip(self.a[k[inside]].tolist(), self.a[k[inside] + s].tolist()))
            for q in k[~inside].tolist():
                x, y = value(q), value(q + s)
                worst = max(worst, x / y, y / x)
        for u, v in listed:
            x, y = Fraction(u), Fraction(v)
            worst = max(worst, x / y, y / x)
        return worst

    def _exact_sampler(self):
        """Exact inversion-and-rejection of the radius (masses |S_k| profile(k), exact rationals), then a
        uniform point of the lattice ℓ1 sphere; ``privacy()`` re-audited on the exact profile."""
        if not self.lattice:
            return super()._exact_sampler()
        from optmech.exact import TIMING_NOTE, ExactSampler
        from optmech.exact.reals import log_upper

        law = self.exact_law()
        worst = self.exact_audit()
        eps = math.inf if worst == math.inf else log_upper(max(worst, 1 / law.ratio))
        shown = "inf" if worst == math.inf else f"{float(worst):.17g}"
        note = (f"{self.kind} exact sampler: P(x) = profile(||x||_1) with the listed shell masses and the beta-majorant "
                "extension over shells in exact rationals (the floats read exactly), normalised exactly; audited "
                f"exactly on that law: the largest ratio profile(j)/profile(k) over |k - j| <= n touching the listed "
                f"shells is {shown}; beyond them the extension is nonincreasing and drops by beta per n shells; "
                f"epsilon = max(-ln beta, ln of that ratio), rounded up; {TIMING_NOTE}")
        return ExactSampler(law.sample, dim=self.dim, mechanism=repr(self),
                            privacy=Privacy("pure", eps, 0.0, self.sensitivity, "l1", note),
                            law="l1 shells: exact radius (inversion over the near shells, rejection from a rational "
                                "geometric envelope beyond), uniform lattice l1 sphere")


# ------------------------------------------------------------------------------------------------
# Lipschitz outputs
# ------------------------------------------------------------------------------------------------
def _knots_values(d: dict) -> tuple[np.ndarray, np.ndarray, float, float]:
    x, v = _array(d, "knots", 1), _array(d, "values", 1)
    if len(x) != len(v) or len(x) < 2:
        raise SpecError("knots and values must have the same length (at least 2)")
    if np.any(v <= 0):
        raise SpecError("Lipschitz knot values must be positive")
    h = float(x[1] - x[0])
    if not h > 0 or np.any(np.abs(np.diff(x) - h) > 1e-9 * max(h, np.abs(x).max())):
        raise SpecError("Lipschitz knots must be equally spaced and increasing")
    return x, v, h, _number(d, "tail_rate", positive=True)


def _realised_rate(v: np.ndarray, h: float, lam: float) -> float:
    """Largest |log-slope| of the law (adjacent knots and tails), rounded up."""
    lr = float(np.max(np.abs(np.diff(np.log(v))))) / h
    return float(np.nextafter(max(lr, lam) * (1 + 8 * 2.0**-53), np.inf))


def _lipschitz_privacy(kind: str, eps: float, realised: float, norm: str) -> Privacy:
    if math.isnan(eps):
        return Privacy("lipschitz", realised, 0.0, None, norm,
                       f"{kind}: the law's largest log-slope (|ln f(x) - ln f(y)| <= epsilon ||x - y||) [KHP15]")
    if realised > eps:  # the law as loaded does not meet its recorded target: state what it has
        return Privacy("lipschitz", realised, 0.0, None, norm,
                       f"{kind}: the law's largest log-slope, above the recorded target {eps!r} [KHP15]")
    return Privacy("lipschitz", eps, 0.0, None, norm,
                   f"{kind}: the solver's audited target (the law's largest log-slope is {realised:.17g}) [KHP15]")


class _Lipschitz1D(SolvedMechanism, Mechanism):
    symmetric = False

    def _setup(self, d: dict, epsilon: float | None) -> None:
        self._keep(d, epsilon)
        if d.get("per_coordinate"):
            raise SpecError("per_coordinate Lipschitz outputs are LipschitzProduct laws (use mechanism_from_solver_dict)")
        self.x, self.v, self.h, self.lam = _knots_values(d)
        self._sensitivity = None
        self.norm = "abs"

    def privacy(self) -> Privacy:
        return _lipschitz_privacy(self.kind, self._epsilon, _realised_rate(self.v, self.h, self.lam), self.norm)

    def sf(self, x):
        x = np.asarray(x, dtype=float)
        y = self._upper(x)
        return y[()] if y.ndim == 0 else y

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        y = self._lower(x)
        return y[()] if y.ndim == 0 else y

    def var(self) -> float:
        m = self.mean()
        return float(self._moment(2) - m * m)

    def _mean(self):
        return self._moment(1)

    def _power_of(self, cost) -> int:
        from optmech.mechanisms import numerics as nx

        if isinstance(cost, str):
            from optmech.costs import parse_cost

            cost = parse_cost(cost)
        p = nx.integer_power_of(cost)
        if p is None:
            raise self._refuse(f"the expected cost {getattr(cost, 'spec', cost)!r}",
                               "only |x|^P with an integer P has an exact sum here; use the certified upper bound")
        return p


class LipschitzPoints(_Lipschitz1D):
    """ε-Lipschitz-private pmf on ℤ (``lipschitz_points``): P(x_j) ∝ v_j at the integer knots, and
    P(x_K + m) ∝ v_K e^{−λm}, P(x_0 − m) ∝ v_0 e^{−λm} (m >= 1) beyond, λ = ``tail_rate``
    (``upper_points`` of the Lipschitz family); Z = Σ v + (v_0 + v_K) b/(1 − b), b = e^{−λ}."""

    name = "lipschitz_points"
    lattice = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._setup(d, epsilon)
        if self.h != 1.0 or np.any(self.x != np.round(self.x)):
            raise SpecError("lipschitz_points knots must be consecutive integers")
        self.b = math.exp(-self.lam)
        t = self.b / -math.expm1(-self.lam)  # Σ_{m>=1} b^m
        self.Z = math.fsum(self.v) + (self.v[0] + self.v[-1]) * t
        self.p = self.v / self.Z
        self.left, self.right = self.v[0] * t / self.Z, self.v[-1] * t / self.Z
        self._cum = np.cumsum(self.p)
        self._lo, self._hi = int(self.x[0]), int(self.x[-1])

    def _pmf(self, k):
        k = np.asarray(k, dtype=float)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        inside = (k >= self._lo) & (k <= self._hi)
        out = np.where(inside, self.p[i], 0.0)
        b = self.b
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k > self._hi, self.p[-1] * b ** (k - self._hi), out)
            out = np.where(k < self._lo, self.p[0] * b ** (self._lo - k), out)
        return out

    def _lower(self, x):
        """P(X <= x)."""
        k = np.floor(x)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        t = self.b / -math.expm1(-self.lam)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k < self._lo, self.p[0] * self.b ** (self._lo - k) / -math.expm1(-self.lam),
                           self.left + self._cum[i])
            return np.where(k >= self._hi, 1.0 - self.p[-1] * t * self.b ** np.maximum(k - self._hi, 0), out)

    def _upper(self, x):
        """P(X > x), from the right."""
        k = np.floor(x)
        i = np.clip(k - self._lo, 0, len(self.p) - 1).astype(np.int64)
        suffix = np.concatenate([np.cumsum(self.p[::-1])[::-1], [0.0]])
        t = self.b / -math.expm1(-self.lam)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(k >= self._hi, self.p[-1] * t * self.b ** np.maximum(k - self._hi, 0),
                           suffix[i + 1] + self.right)
            return np.where(k < self._lo, 1.0 - self.p[0] * self.b ** (self._lo - k) / -math.expm1(-self.lam), out)

    def _sample(self, n, rng):
        u = rng.random(n)
        out = np.empty(n, dtype=np.int64)
        left = u < self.left
        right = u >= 1.0 - self.right
        mid = ~(left | right)
        i = np.minimum(np.searchsorted(self._cum, u[mid] - self.left, side="right"), len(self.p) - 1)
        out[mid] = self._lo + i
        p = -math.expm1(-self.lam)  # P(m) ∝ b^m, m >= 1
        out[left] = self._lo - rng.geometric(p, size=int(left.sum()))
        out[right] = self._hi + rng.geometric(p, size=int(right.sum()))
        return out

    def _entropy(self):
        # window −Σ p ln p; each tail Σ_{m>=1} p_e b^m (−ln p_e − mλ) = p_e [−ln p_e · t + λ b/(1−b)²],
        # t = Σ_{m>=1} b^m = b/(1−b), p_e the end knot's mass
        p = self.p[self.p > 0]
        one_minus = -math.expm1(-self.lam)
        t = self.b / one_minus
        tail = math.fsum(pe * (-math.log(pe) * t + self.lam * self.b / one_minus**2)
                         for pe in (self.p[0], self.p[-1]) if pe > 0)
        return -math.fsum(p * np.log(p)) + tail

    def _tail_terms(self, P: int) -> tuple[np.ndarray, np.ndarray]:
        """(m, b^m) for m = 1..M, M past the peak of m^P b^m by enough that the rest of
        Σ (|x| + m)^P b^m is below 1e-18 of the sum (the terms' ratio is then < e^{−λ/2})."""
        big = 2.0 + abs(self._lo) + abs(self._hi)
        M = int(math.ceil((2 * P + 2) / self.lam + (45.0 + P * math.log(big + 2 * P / self.lam)) / self.lam)) + 64
        m = np.arange(1, M + 1, dtype=float)
        return m, np.exp(-self.lam * m)

    def _moment(self, P: int) -> float:
        """E X^P (signed): the window sum plus the tails summed to rounding (:meth:`_tail_terms`)."""
        m, w = self._tail_terms(P)
        return float(math.fsum(self.p * self.x**P) + math.fsum(self.p[-1] * w * (self._hi + m) ** P)
                     + math.fsum(self.p[0] * w * (self._lo - m) ** P))

    def expected_cost(self, cost) -> float:
        """E|X|^P for integer P (abs, square, pow:P): the window sum plus the tails summed to rounding."""
        P = self._power_of(cost)
        m, w = self._tail_terms(P)
        return float(math.fsum(self.p * np.abs(self.x) ** P) + math.fsum(self.p[-1] * w * np.abs(self._hi + m) ** P)
                     + math.fsum(self.p[0] * w * np.abs(self._lo - m) ** P))


class LipschitzCells(_Lipschitz1D):
    """ε-Lipschitz-private density on ℝ (``lipschitz_cells``): f(x) ∝ v_j e^{s_j (x − x_j)} on
    [x_j, x_{j+1}], s_j = ln(v_{j+1}/v_j)/h, and v_K e^{−λ(x − x_K)}, v_0 e^{−λ(x_0 − x)} beyond the
    knots (``upper_cells`` of the Lipschitz family); piece masses h·v_j·(e^{y} − 1)/y, y = s_j h."""

    name = "lipschitz_cells"
    lattice = False

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._setup(d, epsilon)
        lv = np.log(self.v)
        self.y = lv[1:] - lv[:-1]
        piece = self.h * self.v[:-1] * exprel(self.y)
        tails = np.array([self.v[0], self.v[-1]]) / self.lam
        self.Z = math.fsum(piece) + math.fsum(tails)
        self.piece = piece / self.Z
        self.left, self.right = tails / self.Z
        self._cum = np.concatenate([[0.0], np.cumsum(self.piece)])

    def _pdf(self, x):
        x = np.asarray(x, dtype=float)
        j = np.clip(np.floor((x - self.x[0]) / self.h), 0, len(self.y) - 1).astype(np.int64)
        t = x - self.x[j]
        out = self.v[j] * np.exp(self.y[j] * t / self.h)
        with np.errstate(over="ignore", under="ignore"):
            out = np.where(x > self.x[-1], self.v[-1] * np.exp(-self.lam * (x - self.x[-1])), out)
            out = np.where(x < self.x[0], self.v[0] * np.exp(-self.lam * (self.x[0] - x)), out)
        return out / self.Z

    def _partial(self, x):
        """(piece index j, mass of [x_j, x] within the piece)."""
        j = np.clip(np.floor((x - self.x[0]) / self.h), 0, len(self.y) - 1).astype(np.int64)
        t = np.clip(x - self.x[j], 0.0, self.h)
        return j, self.v[j] * t * exprel(self.y[j] * t / self.h) / self.Z

    def _lower(self, x):
        j, part = self._partial(x)
        out = self.left + self._cum[j] + part
        with np.errstate(under="ignore"):
            out = np.where(x < self.x[0], self.left * np.exp(-self.lam * (self.x[0] - x)), out)
            return np.where(x > self.x[-1], 1.0 - self.right * np.exp(-self.lam * (x - self.x[-1])), out)

    def _upper(self, x):
        j, part = self._partial(x)
        out = self.right + (self._cum[-1] - self._cum[j] - part)
        with np.errstate(under="ignore"):
            out = np.where(x > self.x[-1], self.right * np.exp(-self.lam * (x - self.x[-1])), out)
            return np.where(x < self.x[0], 1.0 - self.left * np.exp(-self.lam * (self.x[0] - x)), out)

    def _sample(self, n, rng):
        w = np.concatenate([[self.left], self.piece, [self.right]])
        i = _categorical(w, n, rng)
        out = np.empty(n)
        left, right = i == 0, i == len(w) - 1
        out[left] = self.x[0] - rng.standard_exponential(int(left.sum())) / self.lam
        out[right] = self.x[-1] + rng.standard_exponential(int(right.sum())) / self.lam
        mid = ~(left | right)
        j = i[mid] - 1
        y, u = self.y[j], rng.random(int(mid.sum()))
        small = np.abs(y) < 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(small, u, np.log1p(u * np.expm1(y)) / np.where(small, 1.0, y))  # inverse cdf on [0, 1)
        out[mid] = self.x[j] + self.h * np.clip(t, 0.0, 1.0)
        return out

    def _integral(self, P: int, absolute: bool) -> float:
        """∫ g(x) f(x) dx, g = |x|^P or x^P: Gauss-Legendre on the pieces (split at 0; g·f is a
        polynomial times an exponential there, integrated to rounding) and the tails in closed form."""
        a, b = self.x[:-1], self.x[1:]
        edges = [(a, np.minimum(b, np.maximum(a, 0.0))), (np.maximum(a, np.minimum(b, 0.0)), b)]
        t, w = _gauss_legendre(max(12, P + 8))
        total = 0.0
        for lo, hi in edges:
            u = lo[:, None] + (hi - lo)[:, None] * t[None, :]
            f = self.v[:-1, None] * np.exp(self.y[:, None] * (u - a[:, None]) / self.h)
            g = np.abs(u) ** P if absolute else u**P
            total += math.fsum(((hi - lo) * (w[None, :] * f * g).sum(axis=1)))
        lam = self.lam
        for x0, v0, sign in ((float(self.x[-1]), self.v[-1], 1.0), (float(self.x[0]), self.v[0], -1.0)):
            # ∫_0^∞ (x0 + sign·s)^P v0 e^{−λs} ds = v0 Σ_j C(P, j) x0^{P−j} sign^j j!/λ^{j+1}
            if absolute and x0 * sign < 0:
                raise self._refuse("the expected cost", "the knots must straddle 0")
            base = abs(x0) if absolute else x0
            sg = 1.0 if absolute else sign
            total += v0 * math.fsum(math.comb(P, j) * base ** (P - j) * sg**j * math.factorial(j) / lam ** (j + 1)
                                    for j in range(P + 1))
        return total / self.Z

    def _moment(self, P: int) -> float:
        return self._integral(P, absolute=False)

    def expected_cost(self, cost) -> float:
        """E|X|^P for integer P (abs, square, pow:P): pieces by Gauss-Legendre, tails in closed form."""
        return float(self._integral(self._power_of(cost), absolute=True))


class LipschitzRadial(SolvedMechanism, NDMechanism):
    """ℓ2-Lipschitz radial density on ℝ^d (``lipschitz_radial``; the solver writes ``lipschitz_shells``):
    f(x) = p(‖x‖₂)/(S_{d−1} Z), p log-linear through ``values`` at the ``knots`` r_k and
    p(r) = v_K e^{−λ(r − r_K)} beyond, S_{d−1} = 2π^{d/2}/Γ(d/2), Z = ∫ p(r) r^{d−1} dr
    (``upper_radial`` of the Lipschitz family; module docstring for the sampler)."""

    name = "lipschitz_radial"
    symmetric = True
    _norm = "l2"

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon)
        self._init_dim(int(_number(d, "dim", default=1, integer=True, positive=True)))
        self.r, self.v, self.h, self.lam = _knots_values(d)
        if self.r[0] != 0.0:
            raise SpecError("radial knots must start at r = 0")
        self._sensitivity = None
        self.norm = "l2" if self.dim > 1 else "abs"
        self.y = np.diff(np.log(self.v))
        self._radial = self._radial_masses(self.dim - 1)
        self.Z = math.fsum(self._radial)
        lsphere = math.log(2.0) + 0.5 * self.dim * math.log(math.pi) - float(gammaln(0.5 * self.dim))
        self._log_c = -lsphere - math.log(self.Z)

    def _radial_masses(self, p: int) -> np.ndarray:
        """∫ r^p profile(r) dr over each piece and the tail (last entry)."""
        a = self.r[:-1]
        t, w = _gauss_legendre(max(16, p // 2 + 12))
        u = a[:, None] + self.h * t[None, :]
        f = self.v[:-1, None] * np.exp(self.y[:, None] * t[None, :])
        pieces = self.h * (w[None, :] * f * u**p).sum(axis=1)
        R, lam = float(self.r[-1]), self.lam
        tail = self.v[-1] * math.fsum(math.comb(p, j) * R ** (p - j) * math.factorial(j) / lam ** (j + 1)
                                      for j in range(p + 1))
        return np.append(pieces, tail)

    def profile(self, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r, dtype=float)
        j = np.clip(np.floor(r / self.h), 0, len(self.y) - 1).astype(np.int64)
        out = self.v[j] * np.exp(self.y[j] * (r - self.r[j]) / self.h)
        with np.errstate(under="ignore"):
            return np.where(r > self.r[-1], self.v[-1] * np.exp(-self.lam * (r - self.r[-1])), out)

    def _pdf_nd(self, x):
        return np.exp(self._log_c) * self.profile(np.sqrt((x * x).sum(axis=-1)))

    def _radii(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.dim
        i = _categorical(self._radial, n, rng)
        r = np.empty(n)
        tail = i == len(self._radial) - 1
        m = int(tail.sum())
        if m:  # r = R + Y, Y ∝ (R + y)^{d−1} e^{−λy}: a mixture of Gamma(j + 1, 1/λ)
            R = float(self.r[-1])
            js = np.arange(d)
            wj = np.array([math.comb(d - 1, j) * R ** (d - 1 - j) * math.factorial(j) / self.lam ** (j + 1) for j in js])
            j = _categorical(wj, m, rng)
            r[tail] = R + rng.standard_gamma(j + 1.0) / self.lam
        todo = np.flatnonzero(~tail)
        while todo.size:  # on [a, a + h]: propose ∝ r^{d−1}, accept e^{y t}/max(1, e^y)
            j = i[todo]
            a = self.r[j]
            b = a + self.h
            u = rng.random(todo.size)
            rr = (a**d + u * (b**d - a**d)) ** (1.0 / d)
            t = np.clip((rr - a) / self.h, 0.0, 1.0)
            y = self.y[j]
            ok = rng.random(todo.size) < np.exp(y * t - np.maximum(y, 0.0))
            r[todo[ok]] = rr[ok]
            todo = todo[~ok]
        return r

    def _sample(self, n, rng):
        r = self._radii(n, rng)
        if self.dim == 1:
            return (r * np.where(rng.random(n) < 0.5, -1.0, 1.0))[:, None]
        z = rng.standard_normal((n, self.dim))
        z *= (r / np.sqrt((z * z).sum(axis=1)))[:, None]
        return z

    def radial_moment(self, P: int) -> float:
        """E‖X‖₂^P (integer P >= 0)."""
        return float(math.fsum(self._radial_masses(self.dim - 1 + P)) / self.Z)

    def expected_cost(self, cost) -> float:
        """E‖X‖₂ (``l2``) or E‖X‖₂² (``l2sq``) (in 1-D also ``l1``/``abs``, ``square``)."""
        c = _cost_nd(cost, self.dim)
        if c.kind == "l2" or (self.dim == 1 and c.kind in ("l1", "linf")):
            return self.radial_moment(1)
        if c.kind == "l2sq":
            return self.radial_moment(2)
        raise self._refuse(f"the expected cost {c.spec!r}", "a radial law prices l2 and l2sq only")

    def mean(self) -> np.ndarray:
        return np.zeros(self.dim)

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.radial_moment(2) / self.dim)

    def privacy(self) -> Privacy:
        """ε-Lipschitz in ℓ2: |ln f(x) − ln f(y)| <= L |‖x‖ − ‖y‖| <= L‖x − y‖₂, L the profile's largest log-slope."""
        return _lipschitz_privacy(self.kind, self._epsilon, _realised_rate(self.v, self.h, self.lam), self.norm)

    def cdf(self, x):
        raise TypeError(f"cdf is not available for the solver mechanism {self.kind} (use pdf)")

    sf = cdf


class LipschitzShells(LipschitzRadial):
    """The same law under the kind the radial Lipschitz solver writes today (``lipschitz_shells``)."""

    name = "lipschitz_shells"


class LipschitzProduct(SolvedMechanism, NDMechanism):
    """ℓ1-Lipschitz noise on ℤ^d or ℝ^d (``per_coordinate: true``): d = ``dim`` i.i.d. copies of the
    1-D law of the same dict ([KHP15, §8]; the Lipschitz family's ℓ1 product).  ε-Lipschitz in ℓ1
    when the 1-D law is ε-Lipschitz; a dict with ``norm: "l2"`` reports √d times that rate unless it
    records ``epsilon`` (read as the rate in its norm)."""

    symmetric = False

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        self._keep(d, epsilon)
        if not d.get("per_coordinate"):
            raise SpecError("LipschitzProduct needs per_coordinate: true")
        if "dim" not in d:
            raise SpecError("a per_coordinate Lipschitz mechanism needs its dimension (the 'dim' field)")
        self._init_dim(int(_number(d, "dim", integer=True, positive=True)))
        one = {k: v for k, v in d.items() if k not in ("per_coordinate", "name", "epsilon", "dim", "norm")}
        kind = d.get("kind")
        if kind == "lipschitz_points":
            self.one = LipschitzPoints(one)
        elif kind == "lipschitz_cells":
            self.one = LipschitzCells(one)
        else:
            raise SpecError(f"per_coordinate is defined for lipschitz_points and lipschitz_cells, not {kind!r}")
        self.lattice = self.one.lattice
        self.name = kind
        self.norm = str(d.get("norm", "l1"))
        self._sensitivity = None

    def _pmf_nd(self, k):
        return np.prod(self.one._pmf(k), axis=-1)

    def _pdf_nd(self, x):
        return np.prod(self.one._pdf(x), axis=-1)

    def _sample(self, n, rng):
        return self.one._sample(n * self.dim, rng).reshape(n, self.dim)

    def expected_cost(self, cost) -> float:
        """E‖X‖₁ = d E|X₁| and E‖X‖₂² = d E X₁² (exact 1-D sums); other costs are refused."""
        c = _cost_nd(cost, self.dim)
        if c.kind == "l1" or (self.dim == 1 and c.kind in ("l2", "linf")):
            return self.dim * self.one.expected_cost("abs")
        if c.kind == "l2sq":
            return self.dim * self.one.expected_cost("square")
        raise self._refuse(f"the expected cost {c.spec!r}", "the product law prices the separable costs l1 and l2sq only")

    def mean(self) -> np.ndarray:
        return np.full(self.dim, self.one.mean())

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.one.var())

    def privacy(self) -> Privacy:
        rate = _realised_rate(self.one.v, self.one.h, self.one.lam)
        if self.norm == "l2":
            rate = float(np.nextafter(rate * math.sqrt(self.dim) * (1 + 4 * 2.0**-53), np.inf))
        return _lipschitz_privacy(f"{self.kind} (per coordinate, dim {self.dim})", self._epsilon, rate, self.norm)

    def cdf(self, x):
        if self.dim == 1:
            return self.one.cdf(x)
        return super().cdf(x)

    def sf(self, x):
        if self.dim == 1:
            return self.one.sf(x)
        return super().sf(x)


# ------------------------------------------------------------------------------------------------
# dispatch
# ------------------------------------------------------------------------------------------------
def mechanism_from_solver_dict(d: dict, *, epsilon: float | None = None, delta: float | None = None) -> Mechanism:
    """The library :class:`Mechanism` of a solver's ``mechanism`` dict (module docstring): the kinds
    of :data:`SOLVER_KINDS`, and a library mechanism's own ``to_dict()`` (a ``name`` registered with
    :meth:`Mechanism.from_dict` and no ``kind``: the closed-form references a family may return).

    Parameters
    ----------
    d : dict
        The solver dict (``result.to_dict(include_mechanism=True)["mechanism"]``), with a ``kind``
        in :data:`SOLVER_KINDS` (a ``name`` key equal to ``kind`` is accepted and dropped).
    epsilon, delta : float, optional
        The privacy parameters the law was audited for, where the dict lacks ``epsilon``/``delta``
        (solver kinds only; a library mechanism's dict carries its own parameters).

    Raises
    ------
    SpecError
        An unknown kind or a malformed dict (one line).
    """
    if not isinstance(d, dict):
        raise SpecError("a solver mechanism must be a dict")
    kind = d.get("kind", d.get("name"))
    if "kind" not in d and kind not in SOLVER_KINDS and kind in REGISTRY:
        return Mechanism.from_dict(d)
    if "kind" not in d and kind is not None:
        d = {"kind": kind, **{k: v for k, v in d.items() if k != "name"}}
    if kind == "lattice_pmf_nd":
        return LatticePMFND(d, epsilon=epsilon, delta=delta)
    if kind in ("lipschitz_points", "lipschitz_cells") and d.get("per_coordinate"):
        return LipschitzProduct(d, epsilon=epsilon)
    classes = {"cell_pmf_nd": CellPMFND, "l1_shell_density_nd": ShellDensityND, "lipschitz_points": LipschitzPoints,
               "lipschitz_cells": LipschitzCells, "lipschitz_radial": LipschitzRadial,
               "lipschitz_shells": LipschitzShells, "cube_pmf_nd": CubePMFND}
    if kind not in classes:
        raise SpecError(f"unknown solver mechanism kind {kind!r} (known: {', '.join(SOLVER_KINDS)})")
    return classes[kind](d, epsilon=epsilon, delta=delta)


# ------------------------------------------------------------------------------------------------
# cube_pmf_nd: the (ε, δ) ℝ^d solver's finite cube density
# ------------------------------------------------------------------------------------------------
#: Gauss–Legendre nodes per axis of :meth:`CubePMFND.expected_cost` for costs without closed-form cube means.
CUBE_QUADRATURE_NODES = 8


def _cube_means_closed(kind: str, h: float, z: np.ndarray) -> np.ndarray:
    """Mean of L over each cube h(z + [−½, ½)^d) in closed form (``l1``, ``l2sq``)."""
    a, b = h * (z - 0.5), h * (z + 0.5)
    if kind == "l1":  # mean |x| on [a, b]: |midpoint| off 0, (a² + b²)/(2(b − a)) across it
        m = np.where(a >= 0, 0.5 * (a + b), np.where(b <= 0, -0.5 * (a + b), (a * a + b * b) / (2 * (b - a))))
        return m.sum(axis=-1)
    return ((a * a + a * b + b * b) / 3.0).sum(axis=-1)


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
        LatticePMFND._head(self, d)
        if self.group not in ("none", "signed_permutations"):
            raise SpecError("cube_pmf_nd lists every cube (symmetry 'none') or signed-permutation orbits")
        if self.norm not in ("l1", "l2"):
            raise SpecError(f"cube_pmf_nd: the sensitivity's norm is l1 or l2, got {self.norm!r}")
        self.h = _number(d, "cell_width", positive=True)
        self._sensitivity = _number(d, "sensitivity", positive=True)
        n = round(self._sensitivity / self.h)
        if n < 1 or abs(n * self.h - self._sensitivity) > 1e-9 * self._sensitivity:
            raise SpecError("cell_width must divide the sensitivity")
        self.cells_per_sensitivity = int(n)
        self.sizes = orbit_sizes(self.reps, self.group)
        self.weights = self.mass * self.sizes  # each orbit's total mass
        self.Z = math.fsum(self.weights)
        if not self.Z > 0:
            raise SpecError("the solver mechanism has no mass")
        rd = d.get("realised_delta")
        self.realised_delta = None if rd is None else _number(d, "realised_delta")
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
        z = _random_images(self.reps[i], self.group, rng)
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
        c = _cost_nd(cost, self.dim)
        if c.kind in ("l1", "l2sq"):
            return float(math.fsum(self.weights * _cube_means_closed(c.kind, self.h, self.reps)) / self.Z)
        if c.kind == "expr" and self.group != "none":
            raise self._refuse(f"the expected cost {c.spec!r}", "an expression is not invariant under the listed orbits")
        m = CUBE_QUADRATURE_NODES
        if m**self.dim * len(self.reps) > MAX_PAIRS:
            raise self._refuse(f"the expected cost {c.spec!r}", f"{m}^{self.dim} quadrature nodes per cube is too many")
        t, w = _gauss_legendre(m)
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
        cube × shift terms than :data:`LOAD_AUDIT_PAIRS`)."""
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
                if terms > LOAD_AUDIT_PAIRS:
                    cached = (None, f"{terms} cube x shift terms above the load-time audit limit of {LOAD_AUDIT_PAIRS}")
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
