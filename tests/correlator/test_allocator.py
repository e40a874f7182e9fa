"""``fabcorr run`` allocates with jemalloc when the system has it (correlator/allocator.py):
the process starts itself again with it preloaded, and FABCORR_ALLOCATOR=system keeps
CPython's allocator. Checked on real processes, by what the kernel says they mapped."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from correlator.allocator import ALLOCATOR_ENV, JEMALLOC_CONF, jemalloc_env
from tests.inventory.test_devices import ENV, example_config

ROOT = Path(__file__).resolve().parents[2]
REPORT = ("from correlator.allocator import restart_with_jemalloc; restart_with_jemalloc(); "
          "import os, sys; maps = open('/proc/self/maps').read(); "
          "print('libjemalloc' in maps, os.environ.get('PYTHONMALLOC'), sys.argv[1:])")


@pytest.fixture(scope="module")
def jemalloc() -> str:
    library = ctypes.util.find_library("jemalloc")
    if library is None:
        if os.geteuid() != 0:
            pytest.skip("libjemalloc.so.2 is not installed (Debian's libjemalloc2): "
                        "fabcorr run keeps CPython's allocator, not checked here")
        pytest.fail("libjemalloc.so.2 is not installed; `make test` installs libjemalloc2 "
                    "when root")
    return library


def _report(**environ: str) -> str:
    """What a process that calls restart_with_jemalloc says of itself afterwards."""
    env = {k: v for k, v in os.environ.items() if k != ALLOCATOR_ENV}
    done = subprocess.run([sys.executable, "-c", REPORT, "one", "two"], cwd=ROOT,
                          env={**env, "PYTHONPATH": str(ROOT), **environ},
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_a_process_starts_again_with_jemalloc_and_its_command_line(jemalloc):
    assert _report() == "True malloc ['one', 'two']"


def test_fabcorr_allocator_system_keeps_cpythons_allocator(jemalloc):
    assert _report(FABCORR_ALLOCATOR="system") == "False None ['one', 'two']"


def test_the_environment_preloads_jemalloc_before_what_was_preloaded(jemalloc):
    env = jemalloc_env({"LD_PRELOAD": "libfoo.so", "PATH": "/bin"})
    assert env == {"LD_PRELOAD": f"{jemalloc} libfoo.so", "PATH": "/bin",
                   "PYTHONMALLOC": "malloc", "MALLOC_CONF": JEMALLOC_CONF,
                   ALLOCATOR_ENV: "jemalloc"}
    assert jemalloc_env({"MALLOC_CONF": "narenas:1"})["MALLOC_CONF"] == "narenas:1"
    assert jemalloc_env({ALLOCATOR_ENV: "jemalloc"}) is None  # started again already


@pytest.mark.parametrize(("environ", "allocator"), [({}, "jemalloc"),
                                                    ({ALLOCATOR_ENV: "system"}, "cpython")])
def test_fabcorr_run_says_which_allocator_it_runs_with(jemalloc, tmp_path, environ,
                                                       allocator):
    """``fabcorr run`` is what starts itself again (``--check`` reports it, then exits)."""
    config = example_config(tmp_path)
    text = config.read_text().replace("0.0.0.0:9460", "127.0.0.1:0")
    config.write_text(text.replace("0.0.0.0:6343", "127.0.0.1:0"))
    env = {k: v for k, v in os.environ.items() if k != ALLOCATOR_ENV}
    done = subprocess.run([sys.executable, "-c", "import sys; from correlator.cli.main "
                           "import main; sys.exit(main())", "run", "--check", "--config",
                           str(config)], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**env, **ENV, "PYTHONPATH": str(ROOT), **environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(f", allocator {allocator}")
