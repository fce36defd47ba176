"""Issue 36, items 2 and 6 (command line): what a command writes is checked before any work, unknown
options are named with a suggestion, ``reproduce --list`` needs no ``--out``, sweep specs refuse bad
values before a store exists, and ``--help`` states what the code does.

Each behaviour is checked as a user meets it, ``python -m optmech ...`` in a subprocess (its exit
status, its stdout, empty on bad input, and its one line on stderr); the variants of a behaviour
(every writing option, every unknown-option case) run the same ``main`` in this process, which
checks the same three things at a fraction of the cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from optmech.cli.args import PLOT_FORMATS, check_output_path
from optmech.errors import SpecError
from optmech.spec import DEFAULT_GAPS

#: Problems whose solve takes far longer than a refusal (tens of seconds to minutes on 2 cores), so
#: that a check made after the work would show as output on stdout, or as a timeout.
SLOW_SOLVE = ["--privacy", "approx", "--epsilon", "0.1", "--delta", "1e-6", "--sensitivity", "100", "--cost", "abs",
              "--time-limit", "600"]
SLOW_SPEC = ('name = "slow"\n[problem]\nprivacy = "approx"\ndelta = 1e-6\nsensitivity = 100\ntime_limit = 600\n'
             '[grid]\nepsilon = [0.1, 0.2]\n')


def cli(*args, cwd=None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, CI="1")
    env.pop("OPTMECH_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "optmech", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def in_process(capsys, *args) -> subprocess.CompletedProcess:
    """``optmech ARGS`` through :func:`optmech.cli.main` in this process, as a CompletedProcess."""
    from optmech.cli import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse errors exit through SystemExit
        code = exc.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def refused(p: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2, nothing on stdout, exactly one line on stderr starting ``optmech: ``, holding every fragment."""
    assert p.returncode == 2, (p.returncode, p.stdout[:300], p.stderr)
    assert p.stdout == "", p.stdout[:300]
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("optmech: "), p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    for f in fragments:
        assert f in p.stderr, (f, p.stderr)
    return p.stderr


# -- item 2: every output path is checked before any work ------------------------------------------

def _empty_store(path) -> None:
    from optmech.store import ResultStore

    ResultStore(str(path)).close()


#: (argv with {out} for the bad path, the flag named) for every option that writes a file.
WRITERS = [
    (["solve", *SLOW_SOLVE, "--save", "{out}/x.json"], "--save"),
    (["solve", *SLOW_SOLVE, "--plot", "{out}/x.png"], "--plot"),
    (["table", *SLOW_SOLVE, "--out", "{out}/t.csv"], "--out"),
    (["compare", "--epsilon", "1", "--dim", "2", "--cost", "l2sq", "--norm", "l2", "--plot", "{out}/c.pdf"], "--plot"),
    (["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "1000000000", "--seed", "1", "--out", "{out}/s.npy"],
     "--out"),
    (["run", "{spec}", "--workers", "1", "--store", "{out}/s.sqlite"], "--store"),
    (["store", "export", "{store}", "--out", "{out}/e.csv"], "--out"),
]


def test_solve_save_into_a_missing_folder_is_refused_before_the_solve(tmp_path):
    """The issue's case: the solve ran, printed its result, then failed to save.  Now nothing runs."""
    t0 = time.monotonic()
    err = refused(cli("solve", *SLOW_SOLVE, "--save", "nodir/x.json", cwd=tmp_path), "--save", "nodir/x.json",
                  "does not exist")
    # the solve (tens of seconds) never started: nothing on stdout, and the refusal took a small part of it
    assert time.monotonic() - t0 < 30, err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("argv, flag", WRITERS, ids=[f"{a[0]} {f}" for a, f in WRITERS])
def test_a_missing_folder_is_refused_before_any_work(tmp_path, capsys, argv, flag):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW_SPEC)
    store = tmp_path / "e.sqlite"
    _empty_store(store)
    before = sorted(os.listdir(tmp_path))
    missing = tmp_path / "no-such-folder"
    args = [a.format(out=missing, spec=spec, store=store) for a in argv]
    t0 = time.monotonic()
    err = refused(in_process(capsys, *args), flag, "does not exist", str(missing))
    # the work (a solve of tens of seconds, 10^9 samples, a sweep) never started: nothing was printed,
    # nothing was written, and the refusal took a small part of what the work would have taken
    assert time.monotonic() - t0 < 30, err
    assert sorted(os.listdir(tmp_path)) == before


def test_reproduce_out_below_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    refused(in_process(capsys, "reproduce", "--quick", "--out", tmp_path / "f" / "report"), "--out",
            "is a file, not a folder")
    assert (tmp_path / "f").read_text() == "x"


