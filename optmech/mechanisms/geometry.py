r"""The geometry of norm balls in ℝ^d used by the d-dimensional mechanisms: volumes, cone measures
and their samplers, and the cross-norm moments E‖Θ‖_L^m of a direction Θ drawn under the cone
measure of another norm's sphere [derived; [GKOV15] is the ℓ1 case].

K is ``l1``, ``l2``, ``linf``, ``lp:P`` (P >= 1) or a weighted ℓp, ‖x‖_K = (Σ w_i|x_i|^p)^{1/p}
(:class:`Ball`, from :func:`parse_norm`); B_K is its unit ball.  Used by
:mod:`~optmech.mechanisms.staircase_nd` (the staircase in the ball of K) and
:mod:`~optmech.mechanisms.laplace_nd` (E‖X‖₂ and E‖X‖∞ of the Laplace laws).

* **Polar factorisation.**  For a norm ball, x = rθ (r = ‖x‖_K, θ ∈ ∂B_K) has
  dx = d vol(B_K) r^{d−1} dr dμ_K(θ), μ_K the cone measure (μ_K(A) = vol{sθ : s ∈ [0, 1], θ ∈ A}
  / vol(B_K)).  A density h(‖x‖_K) therefore makes R = ‖X‖_K and Θ = X/‖X‖_K independent, Θ ~ μ_K
  and R ∝ h(r) r^{d−1}.  Uniform V in B_K (h = 1{r <= 1}) gives V/‖V‖_K ~ μ_K.
* **Volumes** (:func:`log_ball_volume`).  ℓ1 2^d/d!, ℓ2 π^{d/2}/Γ(d/2+1), ℓ∞ 2^d, ℓp
  (2Γ(1+1/p))^d/Γ(1+d/p); weighted: B_w = D^{−1}B_p with D = diag(w_i^{1/p}), so
  vol = vol(B_p)/Π w_i^{1/p}.
* **Directions** (Θ = V/‖V‖_K; :func:`l1_directions_scaled`, :func:`ball_directions_scaled`):
  ℓ1 G/‖G‖₁ with G_j = ±Exp(1) = Laplace(1) (G/‖G‖₁ is independent of ‖G‖₁); ℓ2 Z/‖Z‖₂ (Z standard
  normal); ℓ∞ the cube U ⊙ S/max|U_i| (U_i uniform, S_i random signs); ℓp G/‖G‖_p with G_i i.i.d.
  of density ∝ e^{−|t|^p} (Barthe-Guédon-Mendelson-Naor: G/(‖G‖_p^p + W)^{1/p} is uniform in B_p,
  and its direction is G/‖G‖_p, so W is not needed), |G_i| = Y_i^{1/p} U_i with Y_i ~ Gamma(1+1/p),
  U_i uniform (Y U^{1/α} ~ Gamma(α) for α = 1/p; |G_i|^p ~ Gamma(1/p)), normalised in logs;
  weighted: a ⊙ Θ_p with a_i = w_i^{−1/p} (the linear image of μ_p under D^{−1}).
  Floating point: not exactly uniform (see :mod:`optmech.mechanisms.rng`).
* **The ℓ1 cone measure in other norms.**  Θ uniform (cone measure) on the ℓ1 sphere:
  E‖Θ‖₂² = 2/(d+1), E‖Θ‖∞ = H_d/d (:func:`harmonic`; the mean largest of d uniform spacings), and
  E‖Θ‖₂ = E‖G‖₂/d for G i.i.d. Exp(1) (:func:`exp_l2_mean`; ‖G‖₁ ~ Gamma(d) is independent of
  G/‖G‖₁).  On the ℓ2 sphere: E‖Θ‖₁ = dΓ(d/2)/(√πΓ((d+1)/2)) (:func:`log_sphere_l1_mean`) and
  E‖Θ‖∞ = E‖Z‖∞/E‖Z‖₂ (:func:`normal_linf_mean`, E‖Z‖₂ = √2Γ((d+1)/2)/Γ(d/2)).
* **Cross-norm moments** (:func:`cone_moments`, :func:`cone_factor`).  E‖X‖_L^m = E[R^m] E_{μ_K}‖Θ‖_L^m
  for a law radial in K (homogeneity, independence).  With Θ' the unweighted ℓp cone vector,
  ‖G‖_p^p ~ Gamma(d/p) and E|G₁|^s = Γ((s+1)/p)/Γ(1/p):
  E|Θ'₁| = Γ(2/p)Γ(d/p)/(Γ(1/p)Γ((d+1)/p)), EΘ'₁² = Γ(3/p)Γ(d/p)/(Γ(1/p)Γ((d+2)/p)),
  E|Θ'₁Θ'₂| = (Γ(2/p)/Γ(1/p))²Γ(d/p)/Γ((d+2)/p) (ℓ1: 1/d, 2/(d(d+1)), 1/(d(d+1)), the signed
  Dirichlet(1, …, 1); ℓ2: EΘ'₁² = 1/d, E‖Θ'‖₁ = dΓ(d/2)/(√πΓ((d+1)/2))); ℓ∞ (one coordinate ±1,
  the others uniform on [−1, 1]): (d+1)/(2d), (d+2)/(3d), (d+2)/(4d), i.e. E‖Θ‖₁ = 1 + (d−1)/2,
  E‖Θ‖₂² = 1 + (d−1)/3.  Then E‖Θ‖₁ = E|Θ'₁|Σa_i, E‖Θ‖₂² = EΘ'₁²Σa_i²,
  E‖Θ‖₁² = EΘ'₁²Σa_i² + E|Θ'₁Θ'₂|((Σa_i)² − Σa_i²) (costs l1, l2sq, pow:1, pow:2); the own norm
  has factor 1 (l2 for ℓ2, linf for ℓ∞); ℓ2 with linf: E‖Z‖∞/E‖Z‖₂; unweighted ℓ1 with l2 and
  linf: the ℓ1 factors above.  Other (K, L, m) have no exact route here (:func:`cone_factor` gives None).
* **E√S** (:func:`mean_sqrt_sum`) for S = Σ_i Y_i² with Y_i i.i.d.:
  E√S = (1/(2√π))∫₀^∞(1 − φ(t)^d) t^{−3/2} dt, φ(t) = E e^{−tY²}, computed as
  (σ/√π)∫₀¹ (1 − φ((w/σ)²)^d)/v² dv with w = v/(1 − v) (smooth and bounded at both ends) by
  adaptive Gauss-Legendre, 1 − φ^d = −expm1(d log1p(−(1 − φ))) and 1 − φ from cancellation-free
  formulas (continued fraction of erfc for Exp(1), :func:`omphi_exp`; the discrete Laplace law's
  is :func:`optmech.mechanisms.laplace_nd.omphi_dlap`).

Tested by: tests/test_mechanisms_multidim.py.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx

__all__ = [
    "Ball",
    "parse_norm",
    "log_ball_volume",
    "cone_moments",
    "cone_factor",
    "ball_norm",
    "ball_directions_scaled",
    "l1_directions_scaled",
    "omphi_exp",
    "mean_sqrt_sum",
    "exp_l2_mean",
    "normal_linf_mean",
    "harmonic",
    "log_sphere_l1_mean",
]

# --------------------------------------------------------------------------------------------
# E sqrt(sum of squares) and E max (direction factors)


def omphi_exp(t: np.ndarray) -> np.ndarray:
    """1 − φ(t), φ(t) = E e^{−tE²} = √π z erfcx(z), z = 1/(2√t), E ~ Exp(1).

    z >= 2: Laplace's continued fraction √π erfcx(z) = 1/(z + T₁), T_n = (n/2)/(z + T_{n+1}), so
    1 − φ = T₁/(z + T₁) without cancellation (60 levels: < 3e-16 relative for z >= 2).
    z < 2: 1 − √π z erfcx(z) directly (φ <= 0.9, error < 2e-15 relative).
    """
    from scipy.special import erfcx

    t = np.asarray(t, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        z = 0.5 / np.sqrt(t)
    big = z >= 2.0
    zb = np.where(big, z, 2.0)
    tn = np.zeros_like(zb)
    for n in range(60, 0, -1):
        tn = (0.5 * n) / (zb + tn)
    cf = tn / (zb + tn)
    zs = np.where(big, 0.0, z)
    direct = 1.0 - math.sqrt(math.pi) * zs * erfcx(zs)
    return np.where(big, cf, direct)


def mean_sqrt_sum(omphi, d: int, sigma: float) -> float:
    """E√(Y₁² + … + Y_d²) for i.i.d. Y_i with 1 − E e^{−tY²} = ``omphi(t)`` and scale σ (E Y² = σ²).

    E√S = (1/(2√π))∫₀^∞ (1 − φ(t)^d) t^{−3/2} dt; with t = (w/σ)², w = v/(1−v) this is
    (σ/√π)∫₀¹ (1 − φ^d)/v² dv, a bounded smooth integrand (→ d E Y²/σ² at v = 0).
    """

    def f(v):
        w = v / (1.0 - v)
        q = omphi((w / sigma) ** 2)
        return -np.expm1(d * np.log1p(-q)) / (v * v)

    edges = np.array([0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0])
    cells, _ = nx.adaptive_gl(f, edges, rtol=1e-14)
    return sigma / math.sqrt(math.pi) * float(math.fsum(cells))


@functools.lru_cache(maxsize=None)
def exp_l2_mean(d: int) -> float:
    """E‖G‖₂ for G ∈ ℝ^d with i.i.d. Exp(1) coordinates (= E‖L‖₂ for i.i.d. Laplace(1))."""
    return mean_sqrt_sum(omphi_exp, d, math.sqrt(2.0))


@functools.lru_cache(maxsize=None)
def normal_linf_mean(d: int) -> float:
    """E‖Z‖∞ = ∫₀^∞ 1 − (2Φ(t) − 1)^d dt for Z standard normal in ℝ^d."""
    from scipy.special import erfc

    def f(t):
        return -np.expm1(d * np.log1p(-erfc(t / math.sqrt(2.0))))

    cells, _ = nx.adaptive_gl(f, np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 9.0, 14.0, 40.0]), rtol=1e-14)
    return float(math.fsum(cells))


def harmonic(d: int) -> float:
    """H_d = Σ_{k<=d} 1/k: d·E‖Θ‖∞ for Θ under the ℓ1 cone measure, E max of d i.i.d. Exp(1).

    >>> harmonic(3) == 1 + 1 / 2 + 1 / 3
    True
    """
    return math.fsum(1.0 / k for k in range(1, d + 1))


def log_sphere_l1_mean(d: int) -> float:
    """log E|Θ₁|·d for Θ uniform on the ℓ2 sphere: E‖Θ‖₁ = d Γ(d/2)/(√π Γ((d+1)/2))."""
    return math.log(d) + math.lgamma(d / 2.0) - 0.5 * math.log(math.pi) - math.lgamma((d + 1) / 2.0)


# --------------------------------------------------------------------------------------------
# sensitivity norms of the staircase


def _p_text(p: float) -> str:
    s = repr(float(p))
    return s[:-2] if s.endswith(".0") else s


@dataclass(frozen=True)
class Ball:
    """The sensitivity norm K of :class:`StaircaseND`: ``text`` (canonical name: l1, l2, linf or
    lp:P), ``p`` in [1, inf] and ``weights`` (None or d positive floats: ‖x‖ = (Σ w_i|x_i|^p)^{1/p})."""

    text: str
    p: float
    weights: tuple[float, ...] | None

    @property
    def plain_l1(self) -> bool:
        return self.text == "l1" and self.weights is None

    @property
    def label(self) -> str:
        if self.weights is None:
            return self.text
        return f"{self.text}, weights ({', '.join(_p_text(w) for w in self.weights)})"

    def scale(self, d: int) -> np.ndarray:
        """a_i = w_i^{−1/p} (ones when unweighted): Θ_K = a ⊙ Θ_p, ‖x‖_K = ‖x / a‖_p."""
        if self.weights is None:
            return np.ones(d)
        return np.asarray(self.weights) ** (-1.0 / self.p)


def parse_norm(norm, weights, d: int) -> Ball:
    """Validate ``norm`` (l1, l2, linf, lp:P with P >= 1) and ``weights`` (None or d numbers > 0)."""
    known = "l1, l2, linf, lp:P (P >= 1, e.g. lp:3)"
    if not isinstance(norm, str):
        raise SpecError(f"norm must be a string ({known}), got {norm!r}")
    s = norm.strip().lower()
    fixed = {"l1": 1.0, "l2": 2.0, "linf": math.inf}
    if s in fixed:
        p = fixed[s]
    elif s.startswith("lp:"):
        try:
            p = float(s[3:])
        except ValueError:
            raise SpecError(f"norm {norm!r}: P in lp:P must be a number >= 1 (e.g. lp:3)") from None
        if math.isnan(p) or p < 1.0:
            raise SpecError(f"norm {norm!r}: lp:P needs P >= 1 (for P < 1, (sum |x_i|^P)^(1/P) is not a norm)")
        s = {1.0: "l1", 2.0: "l2", math.inf: "linf"}.get(p, f"lp:{_p_text(p)}")
    else:
        raise SpecError(f"unknown norm {norm!r}; known: {known}")
    if weights is None:
        return Ball(s, p, None)
    if p == math.inf:
        raise SpecError("weights are for l1, l2 and lp:P (||x|| = (sum_i w_i |x_i|^P)^(1/P)); linf takes none")
    if isinstance(weights, (str, bytes, dict)) or not hasattr(weights, "__len__"):
        raise SpecError(f"weights must be a list of dim = {d} numbers > 0, got {weights!r}")
    vals = list(weights)
    if len(vals) != d:
        raise SpecError(f"weights must be a list of dim = {d} numbers > 0, got {len(vals)} of them")
    out = []
    for v in vals:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise SpecError(f"weights must be numbers > 0, got {v!r}")
        if not (math.isfinite(float(v)) and float(v) > 0.0):
            raise SpecError(f"weights must be finite and > 0, got {v!r}")
        out.append(float(v))
    return Ball(s, p, tuple(out))


def log_ball_volume(ball: Ball, d: int) -> float:
    """log vol(B_K): ℓ1 2^d/d!, ℓ2 π^{d/2}/Γ(d/2+1), ℓ∞ 2^d, ℓp (2Γ(1+1/p))^d/Γ(1+d/p); a weighted
    ball is the image of B_p under diag(w_i^{−1/p}), so its volume is vol(B_p)/Π w_i^{1/p}.

    >>> import math
    >>> math.isclose(math.exp(log_ball_volume(parse_norm("l2", None, 2), 2)), math.pi)      # the unit disc
    True
    >>> math.isclose(math.exp(log_ball_volume(parse_norm("l1", [4.0, 1.0], 2), 2)), 0.5)    # 4|x₁| + |x₂| <= 1
    True
    """
    p = ball.p
    if p == 1.0:
        v = d * math.log(2.0) - math.lgamma(d + 1.0)
    elif p == 2.0:
        v = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
    elif p == math.inf:
        v = d * math.log(2.0)
    else:
        v = d * (math.log(2.0) + math.lgamma(1.0 + 1.0 / p)) - math.lgamma(1.0 + d / p)
    if ball.weights is not None:
        v -= math.fsum(math.log(w) for w in ball.weights) / p
    return v


def cone_moments(p: float, d: int) -> tuple[float, float, float]:
    """(E|Θ₁|, EΘ₁², E|Θ₁Θ₂|) for Θ under the cone measure of the unweighted ℓp sphere [derived].

    Finite p: G with i.i.d. coordinates of density ∝ e^{−|t|^p} has density ∝ e^{−‖g‖_p^p}, so
    G = ‖G‖_p Θ with Θ ⊥ ‖G‖_p, ‖G‖_p^p ~ Gamma(d/p), E‖G‖_p^s = Γ((d+s)/p)/Γ(d/p) and
    E|G₁|^s = Γ((s+1)/p)/Γ(1/p): E|Θ₁| = Γ(2/p)Γ(d/p)/(Γ(1/p)Γ((d+1)/p)),
    EΘ₁² = Γ(3/p)Γ(d/p)/(Γ(1/p)Γ((d+2)/p)), E|Θ₁Θ₂| = (Γ(2/p)/Γ(1/p))² Γ(d/p)/Γ((d+2)/p).
    p = ∞: one coordinate ±1 (uniformly chosen), the others uniform on [−1, 1]:
    ((d+1)/(2d), (d+2)/(3d), (d+2)/(4d)).

    >>> import math
    >>> all(math.isclose(x, y) for x, y in zip(cone_moments(1.0, 3), (1 / 3, 2 / 12, 1 / 12)))   # signed Dirichlet(1, 1, 1)
    True
    """
    if p == math.inf:
        return (d + 1.0) / (2.0 * d), (d + 2.0) / (3.0 * d), (d + 2.0) / (4.0 * d)
    lg = math.lgamma
    q = 1.0 / p
    base = lg(d * q) - lg(q)
    mu1 = math.exp(base + lg(2.0 * q) - lg((d + 1.0) * q))
    mu2 = math.exp(base + lg(3.0 * q) - lg((d + 2.0) * q))
    mu11 = math.exp(base + 2.0 * lg(2.0 * q) - lg(q) - lg((d + 2.0) * q))
    return mu1, mu2, mu11


def cone_factor(ball: Ball, target: str, m: int, d: int) -> float | None:
    """E‖Θ‖_L^m under the cone measure of ∂B_K (L = ``target`` in l1, l2, linf); None when there
    is no exact route.  With a_i = w_i^{−1/p} and exchangeable Θ' (unweighted cone):
    E‖Θ‖₁ = E|Θ'₁| Σa_i, E‖Θ‖₂² = EΘ'₁² Σa_i², E‖Θ‖₁² = EΘ'₁² Σa_i² + E|Θ'₁Θ'₂|((Σa_i)² − Σa_i²)."""
    if m == 0 or (ball.weights is None and target == ball.text):
        return 1.0
    a = ball.scale(d)
    s1, s2 = math.fsum(a), math.fsum(a * a)
    mu1, mu2, mu11 = cone_moments(ball.p, d)
    if target == "l1" and m == 1:
        return mu1 * s1
    if target == "l2" and m == 2:
        return mu2 * s2
    if target == "l1" and m == 2:
        return mu2 * s2 + mu11 * (s1 * s1 - s2)
    if ball.weights is None and m == 1 and ball.p == 1.0:  # existing ℓ1 routes (module docstring)
        return exp_l2_mean(d) / d if target == "l2" else harmonic(d) / d
    if ball.weights is None and m == 1 and ball.p == 2.0 and target == "linf":  # E‖Z‖∞/E‖Z‖₂
        z2 = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))
        return normal_linf_mean(d) / z2
    return None


