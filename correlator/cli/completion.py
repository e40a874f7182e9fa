"""``fabcorr completion bash|zsh|fish``: shell completion generated from the parser itself,
so every command, option and choice the parser knows completes, and nothing else."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass, field

from correlator.cli.status import ExitStatus

SHELLS = ("bash", "zsh", "fish")


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``fabcorr completion``."""
    parser = commands.add_parser(
        "completion", help="print a shell completion script (bash, zsh or fish)",
        description="Print the completion script of a shell: commands, options and their "
        "choices, files for the other options. bash: `source <(fabcorr completion bash)` "
        "(or save it in /etc/bash_completion.d/fabcorr); zsh: `source <(fabcorr completion "
        "zsh)`; fish: `fabcorr completion fish > ~/.config/fish/completions/fabcorr.fish`.")
    parser.add_argument("shell", choices=SHELLS)
    parser.set_defaults(run=_completion)


@dataclass
class Command:
    """What completes after one command path (``fabcorr topology export``)."""

    path: str
    words: list[str] = field(default_factory=list)  # subcommands, positional choices, options
    choices: dict[str, list[str]] = field(default_factory=dict)  # option -> its choices
    files: list[str] = field(default_factory=list)  # options whose value is anything (a file)


def commands(parser: argparse.ArgumentParser, path: str = "fabcorr") -> list[Command]:
    """Every command path of ``parser``, depth first."""
    here, below = Command(path), []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                here.words.append(name)
                below += commands(sub, f"{path} {name}")
        elif not action.option_strings:
            here.words += [str(c) for c in action.choices or ()]
        else:
            here.words += action.option_strings
            if action.choices:
                for option in action.option_strings:
                    here.choices[option] = [str(c) for c in action.choices]
            elif action.nargs != 0:
                here.files += action.option_strings
    here.words.sort(key=lambda w: w.startswith("-"))  # subcommands and choices first
    return [here, *below]


def bash(found: list[Command]) -> str:
    """A bash completion script (``complete -F``)."""
    def table(name: str, items: dict[str, str]) -> str:
        rows = "".join(f"    [{shlex.quote(k)}]={shlex.quote(v)}\n" for k, v in items.items())
        return f"declare -gA {name}=(\n{rows})\n"

    words = {c.path: " ".join(c.words) for c in found}
    choices = {f"{c.path} {o}": " ".join(v) for c in found for o, v in c.choices.items()}
    files = {f"{c.path} {o}": "1" for c in found for o in c.files}
    return ("# fabcorr completion for bash (fabcorr completion bash)\n"
            + table("_fabcorr_words", words) + table("_fabcorr_choices", choices)
            + table("_fabcorr_files", files) + _BASH_FUNCTION)


_BASH_FUNCTION = r"""_fabcorr() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path=fabcorr i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ -n ${_fabcorr_words["$path ${COMP_WORDS[i]}"]+set} ]]; then
            path="$path ${COMP_WORDS[i]}"
        fi
    done
    if [[ -n ${_fabcorr_choices["$path $prev"]+set} ]]; then
        COMPREPLY=($(compgen -W "${_fabcorr_choices["$path $prev"]}" -- "$cur"))
    elif [[ -n ${_fabcorr_files["$path $prev"]+set} ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -W "${_fabcorr_words[$path]}" -- "$cur"))
    fi
}
complete -o default -F _fabcorr fabcorr
"""


def zsh(found: list[Command]) -> str:
    """A zsh script: the bash one through zsh's bashcompinit."""
    return ("# fabcorr completion for zsh (fabcorr completion zsh)\n"
            "autoload -U +X compinit && compinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + bash(found))


def fish(found: list[Command]) -> str:
    """A fish script: one ``complete`` line per command path, option and choice list."""
    paths = " ".join(shlex.quote(c.path) for c in found)
    lines = ["# fabcorr completion for fish (fabcorr completion fish)",
             f"set -g __fabcorr_paths {paths}",
             "function __fabcorr_path",
             "    set -l path fabcorr",
             "    for word in (commandline -opc)[2..-1]",
             '        if contains -- "$path $word" $__fabcorr_paths',
             '            set path "$path $word"',
             "        end",
             "    end",
             "    echo $path",
             "end",
             "function __fabcorr_at",
             "    test (__fabcorr_path) = $argv[1]",
             "end",
             "complete -c fabcorr -f"]
    for command in found:
        when = shlex.quote(f"__fabcorr_at {shlex.quote(command.path)}")
        plain = [w for w in command.words if not w.startswith("-")]
        if plain:
            lines.append(f"complete -c fabcorr -n {when} -a {shlex.quote(' '.join(plain))}")
        for option in (w for w in command.words if w.startswith("-")):
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            if option in command.choices:
                values = shlex.quote(" ".join(command.choices[option]))
                lines.append(f"complete -c fabcorr -n {when} {flag} -x -a {values}")
            elif option in command.files:
                lines.append(f"complete -c fabcorr -n {when} {flag} -r -F")
            else:
                lines.append(f"complete -c fabcorr -n {when} {flag}")
    return "\n".join(lines) + "\n"


def script(shell: str) -> str:
    """The completion script of ``shell`` for the whole ``fabcorr`` parser."""
    from correlator.cli.main import build_parser

    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](commands(build_parser()))


def _completion(args: argparse.Namespace) -> ExitStatus:
    sys.stdout.write(script(args.shell))
    return ExitStatus.OK
