"""A crash-safe SQLite store of solve results, keyed by a hash of the normalised problem.

Used by sweeps (``optmech run SPEC.toml --store FILE.sqlite --resume``): every finished problem is
written in its own transaction, so a process killed at any moment leaves each row either complete
or absent (SQLite's atomic commit, WAL journal, ``synchronous=FULL``).

Layout::

    meta(key TEXT PRIMARY KEY, value TEXT)          -- schema_version, optmech_version
    results(key TEXT PRIMARY KEY, spec TEXT, problem TEXT, result TEXT, lower_bound REAL,
            upper_bound REAL, relative_gap REAL, certified INTEGER, status TEXT, seconds REAL,
            created TEXT)

``problem`` and ``result`` hold JSON; the REAL columns repeat the bracket for queries.  A file that
is rejected (not SQLite, not an optmech store, another schema or optmech major.minor version) is
left untouched: it is only read before the checks pass.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import json
import math
import os
import sqlite3
from typing import IO, Any, Iterable

from optmech.errors import SpecError

__all__ = ["ResultStore", "read", "problem_key", "canonical_json", "varying", "condition", "SCHEMA_VERSION",
           "PARAMETER_ORDER"]

SCHEMA_VERSION = 1
_SQLITE_MAGIC = b"SQLite format 3\x00"
_FIXED_HEAD = ("key", "lower_bound", "upper_bound", "relative_gap", "certified", "status")
_FIXED_TAIL = ("lp_rows", "lp_cols", "lp_nonzeros", "seconds")
#: The problem parameters in the order a listing sorts by them (others follow alphabetically).
PARAMETER_ORDER = ("privacy", "utility", "domain", "dim", "norm", "cost", "input", "sensitivity", "epsilon", "delta",
                   "resolution", "target_gap")
#: The comparison operators of a ``where`` condition, longest first.
OPERATORS = ("!=", "<=", ">=", "=", "<", ">")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    spec TEXT,
    problem TEXT,
    result TEXT,
    lower_bound REAL,
    upper_bound REAL,
    relative_gap REAL,
    certified INTEGER,
    status TEXT,
    seconds REAL,
    created TEXT
);
"""


