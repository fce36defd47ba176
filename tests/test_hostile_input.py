"""Hostile input and signals (issue 19, items 7 and 10): every case exits 2 (or 128 + signal) with
one line on stderr, no traceback, no raw control character, and no partial output file.

* ``optmech sample`` stopped by SIGTERM, SIGHUP or Ctrl-C mid-write removes its hidden temporary
  file and leaves ``--out`` absent or untouched (exit 143, 129, 130).
* Support points beyond ``|k| <= 2**53`` (``k = ±10**21``, ``2**63 - 1``), 5 MB fields, and
  numbers the JSON reader or the noise formulas cannot hold are refused in one line.
* Text from the user (a file name, a cost, a spec) reaches the terminal with its control
  characters escaped (``\\x1b``, ``\\r``), other Unicode intact.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optmech.cli import main
from optmech.cli.main import one_line

#: every character one_line must never let through raw (the newline ending the line aside)
RAW_CONTROL = {chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]}


def _cli(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "optmech", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def _one_clean_line(err: str, *fragments: str) -> None:
    assert err.endswith("\n") and err.count("\n") == 1 and err.startswith("optmech: "), repr(err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert not RAW_CONTROL & set(err[:-1]), repr(err)
    for f in fragments:
        assert f.lower() in err.lower(), (f, err)


def _refused(p: subprocess.CompletedProcess, *fragments: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stdout == ""
    _one_clean_line(p.stderr, *fragments)


def _main(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# -- item 7: sample and signals ----------------------------------------------------------------------

posix_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _interrupt_sample(folder: Path, out: str, n: int, sig: int) -> subprocess.CompletedProcess:
    """Start a large ``optmech sample``, send ``sig`` once its temporary file holds data, wait for it."""

    def default_signals():  # a test runner in the background may ignore SIGINT or SIGHUP: undo that
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "optmech", "sample", "--mechanism", "laplace", "--epsilon", "1",
                             "-n", str(n), "--seed", "3", "--out", str(folder / out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            tmp = [p for p in folder.iterdir() if p.name.startswith(".optmech-")]
            if tmp and tmp[0].stat().st_size > 0:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        else:
            pytest.fail("sample never started writing")
        time.sleep(0.2)  # well inside the write
        assert proc.poll() is None, "the sample finished before the signal: raise n"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


@posix_only
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
                         ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signal_mid_write_leaves_no_file(tmp_path, sig, code):
    p = _interrupt_sample(tmp_path, "noise.csv", 20_000_000, sig)
    assert p.returncode == code, (p.returncode, p.stderr)
    assert p.stdout == ""
    _one_clean_line(p.stderr, "interrupted", "not written")
    assert list(tmp_path.iterdir()) == []  # neither the hidden temporary file nor a partial noise.csv


@posix_only
def test_sigterm_mid_write_keeps_the_previous_file_untouched(tmp_path):
    old = tmp_path / "noise.npy"
    old.write_bytes(b"the previous run's file")
    before = old.stat()
    p = _interrupt_sample(tmp_path, "noise.npy", 100_000_000, signal.SIGTERM)
    assert p.returncode == 143, p.stderr
    _one_clean_line(p.stderr, "interrupted", "not written")
    assert _hidden(tmp_path) == [] and [f.name for f in tmp_path.iterdir()] == ["noise.npy"]
    assert old.read_bytes() == b"the previous run's file" and old.stat().st_mtime_ns == before.st_mtime_ns


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """Any exception inside the write (here: the sampler failing midway) removes the temporary file."""
    from optmech.cli import mechanisms as cli_mech
    from optmech.mechanisms.factory import make_mechanism

    mech, _ = make_mechanism("laplace", epsilon=1.0, sensitivity=1.0)
    calls = []

    class Failing:
        dim, lattice = mech.dim, mech.lattice

        def sample(self, m, rng):
            calls.append(m)
            if len(calls) > 1:
                raise RuntimeError("sampler broke")
            return mech.sample(m, rng)

    monkeypatch.setattr(cli_mech, "SAMPLE_BLOCK", 100)
    import numpy as np

    with pytest.raises(RuntimeError):
        cli_mech.write_samples(Failing(), 1000, np.random.default_rng(0), str(tmp_path / "x.csv"))
    assert list(tmp_path.iterdir()) == []


@posix_only
def test_a_signal_recorded_while_renaming_keeps_the_complete_file(tmp_path, monkeypatch):
    """A signal that lands during the rename (simulated) is raised afterwards, and the file is kept."""
    import threading

    import numpy as np

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    before = signal.getsignal(signal.SIGTERM)

    from optmech.cli import mechanisms as cli_mech
    from optmech.errors import Interrupted
    from optmech.mechanisms.factory import make_mechanism

    mech, _ = make_mechanism("laplace", epsilon=1.0, sensitivity=1.0)
    real_replace = os.replace

    def replace_then_signal(src, dst):
        real_replace(src, dst)
        os.kill(os.getpid(), signal.SIGTERM)  # handled by the guard: recorded, since hold is set
        time.sleep(0.05)

    monkeypatch.setattr(cli_mech.os, "replace", replace_then_signal)
    out = tmp_path / "x.npy"
    with pytest.raises(Interrupted) as info:
        cli_mech.write_samples(mech, 10, np.random.default_rng(0), str(out))
    assert info.value.signum == signal.SIGTERM and "kept" in str(info.value)
    assert np.load(out).shape == (10,) and _hidden(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) == before  # the handlers are restored


# -- item 10: numbers out of range, huge fields ------------------------------------------------------------

def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("k", ["1000000000000000000000", "-1000000000000000000000", "1e21", "9223372036854775807",
                               "-9223372036854775809", "9007199254740993", "1e309", "inf"])
def test_audit_refuses_support_points_beyond_2_53(tmp_path, capsys, k):
    f = _write(tmp_path / "p.csv", f"k,p\n0,0.5\n{k},0.5\n")
    code, out, err = _main(capsys, "audit", f, "--sensitivity", "1", "--epsilon", "1")
    assert (code, out) == (2, ""), err
    _one_clean_line(err, "line 3", "2**53")


@pytest.mark.parametrize("k", ["9223372036854775807", "1e21", "-9007199254740993", "18446744073709551616"])
def test_input_pmf_refuses_support_points_beyond_2_53(tmp_path, capsys, k):
    f = _write(tmp_path / "x.csv", f"k,p\n{k},1\n")
    code, out, err = _main(capsys, "solve", "--utility", "wasserstein", "--input-pmf", f, "--epsilon", "1",
                           "--domain", "integer")
    assert (code, out) == (2, ""), err
    _one_clean_line(err, "line 2", "2**53")


def test_support_points_at_2_53_are_exact_and_accepted(tmp_path, capsys):
    from optmech.audit_files import read_pmf_csv
    from optmech.inputs import read_input_pmf

    f = _write(tmp_path / "x.csv", "k,p\n9007199254740991,0.5\n9.007199254740992e15,0.5\n")
    assert read_input_pmf(f).k.tolist() == [2**53 - 1, 2**53]
    pmf = read_pmf_csv(f)
    assert (pmf.k_lo, len(pmf.weights)) == (2**53 - 1, 2)
    g = _write(tmp_path / "y.csv", "k,p\n-9007199254740992,0.5\n-9007199254740991.0,0.5\n")
    code, out, err = _main(capsys, "audit", g, "--sensitivity", "1", "--epsilon", "1")
    assert code == 0 and err == "" and "delta(1) = 0.5" in out


def test_the_three_headline_cases_in_a_subprocess(tmp_path):
    """The reported internal errors, end to end: k = 10**21 in audit, k = 2**63 - 1 in --input-pmf, a 5 MB field."""
    big = _write(tmp_path / "big.csv", "k,p\n1000000000000000000000,1\n")
    _refused(_cli("audit", big, "--sensitivity", "1", "--epsilon", "1"), "out of range", "2**53")
    i63 = _write(tmp_path / "i63.csv", f"k,p\n{2**63 - 1},1\n")
    _refused(_cli("solve", "--utility", "wasserstein", "--input-pmf", i63, "--epsilon", "1", "--domain", "integer"),
             "out of range", "2**53")
    field = _write(tmp_path / "field.csv", "k,p\n0," + "1" * 5_000_000 + "\n")
    _refused(_cli("audit", field, "--sensitivity", "1"), "line 2", "longer than 65536")
    _refused(_cli("solve", "--utility", "wasserstein", "--input-pmf", field, "--epsilon", "1", "--domain", "integer"),
             "line 2", "longer than 65536")


@pytest.mark.parametrize("body, fragment", [
    ("k,p\n0," + "1" * 5_000_000 + "\n", "longer than 65536"),             # a 5 MB field
    ("k,p\n" + "1" * 1_000_000 + ",1\n", "longer than 65536"),             # a 10**6-digit number
    ("k,p\n" + "1" * 5000 + ",1\n", "out of range"),                       # beyond int()'s 4300 digits
    ('k,p\n"0\n' + "1\n" * 70_000 + '",1\n', "malformed CSV"),             # a quoted field past csv's limit
    ('k,p\n"0,1\n', "malformed CSV"),                                      # an unclosed quote
])
def test_huge_fields_are_one_line(tmp_path, capsys, body, fragment):
    f = _write(tmp_path / "p.csv", body)
    for argv in (["audit", f, "--sensitivity", "1"],
                 ["solve", "--utility", "wasserstein", "--input-pmf", f, "--epsilon", "1", "--domain", "integer"]):
        code, out, err = _main(capsys, *argv)
        assert (code, out) == (2, ""), err
        _one_clean_line(err, fragment)
        assert len(err) < 400


def test_too_many_rows_stop_early(tmp_path, capsys, monkeypatch):
    """A pmf file has at most as many rows as the support it may span; reading stops at the first extra row."""
    import optmech.audit_files
    import optmech.inputs

    monkeypatch.setattr(optmech.inputs, "MAX_SUPPORT", 1000)
    monkeypatch.setattr(optmech.audit_files, "MAX_EXTENDED_POINTS", 1000)
    f = _write(tmp_path / "p.csv", "k,p\n" + "0,0\n" * 1001 + "1,1\n")
    for argv in (["audit", f, "--sensitivity", "1"],
                 ["solve", "--utility", "wasserstein", "--input-pmf", f, "--epsilon", "1", "--domain", "integer"]):
        code, out, err = _main(capsys, *argv)
        assert (code, out) == (2, ""), err
        _one_clean_line(err, "line 1002", "more than 1000 rows")


def _mech_file(tmp_path: Path, text: str) -> Path:
    return _write(tmp_path / "m.json", text)


SAVED = ('{"mechanism": {"kind": "lattice_pmf", "sensitivity": 1, "steps_per_period": 1, "k_lo": KLO, "beta": 0, '
         '"weights": [0.5, 0.5], "left_tail": [0], "right_tail": [0]}}')


@pytest.mark.parametrize("text, fragment", [
    (SAVED.replace("KLO", "1e21"), "2**53"),
    (SAVED.replace("KLO", str(2**63 - 1)), "2**53"),
    (SAVED.replace("KLO", "Infinity"), "not finite"),
    (SAVED.replace("KLO", "NaN"), "not finite"),
    (SAVED.replace("KLO", "1" * 5000), "json"),
    (SAVED.replace("KLO", "0").replace("[0.5, 0.5]", "[1e308, 1e308]"), "2**53"),
    ("[" * 100_000 + "]" * 100_000, "json"),
])
def test_hostile_saved_mechanisms_are_refused_everywhere(tmp_path, capsys, text, fragment):
    f = _mech_file(tmp_path, text)
    for argv in (["audit", f, "--sensitivity", "1"], ["mechanism", "--from", f],
                 ["sample", "--from", f, "-n", "3", "--seed", "1", "--out", tmp_path / "o.csv"]):
        code, out, err = _main(capsys, *argv)
        assert (code, out) == (2, ""), (argv[0], err)
        _one_clean_line(err, fragment)
    assert not (tmp_path / "o.csv").exists() and _hidden(tmp_path) == []


@pytest.mark.parametrize("definition, fragment", [
    ('{"name": "laplace", "epsilon": 1e-300, "sensitivity": 1}', "below 1e-100"),
    ('{"name": "discrete_staircase", "epsilon": 5e-324, "sensitivity": 1, "r": 1}', "below 1e-100"),
    ('{"name": "l2_laplace", "epsilon": 1e-90, "sensitivity": 9007199254740992, "dim": 2}', "noise scale"),
    ('{"name": "discrete_laplace", "epsilon": 1, "sensitivity": 1e20}', "2**53"),
    ('{"name": "staircase", "epsilon": 700, "sensitivity": 1e-300, "gamma": 0.5}', "noise scale"),
])
def test_mechanism_parameters_the_formulas_cannot_hold(tmp_path, capsys, definition, fragment):
    f = _mech_file(tmp_path, definition)
    for argv in (["mechanism", "--from", f], ["sample", "--from", f, "-n", "3", "--out", tmp_path / "o.csv"]):
        code, out, err = _main(capsys, *argv)
        assert (code, out) == (2, ""), (argv[0], err)
        _one_clean_line(err, fragment)


@pytest.mark.parametrize("argv, fragment", [
    ("mechanism --mechanism laplace --epsilon 1e-300", "below 1e-100"),
    ("mechanism --mechanism discrete_staircase --epsilon 1e-200", "below 1e-100"),
    ("mechanism --mechanism laplace --epsilon 1e-90 --sensitivity 1e15", "noise scale"),
    ("mechanism --mechanism discrete_staircase --epsilon 1 --sensitivity 1e20", "2**53"),
    ("sample --mechanism uniform --delta 5e-324 --domain continuous -n 3 --out {tmp}/o.csv", "noise scale"),
    ("sample --mechanism staircase --epsilon 700 --sensitivity 1e-300 -n 3 --out {tmp}/o.csv", "noise scale"),
])
def test_named_mechanisms_out_of_range(tmp_path, capsys, argv, fragment):
    code, out, err = _main(capsys, *argv.replace("{tmp}", str(tmp_path)).split())
    assert (code, out) == (2, ""), err
    _one_clean_line(err, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_mechanism_with_infinite_epsilon_is_described(tmp_path, capsys):
    """A finite-support pmf is not pure-DP: epsilon = inf is printed, not an internal error."""
    f = _mech_file(tmp_path, SAVED.replace("KLO", "-1"))
    code, out, err = _main(capsys, "mechanism", "--from", f)
    assert code == 0 and err == "" and "epsilon=inf" in out


# -- control characters in messages ----------------------------------------------------------------------

def test_one_line_escapes_control_characters_and_keeps_unicode():
    text = "ε ≤ 1, Δ = 2:\x1b[31m red\r\x00\x07\x7f\x9b\u202e end\n  next\tline"
    assert one_line(ValueError(text)) == r"ε ≤ 1, Δ = 2:\x1b[31m red\r\x00\x07\x7f\x9b\u202e end next line"
    assert one_line(ValueError("a\r\nb")) == "a b"
    assert one_line(KeyError()) == "KeyError" and one_line("") == ""


EVIL = "\x1b[31mred\r\x1b]0;title\x07"


@pytest.mark.parametrize("argv", [
    ["solve", "--epsilon", "1", "--cost", EVIL],
    ["solve", "--utility", "wasserstein", "--input", f"poisson:{EVIL}:0:5", "--epsilon", "1", "--domain", "integer"],
    ["solve", "--utility", "wasserstein", "--input-pmf", f"/nonexistent/{EVIL}.csv", "--epsilon", "1",
     "--domain", "integer"],
    ["audit", f"/nonexistent/{EVIL}.csv", "--sensitivity", "1"],
    ["sample", "--mechanism", "laplace", "--epsilon", "1", "-n", "3", "--out", f"{EVIL}.txt"],
    ["mechanism", "--from", f"/nonexistent/{EVIL}.json"],
    ["solve", "--epsilon", "1", EVIL],                       # argparse: unrecognized arguments
    ["solve", "--epsilon", "1", "--privacy", EVIL],          # argparse: invalid choice
], ids=["cost", "input-spec", "input-pmf-name", "audit-name", "out-name", "from-name", "argparse-extra",
        "argparse-choice"])
def test_control_characters_from_the_user_are_escaped(capsys, argv):
    code, out, err = _main(capsys, *argv)
    assert (code, out) == (2, ""), err
    _one_clean_line(err)


def test_control_characters_escaped_in_a_subprocess(tmp_path):
    bad = _write(tmp_path / f"p{EVIL}.csv", "k,p\n0,0.5\n1,0.4\n")
    p = _cli("audit", bad, "--sensitivity", "1")
    _refused(p, "sums to", r"\x1b[31mred\r\x1b]0;title\x07")
    p = _cli("solve", "--epsilon", "1", "--cost", EVIL)
    _refused(p)
