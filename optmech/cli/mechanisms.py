"""``optmech sample``, ``optmech mechanism``, ``optmech audit`` and ``optmech solvers``: the mechanism
library and the solver backends from the command line.

Parsers are added by :func:`add_parsers` (each with its handler as ``args.handler``);
:mod:`optmech.cli.main` dispatches and maps errors to exit statuses (2 for bad input, with one
line on stderr).  Output files are written to a temporary name and renamed when complete, so a
failed or interrupted run (Ctrl-C, SIGTERM, SIGHUP: exit 128 + signal) never leaves a partial file.
Parameters the noise formulas cannot represent in a float (epsilon < MIN_EPSILON, a noise scale
outside [1/MAX_NOISE_SCALE, MAX_NOISE_SCALE], a sensitivity beyond 2**53) are refused up front.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile

from optmech.cli.args import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    ListAction,
    add_command,
    add_cost,
    add_dim,
    add_norm,
    add_domain,
    add_json,
    add_sensitivity,
    check_output_path,
    list_items,
)
from optmech.cli.args import parse_number as _num
from optmech.errors import Interrupted, OptmechError, SpecError
from optmech.mechanisms.files import load_mechanism_file  # noqa: F401  (used below and re-exported)

#: Samples drawn per block when writing a file (bounded memory for any n).
SAMPLE_BLOCK = 1 << 20
#: Largest n that ``optmech sample`` accepts (the file would be > 8 GB per dimension beyond it).
MAX_SAMPLES = 10**9

#: Smallest epsilon, and the widest noise scale sensitivity/epsilon (1/MAX_NOISE_SCALE to
#: MAX_NOISE_SCALE), that ``sample`` and ``mechanism`` accept.
MIN_EPSILON, MAX_NOISE_SCALE = 1e-100, 1e100

_EXITS = (EXIT_OK, EXIT_INPUT, EXIT_INTERNAL)


def add_parsers(sub) -> None:
    """The ``sample``, ``mechanism``, ``audit`` and ``solvers`` subcommands."""
    from optmech.mechanisms.factory import FAMILIES

    def shape_args(p):
        src = p.add_mutually_exclusive_group(required=True)
        src.add_argument("--mechanism", choices=FAMILIES, help="mechanism family")
        src.add_argument("--from", dest="from_file", metavar="FILE.json",
                         help="a mechanism saved by `optmech solve --save`, printed by `optmech mechanism --json`, "
                              "or written by Mechanism.to_dict()")
        add_dim(p)
        add_norm(p, help="norm of the sensitivity in d > 1 dimensions: l1 (default), l2, linf or lp:P for the "
                         "staircase; l2 for l2_laplace")
        p.add_argument("--weights", default=None, metavar="W1,W2,..",
                       help="the staircase's weighted ball: ||x|| = (sum_i w_i |x_i|^p)^(1/p), dim numbers > 0 (l1, l2, lp:P)")
        p.add_argument("--epsilon", default=None, help="privacy parameter ε > 0 (required except for uniform noise)")
        p.add_argument("--delta", default=None, help="δ in (0, 1) (uniform noise only; required there)")
        add_sensitivity(p, help="sensitivity Δ (ℓ1 in d-D; ℓ2 for l2_laplace)")
        g = p.add_mutually_exclusive_group()
        g.add_argument("--gamma", default=None, help="staircase step fraction γ in [0, 1] (default: optimal for --cost)")
        g.add_argument("--r", default=None, help="discrete-staircase r in [1, Δ] (default: optimal for --cost)")
        add_cost(p, help="cost to optimise the shape for: abs | square | pow:P | an expression in x (1-D); "
                         "l1 | l2 | l2sq | linf in d-D (abs means l1 there)")
        add_domain(p, help="uniform noise: lattice or continuous", mechanism=True)

    s = add_command(
        sub, "sample", summary="draw noise samples from a mechanism into a .npy or .csv file",
        description="Draw N noise samples from a named mechanism (its shape parameter chosen optimally for --cost "
                    "unless given) or from a saved one (--from), in blocks, into a .npy or .csv file written "
                    "atomically. Without --seed a fresh seed is drawn and reported, so every run can be repeated; "
                    "--secure draws from ChaCha20 keyed by OS entropy.",
        examples=["optmech sample --mechanism staircase --epsilon 1 --sensitivity 2 -n 100000 --seed 7 --out noise.npy",
                  "optmech sample --mechanism uniform --delta 0.25 --dim 2 -n 1000 --secure --out u.csv",
                  "optmech mechanism --mechanism staircase --epsilon 1 --json > m.json && "
                  "optmech sample --from m.json -n 10 --out x.csv"],
        exits=_EXITS,
        notes="Ctrl-C, SIGTERM or SIGHUP stop the draw: the hidden temporary file is removed, --out is left as "
              "it was (absent, or the previous file), and the exit status is 130, 143 or 129.")
    shape_args(s)
    s.add_argument("-n", required=True, help="number of samples (required)")
    r = s.add_mutually_exclusive_group()
    r.add_argument("--seed", default=None, help="seed for a reproducible draw (default: a fresh seed, reported)")
    r.add_argument("--secure", action="store_true", help="ChaCha20 keyed by OS entropy (see docs/guide/mechanisms.md: what it protects)")
    s.add_argument("--exact", action="store_true",
                   help="exact sampler: integer and rational arithmetic on ChaCha20 words, the output law equals the "
                        "pmf exactly (lattice mechanisms; continuous ones need --lattice-bits)")
    s.add_argument("--lattice-bits", default=None, metavar="K",
                   help="with --exact, release a continuous mechanism on the grid of step sensitivity/2^K "
                        "(0 <= K <= 20): its lattice analogue, sampled exactly; the samples are multiples of the step")
    s.add_argument("--out", required=True, metavar="FILE", help="output file, FILE.npy or FILE.csv, checked before any "
                   "draw: its folder must exist and be writable (required)")
    add_json(s, help="print a JSON summary on stdout")
    s.set_defaults(handler=cmd_sample)

    m = add_command(
        sub, "mechanism", summary="a mechanism's parameters, expected cost and guarantee",
        description="Describe a named mechanism (its shape parameter chosen optimally for --cost unless given) or a "
                    "saved one (--from): its parameters, exact expected cost, mean, variance and privacy guarantee. "
                    "The --json output loads back with --from and --candidate.",
        examples=["optmech mechanism --mechanism staircase --epsilon 1 --cost square",
                  "optmech mechanism --mechanism discrete_staircase --dim 2 --epsilon 1 --sensitivity 2 --json > m.json",
                  "optmech mechanism --from saved.json"],
        exits=_EXITS)
    shape_args(m)
    add_json(m)
    m.set_defaults(handler=cmd_mechanism)

    a = add_command(
        sub, "audit", summary="exact privacy audit of a lattice pmf (CSV k,p or solve --save JSON)",
        description="Audit a noise pmf on the integers exactly: the realised pure ε over every shift 0 < |s| <= Δ "
                    "(or that none exists), and δ(ε) at the requested ε values, tails summed in closed form. The file "
                    "is a CSV with header k,p or the JSON written by optmech solve --save.",
        examples=["optmech audit pmf.csv --sensitivity 2 --epsilon 0.5,1 2",
                  "optmech audit saved.json --epsilon 1 --epsilon 2 --json"],
        exits=_EXITS)
    a.add_argument("file", help="CSV with header k,p, or the JSON written by optmech solve --save")
    add_sensitivity(a, help="integer sensitivity Δ >= 1 (all shifts 0 < |s| <= Δ)")
    a.add_argument("--epsilon", action=ListAction, default=None, metavar="E",
                   help="ε values at which to report δ(ε); a list, after FILE (default: none)")
    add_json(a)
    a.set_defaults(handler=cmd_audit)

    v = add_command(
        sub, "solvers", summary="list solver backends and profiles",
        description="List the LP backends (installed or not) and the solver profiles that --solver accepts.",
        examples=["optmech solvers"], exits=_EXITS,
        notes="It takes no options; --solver NAME (default: default) picks a profile in solve and table.")
    v.set_defaults(handler=cmd_solvers)


def cmd_solvers(args: argparse.Namespace) -> int:
    from optmech.solvers import available_backends
    from optmech.solvers.profiles import profile_names

    for name, ok in available_backends().items():
        print(f"backend {name:<8} {'installed' if ok else 'not installed'}")
    for name in profile_names():
        print(f"profile {name}")
    return EXIT_OK


# -- parsing helpers ------------------------------------------------------------------------------
def _sensitivity(text, lattice_hint: bool):
    v = _num("sensitivity", text)
    if lattice_hint and v is not None and math.isfinite(v) and v == int(v):
        return int(v)
    return v


def _check_mechanism_file(path: str) -> None:
    """Refuse, in one line, a --from file whose JSON the loader would choke on: nesting too deep, a
    number of more than 4300 digits, or a number in the mechanism that is not finite or beyond
    ``|x| <= 2**53`` (see :func:`optmech.inputs.check_json_numbers`).  Files that cannot be read,
    or are not JSON at all, are left to :func:`load_mechanism_file` and its messages."""
    from optmech.inputs import check_json_numbers

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        return
    try:
        d = json.loads(text)
    except json.JSONDecodeError:
        return
    except (ValueError, RecursionError) as exc:  # a number of more than 4300 digits; nesting too deep
        msg = str(exc).split(";")[0]
        raise SpecError(f"cannot read {path} as JSON: {type(exc).__name__}: {msg[:100]}") from None
    if not isinstance(d, dict):
        return
    if isinstance(d.get("definition"), dict) and isinstance(d.get("mechanism"), str):
        check_json_numbers(d["definition"], path, "definition")
        _check_scale(*(d["definition"].get(k) for k in ("epsilon", "sensitivity", "delta")))
    elif isinstance(d.get("mechanism"), dict):
        check_json_numbers(d["mechanism"], path, "mechanism")
        if isinstance(d.get("problem"), dict):
            check_json_numbers(d["problem"].get("epsilon"), path, "problem.epsilon")
    else:
        check_json_numbers(d, path)
        _check_scale(*(d.get(k) for k in ("epsilon", "sensitivity", "delta")))


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < math.inf


def _check_scale(eps, sens, delta=None) -> None:
    """Refuse parameters the families' formulas cannot represent: epsilon below MIN_EPSILON, a
    sensitivity beyond 2**53, or a noise scale sensitivity/epsilon (sensitivity/delta for uniform
    noise) outside [1/MAX_NOISE_SCALE, MAX_NOISE_SCALE] -- the moments and samplers overflow, or
    divide by zero, long before (Laplace's variance 2(Δ/ε)² overflows at Δ/ε ≈ 1e154).  Values that
    are not positive finite numbers are left to the families' own checks."""
    from optmech.inputs import MAX_ABS_K

    if _positive(eps) and eps < MIN_EPSILON:
        raise SpecError(f"epsilon = {eps:g} is below {MIN_EPSILON:g}, where the noise formulas break down; raise epsilon")
    if not _positive(sens):
        return
    if sens > MAX_ABS_K:
        raise SpecError(f"sensitivity {sens:g} is beyond 2**53 = {MAX_ABS_K}, the largest supported")
    for name, v in (("epsilon", eps), ("delta", None if _positive(eps) else delta)):
        if _positive(v) and not 1 / MAX_NOISE_SCALE <= sens / v <= MAX_NOISE_SCALE:
            raise SpecError(f"{name} = {v:g} with sensitivity {sens:g} makes the noise scale sensitivity/{name} = "
                            f"{sens / v:.3g}, outside [{1 / MAX_NOISE_SCALE:g}, {MAX_NOISE_SCALE:g}] (the noise's "
                            "moments overflow or vanish in a float)")


def _build(args: argparse.Namespace):
    from optmech.mechanisms.factory import MechanismChoice, make_mechanism, parse_cost_for

    if args.from_file is not None:
        for flag, value in (("--gamma", args.gamma), ("--r", args.r), ("--delta", args.delta), ("--epsilon", args.epsilon),
                            ("--domain", args.domain)):
            if value is not None:
                raise SpecError(f"{flag} does not apply with --from (the file defines the mechanism)")
        _check_mechanism_file(args.from_file)
        try:
            mech = load_mechanism_file(args.from_file, sampler=True)
        except OptmechError:
            raise
        except (KeyError, TypeError, ValueError, ArithmeticError) as exc:  # a field of the wrong type or value
            msg = " ".join(str(exc).split())
            raise SpecError(f"{args.from_file}: not a valid mechanism ({type(exc).__name__}: "
                            f"{msg if len(msg) <= 120 else msg[:120] + '…'})") from None
        if not hasattr(mech, "sample"):
            raise SpecError(f"{args.from_file} holds a saved d-dimensional solver mechanism: it serves as "
                            "optmech solve --candidate FILE.json, and has no sampler or description here")
        if args.dim not in ("1", str(mech.dim)):
            raise SpecError(f"--dim {args.dim} does not match the mechanism in the file (dim {mech.dim})")
        _check_scale(getattr(mech, "epsilon", None), getattr(mech, "sensitivity", None),
                     getattr(mech, "delta", None))
        return mech, MechanismChoice("given", str(parse_cost_for(args.cost, mech.dim)))
    fam = args.mechanism
    lattice = fam in ("discrete_staircase", "geometric", "discrete_laplace") or (fam == "uniform" and args.domain != "continuous")
    epsilon, delta = _num("epsilon", args.epsilon), _num("delta", args.delta)
    sensitivity = _sensitivity(args.sensitivity, lattice)
    _check_scale(epsilon, sensitivity, delta)
    mech, choice = make_mechanism(
        fam,
        epsilon=epsilon,
        sensitivity=sensitivity,
        dim=_num("dim", args.dim, integer=True),
        delta=delta,
        gamma=_num("gamma", args.gamma),
        r=_num("r", args.r, integer=True),
        cost=args.cost,
        domain=args.domain,
        norm=args.norm,
        weights=_weights(args.weights),
    )
    _check_scale(getattr(mech, "epsilon", None), getattr(mech, "sensitivity", None), getattr(mech, "delta", None))
    return mech, choice


def _weights(text: str | None) -> list | None:
    """``--weights`` as a list of numbers (their positivity and count are checked by the staircase)."""
    if text is None:
        return None
    out = []
    for part in str(text).split(","):
        try:
            out.append(float(part))
        except ValueError:
            raise SpecError(f"--weights must be numbers separated by commas, got {text!r}") from None
    return out


def _jsonable(v):
    import numpy as np

    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (np.floating, np.integer)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


# -- optmech mechanism ----------------------------------------------------------------------------
def describe(mech, choice) -> dict:
    """The ``optmech mechanism`` payload."""
    from optmech.mechanisms.factory import parse_cost_for

    cost = parse_cost_for(choice.cost, mech.dim)
    try:
        ec = mech.expected_cost(cost)
    except OverflowError:  # the expected cost is beyond the largest float (a huge scale, a fast cost)
        ec = math.inf
    except Exception as exc:  # noqa: BLE001 - a cost a family cannot price is reported, not fatal
        if not isinstance(exc, (SpecError, NotImplementedError, TypeError)):
            raise
        ec = None
    d = mech.to_dict()
    privacy = mech.privacy()

    def moment(f):
        """A moment the law can compute, or None (a cell law without the symmetry its variance needs)."""
        try:
            return f()
        except (SpecError, NotImplementedError):
            return None

    return _jsonable({
        "mechanism": d.get("name", d.get("kind")),
        "dim": mech.dim,
        # the guarantee the law has (audited on loading for saved laws), as in "privacy"
        "epsilon": None if privacy.notion == "approx" else privacy.epsilon,
        "sensitivity": mech.sensitivity,
        "cost": choice.cost,
        "expected_cost": ec,
        "parameters": {k: v for k, v in mech.parameters.items() if k != "dim"},
        "shape_parameter": choice.shape,
        "mean": moment(mech.mean),
        "variance": moment(mech.var),
        "privacy": privacy.to_dict(),
        "definition": d,
        "notes": choice.notes,
    })


def _g(v, digits: int) -> str:
    """A number in %g with ``digits`` significant digits; "inf", "-inf" and None (JSON-safe forms) as they are."""
    return f"{v:.{digits}g}" if isinstance(v, (int, float)) else str(v)


def cmd_mechanism(args: argparse.Namespace) -> int:
    mech, choice = _build(args)
    payload = describe(mech, choice)
    if args.json:
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return EXIT_OK
    pv = payload["privacy"]
    lines = [
        f"{payload['mechanism']} (dim {payload['dim']}): {pv['notion']} DP, epsilon={_g(pv['epsilon'], 12)}, "
        f"delta={_g(pv['delta'], 6)}, "
        f"sensitivity={payload['sensitivity']} ({pv['norm']})",
        f"  parameters     {', '.join(f'{k}={v}' for k, v in payload['parameters'].items()) or '-'} ({payload['shape_parameter']})",
        f"  expected cost  {payload['expected_cost']} for cost {payload['cost']}",
        f"  mean           {'—' if payload['mean'] is None else payload['mean']}",
        f"  variance       {'—' if payload['variance'] is None else payload['variance']}",
    ]
    lines += [f"  note: {n}" for n in payload["notes"]]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


# -- optmech sample -------------------------------------------------------------------------------
#: The sample file formats ``optmech sample --out`` writes.
SAMPLE_FORMATS = ("npy", "csv")


def _atomic_target(path: str) -> tuple[str, str]:
    """The extension and folder of a sample file, once :func:`~optmech.cli.args.check_output_path`
    has found it writable (one-line SpecError otherwise)."""
    check_output_path("--out", path, SAMPLE_FORMATS)
    return os.path.splitext(path)[1].lower(), os.path.dirname(os.path.abspath(path))


class _StopOnSignal:
    """While writing ``tmp``: SIGINT, SIGTERM and SIGHUP raise :class:`~optmech.errors.Interrupted`
    (so the write stops and the temporary file is removed, whichever signal it was); a second signal
    during that cleanup is ignored.  While ``hold`` is set (creating the temporary file, renaming
    it) a signal is only recorded, so no file is ever created or renamed unseen: :meth:`check`
    raises it afterwards.  A signal that arrives once the file is complete and renamed does not undo
    it: it is raised, saying so, when the block ends.  Signals that were ignored (``nohup``, a
    background job) stay ignored; outside the main thread nothing is installed.
    """

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self, path: str):
        self.path = path
        self.tmp: str | None = None
        self.done = False       # the temporary file has been renamed to path
        self.hold = False       # inside a step that must not be cut in two
        self.signum: int | None = None
        self.saved: dict = {}

    def __call__(self, signum, frame=None) -> None:
        if self.signum is not None:
            return
        self.signum = signum
        if not (self.hold or self.done):
            self.check()

    def check(self) -> None:
        """Raise the signal recorded while ``hold`` was set (if any, and the file is not yet complete)."""
        if self.signum is not None and not self.done:
            raise Interrupted(self.signum, f"{self.path} not written (no partial file left)")

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for name in self.SIGNALS:
                s = getattr(signal, name, None)
                if s is not None and signal.getsignal(s) is not signal.SIG_IGN:
                    self.saved[s] = signal.signal(s, self)
        return self

    def __exit__(self, exc_type, exc, tb):
        import signal

        for s, h in self.saved.items():
            signal.signal(s, h)
        if exc_type is None and self.signum is not None:
            raise Interrupted(self.signum, f"{self.path} was complete before the signal and is kept")
        return False


