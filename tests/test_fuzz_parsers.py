"""Fuzzing the parsers with hypothesis: nothing crashes except through the clean error, and no code runs.

Targets: the cost-expression parser (1-D and d-D), the input specs and pmf readers (CSV, saved
JSON), sweep specs (TOML text and parsed tables), solver profiles.  Each is fed random text or
random structures built from the tokens its grammar knows, plus the known attack shapes; the only
exception allowed out is :class:`optmech.errors.OptmechError` (one-line message), and no file is
ever created by an expression.
"""

from __future__ import annotations

import json
import math
import os
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optmech.errors import OptmechError

FUZZ = settings(max_examples=int(os.environ.get("OPTMECH_FUZZ_EXAMPLES", "150")), deadline=None,
                derandomize=not os.environ.get("OPTMECH_FUZZ_EXAMPLES"), database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _clean(fn, *args):
    """Call fn; return its value, or None when it raised an OptmechError with a one-line message."""
    try:
        return fn(*args)
    except OptmechError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg and "Traceback" not in msg, msg
        return None


# -- cost expressions -------------------------------------------------------------------------------

TOKENS = ["x", "x1", "x2", "x3", "1", "2.5", "1e308", "0", "-", "+", "*", "/", "**", "(", ")", ",", "<", ">=", "==",
          "&", "|", "~", "abs", "sqrt", "exp", "log", "min", "max", "where", "pi", "e", " ", "__class__", ".",
          "lambda", ":", "[", "]", "for", "in", "import", "os", "__import__", "'", "\"", "getattr", "9", "**9",
          "if", "else", "@", "%", "//", "<<", "not", "and", "or", "{", "}", "=", ";", "\\n", "yield", "await"]


@st.composite
def expression_like(draw) -> str:
    return "".join(draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=25)))


ATTACKS = [
    "__import__('os').system('touch {sentinel}')",
    "open('{sentinel}', 'w')",
    "x.__class__.__bases__[0].__subclasses__()",
    "(lambda: open('{sentinel}', 'w'))()",
    "[open('{sentinel}', 'w') for _ in range(1)]",
    "{{open('{sentinel}', 'w')}}",
    "getattr(x, '__class__')",
    "x if open('{sentinel}', 'w') else x",
    "exec('open(\"{sentinel}\", \"w\")')",
    "eval('1')",
    "9**9**9**9",
    "x**1e308",
    "x**(10**10)",
    "(x:=1)",
    "x[0]",
    "f'{{x}}'",
    "abs(x).real",
    "sqrt(*[x])",
    "min(x, x, key=open)",
    "'a' * 10**9",
    "abs(" * 120 + "x" + ")" * 120,
    "x+" * 1500 + "x",
    "\x00x",
]
#: Inputs that are harmless but stress the parser: accepted or refused cleanly, never a crash.
STRESS = ["(" * 150 + "x" + ")" * 150, "(" * 400 + "x" + ")" * 400, "-" * 3000 + "x", "x" * 5000, "1" * 400,
          "abs(x) # a comment", "x**-1", "1/x", "log(x)", "sqrt(-abs(x))", "exp(1000*x)", "x**64", "x**0.5"]


@FUZZ
@given(st.one_of(expression_like(), st.text(max_size=60), st.text(alphabet=string.printable, max_size=80)))
def test_cost_parser_only_raises_clean_errors(text):
    from optmech.costs import parse_cost
    from optmech.costs_nd import parse_cost_nd

    c = _clean(parse_cost, text)
    if c is not None:                      # accepted: it evaluates to floats without raising
        import numpy as np

        with np.errstate(all="ignore"):
            v = c(np.array([-2.0, 0.0, 0.5, 3.0]))
        assert v.shape == (4,)
    for d in (2, 3):
        _clean(parse_cost_nd, text, d)


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_expression_runs_code(tmp_path, attack):
    from optmech.costs import parse_cost
    from optmech.costs_nd import parse_cost_nd

    sentinel = tmp_path / "pwned"
    text = attack.format(sentinel=sentinel)
    assert _clean(parse_cost, text) is None, text
    assert _clean(parse_cost_nd, text.replace("x", "x1"), 2) is None, text
    assert not sentinel.exists()


