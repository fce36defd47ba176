r"""The d-dimensional discrete staircase on ℤ^d for integer ℓ1 sensitivity Δ [derived].

The lattice analogue of the ℓ1 staircase [GKOV15, §II; Geng13, §3.2]: with b = e^{−ε} and 1 <= r <= Δ,

.. math:: P(x) = a\,\varphi(\|x\|_1), \qquad \varphi(k) = b^{\lfloor (k - r)/\Delta \rfloor + 1},

i.e. φ(qΔ + j) = b^q for j < r and b^{q+1} for r <= j < Δ (the 1-D P_r of [Geng13] (2.17) at d = 1).
A shift ‖t‖₁ <= Δ moves ‖x‖₁ by at most Δ and the level ⌊(k − r)/Δ⌋ by at most one, so P is
ε-DP for ℓ1 sensitivity Δ.  Δ = 1 is the product of two-sided geometric laws, exactly optimal for
separable symmetric nondecreasing costs; for Δ >= 2 the full lattice LP optimum equalled the best
member of this family in every case tested so far (d ∈ {3, 4, 5}).

Lattice ℓ1 spheres [derived]: |S_0| = 1 and for k >= 1

.. math:: |S_k| = \sum_{j=1}^{\min(d,k)} 2^j \binom{d}{j}\binom{k-1}{j-1}

(j nonzero coordinates, their signs, and a composition of k into j positive parts), and
[derived here from Σ over compositions of a₁² = [z^k] z^j(1+z)/(1−z)^{j+2}]

.. math:: \sum_{\|x\|_1 = k} \|x\|_2^2 = \sum_{j} 2^j \binom{d}{j}\, j\,\Bigl[\binom{k+1}{j+1} + \binom{k}{j+1}\Bigr].

Costs ``l1`` and ``l2sq`` (and the normaliser) are series over k, grouped by the offset k mod Δ so
that every r is priced at once; they are summed until a ratio-test bound puts the tail below
1e-17 of the total.  ``l2`` and ``linf`` have no sphere formula here and are refused.
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import ProblemTooLarge, SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.base_nd import check_dim, NDMechanism
from optmech.problems.pure_nd import sphere_sizes  # noqa: F401  (re-exported)

__all__ = ["DiscreteStaircaseND", "sphere_sizes", "sphere_l2sq_sums", "discrete_staircase_nd_costs"]

#: Largest number of radii a series may use.
MAX_TERMS = 5 * 10**7


def sphere_l2sq_sums(k: np.ndarray, d: int) -> np.ndarray:
    """Σ_{‖x‖₁ = k} ‖x‖₂² (0 at k = 0)."""
    from scipy.special import comb  # lazy: scipy's first import costs the command line about 0.2 s

    k = np.asarray(k, dtype=np.int64)
    out = np.zeros(k.shape)
    for j in range(1, d + 1):
        out += 2.0**j * comb(d, j) * j * (comb(k + 1, j + 1) + comb(k, j + 1))
    return out


def _radii(eps: float, delta: int, degree: int) -> int:
    """K such that Σ_{k>K} k^degree e^{−εk/Δ} <= 1e-17 of the total (ratio test)."""
    a = eps / delta
    K = int(math.ceil((2.0 * degree + 2.0) / a + 45.0 / a)) + delta
    while True:
        # for k >= K >= 2·degree/a: term(k+1)/term(k) <= e^{degree/K − a} <= e^{−a/2}
        log_tail = degree * math.log(K) - a * K - math.log(-math.expm1(-a / 2.0))
        log_head = 0.0  # the k = 0 term of the normaliser is 1
        if K >= 2 * degree / a and log_tail - log_head < math.log(1e-17):
            break
        K *= 2
    if K > MAX_TERMS:
        raise ProblemTooLarge(f"the d-D discrete staircase series needs {K:.2g} radii (epsilon/sensitivity = {a:g}): raise epsilon")
    return K


def _offset_sums(eps: float, delta: int, d: int, weight: str) -> np.ndarray:
    """A_j = Σ_q b^q w(qΔ + j) for j = 0..Δ−1, w = |S_k| (``count``), k|S_k| (``l1``) or the ℓ2² sum."""
    degree = d - 1 + (1 if weight == "l1" else 2 if weight == "l2sq" else 0)
    K = _radii(eps, delta, degree)
    out = np.zeros(delta)
    for start in range(0, K + 1, 1 << 22):
        k = np.arange(start, min(K, start + (1 << 22) - 1) + 1)
        q, j = np.divmod(k, delta)
        w = sphere_sizes(k, d)
        if weight == "l1":
            w = w * k
        elif weight == "l2sq":
            w = sphere_l2sq_sums(k, d)
        out += np.bincount(j, weights=w * np.exp(-eps * q), minlength=delta)
    return out


def _by_r(A: np.ndarray, b: float) -> np.ndarray:
    """Σ_{j<r} A_j + b Σ_{j>=r} A_j for r = 1..Δ."""
    head = np.cumsum(A)[:]
    total = A.sum()
    return head + b * (total - head)


def discrete_staircase_nd_costs(cost: str, epsilon, sensitivity, dim) -> np.ndarray:
    """E L(X) for r = 1..Δ (index r − 1), for ``cost`` in {"l1", "l2sq"}.

    >>> import math
    >>> b = math.exp(-1)          # Δ = 1, r = 1: the product of two geometric laws
    >>> costs = discrete_staircase_nd_costs("l1", 1, 1, 2)
    >>> costs.shape, math.isclose(float(costs[0]), 2 * 2 * b / (1 - b * b))
    ((1,), True)
    """
    eps, D, d = nx.check_epsilon(epsilon), nx.check_sensitivity(sensitivity, integer=True), check_dim(dim)
    if cost not in ("l1", "l2sq"):
        raise SpecError(f"the d-D discrete staircase prices l1 and l2sq (sphere sums); got {cost!r}")
    b = math.exp(-eps)
    Z = _by_r(_offset_sums(eps, D, d, "count"), b)
    N = _by_r(_offset_sums(eps, D, d, cost), b)
    return N / Z


class DiscreteStaircaseND(NDMechanism):
    r"""The ℓ1 discrete staircase on ℤ^d (module docstring), ε-DP for integer ℓ1 sensitivity Δ.

    Parameters
    ----------
    epsilon : float in (0, 700]
    sensitivity : int >= 1
    r : int in [1, Δ]
    dim : int >= 1

    >>> import math
    >>> mech = DiscreteStaircaseND(epsilon=1, sensitivity=1, r=1, dim=2)
    >>> c, b = math.tanh(0.5), math.exp(-1)           # Δ = 1: c² b^{‖k‖₁}
    >>> math.isclose(float(mech.pmf([2, -1])), c * c * b**3)
    True
    >>> mech.sample(5, rng=0).shape
    (5, 2)
    """

    name = "discrete_staircase_nd"
    lattice = True
    _param_names = ("r", "dim")

    def __init__(self, *, epsilon, sensitivity, r, dim) -> None:
        super().__init__(epsilon=epsilon, sensitivity=sensitivity)
        self._init_dim(dim)
        self.r = nx.check_int_range(r, "r", 1, self.sensitivity)
        self._b = math.exp(-self.epsilon)
        Z = _by_r(_offset_sums(self.epsilon, self.sensitivity, self.dim, "count"), self._b)[self.r - 1]
        self._log_a = -math.log(Z)
        self._radius_table = None

    @classmethod
    def optimal(cls, cost: str, *, epsilon, sensitivity, dim) -> "DiscreteStaircaseND":
        """The member with r* = argmin_r E L (``l1`` or ``l2sq``; smallest r on ties)."""
        values = discrete_staircase_nd_costs(cost, epsilon, sensitivity, dim)
        return cls(epsilon=epsilon, sensitivity=sensitivity, r=int(np.argmin(values)) + 1, dim=dim)

    def _level(self, k: np.ndarray) -> np.ndarray:
        return np.floor((k - self.r) / self.sensitivity) + 1.0

    def _pmf_nd(self, k):
        return np.exp(self._logpmf_nd(k))

    def _logpmf_nd(self, k):
        return self._log_a - self.epsilon * self._level(np.abs(k).sum(axis=-1))

    def _cost_nd(self, name, m, cost):
        if name not in ("l1", "l2sq"):
            raise SpecError(f"the d-D discrete staircase prices l1 and l2sq; got {cost!r}")
        return float(discrete_staircase_nd_costs(name, self.epsilon, self.sensitivity, self.dim)[self.r - 1])

    def var(self) -> np.ndarray:
        return np.full(self.dim, self.expected_cost("l2sq") / self.dim)

    def _make_1d(self):
        from optmech.mechanisms.discrete_staircase import DiscreteStaircase

        return DiscreteStaircase(epsilon=self.epsilon, sensitivity=self.sensitivity, r=self.r)

    def _exact_sampler(self):
        """Exact inversion of the radius ‖X‖₁ (masses |S_k| b^{level(k)} bracketed in integers, the
        normaliser by a partial sum and a proven tail bound), then a uniform point of that lattice
        sphere (:class:`optmech.exact.laws.DiscreteStaircaseL1`)."""
        from fractions import Fraction

        from optmech.exact import ExactSampler
        from optmech.exact.laws import DiscreteStaircaseL1

        law = DiscreteStaircaseL1(Fraction(self.epsilon), self.sensitivity, self.r, self.dim)
        return ExactSampler(law.sample, dim=self.dim, mechanism=repr(self),
                            privacy=self._exact_privacy("the law P(x) = a phi(||x||_1) exactly, eps read as the exact "
                                                        "rational value of its float"),
                            law="d-D discrete staircase: exact radius inversion, uniform lattice l1 sphere")

    def _privacy_note(self) -> str:
        return ("discrete_staircase_nd: the level floor((||x||_1 - r)/sensitivity) moves by at most one under an "
                "l1 shift <= sensitivity")

    # -- sampler --------------------------------------------------------------------------------
    def _radii_cdf(self) -> np.ndarray:
        if self._radius_table is None:
            K = _radii(self.epsilon, self.sensitivity, self.dim - 1)
            k = np.arange(K + 1)
            w = sphere_sizes(k, self.dim) * np.exp(-self.epsilon * self._level(k))
            c = np.cumsum(w)
            self._radius_table = c / c[-1]
        return self._radius_table

    def _sample(self, n, rng):
        d = self.dim
        cdf = self._radii_cdf()
        k = np.searchsorted(cdf, rng.random(n), side="right").astype(np.int64)
        k = np.minimum(k, len(cdf) - 1)
        out = np.zeros((n, d), dtype=np.int64)
        pos = k > 0
        kk = k[pos]
        m = kk.size
        if m == 0:
            return out
        from scipy.special import comb  # lazy: scipy's first import costs the command line about 0.2 s

        # number of nonzero coordinates j: P ∝ 2^j C(d, j) C(k−1, j−1)
        js = np.arange(1, d + 1)
        w = (2.0**js * comb(d, js))[None, :] * comb(kk[:, None] - 1, js[None, :] - 1)
        cw = np.cumsum(w, axis=1)
        j = 1 + (rng.random(m)[:, None] * cw[:, -1:] >= cw).sum(axis=1)
        j = np.minimum(j, d)
        # a uniform composition of k into j positive parts: j − 1 distinct cut points in 1..k−1
        cuts = np.zeros((m, max(d - 1, 1)), dtype=np.int64)
        todo = np.arange(m)
        while todo.size:
            c = rng.integers(1, np.maximum(kk[todo], 2)[:, None], size=(todo.size, max(d - 1, 1)))
            used = np.arange(c.shape[1])[None, :] < (j[todo] - 1)[:, None]
            c = np.where(used, c, np.iinfo(np.int64).max)  # unused slots sort last
            c.sort(axis=1)
            dup = np.any((np.diff(c, axis=1) == 0) & (c[:, 1:] != np.iinfo(np.int64).max), axis=1)
            cuts[todo[~dup]] = c[~dup]
            todo = todo[dup]
        idx = np.arange(d)[None, :]
        lo = np.concatenate([np.zeros((m, 1), dtype=np.int64), cuts], axis=1)[:, :d]
        hi = np.concatenate([cuts, np.zeros((m, 1), dtype=np.int64)], axis=1)[:, :d]
        hi = np.where(idx == (j - 1)[:, None], kk[:, None], hi)  # the last part ends at k
        parts = np.where(idx < j[:, None], hi - lo, 0)
        # which coordinates carry the parts (a uniform random subset, in random order) and the signs
        perm = np.argsort(rng.random((m, d)), axis=1)
        signs = np.where(rng.random((m, d)) < 0.5, -1, 1)
        vals = np.zeros((m, d), dtype=np.int64)
        np.put_along_axis(vals, perm, parts, axis=1)
        out[pos] = vals * signs
        return out
