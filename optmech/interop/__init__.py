"""optmech's mechanisms inside the libraries practitioners build releases with.

- :mod:`optmech.interop.opendp`: :func:`~optmech.interop.opendp.make_measurement` wraps a mechanism as an
  OpenDP ``Measurement`` (noise from optmech's exact sampler, privacy map from its audit).
- :mod:`optmech.interop.accounting`: privacy loss distributions for dp_accounting, built from a
  mechanism's exact law, so that the optimal noise composes with other mechanisms.

Both libraries are optional (``pip install optmech[interop]``); the modules import them lazily and
say so in one line when they are missing.
"""
