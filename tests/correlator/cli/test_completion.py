"""``fabcorr completion``: the bash script, sourced in a real bash, completes what the parser
knows; the zsh and fish scripts come from the same walk of the parser."""

import shutil
import subprocess
import sys

import pytest

from correlator.cli.completion import commands
from correlator.cli.main import build_parser, main

BASH = shutil.which("bash")


def completions(script: str, line: str) -> list[str]:
    """What bash's ``_fabcorr`` offers for the last word of ``line`` after sourcing."""
    program = ('source /dev/stdin <<< "$SCRIPT"\n'
               'read -ra COMP_WORDS <<< "$LINE"\n'
               '[[ $LINE == *" " ]] && COMP_WORDS+=("")\n'
               "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
               "_fabcorr\n"
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    done = subprocess.run([BASH, "-c", program], env={"SCRIPT": script, "LINE": line},
                          capture_output=True, text=True, check=True)
    assert done.stderr == ""
    return done.stdout.split()


@pytest.fixture(scope="module")
def bash_script():
    if BASH is None:
        pytest.skip("no bash on this machine")
    done = subprocess.run([sys.executable, "-c", "import sys; from correlator.cli.main import "
                           "main; sys.exit(main())", "completion", "bash"],
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_bash_completes_commands_subcommands_options_and_choices(bash_script):
    assert completions(bash_script, "fabcorr topology ex") == ["export"]
    assert completions(bash_script, "fabcorr topology export -o ") == [
        "graphml", "gexf", "json", "dot", "cytoscape"]
    assert completions(bash_script, "fabcorr sflow decode -o ") == [
        "table", "wide", "json", "yaml", "jsonl"]
    assert completions(bash_script, "fabcorr top ") == [
        "tenants", "jobs", "pods", "-h", "--help", "--snapshot", "--server", "--user",
        "--ca-file", "--pcap", "--counters", "--interval", "-o", "--output", "--link",
        "--limit"]
    assert completions(bash_script, "fabcorr completion ") == ["bash", "zsh", "fish", "-h",
                                                                "--help"]
    assert completions(bash_script, "fabcorr --debug inventory --f") == ["--from"]
    assert completions(bash_script, "fabcorr c") == ["config", "completion"]


def test_bash_completes_files_for_options_that_take_one(bash_script, tmp_path,
                                                        monkeypatch):
    (tmp_path / "capture.pcapng").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    assert completions(bash_script, "fabcorr attribute --pcap cap") == ["capture.pcapng"]


def test_every_command_of_the_parser_is_in_every_script(capsys):
    paths = [c.path for c in commands(build_parser())]
    assert "fabcorr simulate score" in paths and "fabcorr completion" in paths
    for shell in ("bash", "zsh", "fish"):
        assert main(["completion", shell]) == 0
        script = capsys.readouterr().out
        for path in paths:
            assert (repr(path) if " " in path else path) in script or f"'{path}'" in script
    zsh = shutil.which("zsh")
    if zsh:
        main(["completion", "zsh"])
        subprocess.run([zsh, "-n", "/dev/stdin"], input=capsys.readouterr().out, text=True,
                       check=True)
