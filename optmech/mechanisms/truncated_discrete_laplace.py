"""The truncated discrete Laplace (truncated double geometric) on ℤ, calibrated to (ε, δ) with an exact δ.

Kept so existing imports work; the code lives in :mod:`optmech.mechanisms.approx.truncated`.
"""

from optmech.mechanisms.approx.truncated import TruncatedDiscreteLaplace

__all__ = ["TruncatedDiscreteLaplace"]
