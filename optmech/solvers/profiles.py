"""Solver profiles: ordered lists of (backend, options) attempts, read from TOML.

The profiles shipped with optmech live in ``optmech/profiles/<name>.toml``; a copy for users to
edit is in the repository's top-level ``solvers/`` folder.  Format::

    description = "HiGHS dual simplex, then IPX with crossover"

    [[attempt]]
    backend = "highs"            # one of optmech.solvers.BACKENDS
    [attempt.options]            # optional; passed to the backend unchanged
    solver = "simplex"
    primal_feasibility_tolerance = 1e-10

    [[attempt]]
    backend = "highs"
    [attempt.options]
    solver = "ipm"
    run_crossover = "on"

An attempt may carry a ``[attempt.when]`` table that limits it to some LPs (others skip it, as a
backend that does not accept an LP is skipped): ``builders`` (the LP's ``meta["builder"]`` must be
one of them) and ``min_columns`` (the LP must have at least that many columns)::

    [[attempt]]
    backend = "clarabel"
    [attempt.when]
    builders = ["general"]
    min_columns = 3000

Option names are checked by the backend when it runs (HiGHS option names for ``highs``,
linprog option names plus ``method`` for ``scipy``, ``solver`` plus solver settings for
``cvxpy``); everything else is checked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from optmech.errors import SpecError
from optmech.solvers.registry import BACKENDS, get_backend

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_TOP_KEYS = {"description", "attempt"}
_ATTEMPT_KEYS = {"backend", "options", "when"}
_WHEN_KEYS = {"builders", "min_columns"}


@dataclass(frozen=True)
class Attempt:
    """One backend with its options; ``options`` is passed to ``Backend.solve`` unchanged."""

    backend: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    when: dict[str, Any] = field(default_factory=dict, hash=False)

    def applies(self, lp: Any) -> bool:
        """Whether the attempt's ``when`` conditions (builders, min_columns) admit ``lp``."""
        builders = self.when.get("builders")
        if builders is not None and lp.meta.get("builder") not in builders:
            return False
        return lp.cols >= int(self.when.get("min_columns", 0))


@dataclass(frozen=True)
class SolverProfile:
    """A named, ordered fallback chain of attempts."""

    name: str
    attempts: tuple[Attempt, ...]
    description: str = ""


def _profiles_dir() -> Any:
    return resources.files("optmech").joinpath("profiles")


def profile_names() -> list[str]:
    """Names of the profiles shipped in ``optmech/profiles``, sorted."""
    return sorted(p.name[: -len(".toml")] for p in _profiles_dir().iterdir() if p.name.endswith(".toml"))


def load_profile(name_or_path: str | SolverProfile) -> SolverProfile:
    """Load a shipped profile by name, or a TOML file by path.

    Parameters
    ----------
    name_or_path : str or SolverProfile
        A bare name (``"default"``, ``"ipm"``, ...) for a profile shipped in
        ``optmech/profiles``, or a path ending in ``.toml``.  A profile object is returned as is.

    Returns
    -------
    SolverProfile

    Raises
    ------
    SpecError
        Unknown name, missing or malformed file, unknown key or backend; the message is one line
        and starts with ``solver profile '<name>':``.
    """
    if isinstance(name_or_path, SolverProfile):
        return name_or_path
    if not isinstance(name_or_path, (str, Path)):
        raise SpecError(f"solver profile must be a name or a .toml path, not {type(name_or_path).__name__}")
    spec = str(name_or_path)
    if spec.endswith(".toml"):
        path = Path(spec)
        name = path.stem
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SpecError(f"solver profile '{spec}': cannot read the file ({exc.strerror or exc})") from exc
        except UnicodeDecodeError as exc:
            raise SpecError(f"solver profile '{spec}': not UTF-8 text ({exc.reason})") from None
    elif _NAME.match(spec):
        name = spec
        if name not in profile_names():
            raise SpecError(
                f"solver profile '{name}' does not exist; available: {', '.join(profile_names())} "
                "(or give a path ending in .toml)"
            )
        text = _profiles_dir().joinpath(f"{name}.toml").read_text(encoding="utf-8")
    else:
        raise SpecError(
            f"solver profile '{spec}': not a profile name ({', '.join(profile_names())}) "
            "nor a path ending in .toml"
        )
    return parse_profile(text, name)


def parse_profile(text: str, name: str) -> SolverProfile:
    """Parse and validate the TOML text of a profile called ``name``."""
    where = f"solver profile '{name}'"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{where}: invalid TOML: {' '.join(str(exc).split())}") from exc
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise SpecError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: description, attempt")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SpecError(f"{where}: description must be a string")
    raw_attempts = data.get("attempt")
    if raw_attempts is None:
        raise SpecError(f"{where}: no [[attempt]] tables")
    if not isinstance(raw_attempts, list) or not raw_attempts:
        raise SpecError(f"{where}: 'attempt' must be a non-empty array of tables ([[attempt]])")
    attempts = []
    for i, att in enumerate(raw_attempts, start=1):
        here = f"{where}: attempt {i}"
        if not isinstance(att, dict):
            raise SpecError(f"{here} is not a table (write it as [[attempt]])")
        unknown = sorted(set(att) - _ATTEMPT_KEYS)
        if unknown:
            raise SpecError(f"{here}: unknown key(s) {', '.join(unknown)}; allowed: backend, options, when")
        backend = att.get("backend")
        if backend not in BACKENDS:
            raise SpecError(f"{here}: unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
        options = att.get("options", {})
        if not isinstance(options, dict):
            raise SpecError(f"{here}: options must be a table ([attempt.options])")
        for key, value in options.items():
            if isinstance(value, (dict, list)) or not isinstance(value, (str, int, float, bool)):
                raise SpecError(f"{here}: option {key} must be a string, number or boolean, not {type(value).__name__}")
        attempts.append(Attempt(backend=backend, options=dict(options), when=_parse_when(att.get("when", {}), here)))
    return SolverProfile(name=name, attempts=tuple(attempts), description=description)


def _parse_when(when: Any, here: str) -> dict[str, Any]:
    """Validate an attempt's ``[attempt.when]`` table (see the module docstring)."""
    if not isinstance(when, dict):
        raise SpecError(f"{here}: when must be a table ([attempt.when])")
    unknown = sorted(set(when) - _WHEN_KEYS)
    if unknown:
        raise SpecError(f"{here}: unknown condition(s) {', '.join(unknown)} in when; allowed: builders, min_columns")
    builders = when.get("builders")
    if builders is not None and (not isinstance(builders, list) or not all(isinstance(b, str) for b in builders)):
        raise SpecError(f"{here}: when.builders must be a list of builder names")
    minimum = when.get("min_columns")
    if minimum is not None and (isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0):
        raise SpecError(f"{here}: when.min_columns must be a nonnegative integer")
    return dict(when)


def backend_for(profile: SolverProfile | str, builder: str, columns: int) -> str | None:
    """The backend the first attempt of ``profile`` that would take an LP of ``builder`` with
    ``columns`` columns runs on (installed backends only), for the memory and time model of a plan
    before its LP is built; ``None`` when no attempt would take it."""
    stand_in = SimpleNamespace(meta={"builder": builder}, cols=int(columns))
    for attempt in load_profile(profile).attempts:
        backend = get_backend(attempt.backend)
        if attempt.applies(stand_in) and backend.available() and backend.accepts(stand_in):
            return attempt.backend
    return None