@pytest.mark.parametrize("argv", [
    ["solve", *SLOW_SOLVE, "--save", "{dir}"],
    ["table", *SLOW_SOLVE, "--out", "{dir}"],
    ["run", "{spec}", "--workers", "1", "--store", "{dir}"],
], ids=["solve --save", "table --out", "run --store"])
def test_an_existing_folder_as_output_file_is_refused(tmp_path, capsys, argv):
    spec = tmp_path / "slow.toml"
    spec.write_text(SLOW_SPEC)
    (tmp_path / "d").mkdir()
    refused(in_process(capsys, *[a.format(dir=tmp_path / "d", spec=spec) for a in argv]), "is a folder")
    assert os.listdir(tmp_path / "d") == []


@pytest.mark.parametrize("argv", [
    ["solve", *SLOW_SOLVE, "--plot", "{tmp}/x.jpg"],
    ["compare", "--epsilon", "1", "--plot", "{tmp}/x.txt"],
], ids=["solve", "compare"])
def test_plot_formats_are_one_list_everywhere(tmp_path, capsys, argv):
    err = refused(in_process(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv]), "--plot writes")
    assert all(f".{f}" in err for f in PLOT_FORMATS)
    assert os.listdir(tmp_path) == []


def test_compare_accepts_every_plot_format_that_solve_writes(tmp_path):
    """compare --plot x.pdf used to be refused while solve --plot wrote PDF: one list for both now."""
    for f in PLOT_FORMATS:
        check_output_path("--plot", str(tmp_path / f"x.{f}"), PLOT_FORMATS)


def test_plot_help_lists_the_formats(capsys):
    for cmd in ("solve", "compare"):
        text = _option(_help(capsys, cmd), "--plot")
        assert ", ".join(f".{f}" for f in PLOT_FORMATS[:-1]) + f" or .{PLOT_FORMATS[-1]}" in text, cmd


def test_unwritable_folder_and_file(tmp_path, monkeypatch):
    """File modes do not bind root, so writability is simulated here: os.access says no."""
    target = tmp_path / "x.json"
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False)
    with pytest.raises(SpecError, match="cannot create .* folder .* is not writable"):
        check_output_path("--save", str(target))
    target.write_text("{}")
    with pytest.raises(SpecError, match="--save .*x.json is not writable"):
        check_output_path("--save", str(target))
    with pytest.raises(SpecError, match="--out: cannot create .* folder .* is not writable"):
        check_output_path("--out", str(tmp_path / "new" / "report"), folder=True)


def test_a_good_path_passes_and_a_new_report_folder_may_need_parents(tmp_path):
    check_output_path("--plot", str(tmp_path / "a.SVG"), PLOT_FORMATS)
    check_output_path("--save", str(tmp_path / "a.json"))
    check_output_path("--out", str(tmp_path / "one" / "two"), folder=True)
    check_output_path("--out", str(tmp_path), folder=True)
    assert os.listdir(tmp_path) == []  # checking creates nothing


# -- item 6: unknown options, reproduce --list, sweep specs, help texts ----------------------------

def test_an_unknown_option_is_named_before_a_missing_required_one(tmp_path):
    """argparse checks required options first: ``--epsilom 1`` used to say only that --epsilon is missing."""
    err = refused(cli("solve", "--epsilom", "1", cwd=tmp_path), "unrecognized", "--epsilom", "did you mean --epsilon?")
    assert "required" not in err


@pytest.mark.parametrize("argv, unknown, suggestion", [
    (["solve", "--epsilon", "1", "--cots", "abs"], "--cots", "--cost"),
    (["table", "--epsilom=1"], "--epsilom", "--epsilon"),
    (["sample", "--mechansim", "laplace", "--epsilon", "1", "-n", "5", "--out", "x.npy"], "--mechansim", "--mechanism"),
    (["--verison"], "--verison", "--version"),
])
def test_an_unknown_option_is_named_with_its_close_match(tmp_path, capsys, monkeypatch, argv, unknown, suggestion):
    monkeypatch.chdir(tmp_path)
    err = refused(in_process(capsys, *argv), "unrecognized", unknown, f"did you mean {suggestion}?")
    assert "required" not in err
    assert os.listdir(tmp_path) == []


def test_a_missing_required_option_alone_is_still_named(capsys):
    refused(in_process(capsys, "solve", "--cost", "abs"), "required", "--epsilon")
    refused(in_process(capsys, "solve", "--epsilon", "1", "stray"), "unrecognized arguments: stray")


