"""Random number generators for the samplers: reproducible (seeded) or secure (OS entropy).

``rng`` arguments accept what :func:`numpy.random.default_rng` accepts (None, an int seed, a
SeedSequence, a BitGenerator or a Generator) and the string ``"secure"``.

Secure mode
-----------
:func:`secure_generator` returns a numpy Generator over randomgen's ChaCha bit generator
(ChaCha20: 20 rounds, a cryptographically secure stream cipher) keyed with 256 bits from
:mod:`secrets` (the operating system's CSPRNG).  Every sampler in optmech then runs unchanged
on that stream.

What it protects against: prediction or reconstruction of the noise from the generator, i.e.
an attacker who knows the code, sees other outputs, or could guess a seed (time-based seeds,
``default_rng()`` state recovery of a non-cryptographic PCG64 stream).  The key never leaves
the process and is not reused across calls.

What it does **not** protect against: the floating-point attacks on additive noise (Mironov,
CCS 2012): samplers that map uniform doubles through logs and products produce a law that only
approximates the density, with gaps and irregular low-order bits that can leak the true value.
Nor against timing side channels (rejection loops), a compromised host, or memory disclosure
of the generator state.  For draws whose law is exactly the pmf, use the exact samplers
(``Mechanism.sample(..., exact=True)``, :mod:`optmech.exact`).
"""

from __future__ import annotations

import secrets

import numpy as np

from optmech.errors import SpecError

__all__ = ["as_generator", "secure_generator", "SECURE"]

#: The ``rng`` value that selects the secure generator.
SECURE = "secure"


def secure_generator() -> np.random.Generator:
    """A fresh Generator over ChaCha20 keyed from the OS CSPRNG (see the module docstring).

    >>> g = secure_generator()
    >>> isinstance(g, np.random.Generator), 0.0 <= g.random() < 1.0
    (True, True)
    """
    try:
        from randomgen import ChaCha
    except ImportError:  # pragma: no cover - randomgen is a core dependency
        raise SpecError("secure sampling needs the randomgen package (pip install randomgen)") from None
    return np.random.Generator(ChaCha(seed=secrets.randbits(256), rounds=20))


def as_generator(rng=None) -> np.random.Generator:
    """Resolve an ``rng`` argument (seed, Generator, None or ``"secure"``) to a Generator.

    >>> bool(as_generator(7).random() == np.random.default_rng(7).random())    # a seed: reproducible
    True
    >>> type(as_generator("secure").bit_generator).__name__
    'ChaCha'
    """
    if isinstance(rng, str):
        if rng == SECURE:
            return secure_generator()
        raise SpecError(f"rng must be a seed, a numpy Generator or 'secure', got {rng!r}")
    if isinstance(rng, bool):
        raise SpecError(f"rng must be a seed, a numpy Generator or 'secure', got {rng!r}")
    if isinstance(rng, (int, np.integer)) and rng < 0:
        raise SpecError(f"seed must be a nonnegative integer, got {rng!r}")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"invalid rng/seed {rng!r}: {exc}") from None
