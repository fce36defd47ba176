"""The ``optmech solve`` command line: JSON contract, text output, files, and input errors.

Every invalid input must end with exit status 2 and exactly one line on stderr, never a traceback.
The CLI runs in a subprocess (``python -m optmech.cli``), as a user would run it.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from optmech.certify import audit_pure


def run_cli(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [sys.executable, "-m", "optmech.cli", *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"optmech {' '.join(args)} did not finish within {timeout:.0f} s")


def discrete_staircase_abs(eps: float, delta: int) -> float:
    """min_r Σ|i|P_r(i) by direct summation [reference/pure-dp.md §5]."""
    b = math.exp(-eps)
    M = delta * int(math.ceil(80 / eps))
    i = np.arange(-M, M + 1)
    k, j = np.divmod(np.abs(i), delta)
    best = math.inf
    for r in range(1, delta + 1):
        a = (1 - b) / (2 * r + 2 * b * (delta - r) - (1 - b))
        best = min(best, math.fsum(np.abs(i) * a * b ** k.astype(float) * np.where(j < r, 1.0, b)))
    return best


INT3 = ["solve", "--privacy", "pure", "--epsilon", "1", "--sensitivity", "3", "--domain", "integer", "--cost", "abs"]
V_INT3 = discrete_staircase_abs(1.0, 3)


def as_float(v) -> float:
    return float(v)  # JSON encodes ±inf as strings "inf"/"-inf"


# ------------------------------------------------------------------------------------------------
# output contract
# ------------------------------------------------------------------------------------------------
def test_json_contract():
    p = run_cli(*INT3, "--json")
    assert p.returncode == 0, p.stderr
    text = p.stdout.strip()
    obj, end = json.JSONDecoder().raw_decode(text)
    assert end == len(text), "stdout must hold exactly one JSON object"
    assert isinstance(obj, dict)
    for key in ("lower_bound", "upper_bound", "relative_gap", "certified", "seconds", "references", "lp"):
        assert key in obj, f"missing {key!r}"
    lo, up = as_float(obj["lower_bound"]), as_float(obj["upper_bound"])
    assert obj["certified"] is True
    assert lo <= V_INT3 * (1 + 1e-12) and V_INT3 <= up * (1 + 1e-12)
    assert 0 <= as_float(obj["relative_gap"]) <= 1e-9
    assert math.isclose(as_float(obj["relative_gap"]), (up - lo) / up, rel_tol=1e-6, abs_tol=1e-15)
    assert isinstance(obj["seconds"], (int, float)) and obj["seconds"] >= 0
    assert isinstance(obj["references"], list) and obj["references"]
    for ref in obj["references"]:
        for key in ("name", "value", "parameters", "inside_bracket"):
            assert key in ref, f"reference lacks {key!r}: {ref}"
        assert isinstance(ref["name"], str) and isinstance(ref["parameters"], dict)
        assert isinstance(ref["inside_bracket"], bool)
    stair = [r for r in obj["references"] if r["name"] == "discrete_staircase"]
    assert stair and math.isclose(as_float(stair[0]["value"]), V_INT3, rel_tol=1e-9) and stair[0]["inside_bracket"]
    lp = obj["lp"]
    for key in ("rows", "cols", "nonzeros"):
        assert isinstance(lp[key], int) and lp[key] > 0
    assert isinstance(lp["solver"], str) and lp["solver"]
    assert p.stderr.strip() == ""


def test_json_continuous_with_resolution():
    p = run_cli("solve", "--epsilon", "1", "--sensitivity", "1", "--domain", "continuous", "--resolution", "8",
                "--cost", "abs", "--json")
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    v = math.exp(0.5) / math.expm1(1.0)  # V* = Δ e^{ε/2}/(e^ε − 1)
    assert obj["certified"] is True
    assert as_float(obj["lower_bound"]) <= v * (1 + 1e-12) <= as_float(obj["upper_bound"]) * (1 + 2e-12)


def test_text_output_shows_bracket():
    p = run_cli(*INT3)
    assert p.returncode == 0, p.stderr
    assert "bracket" in p.stdout.lower()
    m = re.search(r"\[\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\]", p.stdout)
    assert m, p.stdout
    lo, up = float(m.group(1)), float(m.group(2))
    assert lo <= up
    # printed with limited digits: allow the last printed digit
    assert lo <= V_INT3 * (1 + 1e-10) and V_INT3 <= up * (1 + 1e-10)
    assert "discrete_staircase" in p.stdout


def test_save_writes_result_with_mechanism(tmp_path):
    out = tmp_path / "result.json"
    p = run_cli(*INT3, "--save", str(out))
    assert p.returncode == 0, p.stderr
    d = json.loads(out.read_text())
    assert as_float(d["lower_bound"]) <= V_INT3 * (1 + 1e-12) <= as_float(d["upper_bound"]) * (1 + 2e-12)
    assert "mechanism" in d and d["mechanism"]
    from optmech.result import mechanism_from_dict

    mech = mechanism_from_dict(d["mechanism"])
    k = np.arange(-240, 241)
    pm = mech.law.mass(k)
    assert math.isclose(math.fsum(pm), 1.0, abs_tol=1e-9)
    assert audit_pure(int(k[0]), pm, 3, 1.0).passed
    cost = math.fsum(np.abs(k) * pm)
    assert as_float(d["lower_bound"]) * (1 - 1e-9) <= cost <= as_float(d["upper_bound"]) * (1 + 1e-9)


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "mech.png"
    p = run_cli(*INT3, "--plot", str(out))
    assert p.returncode == 0, p.stderr
    assert out.exists() and out.stat().st_size > 1000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_continuous_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "mech.png"
    p = run_cli("solve", "--epsilon", "1", "--domain", "continuous", "--resolution", "8", "--cost", "square",
                "--plot", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------------------------
# invalid input: exit 2, one line on stderr, no traceback
# ------------------------------------------------------------------------------------------------
def cont(*extra: str) -> list[str]:
    return ["solve", "--epsilon", "1", "--sensitivity", "1", "--domain", "continuous", "--resolution", "4", *extra]


def integer(*extra: str) -> list[str]:
    return ["solve", "--epsilon", "1", "--domain", "integer", *extra]


BAD = {
    "epsilon 0": ["solve", "--epsilon", "0", "--domain", "integer"],
    "epsilon -1": ["solve", "--epsilon=-1", "--domain", "integer"],
    "epsilon nan": ["solve", "--epsilon", "nan", "--domain", "integer"],
    "epsilon inf": ["solve", "--epsilon", "inf", "--domain", "integer"],
    "epsilon text": ["solve", "--epsilon", "one", "--domain", "integer"],
    "sensitivity 0": integer("--sensitivity", "0"),
    "sensitivity -2": integer("--sensitivity=-2"),
    "sensitivity 2.5 integer": integer("--sensitivity", "2.5"),
    "sensitivity nan": integer("--sensitivity", "nan"),
    "resolution 0": ["solve", "--epsilon", "1", "--domain", "continuous", "--resolution", "0"],
    "resolution 1.5": ["solve", "--epsilon", "1", "--domain", "continuous", "--resolution", "1.5"],
    "resolution -3": ["solve", "--epsilon", "1", "--domain", "continuous", "--resolution=-3"],
    "cost __import__": cont("--cost", "__import__('os')"),
    "cost attribute": cont("--cost", "x.real"),
    "cost lambda": cont("--cost", "lambda: 1"),
    "cost comprehension": cont("--cost", "[x for x in y]"),
    "cost huge power": cont("--cost", "x**10**10"),
    "cost negative": cont("--cost=-abs(x)"),
    "cost negative integer": integer("--sensitivity", "2", "--cost=-abs(x)"),
    "cost log": cont("--cost", "log(x)"),
    "cost log integer": integer("--cost", "log(x)"),
    "cost unknown function": cont("--cost", "foo(x)"),
    "cost empty": cont("--cost", ""),
    "cost syntax": cont("--cost", "abs(x"),
    "target gap 0": integer("--target-gap", "0"),
    "target gap 2": integer("--target-gap", "2"),
    "unknown solver profile": integer("--solver", "no-such-profile"),
    "unknown domain": ["solve", "--epsilon", "1", "--domain", "lattice"],
    "missing epsilon": ["solve", "--domain", "integer"],
}


def assert_input_error(p: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    assert p.returncode == 2, f"exit {p.returncode}; stderr: {p.stderr!r}"
    lines = p.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    assert lines[0].strip()
    return lines[0]


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_invalid_input_exits_2_with_one_line(case):
    msg = assert_input_error(run_cli(*BAD[case]))
    if case.startswith("cost"):
        assert "cost" in msg.lower()


@pytest.mark.parametrize("argv", [cont("--cost", "log(x)"), integer("--cost", "log(x)")], ids=["cont", "int"])
def test_log_cost_message_names_the_real_problem(argv):
    """log(x) is −inf at 0 and NaN for x < 0: the message should say so, not blame the growth."""
    msg = assert_input_error(run_cli(*argv))
    assert re.search(r"nan|-inf|infinite|undefined|negative|not finite", msg, re.I), msg


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "--domain", "integer", "--sensitivity", "9999999", "--epsilon", "0.000001"],
        ["solve", "--domain", "integer", "--sensitivity", "9999999", "--epsilon", "1"],
        ["solve", "--domain", "continuous", "--resolution", "100000000", "--epsilon", "1"],
    ],
    ids=["int-huge-delta-tiny-eps", "int-huge-delta", "cont-huge-resolution"],
)
def test_absurd_size_is_refused_quickly(argv):
    msg = assert_input_error(run_cli(*argv, timeout=20.0))
    assert re.search(r"size|memory|GiB|too large|large", msg, re.I), msg
