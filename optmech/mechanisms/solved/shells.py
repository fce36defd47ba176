r"""The layered (ℓ1-shell) solver's law on ℤ^d or ℝ^d (``kind = "l1_shell_density_nd"``, :class:`ShellDensityND`).

``l1_shell_density_nd`` (:class:`ShellDensityND`)
    The layered (ℓ1-shell) solver output: density a_k (lattice: mass per point of the sphere
    ‖x‖₁ = k; continuous: density on k h <= ‖x‖₁ < (k+1) h) for the listed shells, extended by the
    same β-majorant rule on the chain of shells, whose moves are |k − j| <= n (n = Δ, or Δ/h
    shells per Δ): P(k) = max_j a_j β^{⌈|k − j|/n⌉}, so P(k + n) = β P(k) beyond the list.  Exact
    pmf/pdf (normaliser summed until the remaining mass is below 1e-30) and sampler (shell by
    inverse cdf, then a uniform point of the lattice sphere, or radius ∝ r^{d−1} on the shell and
    a uniform direction on the ℓ1 sphere).

The privacy audit on load and the exact sampler of the lattice shells: :meth:`ShellDensityND.privacy`,
:meth:`ShellDensityND.exact_audit` (ε by :func:`~optmech.mechanisms.solved.majorant.audited_majorant_epsilon`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Privacy
from optmech.mechanisms.discrete_staircase_nd import sphere_l2sq_sums, sphere_sizes
from optmech.mechanisms.base_nd import NDMechanism
from optmech.mechanisms.solved.common import (
    BLOCK_PAIRS,
    MAJORANT_SLACK,
    TAIL_TOL,
    SolvedMechanism,
    categorical,
    cost_nd,
    load_audit_limit,
    read_array,
    read_number,
    read_width,
)
from optmech.mechanisms.solved.majorant import audited_majorant_epsilon
from optmech.mechanisms.solved.points import uniform_lattice_l1_sphere


def _l1_directions(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform points of the unit ℓ1 sphere of ℝ^d (i.i.d. ±Exp(1), normalised: cone measure)."""
    g = rng.standard_exponential((n, d))
    g /= g.sum(axis=1, keepdims=True)
    return g * np.where(rng.random((n, d)) < 0.5, -1.0, 1.0)


class ShellDensityND(SolvedMechanism, NDMechanism):
    """The layered (ℓ1-shell) solver output with its β-majorant extension over shells (module docstring)."""

    name = "l1_shell_density_nd"
    symmetric = True

    def __init__(self, d: dict, *, epsilon: float | None = None, delta: float | None = None) -> None:
        from optmech.problems.pure_nd import shell_sizes

        self._keep(d, epsilon)
        self._init_dim(int(read_number(d, "dim", integer=True, positive=True)))
        self.norm = str(d.get("norm", "l1"))
        if self.norm != "l1":
            raise SpecError(f"l1_shell_density_nd is for l1 sensitivity, got norm {self.norm!r}")
        self.continuous = bool(d.get("continuous", False))
        self.lattice = not self.continuous
        self.h = 1.0
        if self.continuous:
            self.h, self._sensitivity, n = read_width(d, "shell_width")
        else:
            self._sensitivity = int(read_number(d, "sensitivity", integer=True, positive=True))
            n = self._sensitivity
        self.n = int(n)
        self.a = read_array(d, "density", 1)
        if np.any(self.a < 0) or not np.any(self.a > 0):
            raise SpecError("density must be nonnegative with some mass")
        A, q = read_number(d, "tail_factor"), read_number(d, "tail_rate")
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
        k = categorical(w, n, rng)
        if self.lattice:
            return uniform_lattice_l1_sphere(k, self.dim, rng)
        d = self.dim
        kf = k.astype(float)
        r = self.h * (kf**d + rng.random(n) * ((kf + 1.0) ** d - kf**d)) ** (1.0 / d)
        return _l1_directions(n, d, rng) * r[:, None]

    def expected_cost(self, cost) -> float:
        """E L(X) for l1, l2sq (and linf on the continuous domain): exact per-shell averages summed over
        the listed shells and the extension (truncated where the remaining mass is < 1e-30)."""
        c = cost_nd(cost, self.dim)
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
        :data:`~optmech.mechanisms.solved.LOAD_AUDIT_PAIRS` shell pairs: the solver's recorded target
        (−ln β where none is recorded), with a note saying it was not re-audited.  Raises :class:`SpecError` where the
        listed densities are no β-majorant (the law is undefined)."""
        lw = self._audit()
        target = None if math.isnan(self._epsilon) else self._epsilon
        pairs = (self.R + 1) * self.n
        head = f"{self.kind}: beta-majorant over shells; "
        limit = load_audit_limit()
        if pairs > limit:
            why = f"{pairs} shell pairs above the load-time audit limit of {limit}"
            if target is None:
                eps, note = -math.log(self.beta), (f"-ln beta (listed shells audited in floats: log ratio <= {lw:.17g}); "
                                                   f"not re-audited exactly ({why})")
            else:
                eps, note = target, f"the solver's audited target, as recorded by the solve, not re-audited ({why})"
            return Privacy("pure", eps, 0.0, self.sensitivity, "l1", head + note)
        worst = self.__dict__.get("_audited")
        if worst is None:
            worst = self.__dict__["_audited"] = self.exact_audit()
        eps, note = audited_majorant_epsilon(
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