# -- canonical JSON and keys -----------------------------------------------------------------------
def _canon(x: Any) -> Any:
    """A JSON-ready copy of ``x``: non-finite floats as "inf"/"-inf"/"nan", numpy scalars unwrapped."""
    if hasattr(x, "item") and callable(x.item) and not isinstance(x, (dict, list, tuple, str)):
        try:
            x = x.item()  # numpy scalar
        except (TypeError, ValueError):
            pass
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, dict):
        return {str(k): _canon(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    raise SpecError(f"problem/result value {x!r} of type {type(x).__name__} cannot be stored as JSON")


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, floats by repr, non-finite floats as strings.

    >>> canonical_json({"b": 1.0, "a": [float("inf"), None]})
    '{"a":["inf",null],"b":1.0}'
    """
    return json.dumps(_canon(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def optmech_version() -> str:
    import optmech

    return optmech.__version__


def problem_key(problem: dict) -> str:
    """Stable key of a normalised problem dict under this optmech version (sha256 hex, 32 chars).

    The version is part of the hash, so results written by another version are never reused.

    >>> k = problem_key({"epsilon": 1.0, "cost": "abs"})
    >>> len(k), k == problem_key({"cost": "abs", "epsilon": 1.0}), k == problem_key({"epsilon": 2.0, "cost": "abs"})
    (32, True, False)
    """
    payload = canonical_json({"optmech_version": optmech_version(), "problem": problem})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def _major_minor(version: str) -> tuple[str, ...]:
    return tuple(str(version).split(".")[:2])


def _flatten(d: dict, prefix: str = "") -> dict:
    """Nested dicts as dotted names; lists as canonical JSON strings."""
    out: dict = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, name + "."))
        elif isinstance(v, list):
            out[name] = canonical_json(v)
        else:
            out[name] = v
    return out


def _real(x: Any) -> float | None:
    """A result field as a float for the REAL columns ("inf" strings accepted, None stays None)."""
    if x is None:
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _writable_folder(folder: str) -> bool:
    """Whether a file can be created in ``folder`` (tried, not inferred from mode bits: root and
    immutable flags make ``os.access`` unreliable)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _json_cell(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


# -- the store ---------------------------------------------------------------------------------------
class ResultStore:
    """A SQLite file of results; use as a context manager.

    ``ResultStore(path)`` creates the file when it does not exist (its directory must; creation is
    atomic: a complete empty store is linked into place, so concurrent creators all open one
    store), and opens it when it is an optmech store of this schema and this optmech major.minor
    version that passes SQLite's integrity check and can be written.  ``readonly=True`` never
    creates or writes (not even the WAL setting) and also reads stores in read-only files and
    folders.  With
    ``force=True`` a store from another optmech version is accepted (its rows keep their old keys,
    so they are never reused) and its recorded version is updated.  Every rejection is a one-line
    :class:`SpecError` and leaves the file untouched.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.sqlite")
    >>> problem = {"epsilon": 1.0, "cost": "abs"}
    >>> with ResultStore(path) as st:
    ...     st.put(problem_key(problem), problem, {"lower_bound": 1.0, "upper_bound": 1.0, "status": "optimal"})
    ...     [(r["epsilon"], r["upper_bound"], r["status"]) for r in st.query(where=["epsilon=1"])]
    [(1.0, 1.0, 'optimal')]
    """

    def __init__(self, path: str | os.PathLike, *, force: bool = False, timeout: float = 30.0,
                 readonly: bool = False):
        self.path = os.fspath(path)
        self.force = force
        self.readonly = readonly
        self._conn: sqlite3.Connection | None = None
        self._open(timeout)

    # -- opening -----------------------------------------------------------------------------------
    def _open(self, timeout: float) -> None:
        """Create (atomically) or open the store; every check that can refuse it runs before any write."""
        path = self.path
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise SpecError(f"{path}: directory {parent} does not exist")
        if not os.path.lexists(path):
            if self.readonly:
                raise SpecError(f"no such store: {path}")
            self._create(parent, timeout)
        if not os.path.isfile(path):
            raise SpecError(f"{path} is not an optmech store (not a regular file)")
        try:
            with open(path, "rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
        except OSError as e:
            raise SpecError(f"{path}: cannot read store ({e.strerror or e})") from None
        if not head:
            raise SpecError(f"{path} is an empty file (0 bytes), not an optmech store; store untouched: delete it "
                            "or choose another store")
        if head != _SQLITE_MAGIC:
            raise SpecError(f"{path} is not an optmech store (not a SQLite database); store untouched")
        if not self.readonly:
            self._check_writable(parent)
        had = {sfx: os.path.lexists(path + sfx) for sfx in ("-wal", "-shm")}
        conn = self._connect(parent, timeout)
        try:
            self._check(conn)  # reads only: a rejected file is not modified
            self._check_integrity(conn)
            if not self.readonly:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                if self.force:
                    with conn:
                        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('optmech_version', ?)",
                                     (optmech_version(),))
        except SpecError:
            conn.close()
            self._remove_our_sidecars(had)
            raise
        except sqlite3.DatabaseError as e:
            conn.close()
            self._remove_our_sidecars(had)
            raise SpecError(f"{path} is damaged or not a usable optmech store ({e}); store untouched") from None
        self._conn = conn

    def _remove_our_sidecars(self, had: dict) -> None:
        """After refusing a store: remove the -wal/-shm files that this read alone created (an empty
        WAL), so a refused file is left exactly as found."""
        wal = self.path + "-wal"
        if had["-wal"] or (os.path.exists(wal) and os.path.getsize(wal) > 0):
            return
        for sfx in ("-wal", "-shm"):
            if not had[sfx]:
                try:
                    os.unlink(self.path + sfx)
                except OSError:
                    pass

    def _connect(self, parent: str, timeout: float) -> sqlite3.Connection:
        """A read-write connection, or a read-only one (``mode=ro``; ``immutable=1`` when the folder is
        read-only, where SQLite cannot create the shared-memory file a WAL store needs)."""
        from urllib.parse import quote

        try:
            if not self.readonly:
                return sqlite3.connect(self.path, timeout=timeout)
            uri = "file:" + quote(os.path.abspath(self.path))
            conn = sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.OperationalError:
                conn.close()
                if _writable_folder(parent):
                    raise
                return sqlite3.connect(uri + "?immutable=1", uri=True, timeout=timeout)
        except sqlite3.Error as e:
            raise SpecError(f"{self.path}: cannot open store ({e})") from None

    def _create(self, parent: str, timeout: float) -> None:
        """Build a complete empty store beside ``path``, then link it into place: a store is never seen
        half made, and when several processes create one store at once, the first link wins and the
        others open that one."""
        import tempfile

        path = self.path
        try:
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".new", dir=parent)
        except OSError as e:
            raise SpecError(f"{path}: cannot create a store in {parent} ({e.strerror or e}): choose a writable folder") \
                from None
        os.close(fd)
        try:
            conn = sqlite3.connect(tmp, timeout=timeout)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                self._init(conn)
            finally:
                conn.close()
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process created it first: open theirs
            except OSError:  # no hard links on this file system: rename unless someone won meanwhile
                if not os.path.lexists(path):
                    os.replace(tmp, path)
        except sqlite3.Error as e:
            raise SpecError(f"{path}: cannot create store ({e})") from None
        finally:
            for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
                try:
                    os.unlink(leftover)
                except FileNotFoundError:
                    pass

    def _check_writable(self, parent: str) -> None:
        """Refuse a store that cannot be written before any work starts (file mode, immutable flag,
        read-only folder or file system)."""
        path = self.path
        try:
            os.close(os.open(path, os.O_RDWR))
        except OSError as e:
            raise SpecError(f"{path} is read-only ({e.strerror or e}): choose a writable --store (optmech store ls "
                            "and export read it as it is)") from None
        if not _writable_folder(parent):
            raise SpecError(f"{path}: its folder {parent} is not writable (SQLite keeps its -wal and -shm files there): "
                            "choose a writable --store")

    def _check_integrity(self, conn: sqlite3.Connection) -> None:
        """``PRAGMA integrity_check`` (pages, indexes, UNIQUE keys): a damaged store is refused untouched,
        before anything is written to it or any stored row is trusted."""
        try:
            found = [r[0] for r in conn.execute("PRAGMA integrity_check(5)")]
        except sqlite3.DatabaseError as e:
            found = [str(e)]
        if found != ["ok"]:
            raise SpecError(f"{self.path} is damaged (SQLite integrity check: {'; '.join(found)[:200]}); store untouched: "
                            "restore it from a copy or use a new store")

    @staticmethod
    def _init(conn: sqlite3.Connection) -> None:
        with conn:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('optmech_version', ?)", (optmech_version(),))

    def _check(self, conn: sqlite3.Connection) -> None:
        path = self.path
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as e:
            raise SpecError(f"{path} is damaged or not a SQLite database ({e}); store untouched") from None
        if not {"meta", "results"} <= tables:
            raise SpecError(f"{path} is a SQLite database but not an optmech store (no meta/results tables); "
                            "store untouched")
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        schema = meta.get("schema_version")
        if schema != str(SCHEMA_VERSION):
            raise SpecError(f"{path} has store schema version {schema}; this optmech reads version {SCHEMA_VERSION}: "
                            "use a new store; store untouched")
        theirs = meta.get("optmech_version")
        if theirs is None:
            raise SpecError(f"{path} is not an optmech store (no optmech_version); store untouched")
        if _major_minor(theirs) != _major_minor(optmech_version()) and not self.force:
            t, o = ".".join(_major_minor(theirs)), ".".join(_major_minor(optmech_version()))
            raise SpecError(f"{path} was written by optmech {t}; this is optmech {o}: use a new store or --force; "
                            "store untouched")

    # -- context manager -----------------------------------------------------------------------------
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "ResultStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise SpecError(f"{self.path}: store is closed")
        return self._conn

    def meta(self) -> dict:
        return dict(self.conn.execute("SELECT key, value FROM meta"))

    # -- writing -------------------------------------------------------------------------------------
    def put(self, key: str, problem: dict, result: dict, spec_name: str | None = None) -> None:
        """Store (or replace) one result in one transaction: afterwards the row is there, complete."""
        problem_json = canonical_json(problem)
        result_json = json.dumps(_canon(result), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        certified = result.get("certified")
        created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        row = (
            key, spec_name, problem_json, result_json,
            _real(result.get("lower_bound")), _real(result.get("upper_bound")), _real(result.get("relative_gap")),
            None if certified is None else int(bool(certified)), result.get("status"), _real(result.get("seconds")),
            created,
        )
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO results(key, spec, problem, result, lower_bound, upper_bound, relative_gap, "
                "certified, status, seconds, created) VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)

    # -- reading -------------------------------------------------------------------------------------
    def has(self, key: str) -> bool:
        return self.conn.execute("SELECT 1 FROM results WHERE key = ?", (key,)).fetchone() is not None

    def __contains__(self, key: str) -> bool:
        return self.has(key)

    def __len__(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def keys(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT key FROM results ORDER BY rowid")]

    def get(self, key: str) -> dict:
        """The stored result dict (as ``put`` received it, after a JSON round trip); KeyError if absent."""
        r = self.conn.execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        if r is None:
            raise KeyError(key)
        return self._loads(r[0], key)

    def record(self, key: str) -> dict:
        """The whole row: key, spec, problem and result (parsed), the bracket columns, created."""
        cur = self.conn.execute("SELECT * FROM results WHERE key = ?", (key,))
        r = cur.fetchone()
        if r is None:
            raise KeyError(key)
        d = dict(zip([c[0] for c in cur.description], r))
        d["problem"] = self._loads(d["problem"], key)
        d["result"] = self._loads(d["result"], key)
        return d

    def _loads(self, text: Any, key: Any) -> Any:
        """A stored JSON cell, or a one-line error naming the damaged row."""
        try:
            return json.loads(text)
        except (TypeError, ValueError):
            raise SpecError(f"{self.path} is damaged: the row {key!r} does not hold valid JSON; restore the store "
                            "from a copy or use a new one") from None

    def _raw_rows(self) -> list[tuple]:
        try:
            return self._select_rows()
        except sqlite3.OperationalError as e:  # json_extract of a damaged row
            raise SpecError(f"{self.path} is damaged ({e}); restore the store from a copy or use a new one") from None

    def _select_rows(self) -> list[tuple]:
        return self.conn.execute(
            "SELECT key, lower_bound, upper_bound, relative_gap, problem, seconds, certified, status, "
            "json_extract(result, '$.lp.rows'), json_extract(result, '$.lp.cols'), "
            "json_extract(result, '$.lp.nonzeros') FROM results ORDER BY rowid").fetchall()

    def columns(self) -> list[str]:
        """``key, lower_bound, upper_bound, relative_gap, certified, status``, the problem parameters
        (sorted), ``lp_rows, lp_cols, lp_nonzeros, seconds``."""
        return self._columns([_flatten(self._loads(r[4], r[0])) for r in self._raw_rows()])

    @staticmethod
    def _param_name(name: str) -> str:
        return f"problem.{name}" if name in _FIXED_HEAD or name in _FIXED_TAIL else name

    def _columns(self, flats: list[dict]) -> list[str]:
        params = sorted({self._param_name(k) for f in flats for k in f})
        return [*_FIXED_HEAD, *params, *_FIXED_TAIL]

    def rows(self) -> list[dict]:
        """One dict per stored problem, in the order written, with exactly the :meth:`columns`
        (absent parameters as None; ``certified`` a bool)."""
        raw = list(self._raw_rows())
        flats = [{self._param_name(k): v for k, v in _flatten(self._loads(r[4], r[0])).items()} for r in raw]
        cols = self._columns(flats)
        out = []
        for r, flat in zip(raw, flats):
            d = dict.fromkeys(cols)
            d.update(key=r[0], lower_bound=r[1], upper_bound=r[2], relative_gap=r[3], seconds=r[5],
                     certified=None if r[6] is None else bool(r[6]), status=r[7], lp_rows=r[8], lp_cols=r[9],
                     lp_nonzeros=r[10])
            d.update(flat)
            out.append(d)
        return out

    def query(self, where: Iterable[str] = (), sort: Iterable[str] | None = None) -> list[dict]:
        """The :meth:`rows` that meet every ``where`` condition, sorted.

        A condition is ``NAME OP VALUE`` with OP one of ``= != < <= > >=`` (``epsilon=0.5``,
        ``sensitivity>=4``, ``status!=optimal``): numbers compare as numbers, anything else as text.
        ``sort`` names columns, ``-name`` for descending; by default the rows are sorted by the
        parameters that vary between them (:func:`varying`), in :data:`PARAMETER_ORDER`.
        """
        rows = self.rows()
        cols = list(rows[0]) if rows else self.columns()
        tests = [condition(w, cols) for w in where]
        rows = [r for r in rows if all(t(r) for t in tests)]
        order = [(c, False) for c in varying(rows)] if sort is None else [_sort_key(s, cols) for s in sort]
        for name, descending in reversed(order):
            rows.sort(key=lambda r, n=name: _order_value(r.get(n)), reverse=descending)
        return rows

    def export(self, fmt: str = "csv", out: IO[str] | None = None, *, where: Iterable[str] = (),
               sort: Iterable[str] | None = None) -> str | None:
        """Write the rows of :meth:`query` (by default all, sorted by the swept parameters) as CSV
        (header + one line per problem; ``certified`` as true/false) or JSON (a list of objects).

        With ``out=None`` the text is returned; otherwise it is written to ``out``.
        """
        if fmt not in ("csv", "json"):
            raise SpecError(f"export format must be 'csv' or 'json', got {fmt!r}")
        import io

        buf = io.StringIO() if out is None else out
        rows = self.query(where, sort)
        cols = rows[0].keys() if rows else self.columns()
        if fmt == "csv":
            w = csv.writer(buf, lineterminator="\n")
            w.writerow(cols)
            for r in rows:
                w.writerow([_csv_cell(r[c]) for c in cols])
        else:
            json.dump([{c: _json_cell(r[c]) for c in cols} for r in rows], buf, indent=2, allow_nan=False)
            buf.write("\n")
        return buf.getvalue() if out is None else None


# -- listing helpers --------------------------------------------------------------------------------
def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return v


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _order_value(v: Any) -> tuple:
    """A sort key for mixed cells: numbers by value, then text, then absent values last."""
    x = _number(v)
    if x is not None:
        return (0, x, "")
    if v is None:
        return (2, 0.0, "")
    return (1, 0.0, str(v))


def parameter_names(columns: Iterable[str]) -> list[str]:
    """The problem-parameter columns among ``columns``, in :data:`PARAMETER_ORDER` then alphabetically."""
    fixed = set(_FIXED_HEAD) | set(_FIXED_TAIL)
    names = [c for c in columns if c not in fixed]
    rank = {n: i for i, n in enumerate(PARAMETER_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def varying(rows: list[dict]) -> list[str]:
    """The parameters whose value differs between ``rows`` (what a sweep swept), in :data:`PARAMETER_ORDER`.

    >>> varying([{"key": "a", "epsilon": 0.5, "cost": "abs"}, {"key": "b", "epsilon": 1.0, "cost": "abs"}])
    ['epsilon']
    """
    if not rows:
        return []
    return [n for n in parameter_names(rows[0]) if len({canonical_json(r.get(n)) for r in rows}) > 1]


def _sort_key(text: str, columns: list[str]) -> tuple[str, bool]:
    name = text.strip()
    descending = name.startswith("-")
    name = name.lstrip("-").strip()
    if name not in columns:
        raise SpecError(f"--sort: no column {name!r}; columns: {', '.join(columns)}")
    return name, descending


def condition(text: str, columns: Iterable[str]):
    """A ``where`` condition (``epsilon=0.5``, ``sensitivity>=4``, ``status!=optimal``) as a test of a row.

    >>> test = condition("epsilon<=0.5", ["key", "epsilon"])
    >>> test({"epsilon": 0.25}), test({"epsilon": 1.0}), test({"epsilon": None})
    (True, False, False)
    """
    columns = list(columns)
    for op in OPERATORS:
        name, found, value = text.partition(op)
        if found:
            break
    else:
        raise SpecError(f"--where {text!r}: expected NAME=VALUE (or !=, <, <=, >, >=), e.g. epsilon=0.5")
    name, value = name.strip(), value.strip()
    if name not in columns:
        raise SpecError(f"--where {text!r}: no column {name!r}; columns: {', '.join(columns)}")
    target = _number(value)
    lowered = value.lower()

    def test(row: dict) -> bool:
        cell = row.get(name)
        x = _number(cell)
        if target is not None and x is not None:
            a, b = x, target
        elif op in ("=", "!="):
            if isinstance(cell, bool):
                a, b = cell, lowered in ("true", "yes", "1")
            else:
                a, b = ("" if cell is None else str(cell)), value
        else:
            return False  # an order comparison needs two numbers
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    return test


def read(path: str | os.PathLike, *, where: Iterable[str] = (), sort: Iterable[str] | None = None):
    """A result store as a pandas DataFrame: one row per problem, the columns of :meth:`ResultStore.export`
    (bracket, ``certified``, ``status``, the problem parameters, the LP size, ``seconds``), filtered by
    ``where`` and sorted as :meth:`ResultStore.query` does.  Needs pandas (``pip install 'optmech[pandas]'``).

    >>> import os, tempfile, optmech
    >>> from optmech.sweep import parse_spec, run_sweep
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.sqlite")
    >>> spec = parse_spec({"name": "demo", "problem": {"domain": "integer"}, "grid": {"epsilon": [2.0, 1.0]}})
    >>> _ = run_sweep(spec, path, workers=1)
    >>> df = optmech.store.read(path)
    >>> print(df[["epsilon", "certified", "status"]].to_string(index=False))
     epsilon  certified  status
         1.0       True optimal
         2.0       True optimal
    >>> bool((df.lower_bound <= df.upper_bound).all())
    True
    """
    try:
        import pandas as pd
    except ImportError:
        raise SpecError("reading a store as a DataFrame needs pandas: pip install 'optmech[pandas]'") from None
    if not os.path.isfile(path):
        raise SpecError(f"no such store: {os.fspath(path)}")
    with ResultStore(path, readonly=True) as st:
        rows = st.query(where, sort)
        cols = list(rows[0]) if rows else st.columns()
    frame = pd.DataFrame.from_records(rows, columns=cols)
    for c in ("lower_bound", "upper_bound", "relative_gap", "seconds"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce")
    return frame
