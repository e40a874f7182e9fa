"""The ``fabcorr`` program ends its process without the interpreter's teardown: what it
printed is all there, its exit handlers ran, its status is the command's, and a thread
still running is not cut off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from correlator.cli.main import main

ROOT = Path(__file__).parents[3]
SNAPSHOT = str(ROOT / "examples" / "fabric-small" / "topology.json")


def _program(prelude: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    code = f"import sys; import correlator.cli.main as cli; {prelude}; " \
        f"sys.argv = ['fabcorr', *{list(argv)!r}]; cli.program()"
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120,
                          cwd=ROOT, env=buffered, check=False)


def test_everything_printed_reaches_the_pipe(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["topology", "export", "--snapshot", SNAPSHOT, "-o", "json"]
    assert main(argv) == 0
    expected = capsys.readouterr().out.encode()
    assert len(expected) > 2**15  # more than one write buffer
    unflushed = (  # a line the command leaves in the buffer
        "command = cli.main\n"
        "def main():\n"
        "    status = command()\n"
        "    print('last line')\n"
        "    return status\n"
        "cli.main = main")
    done = _program(unflushed, *argv)
    assert (done.returncode, done.stdout, done.stderr) == (0, expected + b"last line\n", b"")


def test_exit_handlers_run_and_the_status_is_the_commands() -> None:
    handler = "import atexit; atexit.register(lambda: print('handler ran', file=sys.stderr))"
    done = _program(handler, "topology", "where", "--snapshot", SNAPSHOT, "no-such-pod")
    assert done.returncode == 1  # not found
    assert done.stderr.decode().splitlines()[-1] == "handler ran"


def test_a_thread_still_running_ends_as_python_ends_it() -> None:
    late = (  # the command, then a thread that prints a moment after it returned
        "import threading, time; command = cli.main\n"
        "def main():\n"
        "    status = command()\n"
        "    threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
        "    return status\n"
        "cli.main = main")
    done = _program(late, "topology", "where", "--snapshot", SNAPSHOT, "no-such-pod")
    assert done.returncode == 1
    assert done.stdout.decode().splitlines()[-1] == "thread done"
