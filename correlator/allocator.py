"""The memory allocator of ``fabcorr run``: jemalloc, when the system has it.

A service rebuilds its fabric (hundreds of thousands of small objects at x-large) while
the old one serves, then drops the old one. CPython's own allocator gives memory back to
the system a 1 MiB arena at a time, and one object still alive keeps its arena: the
x-large shard's RSS grew by 270 MiB over three rebuilds. jemalloc gives back each page
that empties; with CPython's small-object allocator off (``PYTHONMALLOC=malloc``), it
allocates every object, and the shard grew by 110 MiB. A background thread returns the
freed pages after a second (``MALLOC_CONF``): at once, each free would pay for it (a
quarter more CPU in attribution).

``fabcorr run`` starts itself again with jemalloc preloaded when ``libjemalloc.so.2``
is installed (Debian's ``libjemalloc2``; the image has it) and ``FABCORR_ALLOCATOR`` is
unset; ``FABCORR_ALLOCATOR=system`` keeps CPython's allocator.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from collections.abc import Mapping

ALLOCATOR_ENV = "FABCORR_ALLOCATOR"
JEMALLOC_CONF = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0"


def jemalloc_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """``environ`` for a process that allocates with jemalloc; None when ``environ``
    already chose (``FABCORR_ALLOCATOR`` set) or the system has no jemalloc.

    >>> jemalloc_env({"FABCORR_ALLOCATOR": "system"}) is None
    True
    """
    if ALLOCATOR_ENV in environ:
        return None
    library = ctypes.util.find_library("jemalloc")
    if library is None:
        return None
    preload = " ".join(filter(None, (library, environ.get("LD_PRELOAD", ""))))
    return {**environ, "LD_PRELOAD": preload, "PYTHONMALLOC": "malloc",
            "MALLOC_CONF": environ.get("MALLOC_CONF", JEMALLOC_CONF),
            ALLOCATOR_ENV: "jemalloc"}


def restart_with_jemalloc() -> None:
    """Start this program again, the same command line, with jemalloc (never returns);
    return when :func:`jemalloc_env` says not to."""
    environ = jemalloc_env(os.environ)
    if environ is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environ)


def allocator_in_use() -> str:
    """``jemalloc`` when this process has it mapped, else ``cpython``."""
    try:
        with open("/proc/self/maps") as maps:
            return "jemalloc" if any("libjemalloc" in line for line in maps) else "cpython"
    except OSError:  # not Linux
        return "cpython"
