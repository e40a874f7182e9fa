"""On a terminal (a real pseudo-terminal here) tables fold to its width and headers are
bold; through a pipe, or with NO_COLOR, neither."""

import os
import pty
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"
ARGV = [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
        "sys.exit(main())", "topology", "where", "team-b/bert-large-worker-3", "--snapshot",
        str(EXAMPLE / "topology.json")]


def on_terminal(**env: str) -> str:
    """What the command writes to a pseudo-terminal of 90 columns."""
    main, child = pty.openpty()
    process = subprocess.Popen(ARGV, stdout=child, stderr=subprocess.DEVNULL,
                               env={**os.environ, "COLUMNS": "90", **env})
    os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(120) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_tables_fold_and_headers_are_bold_only_on_a_terminal():
    out = on_terminal()
    lines = out.splitlines()
    assert lines[0].startswith("\033[1mPOD") and lines[0].endswith("\033[0m")
    assert all(len(line) <= 90 for line in lines[1:])
    assert "\033[" not in on_terminal(NO_COLOR="1")
    piped = subprocess.run(ARGV, capture_output=True, text=True, check=True,
                           env={**os.environ, "COLUMNS": "90"}).stdout
    assert "\033[" not in piped
    assert max(map(len, piped.splitlines())) == 104  # not folded
    assert len(piped.splitlines()) == 3 < len(lines)
