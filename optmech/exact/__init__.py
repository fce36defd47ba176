"""Exact samplers: draws whose law equals a certified pmf exactly, from uniform random words.

Layout (data flow): :mod:`~optmech.exact.bits` (uniform words from ChaCha20) →
:mod:`~optmech.exact.reals` (rigorous brackets of e^{−x} and friends, integers only) →
:mod:`~optmech.exact.inversion` (exact inversion sampler, exact geometric, uniform integers) →
:mod:`~optmech.exact.laws` (the law shapes: window plus periodic tails, finite point sets, series,
ℓ1 spheres) → :mod:`~optmech.exact.sampler` (:class:`ExactSampler`, what
``Mechanism.exact_sampler()`` returns).  The mechanisms build their laws from these pieces; see
the docs page guide/mechanisms.md, section "Exact samplers".
"""

from optmech.exact.bits import SECURE, BitSource, bit_source
from optmech.exact.sampler import TIMING_NOTE, ExactSampler

__all__ = ["BitSource", "bit_source", "ExactSampler", "SECURE", "TIMING_NOTE"]
