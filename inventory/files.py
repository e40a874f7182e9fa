"""Reading input files: expanding directories, loading JSON or YAML, naming what failed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from inventory.errors import ConfigError

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


def load_config(path: str | Path) -> Any:
    """A YAML configuration file; ConfigError names the file and why it cannot be read."""
    origin = str(path)
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(origin, "", f"cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(origin, "", f"not YAML: {exc}") from exc