def write_samples(mech, n: int, rng, path: str, step: float | None = None) -> None:
    """Draw n samples in blocks of SAMPLE_BLOCK and write them atomically to ``path``.

    The samples go to a hidden temporary file in the same folder (``.optmech-*``), renamed to
    ``path`` once complete.  An error, Ctrl-C, SIGTERM or SIGHUP removes the temporary file and
    leaves ``path`` as it was (absent, or the previous file); the signals raise
    :class:`~optmech.errors.Interrupted` (exit 128 + signal in the CLI).
    """
    import numpy as np

    ext, folder = _atomic_target(path)
    dim = mech.dim
    lattice = mech.lattice and step is None
    dtype = np.int64 if lattice else np.float64

    def draw(m: int):
        x = mech.sample(m, rng)
        return x if step is None else np.asarray(x) * step

    with _StopOnSignal(path) as guard:
        try:
            guard.hold = True
            fd, guard.tmp = tempfile.mkstemp(prefix=".optmech-", suffix=ext, dir=folder)
            os.close(fd)
            guard.hold = False
            guard.check()
            tmp = guard.tmp
            shape = (n,) if dim == 1 else (n, dim)
            if ext == ".npy":
                out = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=shape)
                for start in range(0, n, SAMPLE_BLOCK):
                    m = min(SAMPLE_BLOCK, n - start)
                    out[start:start + m] = draw(m)
                out.flush()
                del out
            else:
                header = "x" if dim == 1 else ",".join(f"x{i + 1}" for i in range(dim))
                fmt = "%d" if lattice else "%.17g"
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(header + "\n")
                    for start in range(0, n, SAMPLE_BLOCK):
                        m = min(SAMPLE_BLOCK, n - start)
                        x = np.asarray(draw(m)).reshape(m, dim)
                        np.savetxt(fh, x, fmt=fmt, delimiter=",")
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual permissions
            guard.hold = True
            os.replace(tmp, path)
            guard.done = True
            guard.hold = False
        except BaseException:
            if guard.tmp is not None and not guard.done:
                try:
                    os.unlink(guard.tmp)
                except FileNotFoundError:
                    pass
            raise


