r"""Points of ℤ^d for the solver-output laws (:mod:`optmech.mechanisms.solved`): lookup, orbits, enumeration.

The pure d-D and (ε, δ) d-D solvers list their masses per orbit representative of a symmetry group
("none"; "coordinate signs": representative = |x|; "signed permutations": sorted |x|).  Here: the exact
lookup of listed points (:class:`PointIndex`), the representatives and orbit sizes
(:func:`canonical_points`, :func:`orbit_sizes`, :func:`orbit_sizes_exact`), a uniform point of an
orbit (:func:`random_images`), the orbits of ℓ1 balls and spheres (:func:`l1_ball_orbits`,
:func:`l1_shell_orbits`), a uniform point of a lattice ℓ1 sphere (:func:`uniform_lattice_l1_sphere`)
and the reading of a dict's listed points (:func:`read_listed_points`, shared by the lattice, cell
and cube laws).
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.solved.common import GROUPS, read_array, read_number

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


def random_images(reps: np.ndarray, group: str, rng: np.random.Generator) -> np.ndarray:
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


def l1_ball_orbits(d: int, K: int, group: str) -> np.ndarray:
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
    from scipy.special import comb  # lazy: scipy's first import costs the command line about 0.2 s

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


def l1_shell_orbits(d: int, k: int, group: str) -> np.ndarray:
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


def orbit_sizes_exact(pts: np.ndarray, group: str) -> list[int]:
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


def read_listed_points(mech, d: dict) -> None:
    """Read the listed points of a solver dict onto ``mech`` (an
    :class:`~optmech.mechanisms.base_nd.NDMechanism`): its dimension ``dim``, ``norm`` (default
    ``l1``), the group of ``symmetry`` (``group``), the integer ``representatives`` (``reps``,
    canonical for the group), one nonnegative ``mass`` each (``mass``) and their :class:`PointIndex`
    (``index``).  The fields the lattice, cell and cube laws share."""
    mech._init_dim(int(read_number(d, "dim", integer=True, positive=True)))
    mech.norm = str(d.get("norm", "l1"))
    mech.group = GROUPS.get(d.get("symmetry", "none"))
    if mech.group is None:
        raise SpecError(f"unknown symmetry {d.get('symmetry')!r} (known: {', '.join(GROUPS)})")
    reps = read_array(d, "representatives", 2)
    if reps.shape[1] != mech.dim or np.any(reps != np.round(reps)):
        raise SpecError(f"representatives must be integer points of dimension {mech.dim}")
    mech.reps = reps.astype(np.int64)
    mech.mass = read_array(d, "mass", 1)
    if len(mech.mass) != len(mech.reps) or np.any(mech.mass < 0):
        raise SpecError("mass must be one nonnegative number per representative")
    if np.any(canonical_points(mech.reps, mech.group) != mech.reps):
        raise SpecError(f"representatives must be canonical for the symmetry {d.get('symmetry')!r}")
    mech.index = PointIndex(mech.reps)
