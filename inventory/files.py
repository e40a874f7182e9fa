"""Reading input files (expanding directories, loading JSON or YAML) and replacing output
files whole, naming what failed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from inventory.errors import ConfigError, WriteError

DATA_SUFFIXES = (".json", ".yaml", ".yml")


def expand(paths: Iterable[str | Path], error: type[Exception],
           suffixes: tuple[str, ...] = DATA_SUFFIXES) -> list[Path]:
    """Files, and the files (with one of ``suffixes``) of directories, in name order;
    ``error`` is raised for a path that does not exist."""
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.suffix in suffixes)
        elif path.is_file():
            files.append(path)
        else:
            raise error(f"{path}: no such file or directory")
    return files


def load_data(path: Path, error: type[Exception], what: str) -> Any:
    """A JSON (by suffix) or YAML document; ``error`` says it is not readable as ``what``."""
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise error(f"{path}: cannot read as {what}: {exc}") from exc


def replace_file(path: str | Path, content: str | bytes | Iterable[str]) -> None:
    """Replace ``path`` whole with ``content`` (written beside it, then renamed), so a
    reader never sees half a file; WriteError names ``path`` and why it cannot be.
    Content given as pieces of text is written as they come, never held whole."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    pieces = [content] if isinstance(content, str | bytes) else content
    try:
        if path.is_dir():
            raise IsADirectoryError(21, "is a directory")
        with partial.open("wb") as stream:
            for piece in pieces:
                stream.write(piece.encode() if isinstance(piece, str) else piece)
        partial.replace(path)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write: {exc.strerror}") from exc
    finally:
        partial.unlink(missing_ok=True)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a mapping that repeats a key (the last would win)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if isinstance(key, str | int | float | bool) and key in seen:
                raise _DuplicateKey(f"{key}: duplicate key on line {line} (first on line "
                                    f"{seen[key]})")
            seen.setdefault(key, line)
        return super().construct_mapping(node, deep)


class _DuplicateKey(yaml.YAMLError):
    pass


def load_config(path: str | Path) -> Any:
    """A YAML configuration file; ConfigError names the file and why it cannot be read
    (unreadable, not UTF-8, not YAML, a key repeated in one mapping)."""
    origin = str(path)
    try:
        return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except OSError as exc:
        raise ConfigError(origin, "", f"cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(origin, "", f"not UTF-8 text (byte {exc.start})") from exc
    except _DuplicateKey as exc:
        raise ConfigError(origin, "", str(exc)) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(origin, "", f"not YAML: {exc}") from exc