def cmd_sample(args: argparse.Namespace) -> int:
    import secrets

    from optmech.mechanisms.rng import SECURE, as_generator

    n = _num("n", args.n, integer=True)
    if n < 0:
        raise SpecError(f"n must be >= 0, got {args.n!r}")
    if n > MAX_SAMPLES:
        raise SpecError(f"n must be <= {MAX_SAMPLES:g}, got {args.n!r}; draw in several runs with different seeds")
    _atomic_target(args.out)
    mech, choice = _build(args)
    if args.lattice_bits is not None and not args.exact:
        raise SpecError("--lattice-bits applies with --exact only")
    if args.secure:
        seed = None
    else:
        seed = _num("seed", args.seed, integer=True) if args.seed is not None else secrets.randbits(63)
        if seed < 0:
            raise SpecError(f"seed must be a nonnegative integer, got {args.seed!r}")
    step, lattice_law = None, None
    if args.exact:
        from optmech.exact import bit_source
        from optmech.mechanisms.lattice_release import RELEASED, LatticeRelease, has_lattice_release

        if not mech.lattice and not has_lattice_release(mech):
            raise SpecError(f"{mech!r} is continuous and has no exact sampler: --exact draws lattice laws (a solve "
                            "with --domain integer, discrete_laplace, geometric, discrete_staircase, lattice uniform) "
                            f"and, with --lattice-bits K, {RELEASED}; sample it without --exact, or solve on the "
                            "integer lattice")
        if args.lattice_bits is not None:
            if mech.lattice:
                raise SpecError(f"--lattice-bits applies to continuous mechanisms; {mech!r} is already on the lattice")
            release = LatticeRelease(mech, _num("lattice-bits", args.lattice_bits, integer=True),
                                     cost=choice.cost if args.gamma is None and args.from_file is None else None)
            sampler, step, guarantee = release.exact_sampler(), release.step, release.privacy()
            lattice_law = release.lattice.to_dict()
        else:
            if not mech.lattice:
                raise SpecError(f"{mech!r} is continuous: an exact sampler draws on a lattice; add --lattice-bits K "
                                "(0 <= K <= 20) to release it on the grid of step sensitivity/2^K")
            sampler = mech.exact_sampler()
            guarantee = sampler.privacy()
        write_samples(sampler, n, bit_source("secure" if seed is None else seed), args.out, step=step)
    else:
        rng = as_generator(SECURE) if seed is None else as_generator(seed)
        guarantee = mech.privacy()
        write_samples(mech, n, rng, args.out)
    summary = _jsonable({
        "mechanism": mech.to_dict(),
        "n": n,
        "dim": mech.dim,
        "out": args.out,
        "seed": seed,
        "secure": bool(args.secure),
        "exact": bool(args.exact),
        "step": step,
        "lattice_mechanism": lattice_law,
        "shape_parameter": choice.shape,
        "cost": choice.cost,
        "privacy": guarantee.to_dict(),
    })
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        src = "secure (ChaCha20, OS entropy)" if args.secure else f"seed {seed}"
        how = "" if not args.exact else (", exact sampler" if step is None else f", exact sampler on the grid of step {step!r}")
        sys.stdout.write(f"wrote {n} samples of {mech!r} to {args.out} ({src}{how})\n")
    return EXIT_OK


# -- optmech audit --------------------------------------------------------------------------------
def cmd_audit(args: argparse.Namespace) -> int:
    from optmech.audit_files import audit_file

    eps = list_items("--epsilon", args.epsilon)
    payload = audit_file(args.file, args.sensitivity, eps)
    if args.json:
        sys.stdout.write(json.dumps(_jsonable(payload), indent=2) + "\n")
        return EXIT_OK
    e = payload["epsilon"]
    lines = [f"audit of {args.file} for sensitivity {payload.get('sensitivity', args.sensitivity)}",
             f"  pure epsilon   {'not pure-DP (some ratio p(k)/p(k+s) is unbounded)' if e is None else f'{e:.17g}'}"]
    for k, v in payload["delta_at"].items():
        lines.append(f"  delta({k}) = {v:.6g}")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK
