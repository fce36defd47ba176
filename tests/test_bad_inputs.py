"""Every bad input of :data:`tests.bad_inputs.BAD_INPUTS`: the exact exit status, one line on
stderr starting "optmech: ", nothing on stdout, no traceback; and the docs page docs/errors.md lists each one."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bad_inputs import BAD_INPUTS, readme_table  # noqa: E402

from optmech.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bad")
    (d / "notsqlite.sqlite").write_text("this is not a database\n")
    (d / "bad.csv").write_text("k,p\n0,0.5\n1,0.4\n")
    (d / "latin1.csv").write_bytes("k,p\n0,0.5\n1,0.5 \xe9\n".encode("latin-1"))
    (d / "bad.toml").write_text('name = "x"\nepsilon = 1\n[problem]\nepsilon = 1.0\n')
    (d / "big.toml").write_text('name = "big"\n[grid]\nepsilon = [' + ", ".join(str(0.1 + i / 100) for i in range(600))
                                + "]\n")
    (d / "file").write_text("x")
    return d


def test_there_are_at_least_forty_and_every_command_is_covered():
    assert len(BAD_INPUTS) >= 40
    commands = {argv.split()[0] for argv, _, _ in BAD_INPUTS}
    assert commands >= {"solve", "table", "compare", "run", "store", "reproduce", "sample", "mechanism", "audit"}


@pytest.mark.parametrize("argv, code, fragment", BAD_INPUTS, ids=[a[:60] for a, _, _ in BAD_INPUTS])
def test_bad_input(argv, code, fragment, scratch, capsys, monkeypatch):
    monkeypatch.chdir(scratch)
    args = shlex.split(argv.replace("{tmp}", str(scratch)))
    try:
        got = main(args)
    except SystemExit as exc:          # argparse errors exit through SystemExit
        got = exc.code
    out, err = capsys.readouterr()
    assert got == code, (got, err)
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("optmech: "), err
    assert "Traceback" not in err
    assert fragment.lower() in err.lower(), err
    assert not (scratch / "s.npy").exists()


def test_readme_lists_every_bad_input():
    """The docs page of errors (docs/errors.md, moved from the README) lists every case."""
    text = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert readme_table() in text, "docs/errors.md's Errors table is stale: paste `python tests/bad_inputs.py` into it"
