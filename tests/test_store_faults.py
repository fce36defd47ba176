"""Result stores under abuse (issue 19): damaged files are refused before anything is written or
trusted, creation is atomic under concurrent creators, read-only stores are refused up front by
writers and read by ``store ls``/``export``, and a zero-byte file is never turned into a store."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import pytest

from optmech.errors import SpecError
from optmech.store import ResultStore, problem_key

SPEC = 'name = "faults"\n[problem]\ndomain = "integer"\ncost = "abs"\n[grid]\nepsilon = [0.5, 1.0, 2.0]\n'


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def _cli(*args, cwd=None, user=None) -> subprocess.CompletedProcess:
    kw = {}
    if user is not None:
        kw["user"] = user
    return subprocess.run([sys.executable, "-m", "optmech", *map(str, args)], capture_output=True, text=True,
                          env=_env(), cwd=cwd, timeout=120, **kw)


def _one_line_error(p: subprocess.CompletedProcess, what: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1 and what in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr


def _filled_store(path, n: int = 40) -> list[str]:
    keys = []
    with ResultStore(path) as st:
        for i in range(n):
            problem = {"privacy": "pure", "epsilon": 0.1 * (i + 1), "cost": "abs", "domain": "integer"}
            k = problem_key(problem)
            st.put(k, problem, {"lower_bound": 1.0, "upper_bound": 1.0 + i, "status": "optimal", "certified": True,
                                "pad": "x" * 300})
            keys.append(k)
    c = sqlite3.connect(path)  # fold the WAL into the file, so the bytes below are the store
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    return keys


def _flip_index_page(path) -> None:
    """Overwrite bytes inside the key index's root page: the index no longer matches the table."""
    with sqlite3.connect(path) as c:
        page_size = c.execute("PRAGMA page_size").fetchone()[0]
        root = c.execute("SELECT rootpage FROM sqlite_master WHERE type='index' AND tbl_name='results'").fetchone()[0]
    with open(path, "r+b") as fh:
        start = (root - 1) * page_size
        fh.seek(start)
        page = bytearray(fh.read(page_size))
        for i in range(page_size // 2, page_size - 8, 7):  # the cell content area, keys included
            page[i] ^= 0x5A
        fh.seek(start)
        fh.write(page)


def test_a_damaged_store_is_refused_before_anything_is_written(tmp_path):
    store = tmp_path / "flip.sqlite"
    _filled_store(store)
    _flip_index_page(store)
    c = sqlite3.connect(f"file:{store}?immutable=1", uri=True)  # the damage, as SQLite itself sees it
    try:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] != "ok"
    except sqlite3.DatabaseError as e:
        assert "malformed" in str(e)
    finally:
        c.close()
    before = store.read_bytes()
    (tmp_path / "s.toml").write_text(SPEC)
    p = _cli("run", tmp_path / "s.toml", "--resume", "--store", store, "--workers", "1")
    _one_line_error(p, "damaged")
    for args in (["ls"], ["export"], ["show", "0" * 32]):
        _one_line_error(_cli("store", args[0], store, *args[1:]), "damaged")
    assert store.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["flip.sqlite", "s.toml"]


def test_a_damaged_row_is_one_line_not_an_internal_error(tmp_path):
    store = tmp_path / "s.sqlite"
    keys = _filled_store(store, 3)
    with sqlite3.connect(store) as c:
        c.execute("UPDATE results SET problem = '{\"epsilon\": 0.' , result = '{\"lower' WHERE key = ?", (keys[1],))
    for args in (["ls"], ["export"], ["show", keys[1]]):
        _one_line_error(_cli("store", args[0], store, *args[1:]), "damaged")


def test_the_key_is_unique_in_the_schema(tmp_path):
    store = tmp_path / "s.sqlite"
    keys = _filled_store(store, 2)
    with sqlite3.connect(store) as c, pytest.raises(sqlite3.IntegrityError):
        c.execute("INSERT INTO results(key) VALUES (?)", (keys[0],))


CREATE = r"""
import sys, time
from optmech.store import ResultStore
t0 = float(sys.argv[2])
while time.time() < t0:
    pass
with ResultStore(sys.argv[1]) as st:
    print(len(st))
"""


def test_concurrent_creation_is_atomic(tmp_path):
    """Two processes creating one new store at the same instant both open one complete store."""
    script = tmp_path / "create.py"
    script.write_text(CREATE)
    for trial in range(int(os.environ.get("OPTMECH_FAULT_TRIALS", "5"))):
        store = tmp_path / f"new{trial}.sqlite"
        t0 = time.time() + 0.8
        procs = [subprocess.Popen([sys.executable, str(script), str(store), repr(t0)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=_env()) for _ in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0 and out.strip() == "0", err
    leftovers = [f for f in os.listdir(tmp_path) if not f.endswith((".sqlite", ".py", "-wal", "-shm"))]
    assert leftovers == []


def test_a_zero_byte_file_is_not_turned_into_a_store(tmp_path):
    store = tmp_path / "zero.sqlite"
    store.write_bytes(b"")
    (tmp_path / "s.toml").write_text(SPEC)
    _one_line_error(_cli("store", "ls", store), "empty file")
    _one_line_error(_cli("run", tmp_path / "s.toml", "--store", store, "--workers", "1"), "empty file")
    assert store.read_bytes() == b"" and sorted(os.listdir(tmp_path)) == ["s.toml", "zero.sqlite"]


@pytest.fixture()
def unprivileged():
    """A user for whom file modes apply (root ignores them): ``nobody`` when the tests run as root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    import pwd

    try:
        user = pwd.getpwnam("nobody").pw_name
    except KeyError:
        pytest.skip("running as root with no 'nobody' user to drop to")
    try:
        probe = subprocess.run([sys.executable, "-c", "import optmech"], user=user, env=_env(), capture_output=True,
                               timeout=60)
    except OSError:
        probe = None
    if probe is None or probe.returncode != 0:
        pytest.skip("running as root, and 'nobody' cannot run this Python (test_read_only_file_simulated covers it)")
    return user


def _shared_dir() -> str:
    d = tempfile.mkdtemp(prefix="optmech-ro-")
    os.chmod(d, 0o755)
    return d


def test_a_read_only_store_is_refused_up_front_and_still_browsable(unprivileged):
    d = _shared_dir()
    try:
        store = os.path.join(d, "ro.sqlite")
        _filled_store(store, 3)
        spec = os.path.join(d, "s.toml")
        with open(spec, "w") as fh:
            fh.write(SPEC)
        for f in (store, spec):
            os.chmod(f, 0o444)
        if unprivileged is None and os.access(store, os.W_OK):
            pytest.skip("file modes do not bind this user")
        before = open(store, "rb").read()
        t0 = time.monotonic()
        p = _cli("run", spec, "--store", store, "--workers", "1", cwd=d, user=unprivileged)
        _one_line_error(p, "read-only")
        assert time.monotonic() - t0 < 30
        ls = _cli("store", "ls", store, "--json", cwd=d, user=unprivileged)
        assert ls.returncode == 0, ls.stderr
        assert len(json.loads(ls.stdout)) == 3
        ex = _cli("store", "export", store, cwd=d, user=unprivileged)
        assert ex.returncode == 0 and len(ex.stdout.splitlines()) == 4, ex.stderr
        assert open(store, "rb").read() == before
        assert sorted(os.listdir(d)) == ["ro.sqlite", "s.toml"]  # no -wal/-shm left behind
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_a_store_in_a_read_only_folder(unprivileged):
    d = _shared_dir()
    try:
        store = os.path.join(d, "s.sqlite")
        _filled_store(store, 2)
        os.chmod(store, 0o644)
        os.chmod(d, 0o555)
        if unprivileged is None and os.access(d, os.W_OK):
            pytest.skip("file modes do not bind this user")
        ls = _cli("store", "ls", store, "--json", user=unprivileged)
        assert ls.returncode == 0 and len(json.loads(ls.stdout)) == 2, ls.stderr
        spec = os.path.join(tempfile.mkdtemp(), "s.toml")
        os.chmod(os.path.dirname(spec), 0o755)
        with open(spec, "w") as fh:
            fh.write(SPEC)
        os.chmod(spec, 0o644)
        _one_line_error(_cli("run", spec, "--store", store, "--workers", "1", user=unprivileged), "not writable")
        _one_line_error(_cli("run", spec, "--store", os.path.join(d, "new.sqlite"), "--workers", "1",
                             user=unprivileged), "cannot create")
        assert sorted(os.listdir(d)) == ["s.sqlite"]
    finally:
        os.chmod(d, 0o755)
        shutil.rmtree(d, ignore_errors=True)


def test_readonly_open_never_creates(tmp_path):
    with pytest.raises(SpecError, match="no such store"):
        ResultStore(tmp_path / "absent.sqlite", readonly=True)
    assert os.listdir(tmp_path) == []


SIMULATED = r"""
import errno, os, sys
store = os.path.abspath(sys.argv[1])
real_open = os.open
def read_only_open(path, flags, *args, **kwargs):
    if os.path.abspath(os.fsdecode(path)) == store and flags & (os.O_WRONLY | os.O_RDWR):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    return real_open(path, flags, *args, **kwargs)
os.open = read_only_open
from optmech.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_read_only_file_simulated(tmp_path):
    """The writer's up-front check, whatever the user: a store the process may not open for writing is
    refused with one line before any problem is solved (file modes do not bind root, so the refusal
    is simulated at os.open)."""
    store = tmp_path / "ro.sqlite"
    _filled_store(store, 3)
    (tmp_path / "s.toml").write_text(SPEC)
    script = tmp_path / "sim.py"
    script.write_text(SIMULATED)
    before = store.read_bytes()
    p = subprocess.run([sys.executable, str(script), str(store), "run", str(tmp_path / "s.toml"), "--store", str(store),
                        "--workers", "1"], capture_output=True, text=True, env=_env(), timeout=120)
    _one_line_error(p, "read-only")
    assert store.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ro.sqlite", "s.toml", "sim.py"]
