r"""The isotropic Gaussian N(0, σ² I_d) on ℝ^d for (ε, δ)-DP with ℓ2 sensitivity Δ [BW18, Thm 8].

**Privacy.**  For a shift v the privacy loss of N(0, σ²I_d) against N(v, σ²I_d) at a point x is
(‖x − v‖² − ‖x‖²)/(2σ²) = (‖v‖² − 2⟨x, v⟩)/(2σ²), a function of the one coordinate ⟨x, v⟩/‖v‖,
which is N(0, σ²) under both laws up to the shift ‖v‖.  So the pair (N(0, σ²I_d), N(v, σ²I_d))
has exactly the hockey-stick curve of the 1-D pair (N(0, σ²), N(‖v‖₂, σ²)) [derived; BW18, the
rotation argument of their Thm 8], and δ(ε) for every ‖v‖₂ <= Δ is the 1-D δ_G(σ, ε, Δ) of
:func:`~optmech.mechanisms.approx.gaussian.gaussian_delta` (nondecreasing in the shift).  Since
‖v‖₂ <= ‖v‖₁, the same law is (ε, δ)-DP for ℓ1 sensitivity Δ too.

**Costs** are those of :func:`~optmech.mechanisms.approx.gaussian.gaussian_cost` (``l1`` dσ√(2/π),
``l2sq`` dσ², ``l2`` σ√2 Γ((d+1)/2)/Γ(d/2), ``linf`` σ times the expected maximum of d half-normals).

This is the law of the ``gaussian`` and ``analytic_gaussian`` references on ℝ^d, so a solve whose
upper end is one of them returns it as ``result.mechanism``.  Its sampler draws floats (numpy's
normal generator): no exact sampler.
"""

from __future__ import annotations

import math

import numpy as np

from optmech.errors import SpecError
from optmech.mechanisms import numerics as nx
from optmech.mechanisms.approx.gaussian import (Gaussian, SigmaCalibrated, analytic_gaussian_sigma, calibrate_or_check,
                                                gaussian_cost, gaussian_delta)
from optmech.mechanisms.base import Mechanism, Privacy
from optmech.mechanisms.base_nd import NDMechanism

__all__ = ["GaussianND"]


class GaussianND(SigmaCalibrated, NDMechanism):
    r"""N(0, σ² I_d) for (ε, δ)-DP with ℓ2 (hence ℓ1) sensitivity Δ: σ given, or calibrated as the analytic
    Gaussian's smallest σ with δ_G(σ, ε, Δ) <= δ [BW18, Thm 8] (module docstring: the d-D pair has the 1-D curve).

    >>> import math
    >>> g = GaussianND(epsilon=1.0, delta=1e-5, sensitivity=1.0, dim=3)
    >>> g.privacy().delta <= 1e-5, g.privacy().norm
    (True, 'l2')
    >>> math.isclose(g.expected_cost("l2sq"), 3 * g.sigma**2)
    True
    >>> math.isclose(float(g.pdf([0.0, 0.0, 0.0])), (2 * math.pi * g.sigma**2) ** -1.5)
    True
    >>> g.sample(4, rng=0).shape
    (4, 3)
    >>> Mechanism.from_dict(g.to_dict()) == g
    True
    """

    name = "gaussian_nd"
    _norm = "l2"

    def __init__(self, *, sigma=None, epsilon=None, delta=None, sensitivity=1.0, dim) -> None:
        self._sensitivity = nx.check_sensitivity(sensitivity)
        self._epsilon, self.sigma, self.delta = calibrate_or_check("GaussianND", sigma, epsilon, delta,
                                                                   self._sensitivity, analytic_gaussian_sigma,
                                                                   gaussian_delta)
        self._init_dim(dim)

    @property
    def parameters(self) -> dict:
        return {"sigma": self.sigma, "delta": self.delta, "dim": self.dim}

    def to_dict(self) -> dict:
        return {**super().to_dict(), "dim": self.dim}

    @classmethod
    def from_dict(cls, d: dict) -> "GaussianND":
        if d.get("name") != cls.name:
            raise SpecError(f"GaussianND.from_dict got a {d.get('name')!r} mechanism")
        return cls(sigma=d["sigma"], epsilon=d.get("epsilon"), delta=d.get("delta"),
                   sensitivity=d.get("sensitivity", 1.0), dim=d["dim"])

    def __eq__(self, other) -> bool:
        return isinstance(other, GaussianND) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.name, self.sigma, self.dim, self.sensitivity))

    def __repr__(self) -> str:
        return (f"GaussianND(sigma={self.sigma!r}, epsilon={self._epsilon!r}, delta={self.delta!r}, "
                f"sensitivity={self.sensitivity!r}, dim={self.dim})")

    def privacy(self) -> Privacy:
        if self._epsilon is None:
            raise SpecError("GaussianND(sigma=...) without epsilon has no single guarantee: use "
                            "gaussian_delta(sigma, epsilon, sensitivity)")
        return Privacy("approx", self._epsilon, self.delta, self.sensitivity, "l2" if self.dim > 1 else "abs",
                       "exact delta(epsilon) of N(0, sigma^2 I_d) for every shift of l2 norm <= the sensitivity: the "
                       "pair has the curve of the 1-D pair at the shift's l2 norm [BW18, Thm 8; derived]; l1 shifts "
                       "are covered since ||v||_2 <= ||v||_1")

    def _logpdf_nd(self, x):
        s2 = self.sigma ** 2
        return -(x * x).sum(axis=-1) / (2.0 * s2) - 0.5 * self.dim * math.log(2.0 * math.pi * s2)

    def _pdf_nd(self, x):
        return np.exp(self._logpdf_nd(x))

    def _entropy(self):
        return 0.5 * self.dim * (1.0 + math.log(2.0 * math.pi * self.sigma ** 2))

    def _cost_nd(self, name, m, cost):
        if name == "pow":
            return gaussian_cost(f"pow:{m:g}", self.sigma, 1) if self.dim == 1 else _no_pow(cost)
        return gaussian_cost(name, self.sigma, self.dim)

    def _sample(self, n, rng):
        return rng.normal(0.0, self.sigma, size=(n, self.dim))

    def _make_1d(self) -> Mechanism:
        return Gaussian(sigma=self.sigma, epsilon=self._epsilon, sensitivity=self.sensitivity)


def _no_pow(cost):
    from optmech.mechanisms.base_nd import nd_cost_error

    raise nd_cost_error(cost, extra="")