def test_reproduce_list_needs_no_out(tmp_path):
    p = cli("reproduce", "--list", "--quick", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    from optmech.reproduce import catalogue_paths

    names = [line.split(": ", 1)[0] for line in p.stdout.splitlines()]
    assert sorted(names) == sorted(path.stem for path in catalogue_paths())
    assert os.listdir(tmp_path) == []


def test_reproduce_without_list_still_needs_out(capsys):
    refused(in_process(capsys, "reproduce", "--quick"), "--out")


@pytest.mark.parametrize("body, problem, fragment", [
    ('[problem]\ncost = "abs(y)"\n[grid]\nepsilon = [1.0, 2.0]\n', "problem 1 of 2", "unknown name 'y'"),
    ("[grid]\nepsilon = [0.5, 1.0, -1]\n", "problem 3 of 3", "epsilon must be positive"),
    ('[problem]\nprivacy = "approx"\n[grid]\nepsilon = [1.0]\ndelta = [0.1, 1.5]\n', "problem 2 of 2", "delta"),
    ('[problem]\ndomain = "integer"\n[grid]\nepsilon = [1.0]\nsensitivity = [1, 2.5]\n', "problem 2 of 2",
     "integer"),
])
def test_a_sweep_spec_with_a_bad_value_is_refused_before_the_store(tmp_path, capsys, monkeypatch, body, problem,
                                                                   fragment):
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "bad"\n' + body)
    store = tmp_path / "bad.sqlite"
    refused(in_process(capsys, "run", spec, "--workers", "1", "--store", store), str(spec), problem, fragment)
    assert not store.exists()
    # the default store (NAME.sqlite in the current folder) is not created either
    monkeypatch.chdir(tmp_path)
    refused(in_process(capsys, "run", spec, "--workers", "1"), problem)
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]


def test_a_bad_cost_in_a_spec_is_refused_as_solve_refuses_it(tmp_path, capsys):
    """The issue's case in a subprocess: exit 2, one line, no store; solve refuses the same cost the same way."""
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "bad"\n[problem]\ncost = "abs(y)"\n[grid]\nepsilon = [1.0, 2.0]\n')
    err = refused(cli("run", spec, "--workers", "1", cwd=tmp_path), "problem 1 of 2", "cost='abs(y)'")
    assert os.listdir(tmp_path) == ["bad.toml"]
    same = refused(in_process(capsys, "solve", "--epsilon", "1", "--cost", "abs(y)"))
    assert same.split(": ", 2)[-1].strip() in err


def _help(capsys, cmd: str) -> str:
    p = in_process(capsys, cmd, "--help")
    assert p.returncode == 0, p.stderr
    return p.stdout


def _g(v: float) -> str:
    return f"{v:.0e}".replace("e-0", "e-")


def _option(text: str, flag: str) -> str:
    """The help of one option, on one line: its row under "options:" and the indented rows below it."""
    lines = text[text.index("options:"):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {flag} "))
    rows = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("    "):  # the next option's row, or the end of the options
            break
        rows.append(line)
    return " ".join(" ".join(rows).split())


def test_solve_help_lists_every_familys_default_target_gap():
    p = cli("solve", "--help")
    assert p.returncode == 0, p.stderr
    gap = _option(p.stdout, "--target-gap")
    for family, where in [("integer", "on ℤ"), ("continuous", "on ℝ"), ("lattice_nd", "for pure DP in d > 1"),
                          ("lipschitz", "for --privacy lipschitz"), ("wasserstein", "for --utility wasserstein")]:
        assert f"{_g(DEFAULT_GAPS[family])} {where}" in gap, (family, gap)
    assert "1e-6 for --utility wasserstein" in gap and "1e-3 for --privacy lipschitz" in gap


def test_table_help_lists_the_dp_families_default_target_gaps(capsys):
    gap = _option(_help(capsys, "table"), "--target-gap")
    assert f"{_g(DEFAULT_GAPS['integer'])} on ℤ" in gap and f"{_g(DEFAULT_GAPS['continuous'])} on ℝ" in gap
    assert "lipschitz" not in gap and "wasserstein" not in gap  # table solves neither


def test_solve_help_is_up_to_date_on_approx_dp(capsys):
    text = _help(capsys, "solve")
    domain = _option(text, "--domain")
    assert "(ε,δ)" not in domain.split("which are solved on the lattice only")[-1]
    assert "--privacy approx, which is also solved on ℝ and ℝ^d with --domain continuous" in domain
    norm = _option(text, "--norm")
    assert "(pure DP)" not in norm and "l1 or l2 for (ε,δ) on ℝ^d" in norm
    assert "(ε,δ)-DP on ℤ, ℤ^d, ℝ and ℝ^d" in " ".join(text.split())