@pytest.mark.parametrize("text", STRESS)
def test_stress_inputs_never_crash(text):
    from optmech.costs import parse_cost
    from optmech.costs_nd import parse_cost_nd

    _clean(parse_cost, text)
    _clean(parse_cost_nd, text.replace("x", "x1"), 2)


def test_no_expression_runs_code_through_the_cli(tmp_path):
    from optmech.cli import main

    sentinel = tmp_path / "pwned"
    for attack in ATTACKS[:9]:
        assert main(["solve", "--epsilon", "1", "--cost", attack.format(sentinel=sentinel)]) == 2
    assert not sentinel.exists()


# -- input specs and pmf files ---------------------------------------------------------------------

@FUZZ
@given(st.one_of(
    st.text(max_size=40),
    st.builds(lambda fam, parts: ":".join([fam, *parts]),
              st.sampled_from(["poisson", "gaussian", "uniform", "binomial", "", "POISSON"]),
              st.lists(st.sampled_from(["0", "5", "-3", "1e9", "nan", "inf", "2.5", "", "x", "1e-300", "40"]),
                       max_size=5)),
))
def test_input_spec_parser_only_raises_clean_errors(text):
    from optmech.inputs import parse_input_spec

    inp = _clean(parse_input_spec, text)
    if inp is not None:
        assert abs(math.fsum(inp.p) - 1.0) < 1e-9 and all(v >= 0 for v in inp.p)


csv_line = st.builds(lambda a, b: f"{a},{b}",
                     st.sampled_from(["0", "1", "-1", "2", "1.5", "x", "", "1e400", "nan", "3", "-0", "1e309", "1e21",
                                      "9223372036854775807", "9007199254740993", "0x10", "1_0", "\u0661", "\x00",
                                      "\ufeff1", "1" * 5000, '"1"', '"1']),
                     st.sampled_from(["0.5", "0.25", "1", "0", "-0.1", "nan", "inf", "x", "", "0.5e0", "-0", "1e309",
                                      "-0.0", "1" * 5000, "\x00"]))


@FUZZ
@given(st.one_of(
    st.builds(lambda head, rows, nl: nl.join([head, *rows]),
              st.sampled_from(["k,p", "k,P", "p,k", "k;p", "", "k,p,q", "\ufeffk,p", "k,p\x00"]),
              st.lists(csv_line, max_size=6), st.sampled_from(["\n", "\r\n", "\r"])),
    st.text(max_size=80),
    st.binary(max_size=60),
))
def test_pmf_readers_only_raise_clean_errors(tmp_path_factory, text):
    from optmech.audit_files import load_pmf, read_pmf_csv
    from optmech.inputs import read_input_pmf

    path = tmp_path_factory.mktemp("pmf") / "p.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    for reader in (read_pmf_csv, read_input_pmf, load_pmf):
        _clean(reader, str(path))


#: Hostile pmf files: (bytes, the support every reader that accepts it must find, or None if all refuse).
HOSTILE_PMF_FILES = {
    "nul_in_k": (b"k,p\n0\x00,1\n", None),
    "nul_in_header": (b"k,p\x00\n0,1\n", None),
    "nul_only": (b"\x00" * 1000, None),
    "million_digit_k": (b"k,p\n" + b"1" * 10**6 + b",1\n", None),
    "million_digit_p": (b"k,p\n0," + b"1" * 10**6 + b"\n", None),
    "5000_digit_k": (b"k,p\n" + b"9" * 5000 + b",1\n", None),
    "nan_k": (b"k,p\nnan,1\n", None),
    "inf_k": (b"k,p\n-inf,1\n", None),
    "1e309_k": (b"k,p\n1e309,1\n", None),
    "2_63_k": (b"k,p\n9223372036854775807,1\n", None),
    "nan_p": (b"k,p\n0,nan\n", None),
    "inf_p": (b"k,p\n0,inf\n", None),
    "1e309_p": (b"k,p\n0,1e309\n", None),
    "negative_zero": (b"k,p\n-0,-0.0\n1,1\n", [1]),
    "bom_crlf": (b"\xef\xbb\xbfk,p\r\n-1,0.5\r\n1,0.5\r\n", [-1, 1]),
    "cr_only": (b"k,p\r0,0.5\r2,0.5\r", [0, 2]),
    "bom_inside": (b"k,p\n\xef\xbb\xbf0,1\n", None),
    "utf16": ("k,p\n0,1\n".encode("utf-16"), None),
    "blank_lines": (b"k,p\n" + b" ,\n\n" * 100_000 + b"3,1\n", [3]),
    "many_duplicates": (b"k,p\n" + b"0,0\n" * 100_000 + b"0,1\n", None),
    "unclosed_quote": (b'k,p\n"0,1\n' + b"2,3\n" * 10, None),
    "long_quoted_field": (b'k,p\n"' + b"1\n" * 70_000 + b'",1\n', None),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PMF_FILES))
