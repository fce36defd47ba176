"""Argument parsing shared by the command-line modules (no command lives here)."""

from __future__ import annotations

import math

from optmech.errors import SpecError


def parse_number(name: str, text: str | None, *, integer: bool = False) -> float | int | None:
    """``text`` as a number (an integer with ``integer``), None when absent; one-line SpecError otherwise."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise SpecError(f"{name} must be a number, got {text!r}") from None
    if math.isnan(v):
        raise SpecError(f"{name} must be a number, got {text!r}")
    if integer:
        if not math.isfinite(v) or v != int(v):
            raise SpecError(f"{name} must be an integer, got {text!r}")
        return int(v)
    return v
