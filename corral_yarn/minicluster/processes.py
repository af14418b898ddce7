"""Process helpers for the embedded cluster: only ever signal processes by their pid."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def is_alive(pid: int) -> bool:
    """Whether a process with this pid exists (zombies count as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def cmdline_contains(pid: int, text: str) -> bool:
    """Whether the command line of ``pid`` contains ``text``."""
    try:
        return text in Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False


def terminate(pid: int, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after ``grace_s`` seconds if the process is still there."""
    if not _signal(pid, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap(pid)
        if not is_alive(pid):
            return
        time.sleep(0.2)
    _signal(pid, signal.SIGKILL)
    _reap(pid)


def find_by_path(base: Path) -> list[int]:
    """Pids of processes whose working directory is inside ``base`` (YARN containers of the cluster)."""
    prefix = str(base.resolve()) + os.sep
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (cwd + os.sep).startswith(prefix):
            found.append(int(entry.name))
    return found


def _signal(pid: int, sig: signal.Signals) -> bool:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return False
    return True


def _reap(pid: int) -> None:
    """Collects the exit status if ``pid`` is our child, so it does not linger as a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