def ball_norm(x: np.ndarray, ball: Ball) -> np.ndarray:
    """‖x‖_K along the last axis (scaled by the largest |x_i| w_i^{1/p}, so no overflow/underflow)."""
    z = np.abs(x)
    if ball.plain_l1:
        return z.sum(axis=-1)
    d = x.shape[-1]
    if ball.weights is not None:
        z = z / ball.scale(d)
    if d == 1:
        return z[..., 0]
    if ball.p == 1.0:
        return z.sum(axis=-1)
    top = z.max(axis=-1)
    if ball.p == math.inf:
        return top
    safe = np.where(top > 0.0, top, 1.0)[..., None]
    y = z / safe
    if ball.p == 2.0:
        return top * np.sqrt((y * y).sum(axis=-1))
    with np.errstate(under="ignore"):
        return top * (y**ball.p).sum(axis=-1) ** (1.0 / ball.p)


def ball_directions_scaled(scale: np.ndarray, d: int, ball: Ball, rng) -> np.ndarray:
    """scale[i] · Θ_i with Θ_i i.i.d. under the cone measure of ∂B_K, i.e. Θ = V/‖V‖_K for V
    uniform in B_K [derived: module docstring].  Returns an (n, d) array."""
    if ball.p == 1.0 or d == 1:
        x = l1_directions_scaled(scale, d, rng)
    else:
        n = scale.size
        if ball.p == 2.0:  # Gaussian direction
            x = rng.standard_normal((n, d))
            x *= (scale / ball_norm(x, Ball("l2", 2.0, None)))[:, None]
        elif ball.p == math.inf:  # uniform in the cube [−1, 1]^d
            x = rng.random((n, d))
            x *= (scale / x.max(axis=1))[:, None]
            x *= 2.0 * rng.integers(0, 2, size=(n, d)) - 1.0
        else:  # |G_i| = Y^{1/p} U_i, Y ~ Gamma(1 + 1/p), U uniform: |G_i|^p ~ Gamma(1/p)
            p = ball.p
            logg = np.log(rng.standard_gamma(1.0 + 1.0 / p, size=(n, d))) / p + np.log1p(-rng.random((n, d)))
            with np.errstate(under="ignore"):
                y = np.exp(logg - logg.max(axis=1, keepdims=True))
                norm = (y**p).sum(axis=1) ** (1.0 / p)
            x = y * (scale / norm)[:, None]
            x *= 2.0 * rng.integers(0, 2, size=(n, d)) - 1.0
    if ball.weights is not None:
        x *= ball.scale(d)
    return x


_SIGN = np.uint64(1 << 63)


def l1_directions_scaled(scale: np.ndarray, d: int, rng) -> np.ndarray:
    """scale[i] · G_i/‖G_i‖₁ with G_ij = ±Exp(1) i.i.d. (Laplace(1)): G/‖G‖₁ is uniform (cone
    measure) on the ℓ1 sphere and independent of ‖G‖₁.  Returns an (n, d) array.

    Drawn coordinate-major ((d, n): contiguous reductions); one uint64 per sample supplies the d
    sign bits, applied by flipping the IEEE sign bit.
    """
    n = scale.size
    g = rng.standard_exponential((d, n))
    g *= scale / g.sum(axis=0)
    raw = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    shifts = np.arange(63, 63 - d, -1, dtype=np.uint64)
    g.view(np.uint64)[...] ^= (raw[None, :] << shifts[:, None]) & _SIGN
    return np.ascontiguousarray(g.T)
