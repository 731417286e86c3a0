"""Worker processes that die with their parent.

A pool worker forked by the nightly job inherits the job's lock on the output folder; if the
job is SIGKILLed, an orphaned worker would keep that lock (and print BrokenPipeError tracebacks
when it finally tries to report). `die_with_parent` is the pool's initializer: on Linux the
kernel sends the worker SIGKILL the moment its parent dies; elsewhere a daemon thread notices
within a second.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Make this process exit when `parent` (the pid that created it) is gone."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="die-with-parent").start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)
