"""Random words for the exact samplers: uniform integers of ``word_bits`` bits, nothing else.

An exact sampler touches randomness only through :class:`BitSource`: ``words(n)`` (a vector of
independent uniform words) and ``word()`` (one more).  Every decision after that is integer or
rational arithmetic, so the output law is a function of uniform bits alone.

Sources
-------
* ``rng=None`` or ``"secure"``: ChaCha20 (20 rounds, randomgen) keyed with 256 bits from
  :mod:`secrets`, the operating system's CSPRNG.  The default of every exact sampler.
* an ``int`` seed (or a :class:`numpy.random.SeedSequence`): ChaCha20 keyed from the seed,
  reproducible: the same seed gives the same draws.  A seeded stream is as secret as its seed,
  so use it for tests and reproductions, not for releases.
* a :class:`numpy.random.Generator` or BitGenerator: its 64-bit outputs, as given.  Exactness
  holds for any source of uniform words; secrecy only for a cryptographic one.

``word_bits`` below 64 exists for the tests, which enumerate every word of a small width.
"""

from __future__ import annotations

import secrets

import numpy as np

from optmech.errors import SpecError

__all__ = ["BitSource", "ScriptedBits", "bit_source", "SECURE", "WORD_BITS"]

#: The ``rng`` value that selects the OS-keyed ChaCha20 stream (also the default when rng is None).
SECURE = "secure"
#: Bits per word of the production sources.
WORD_BITS = 64
_FULL = np.iinfo(np.uint64).max


class BitSource:
    """Uniform words of ``word_bits`` bits from a numpy Generator (see the module docstring).

    >>> src = bit_source(7)
    >>> w = src.words(3)
    >>> w.dtype, len(w), bit_source(7).words(3).tolist() == w.tolist()    # a seed reproduces
    (dtype('uint64'), 3, True)
    >>> 0 <= src.word() < 2**64
    True
    """

    def __init__(self, generator: np.random.Generator, word_bits: int = WORD_BITS, secure: bool = False) -> None:
        self.generator = generator
        self.word_bits = int(word_bits)
        self.secure = bool(secure)
        self.used = 0  # words drawn so far

    def words(self, n: int) -> np.ndarray:
        """``n`` independent uniform words (uint64 array)."""
        self.used += int(n)
        w = self.generator.integers(0, _FULL, endpoint=True, dtype=np.uint64, size=int(n))
        if self.word_bits < 64:
            w >>= np.uint64(64 - self.word_bits)
        return w

    def word(self) -> int:
        """One more uniform word, as a Python int."""
        return int(self.words(1)[0])


class ScriptedBits(BitSource):
    """A source that replays given words, then raises :class:`Exhausted` (for enumeration proofs).

    >>> s = ScriptedBits([3, 1], word_bits=2)
    >>> s.words(1).tolist(), s.word()
    ([3], 1)
    >>> s.word()
    Traceback (most recent call last):
    ...
    optmech.exact.bits.Exhausted: the scripted words ran out
    """

    def __init__(self, words, word_bits: int) -> None:
        self.word_bits = int(word_bits)
        self.secure = False
        self.script = [int(w) for w in words]
        self.used = 0

    def words(self, n: int) -> np.ndarray:
        if self.used + n > len(self.script):
            raise Exhausted("the scripted words ran out")
        out = np.array(self.script[self.used:self.used + n], dtype=np.uint64)
        self.used += n
        return out


class Exhausted(Exception):
    """A :class:`ScriptedBits` source has no more words."""


def chacha20(seed) -> np.random.Generator:
    """A Generator over ChaCha20 (20 rounds) keyed by ``seed`` (an int or SeedSequence)."""
    try:
        from randomgen import ChaCha
    except ImportError:  # pragma: no cover - randomgen is a core dependency
        raise SpecError("exact sampling needs the randomgen package (pip install randomgen)") from None
    return np.random.Generator(ChaCha(seed=seed, rounds=20))


def bit_source(rng=None, word_bits: int = WORD_BITS) -> BitSource:
    """Resolve an ``rng`` argument to a :class:`BitSource` (module docstring).

    >>> bit_source().secure, bit_source("secure").secure, bit_source(3).secure
    (True, True, False)
    >>> bit_source("fast")
    Traceback (most recent call last):
    ...
    optmech.errors.SpecError: rng must be None, 'secure', a nonnegative int seed or a numpy Generator, got 'fast'
    """
    if isinstance(rng, BitSource):
        return rng
    bad = SpecError(f"rng must be None, 'secure', a nonnegative int seed or a numpy Generator, got {rng!r}")
    if rng is None or (isinstance(rng, str) and rng == SECURE):
        return BitSource(chacha20(secrets.randbits(256)), word_bits, secure=True)
    if isinstance(rng, (str, bool, float)):
        raise bad
    if isinstance(rng, (int, np.integer)):
        if rng < 0:
            raise bad
        return BitSource(chacha20(int(rng)), word_bits)
    if isinstance(rng, np.random.SeedSequence):
        return BitSource(chacha20(rng), word_bits)
    if isinstance(rng, np.random.Generator):
        return BitSource(rng, word_bits)
    if isinstance(rng, np.random.BitGenerator):
        return BitSource(np.random.Generator(rng), word_bits)
    raise bad
