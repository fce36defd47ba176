"""Rerun optmech's whole fault-injection set and print one line per scenario (issue 19).

The scenarios are the subprocess tests that abuse stores, signals, clusters, budgets and parsers:

* ``tests/test_store_faults.py``: damaged stores and rows, concurrent creators, read-only files and
  folders, zero-byte files;
* ``tests/test_sweep_signals.py``: SIGINT/SIGTERM at several moments of a sweep and of ``reproduce``;
* ``tests/test_workers.py``: workers after their parent's SIGKILL;
* ``tests/test_sweep.py``: SIGKILL mid-sweep then ``--resume``; hostile specs;
* ``tests/test_sweep_dask_faults.py``: a real Dask scheduler killed mid-sweep, a scheduler without
  workers (needs ``optmech[dask]``; skipped without it);
* ``tests/test_hostile_input.py``, ``tests/test_bad_inputs.py``: hostile files and flags;
* ``tests/test_budgets.py``: memory estimates against measured peaks, time limits against wall time.

Usage::

    python benchmarks/fault_injection.py [--trials 25] [--markdown] [--verbose]

``--trials`` sets how many times concurrent store creation is raced (the issue's 25).  The exit
status is 0 when every scenario passed or was skipped for a missing optional dependency.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["tests/test_store_faults.py", "tests/test_sweep_signals.py", "tests/test_workers.py", "tests/test_sweep.py",
         "tests/test_sweep_dask_faults.py", "tests/test_hostile_input.py", "tests/test_bad_inputs.py",
         "tests/test_budgets.py"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=25, help="concurrent-creation races (default: 25)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--verbose", action="store_true", help="list every scenario, not only those not passed")
    args = ap.parse_args()
    files = [f for f in FILES if (ROOT / f).exists()]
    env = dict(os.environ, OPTMECH_FAULT_TRIALS=str(args.trials))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pytest", *files, "-rA", "-q", "-p", "no:cacheprovider", "-m", ""],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    outcomes = []
    for line in p.stdout.splitlines():
        m = re.match(r"^SKIPPED \[\d+\] (\S+?):\d+: (.*)", line)
        if m:
            outcomes.append((m.group(1), "SKIPPED", m.group(2)))
            continue
        m = re.match(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (.+?)(?: - (.*))?$", line)
        if m:
            outcomes.append((m.group(2), m.group(1), m.group(3) or ""))
    counts = {k: sum(1 for _, o, _ in outcomes if o == k) for k in ("PASSED", "FAILED", "ERROR", "SKIPPED")}
    per_file: dict[str, dict[str, int]] = {}
    for name, outcome, _ in outcomes:
        f = per_file.setdefault(name.split("::")[0], {"PASSED": 0, "FAILED": 0, "ERROR": 0, "SKIPPED": 0})
        f[outcome] = f.get(outcome, 0) + 1
    if args.markdown:
        print("| scenarios | passed | failed | skipped |\n|---|---|---|---|")
        for f, c in per_file.items():
            print(f"| `{f}` | {c['PASSED']} | {c['FAILED'] + c['ERROR']} | {c['SKIPPED']} |")
    else:
        for f, c in per_file.items():
            print(f"{f:40s} {c['PASSED']:4d} passed {c['FAILED'] + c['ERROR']:3d} failed {c['SKIPPED']:3d} skipped")
    for name, outcome, why in outcomes:
        if outcome != "PASSED" or args.verbose:
            print(f"  {outcome:8s} {name}" + (f"  ({why})" if why else ""))
    print(f"\n{counts['PASSED']} passed, {counts['FAILED'] + counts['ERROR']} failed, {counts['SKIPPED']} skipped "
          f"in {seconds:.0f} s (concurrent-creation races: {args.trials}; python {sys.version.split()[0]})")
    if counts["FAILED"] or counts["ERROR"] or p.returncode not in (0, 5):
        sys.stdout.write(p.stdout[-4000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