def test_hostile_pmf_files_get_an_answer_or_one_line(tmp_path, capsys, name):
    """Each reader returns the right support or raises a one-line OptmechError; through the CLI, the
    audit and --input-pmf exit 0 or 2 with one line on stderr (and no traceback)."""
    from optmech.audit_files import read_pmf_csv
    from optmech.cli import main
    from optmech.inputs import read_input_pmf

    data, support = HOSTILE_PMF_FILES[name]
    path = tmp_path / "p.csv"
    path.write_bytes(data)
    got = _clean(read_input_pmf, str(path))
    assert (got is None) == (support is None), name
    if got is not None:
        assert got.k.tolist() == support and math.isclose(math.fsum(got.p), 1.0)
    pmf = _clean(read_pmf_csv, str(path))
    assert (pmf is None) == (support is None), name
    for argv in (["audit", str(path), "--sensitivity", "1", "--epsilon", "1"],
                 ["solve", "--utility", "wasserstein", "--input-pmf", str(path), "--epsilon", "1", "--domain",
                  "integer"]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == (2 if support is None else 0), (name, argv[0], err)
        if code == 2:
            assert out == "" and err.count("\n") == 1 and err.startswith("optmech: error: "), err
            assert len(err) < 400 and not any(ord(c) < 32 for c in err[:-1]), err


MECH_NUMBERS = st.sampled_from([1, 2, 0, -1, 0.5, 1e-100, 2**53, 2**53 + 1, 1e21, 1e-300, 5e-324, 1e308, 700, 701,
                                float("nan"), float("inf"), "x", None, True, [1], {}])


@settings(max_examples=int(os.environ.get("OPTMECH_FUZZ_EXAMPLES", "80")), deadline=None,
          derandomize=not os.environ.get("OPTMECH_FUZZ_EXAMPLES"), database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["laplace", "staircase", "discrete_staircase", "geometric", "discrete_laplace", "uniform",
                        "l2_laplace", "lattice_pmf", "bogus"]),
       st.dictionaries(st.sampled_from(["epsilon", "sensitivity", "delta", "gamma", "r", "dim", "lattice", "k_lo",
                                        "beta", "steps_per_period", "weights", "total"]), MECH_NUMBERS, max_size=5))
