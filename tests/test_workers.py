"""Worker processes never outlive their parent: after the parent is killed with SIGKILL (no cleanup
can run), its pool's workers exit within seconds instead of computing on as orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

PARENT = r"""
import sys, time
from optmech.workers import process_pool

def main():
    pool = process_pool(2)
    futs = [pool.submit(time.sleep, 600) for _ in range(2)]
    time.sleep(1.5)  # the workers are up and busy
    print(" ".join(str(p) for p in pool._processes), flush=True)
    time.sleep(600)

if __name__ == "__main__":
    main()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is gone for our purpose
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(x) for x in p.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(x) for x in pids)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(_alive(x) for x in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(x) for x in pids), "workers outlived their SIGKILLed parent"
    finally:
        if p.poll() is None:
            p.kill()
