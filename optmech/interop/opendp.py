r"""optmech's mechanisms as OpenDP measurements: :func:`make_measurement`.

What it builds.  ``make_measurement(mechanism)`` returns an OpenDP ``Measurement`` made by
OpenDP's user-measurement constructor ``dp.m.make_user_measurement`` (OpenDP 0.16).  It maps a
query answer to the answer plus noise from ``mechanism``:

* integer-valued (lattice) laws take integers: ``dp.atom_domain(T="i64")`` (or ``"i32"``) with
  ``dp.absolute_distance(T)`` in 1-D, ``dp.vector_domain(dp.atom_domain(T), size=dim)`` with
  ``dp.l1_distance(T)`` or ``dp.l2_distance(T)`` (the norm of the mechanism's ``privacy()``) in d-D;
* continuous laws take floats (``T = "f64"``, ``nan=False``, the domain OpenDP's float sums
  produce) and are released on the grid hℤ (hℤ^d), h = Δ/2^bits, by
  :class:`~optmech.mechanisms.lattice_release.LatticeRelease` (module docstring there): no
  exact sampler draws a density, so the law drawn is its lattice analogue, and the guarantee
  stated is that lattice law's;
* the output measure is ``dp.max_divergence()`` for pure ε-DP and
  ``dp.approximate(dp.max_divergence())`` for (ε, δ)-DP (wrap a pure measurement in
  ``dp.c.make_approximate`` to compose it with (ε, δ) ones).

The sampler.  Noise is drawn by optmech's exact sampler (``mechanism.exact_sampler()``,
:class:`optmech.exact.ExactSampler`): integer and rational arithmetic on ChaCha20 words, so the
law of a draw equals the stated pmf exactly (no floating-point sampling attack [Mironov 2012]).
``rng=None`` keys ChaCha20 from the OS CSPRNG at every call; an int seed or a numpy Generator
keys one stream, created once and continued across calls (reproducible, hence private only while
the seed is secret; two measurements built from the same seed draw the same noise).  Outputs are
computed in exact integer arithmetic and saturate at the ends of the output type (i32/i64 range,
± the largest finite float): saturation is post-processing.

Why "honest-but-curious".  OpenDP proves the privacy maps of its own constructors; a user
measurement's map is a callback that OpenDP trusts without proof, so the constructor is gated
behind the ``"honest-but-curious"`` feature (with ``"contrib"``).  :func:`make_measurement`
enables both (``dp.enable_features``, a process-wide setting of OpenDP).

The privacy map is optmech's audit of the law actually drawn, the guarantee ``g`` stated by
``mechanism.exact_sampler().privacy()`` (continuous laws: ``LatticeRelease(...).privacy()``):

* :class:`~optmech.mechanisms.tabulated.LatticePMF` (solver pmfs): re-audited from the exactly
  normalised masses the sampler draws — pure: the log of the largest mass ratio within Δ,
  rounded up; (ε, δ): the hockey-stick divergence at ε for every shift 0 < |s| <= Δ, outward
  rounded [QHFL22, Thm 1–2; :mod:`optmech.audit`];
* DiscreteLaplace / Geometric / DiscreteLaplaceND: the pmf ratio λ^{−‖s‖₁} <= e^ε for
  ‖s‖₁ <= Δ [GV13, (120)], λ = e^{−ε/Δ} with ε the exact rational of its float;
  DiscreteStaircase: level ratio [Geng13, (2.17)]; DiscreteGaussian: its δ computed for the
  discrete law; the lattice releases of Laplace, Staircase, Gaussian, LaplaceND, the ℓ1
  StaircaseND and a solved density: the lattice law's guarantee at 2^bits steps (2^bits + d − 1
  in d-D), which covers every real pair within Δ (flooring, :mod:`~optmech.mechanisms.lattice_release`).

``map(d_in)`` then returns

1. for 0 <= d_in <= Δ: g's ε (pure) or (ε, δ) — the guarantee holds for every pair within Δ;
2. for d_in > Δ and pure g, the least of the bounds a–c below that applies (each is valid); for
   (ε, δ) g, bound d:

   a. group privacy, ε·⌈d_in/Δ⌉ rounded up, on ℤ, ℝ, ℝ^d (ℓ1, ℓ2) and ℤ^d (ℓ1).  Proof: let
      x, x' be at distance <= d_in and m = ⌈d_in/Δ⌉.  A chain x = x_0, …, x_m = x' of points of
      the domain with consecutive distances <= Δ exists: on ℝ and ℝ^d the points
      x + (j/m)(x' − x) (distance ‖x' − x‖/m <= Δ; the mechanism, floor-to-grid plus noise, is
      defined and ε-DP on every real pair within Δ, so the intermediate points need not be
      floats); on ℤ (Δ an integer) x + jΔ·sign(x' − x) for j < m; on ℤ^d with ℓ1 the ‖x' − x‖₁
      unit steps of a coordinate walk, grouped Δ at a time.  Then for every event S,
      P(M(x) ∈ S) <= e^ε P(M(x_1) ∈ S) <= … <= e^{mε} P(M(x') ∈ S).  (ℤ^d with ℓ2 has no such
      chain in general: refused.)
   b. DiscreteLaplace / Geometric / DiscreteLaplaceND (ℓ1): ε·d_in/Δ exactly (rounded up), since
      λ^{‖k‖₁ − ‖k+s‖₁} <= λ^{−‖s‖₁} (triangle inequality, equality for k >= 0, s >= 0);
   c. LatticePMF with an integer d_in <= ``MAX_AUDIT_SHIFT``: the exact audit
      :func:`optmech.audit.realised_epsilon` at sensitivity d_in (largest mass ratio over the
      shifts 1..d_in, tails included, rounded up);

   d. (ε, δ) and a LatticePMF with an integer d_in <= ``MAX_AUDIT_SHIFT``: (ε, δ') with δ' the exact
      audit :func:`optmech.audit.delta_curve` at the same ε over the shifts 1..d_in (tails in closed
      form, rounded up; never below the guarantee's δ);

3. anything else is refused: any other (ε, δ) guarantee beyond Δ (group privacy for (ε, δ) is not
   computed here), d_in < 0 or NaN, ℓ2 on integer vectors beyond Δ.  The map raises
   :class:`~optmech.errors.SpecError`, which OpenDP reports (``OpenDPException``).

A Lipschitz-private mechanism (``privacy().notion == "lipschitz"``) has no Δ and is refused, as
is a law with no certified guarantee (ε or δ unknown or infinite) and a continuous law without a
lattice release (e.g. L2Laplace: it has no exact sampler).
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real
from typing import Any, Callable

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.laplace import DiscreteLaplace
from optmech.mechanisms.lattice_release import RELEASED, LatticeRelease, has_lattice_release
from optmech.mechanisms.laplace_nd import DiscreteLaplaceND
from optmech.mechanisms.tabulated import LatticePMF

__all__ = ["make_measurement", "DEFAULT_BITS", "MAX_AUDIT_SHIFT", "INTEGER_TYPES", "FLOAT_TYPES"]

#: Grid bits of a continuous law's lattice release when ``bits`` is not given (h = Δ/256).
DEFAULT_BITS = 8
#: Largest d_in (beyond Δ) at which a LatticePMF is re-audited exactly (:func:`optmech.audit.realised_epsilon`).
MAX_AUDIT_SHIFT = 1 << 16
#: Atom types of integer-valued laws, with their ranges (outputs saturate there).
INTEGER_TYPES = {"i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1)}
#: Atom types of continuous laws.
FLOAT_TYPES = ("f64",)

_NORMS = ("abs", "l1", "l2")
_FLOAT_MAX = Fraction(np.finfo(float).max)


def _import_opendp():
    try:
        import opendp.prelude as dp
    except ImportError:
        raise SpecError("optmech.interop.opendp needs OpenDP (>= 0.16): pip install opendp "
                        "(or pip install optmech[interop])") from None
    return dp


def _round_up(x: Fraction) -> float:
    """The least float >= x (x finite)."""
    f = float(x)
    return float(np.nextafter(f, math.inf)) if Fraction(f) < x else f


def _check_guarantee(p: Privacy, what: str) -> None:
    if p.notion == "lipschitz":
        raise SpecError(f"{what} is Lipschitz private (epsilon per unit distance, no sensitivity): OpenDP's "
                        "measurements need a guarantee for neighbours within a sensitivity; use a DP mechanism")
    if p.notion not in ("pure", "approx"):
        raise SpecError(f"{what} states an unknown privacy notion {p.notion!r}")
    if not (isinstance(p.epsilon, Real) and math.isfinite(p.epsilon) and p.epsilon >= 0):
        raise SpecError(f"{what} has no certified finite epsilon (got {p.epsilon!r}): nothing to state in a "
                        "privacy map")
    if p.notion == "approx" and not (isinstance(p.delta, Real) and 0 <= p.delta <= 1):
        raise SpecError(f"{what} has no certified delta in [0, 1] (got {p.delta!r})")
    if p.sensitivity is None or not (float(p.sensitivity) > 0 and math.isfinite(float(p.sensitivity))):
        raise SpecError(f"{what} states no finite sensitivity (got {p.sensitivity!r})")
    if p.norm not in _NORMS:
        raise SpecError(f"{what} is private for the {p.norm!r} norm; OpenDP metrics here: absolute (1-D), l1, l2")


class _PrivacyMap:
    """d_in -> the certified d_out (module docstring, items 1–3); raises SpecError to refuse."""

    def __init__(self, guarantee: Privacy, *, integer: bool, dim: int, law: Mechanism | None) -> None:
        self.g = guarantee
        self.integer = integer
        self.dim = dim
        self.law = law  # the integer law drawn (for the exact routes beyond Δ), or None
        self.sens = Fraction(guarantee.sensitivity)

    def _at_sensitivity(self):
        g = self.g
        return float(g.epsilon) if g.notion == "pure" else (float(g.epsilon), float(g.delta))

    def __call__(self, d_in):
        if isinstance(d_in, bool) or not isinstance(d_in, Real) or math.isnan(float(d_in)):
            raise SpecError(f"d_in must be a number, got {d_in!r}")
        if d_in < 0:
            raise SpecError(f"d_in must be >= 0, got {d_in!r}")
        if math.isinf(float(d_in)):
            raise SpecError("d_in = inf: no finite guarantee")
        d = Fraction(d_in)
        if d <= self.sens:
            return self._at_sensitivity()
        g = self.g
        law = self.law
        if (g.notion != "pure" and isinstance(law, LatticePMF) and self.integer and d.denominator == 1
                and d <= MAX_AUDIT_SHIFT):
            from optmech.audit import delta_curve

            # (d) the exact audit at the shifts 1..d_in, at the same ε (tails in closed form, rounded up)
            beyond = float(delta_curve(law.law, int(d), [float(g.epsilon)])[0])
            if beyond < 1.0:
                return (float(g.epsilon), max(beyond, float(g.delta)))
        if g.notion != "pure":
            raise SpecError(f"refused: the ({g.epsilon:.6g}, {g.delta:.6g})-DP guarantee is certified for d_in <= "
                            f"{g.sensitivity} (the sensitivity); d_in = {d_in} is beyond it (no (epsilon, delta) "
                            "group privacy is computed): build the mechanism for a larger sensitivity")
        if self.integer and self.dim > 1 and g.norm == "l2":
            raise SpecError(f"refused: d_in = {d_in} exceeds the l2 sensitivity {g.sensitivity} on integer vectors, "
                            "where no chain of integer points within the sensitivity is guaranteed")
        eps = Fraction(g.epsilon)
        bounds = [eps * math.ceil(d / self.sens)]  # (a) group privacy
        if isinstance(law, (DiscreteLaplace, DiscreteLaplaceND)) and g.norm in ("abs", "l1"):
            bounds.append(Fraction(law.epsilon) * d / Fraction(law.sensitivity))  # (b) exact
        best = _round_up(min(bounds))
        if isinstance(law, LatticePMF) and self.integer and d.denominator == 1 and d <= MAX_AUDIT_SHIFT:
            from optmech.audit import realised_epsilon

            exact = realised_epsilon(law.law, int(d))  # (c) exact audit at shifts 1..d_in, rounded up
            if exact is not None and exact < best:
                best = float(exact)
        return max(best, float(g.epsilon))  # no smaller than the guarantee at Δ (monotone map)


def _integer_function(sampler, src, lo: int, hi: int, dim: int) -> Callable[[Any], Any]:
    def function(x):
        if dim == 1:
            if isinstance(x, bool) or not isinstance(x, Integral):
                raise SpecError(f"the query answer must be an integer, got {x!r}")
            noise = int(sampler.sample(None, rng=src()))
            return min(max(int(x) + noise, lo), hi)
        xs = list(x)
        if len(xs) != dim or not all(isinstance(v, Integral) and not isinstance(v, bool) for v in xs):
            raise SpecError(f"the query answer must be {dim} integers, got {x!r}")
        noise = np.asarray(sampler.sample(None, rng=src())).tolist()
        return [min(max(int(v) + int(z), lo), hi) for v, z in zip(xs, noise)]

    return function


def _float_function(release: LatticeRelease, src, dim: int) -> Callable[[Any], Any]:
    h = Fraction(release.step)
    sampler = release.exact_sampler()

    def one(v, z: int) -> float:
        if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(float(v)):
            raise SpecError(f"the query answer must be a finite number, got {v!r}")
        j = math.floor(Fraction(float(v)) / h)  # ⌊v/h⌋ exactly, as a Python int
        y = (j + z) * h
        return float(min(max(y, -_FLOAT_MAX), _FLOAT_MAX))  # saturate: post-processing

    def function(x):
        if dim == 1:
            return one(x, int(sampler.sample(None, rng=src())))
        xs = list(x)
        if len(xs) != dim:
            raise SpecError(f"the query answer must be {dim} numbers, got {x!r}")
        noise = np.asarray(sampler.sample(None, rng=src())).tolist()
        return [one(v, int(z)) for v, z in zip(xs, noise)]

    return function


def make_measurement(mechanism, *, T: str | None = None, bits: int | None = None, rng=None):
    """An OpenDP ``Measurement`` adding ``mechanism``'s noise, exactly sampled, with optmech's
    audited privacy map (module docstring: domains, sampler, map, refusals).

    Enables OpenDP's ``"contrib"`` and ``"honest-but-curious"`` features (process-wide): the
    measurement is built by ``dp.m.make_user_measurement``, whose privacy map OpenDP trusts
    rather than proves.

    Parameters
    ----------
    mechanism : Mechanism or LatticeRelease
        Any optmech mechanism with a DP guarantee (pure or (ε, δ)) and an exact sampler (the
        lattice laws), or a continuous law with a lattice release (Laplace, Staircase, Gaussian,
        LaplaceND, the ℓ1 StaircaseND, a solved 1-D density), or a ready
        :class:`~optmech.mechanisms.lattice_release.LatticeRelease`.  dim = 1: scalars;
        dim > 1: vectors of length dim.
    T : str, optional
        The atom type: ``"i64"`` (default) or ``"i32"`` for lattice laws, ``"f64"`` for
        continuous ones.
    bits : int, optional
        Continuous laws only: released on the grid of step Δ/2^bits (default ``DEFAULT_BITS``).
    rng : None, "secure", int, numpy Generator or BitSource
        None / "secure": a fresh OS-keyed ChaCha20 stream per call; otherwise one stream, created
        here and continued across calls (a seed makes the releases reproducible).

    Returns
    -------
    opendp.mod.Measurement

    Raises
    ------
    SpecError
        OpenDP missing; a Lipschitz-private mechanism; no certified guarantee; no exact sampler
        and no lattice release; a type T that does not match the law; bad bits.

    >>> import opendp.prelude as dp
    >>> from optmech.mechanisms import DiscreteLaplace
    >>> meas = make_measurement(DiscreteLaplace(epsilon=1, sensitivity=2), rng=7)
    >>> meas.input_domain, meas.input_metric, meas.output_measure
    (AtomDomain(T=i64), AbsoluteDistance(i64), MaxDivergence)
    >>> isinstance(meas(100), int), meas.map(2), meas.map(3)      # ε at Δ = 2; ε·3/2 beyond it
    (True, 1.0, 1.5)
    >>> sum_ = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0, 1), T="i64")), dp.symmetric_distance())
    >>> (sum_ >> meas).map(1)                                      # one record moves the sum by 1
    1.0
    """
    dp = _import_opendp()
    release = mechanism if isinstance(mechanism, LatticeRelease) else None
    if release is None and not isinstance(mechanism, Mechanism):
        raise SpecError("make_measurement needs an optmech Mechanism (or a LatticeRelease), got "
                        f"{type(mechanism).__name__}")
    name = type(mechanism if release is None else release.mechanism).__name__
    stated = (mechanism if release is None else release.mechanism).privacy()
    _check_guarantee(stated, name)
    if bits is not None and (release is not None or mechanism.lattice):
        raise SpecError(f"bits is for continuous laws (their lattice release); {name} is "
                        + ("already released" if release is not None else "a lattice law"))
    integer = release is None and mechanism.lattice
    if release is None and not integer:
        if not has_lattice_release(mechanism):
            raise SpecError(f"{name} is continuous and has no exact sampler nor lattice release (released: "
                            f"{RELEASED}); use a lattice law (e.g. a solve on the integer lattice)")
        release = LatticeRelease(mechanism, DEFAULT_BITS if bits is None else bits)
    dim = int(mechanism.dim if release is None else release.dim)
    if integer:
        sampler = mechanism.exact_sampler()
        guarantee = sampler.privacy()
        law = mechanism
        T = "i64" if T is None else T
        if T not in INTEGER_TYPES:
            raise SpecError(f"{name} is integer-valued: T must be one of {', '.join(INTEGER_TYPES)}, got {T!r}")
    else:
        guarantee = release.privacy()
        law = None
        T = "f64" if T is None else T
        if T not in FLOAT_TYPES:
            raise SpecError(f"{name} is continuous (released on a grid of floats): T must be 'f64', got {T!r}")
    _check_guarantee(guarantee, f"the exact sampler of {name}")
    if (dim == 1) != (guarantee.norm == "abs"):
        raise SpecError(f"{name} has dim = {dim} but states its guarantee for the {guarantee.norm!r} norm")

    from optmech.exact import BitSource, bit_source

    if rng is None or (isinstance(rng, str) and rng == "secure"):
        def src():
            return bit_source(None)
    else:
        stream = rng if isinstance(rng, BitSource) else bit_source(rng)

        def src():
            return stream

    dp.enable_features("contrib", "honest-but-curious")
    atom = dp.atom_domain(T=T) if integer else dp.atom_domain(T=T, nan=False)
    if dim == 1:
        domain, metric, TO = atom, dp.absolute_distance(T=T), T
    else:
        metric = (dp.l1_distance if guarantee.norm == "l1" else dp.l2_distance)(T=T)
        domain, TO = dp.vector_domain(atom, size=dim), f"Vec<{T}>"
    if integer:
        lo, hi = INTEGER_TYPES[T]
        function = _integer_function(sampler, src, lo, hi, dim)
    else:
        function = _float_function(release, src, dim)
    measure = dp.max_divergence() if guarantee.notion == "pure" else dp.approximate(dp.max_divergence())
    privacy_map = _PrivacyMap(guarantee, integer=integer, dim=dim, law=law)
    return dp.m.make_user_measurement(domain, metric, measure, function, privacy_map, TO=TO)