def test_mechanism_files_through_the_cli_only_fail_cleanly(tmp_path_factory, capsys, name, fields):
    """``optmech mechanism --from`` and ``sample --from`` on random (mostly hostile) definitions: exit 0,
    or 2 with one line; never an internal error, never a file left behind on failure."""
    from optmech.cli import main

    folder = tmp_path_factory.mktemp("mech")
    path = folder / "m.json"
    doc = {"name": name, "epsilon": 1, "sensitivity": 1, **fields}
    if name == "lattice_pmf":
        doc = {"mechanism": {"kind": "lattice_pmf", "sensitivity": 1, "steps_per_period": 1, "k_lo": 0, "beta": 0,
                             "weights": [0.5, 0.5], "left_tail": [0], "right_tail": [0], **fields}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    for argv in (["mechanism", "--from", str(path)],
                 ["sample", "--from", str(path), "-n", "5", "--seed", "1", "--out", str(folder / "o.csv")]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code in (0, 2), (argv[0], doc, err)
        if code == 2:
            assert out == "" and err.count("\n") == 1, err
    if code == 2:
        assert not (folder / "o.csv").exists()
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)


@FUZZ
@given(st.one_of(
    json_values,
    st.fixed_dictionaries({"kind": st.sampled_from(["lattice_pmf", "lattice_pmf_nd", "cell_pmf_nd", "staircase", "x"])},
                          optional={"k_lo": json_values, "weights": json_values, "beta": json_values,
                                    "W": json_values, "mechanism": json_values, "dim": json_values}),
))
def test_saved_json_readers_only_raise_clean_errors(tmp_path_factory, doc):
    from optmech.audit_files import load_pmf
    from optmech.mechanisms.tabulated import lattice_mechanism_from_dict

    path = tmp_path_factory.mktemp("json") / "m.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    _clean(load_pmf, str(path))
    if isinstance(doc, dict):
        _clean(lattice_mechanism_from_dict, doc)


# -- sweep specs and solver profiles ------------------------------------------------------------------

PARAM_VALUES = st.one_of(st.integers(-3, 600), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                         st.booleans(), st.sampled_from(["pure", "approx", "abs", "l1", "integer", "continuous"]))
KEYS = st.sampled_from(["epsilon", "delta", "sensitivity", "cost", "privacy", "domain", "dim", "resolution", "norm",
                        "utility", "input", "target_gap", "bogus"])


@FUZZ
@given(st.dictionaries(
    st.sampled_from(["name", "description", "problem", "grid", "zip", "quick", "reproduce", "extra"]),
    st.one_of(st.text(max_size=6), st.dictionaries(KEYS, st.one_of(PARAM_VALUES, st.lists(PARAM_VALUES, max_size=3)),
                                                   max_size=4)),
    max_size=6))
def test_sweep_spec_parser_only_raises_clean_errors(data):
    from optmech.sweep import parse_spec

    spec = _clean(parse_spec, data)
    if spec is not None:
        assert spec.name and len(spec.problems) >= 1


@FUZZ
@given(st.one_of(st.text(alphabet=string.printable, max_size=120), st.binary(max_size=40)))
def test_sweep_spec_and_profile_files_only_raise_clean_errors(tmp_path_factory, text):
    from optmech.solvers.profiles import load_profile
    from optmech.sweep import load_spec

    path = tmp_path_factory.mktemp("spec") / "s.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    _clean(load_spec, str(path))
    _clean(load_profile, str(path))


@FUZZ
@given(st.text(alphabet=string.printable, max_size=120))
def test_solver_profiles_only_raise_clean_errors(text):
    from optmech.solvers.profiles import parse_profile

    _clean(parse_profile, text, "fuzz")


# -- problem specs (the API's Problem and the CLI's number parsing) ----------------------------------

numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**12, 10**12), st.booleans(),
                    st.text(max_size=5), st.none())


@FUZZ
@given(numbers, numbers, numbers, st.sampled_from(["abs", "square", "l1", "x**2", "bogus(x)", "", "pow:3"]),
       st.sampled_from([1, 2, 3, 0, 9, 2.5, "2"]), st.sampled_from(["integer", "continuous"]), numbers, numbers)
def test_problem_spec_only_raises_clean_errors(eps, delta, sens, cost, dim, domain, resolution, gap):
    from optmech.spec import ApproxDP, Continuous, IntegerLattice, Problem, PureDP

    def build():
        privacy = PureDP(eps) if delta is None else ApproxDP(eps, delta)
        dom = IntegerLattice() if domain == "integer" else Continuous(resolution)
        return Problem(privacy=privacy, cost=cost, sensitivity=sens, domain=dom, dim=dim, target_gap=gap)

    _clean(build)


@FUZZ
@given(st.text(max_size=12), st.booleans())
def test_cli_number_parsing_only_raises_clean_errors(text, integer):
    from optmech.cli import parse_number as _number

    _clean(lambda: _number("epsilon", text, integer=integer))
