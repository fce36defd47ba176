"""The object a mechanism's ``exact_sampler()`` returns: an exact draw, its law and its guarantee."""

from __future__ import annotations

from numbers import Integral
from typing import Any, Callable

import numpy as np

from optmech.errors import SpecError
from optmech.exact.bits import BitSource, bit_source

__all__ = ["ExactSampler", "TIMING_NOTE", "check_size"]

#: What an exact sampler does not cover (stated in every ``privacy()`` note).
TIMING_NOTE = ("not covered: timing side channels (the number of words a draw consumes depends on its output), "
               "a compromised host, and the secrecy of a seeded stream")


class ExactSampler:
    """Draws whose law equals the stated pmf exactly: integer and rational arithmetic on uniform
    words from ChaCha20 (:mod:`optmech.exact.bits`).

    Parameters
    ----------
    draw : callable (n, BitSource) -> array
        n draws, shape (n,) in 1-D or (n, dim).
    dim : int
    mechanism : str
        The repr of the mechanism whose law is drawn.
    privacy : object
        The guarantee of the law drawn (a :class:`~optmech.mechanisms.base.Privacy`).
    law : str
        What is drawn exactly, in words (the note users read).

    >>> from optmech.mechanisms import DiscreteStaircase
    >>> ex = DiscreteStaircase(epsilon=1, sensitivity=4, r=2).exact_sampler()
    >>> ex.sample((2, 3), rng=5).shape, ex.privacy().notion, ex.dim
    ((2, 3), 'pure', 1)
    """

    lattice = True

    def __init__(self, draw: Callable[[int, BitSource], np.ndarray], *, dim: int, mechanism: str, privacy: Any,
                 law: str) -> None:
        self._draw = draw
        self.dim = int(dim)
        self.mechanism = mechanism
        self._privacy = privacy
        self.law = law

    def __repr__(self) -> str:
        return f"ExactSampler({self.mechanism})"

    def privacy(self):
        """The guarantee of the law this sampler draws (its note says what is not covered)."""
        return self._privacy

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Exact draws, int64, shape ``size`` (``(*size, dim)`` in d-D); one draw for size None.

        ``rng``: None or ``"secure"`` (ChaCha20 keyed by the OS CSPRNG, the default), an int seed
        (ChaCha20 keyed by it: reproducible), a numpy Generator, or a :class:`BitSource` (to
        continue one stream across calls).
        """
        dims = check_size(size)
        src = bit_source(rng)
        n = 1 if dims is None else int(np.prod(dims, dtype=np.int64))
        out = np.asarray(self._draw(n, src), dtype=np.int64)
        if self.dim > 1:
            out = out.reshape(n, self.dim)
        if dims is None:
            return out[0]
        return out.reshape(dims + out.shape[1:])

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "law": self.law, "dim": self.dim,
                "privacy": self._privacy.to_dict() if hasattr(self._privacy, "to_dict") else self._privacy}


def check_size(size) -> tuple[int, ...] | None:
    """Validate a ``size`` argument: None, a nonnegative int, or a tuple of them."""
    if size is None:
        return None
    dims = size if isinstance(size, tuple) else (size,)
    for n in dims:
        if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
            raise SpecError(f"sample size must be a nonnegative integer (or a tuple of them), got {size!r}")
    return tuple(int(n) for n in dims)
