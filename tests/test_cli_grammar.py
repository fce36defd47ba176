"""One grammar across the commands: every ``--help`` has a description, examples, the defaults and
the exit statuses; a flag has the same default wherever it appears; list flags take comma-separated,
space-separated and repeated values alike; bad input is one line on stderr and exit status 2; and
the CLI package keeps its one-way layering."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from optmech.cli import DEFAULTS, main
from optmech.cli.args import DefaultValue, is_default, list_items, parse_number_list
from optmech.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["solve", "table", "compare", "sample", "mechanism", "audit", "solvers", "run", "store", "reproduce"]
SHARED = ["--domain", "--privacy", "--dim", "--norm", "--sensitivity", "--cost", "--solver", "--time-limit",
          "--target-gap", "--workers", "--json"]


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def option(parser: argparse.ArgumentParser, flag: str):
    return next((a for a in parser._actions if flag in a.option_strings), None)


def normalised(default):
    """A flag's default as text, whatever container holds it (a list flag's default is its text)."""
    if isinstance(default, list):
        return ",".join(default)
    return None if default is None else str(default)


# -- help -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [[], *[[c] for c in COMMANDS]], ids=["optmech", *COMMANDS])
def test_every_help_has_a_description_examples_defaults_and_exit_statuses(command):
    p = subprocess.run([sys.executable, "-m", "optmech.cli", *command, "--help"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for word in ("Example", "default", "Exit status"):
        assert word in out, (command, word, out)
    assert "  0  success" in out and "  2  invalid input" in out
    head = out.split("\n\n")
    assert len(head) > 2 and len(head[1].split()) >= 10, "a one-paragraph description follows the usage"


def test_the_console_script_entry_point_is_main():
    import optmech.cli

    assert callable(optmech.cli.main) and optmech.cli.main is main
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'optmech = "optmech.cli:main"' in text


def test_every_option_with_a_default_shows_it():
    for name, sub in subparsers(build_parser()).items():
        text = sub.format_help()
        for a in sub._actions:
            if not a.option_strings or a.default in (None, False, argparse.SUPPRESS):
                continue
            help_text = sub._get_formatter()._expand_help(a) if a.help else ""
            assert "default" in help_text, (name, a.option_strings, help_text)
        assert "Exit status:" in text


# -- one default per flag ---------------------------------------------------------------------------
def test_the_same_flag_has_the_same_default_in_every_command():
    subs = subparsers(build_parser())
    for flag in SHARED:
        where = {name: option(sub, flag) for name, sub in subs.items() if option(sub, flag) is not None}
        if flag == "--domain":  # sample/mechanism: only uniform noise has a choice; the family's domain is the default
            mech = {n for n in where if n in ("sample", "mechanism")}
            for n in mech:
                assert where.pop(n).default is None
                assert "family's own domain" in subs[n].format_help().replace("\n", " ").replace("  ", " ")
        defaults = {name: normalised(a.default) for name, a in where.items()}
        assert len(set(defaults.values())) == 1, (flag, defaults)
        key = flag.lstrip("-").replace("-", "_")
        expected = DEFAULTS[key]
        assert set(defaults.values()) == {normalised(expected) if not isinstance(expected, bool) else str(expected)}, (flag, defaults)
    assert option(subs["table"], "--domain").default == "continuous"
    assert option(subs["table"], "--privacy").default == "pure"
    assert option(subs["audit"], "--sensitivity").default == "1"
    assert option(subs["sample"], "--cost").default == "abs"


def test_shared_flags_appear_where_they_did():
    subs = subparsers(build_parser())
    have = {flag: sorted(n for n, s in subs.items() if option(s, flag)) for flag in SHARED}
    assert have["--domain"] == ["mechanism", "recommend", "sample", "solve", "table"]
    assert have["--workers"] == ["reproduce", "run", "table"]
    assert have["--time-limit"] == ["compare", "recommend", "solve", "table"]
    assert have["--json"] == ["audit", "compare", "mechanism", "recommend", "reproduce", "run", "sample", "solve",
                              "store"]


def test_a_default_domain_is_told_apart_from_an_explicit_one():
    p = build_parser()
    a = p.parse_args(["table", "--epsilon", "1"])
    b = p.parse_args(["table", "--epsilon", "1", "--domain", "continuous"])
    assert a.domain == b.domain == "continuous"
    assert is_default(a.domain) and not is_default(b.domain) and isinstance(a.domain, DefaultValue)


# -- lists ------------------------------------------------------------------------------------------
FORMS = [
    ["--epsilon", "0.5,1,2,4"],
    ["--epsilon", "0.5", "1", "2", "4"],
    ["--epsilon", "0.5", "--epsilon", "1", "--epsilon", "2", "--epsilon", "4"],
    ["--epsilon", "0.5,1", "2", "--epsilon", "4"],
    ["--epsilon", "0.5, 1", "2 ", "--epsilon", "4"],
]


@pytest.mark.parametrize("form", FORMS, ids=["comma", "space", "repeated", "mixed", "blanks"])
def test_table_lists_parse_the_same_in_every_form(form):
    p = build_parser()
    args = p.parse_args(["table", "--privacy", "approx", "--delta", "0.1", "0.2", *form, "--sensitivity", "1", "--sensitivity", "3"])
    assert args.epsilon == ["0.5", "1", "2", "4"]
    assert parse_number_list("--epsilon", args.epsilon) == [0.5, 1.0, 2.0, 4.0]
    assert parse_number_list("--sensitivity", args.sensitivity, integer=True) == [1, 3]
    assert parse_number_list("--delta", args.delta) == [0.1, 0.2]


@pytest.mark.parametrize("form", FORMS, ids=["comma", "space", "repeated", "mixed", "blanks"])
def test_audit_lists_parse_the_same_in_every_form(form):
    args = build_parser().parse_args(["audit", "pmf.csv", *form])
    assert args.file == "pmf.csv"
    assert list_items("--epsilon", args.epsilon) == ["0.5", "1", "2", "4"]


def test_reproduce_only_is_a_list_too():
    p = build_parser()
    for form in (["--only", "000,fig7"], ["--only", "000", "fig7"], ["--only", "000", "--only", "fig7"]):
        args = p.parse_args(["reproduce", "--out", "r", *form])
        assert list_items("--only", args.only, what="name") == ["000", "fig7"]


def test_list_defaults_and_absent_lists():
    p = build_parser()
    assert list_items("--sensitivity", p.parse_args(["table", "--epsilon", "1"]).sensitivity) == ["1"]
    assert p.parse_args(["table", "--epsilon", "1", "--sensitivity", "2"]).sensitivity == ["2"]  # replaces the default
    assert list_items("--epsilon", p.parse_args(["audit", "f.csv"]).epsilon) == []


def test_audit_reports_every_listed_epsilon(tmp_path, capsys):
    f = tmp_path / "p.csv"
    f.write_text("k,p\n-1,0.25\n0,0.5\n1,0.25\n")
    outs = []
    for form in FORMS[:4]:
        assert main(["audit", str(f), *form, "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out)["delta_at"])
    assert all(o == outs[0] for o in outs) and list(outs[0]) == ["0.5", "1", "2", "4"]


def test_a_table_from_every_list_form_is_the_same(capsys):
    outs = []
    for form in (["--epsilon", "1,2"], ["--epsilon", "1", "2"], ["--epsilon", "1", "--epsilon", "2"]):
        assert main(["table", "--domain", "integer", "--sensitivity", "1", *form, "--workers", "1", "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        outs.append([(r["sensitivity"], r["epsilon"], r["v_star_upper"]) for r in rows])
    assert outs[0] == outs[1] == outs[2] and [e for _, e, _ in outs[0]] == [1.0, 2.0]


# -- bad input --------------------------------------------------------------------------------------
BAD = [
    (["table", "--epsilon", "1,,2"], "empty item"),
    (["table", "--epsilon", "1", "--sensitivity", "1,"], "empty item"),
    (["table", "--epsilon", ","], "at least one"),
    (["table", "--epsilon", "1", "x"], "not a number"),
    (["table", "--epsilon", "1", "--delta", "0.1"], "--privacy approx"),
    (["table", "--privacy", "approx", "--epsilon", "1", "--delta"], "delta"),
    (["table", "--privacy", "approx", "--epsilon", "1", "--delta", "0.1", "--domain", "continuous", "--dim", "2",
      "--cost", "abs"], "1-D"),
    (["table", "--epsilon", "1", "--domain", "integer", "--sensitivity", "1.5"], "integer"),
    (["table", "--epsilon", "1", "--workers", "0"], "workers"),
    (["table", "--epsilon", "1", "--time-limit", "-1"], "time-limit"),
    (["table", "--epsilon", "1", "--domain", "reals"], "domain"),
    (["audit", "{tmp}/p.csv", "--epsilon", "1,"], "empty item"),
    (["audit", "{tmp}/p.csv", "--epsilon", ""], "at least one"),
    (["audit", "{tmp}/p.csv", "--sensitivity", "0"], "sensitivity"),
    (["reproduce", "--out", "{tmp}/r", "--only", ","], "--only needs at least one name"),
    (["reproduce", "--out", "{tmp}/r", "--only", "000,", "--list"], "empty item"),
    (["compare", "--epsilon", "1", "--time-limit", "0"], "time-limit"),
    (["solve", "--epsilon", "1", "--no-such-flag"], "unrecognized"),
    (["solve"], "epsilon"),
    (["nosuchcommand"], "invalid choice"),
]


@pytest.mark.parametrize("argv, fragment", BAD, ids=[" ".join(a)[:50] for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(argv, fragment, tmp_path, capsys):
    (tmp_path / "p.csv").write_text("k,p\n-1,0.25\n0,0.5\n1,0.25\n")
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        got = main(args)
    except SystemExit as exc:  # argparse errors exit through SystemExit
        got = exc.code
    out, err = capsys.readouterr()
    assert got == 2, (got, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("optmech: "), err
    assert fragment.lower() in err.lower(), err


def test_bad_list_in_a_subprocess_is_one_line_and_exit_2():
    p = subprocess.run([sys.executable, "-m", "optmech.cli", "table", "--epsilon", "0.5,,1"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr


# -- mechanism files between commands ----------------------------------------------------------------
def test_mechanism_json_feeds_sample_from(tmp_path, capsys):
    m = tmp_path / "m.json"
    assert main(["mechanism", "--mechanism", "discrete_staircase", "--epsilon", "1", "--sensitivity", "3", "--json"]) == 0
    m.write_text(capsys.readouterr().out)
    out = tmp_path / "x.csv"
    assert main(["sample", "--from", str(m), "-n", "20", "--seed", "3", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 20 and summary["mechanism"]["name"] == "discrete_staircase"
    assert len(out.read_text().splitlines()) == 21


# -- layering ---------------------------------------------------------------------------------------
def _check_imports():
    spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cli_layering_is_one_way():
    ci = _check_imports()
    graph = ci.module_graph(str(ROOT / "optmech"))
    cli = {m for m in graph if m == "optmech.cli" or m.startswith("optmech.cli.")}
    assert cli == {"optmech.cli", "optmech.cli.__main__", "optmech.cli.main", "optmech.cli.args", "optmech.cli.solve",
                   "optmech.cli.mechanisms", "optmech.cli.sweeps", "optmech.cli.signals", "optmech.cli.recommend"}
    for m, deps in graph.items():
        if m not in cli and m != "optmech.__main__":  # ``python -m optmech`` is the command line's other door
            assert not deps & cli, f"library module {m} imports the CLI: {deps & cli}"
    for m in ("optmech.cli.args", "optmech.cli.solve", "optmech.cli.mechanisms", "optmech.cli.sweeps",
              "optmech.cli.recommend"):
        assert "optmech.cli.main" not in graph[m], m
    assert graph["optmech.cli.args"] & cli == set(), "args imports no other CLI module"
    sub = {m: graph[m] & cli for m in cli}
    assert ci.cycles(sub) == []
    assert not [line for line in ci.private_imports(str(ROOT / "optmech")) if "/cli/" in line]


def test_old_cli_modules_are_gone():
    for name in ("cli.py", "cli_args.py", "cli_mechanisms.py"):
        assert not (ROOT / "optmech" / name).exists()
