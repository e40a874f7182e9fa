"""Field types and error naming shared by the configuration models (pydantic): ports,
hosts, ``HOST:PORT`` addresses, finite seconds, files that must exist or be writable, and
the one ConfigError a ValidationError becomes (``FILE: key.path: reason``)."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from inventory.errors import ConfigError

STRICT = ConfigDict(extra="forbid", frozen=True)
"""Models of configuration sections: an unknown key is an error, values never change."""

Port = Annotated[int, Field(ge=1, le=65535)]
Seconds = Annotated[float, Field(gt=0, le=86400, allow_inf_nan=False)]

_LABEL = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
_HOSTNAME = re.compile(rf"(?=.*[a-z]){_LABEL}(\.{_LABEL})*", re.IGNORECASE)  # not all digits


def check_host(text: str) -> str:
    """``text`` when it is an IP address or a host name (not all digits: ``10.0.0.999`` is
    an IP address written wrong); ValueError otherwise.

    >>> check_host("leaf01.lab"), check_host("fd00::1")
    ('leaf01.lab', 'fd00::1')
    """
    try:
        ipaddress.ip_address(text)
    except ValueError:
        if not _HOSTNAME.fullmatch(text):
            raise ValueError(f"{text!r} is not an IP address or host name") from None
    return text


def split_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (an IP address, ``[v6]`` or a host name; port 0-65535, 0 for any free
    port) as a pair; ValueError says why ``text`` is not one.

    >>> split_address("[::]:6343"), split_address("localhost:9460")
    (('::', 6343), ('localhost', 9460))
    >>> split_address("10.0.0.999:6343")
    Traceback (most recent call last):
    ...
    ValueError: '10.0.0.999:6343': '10.0.0.999' is not an IP address or host name
    """
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, not {text!r}")
    if int(port) > 65535:
        raise ValueError(f"{text!r}: port {port} is over 65535")
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        check_host(bare)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None
    if bare != host and ":" not in bare:
        raise ValueError(f"{text!r}: brackets are for IPv6 addresses")
    return bare, int(port)


def address(text: str) -> str:
    """``text`` when it is ``HOST:PORT`` (:func:`split_address`)."""
    split_address(text)
    return text


def existing_file(text: str) -> str:
    """``text`` when it names a readable file (or is empty)."""
    if text and not Path(text).is_file():
        raise ValueError(f"{text}: no such file")
    if text and not os.access(text, os.R_OK):
        raise ValueError(f"{text}: not readable")
    return text


def existing_path(text: str) -> str:
    """``text`` when it names a file or folder that exists (or is empty)."""
    if text and not Path(text).exists():
        raise ValueError(f"{text}: no such file or folder")
    return text


def writable_file(text: str) -> str:
    """``text`` when the file can be written (or is empty): tried, as permissions alone do
    not tell (root, read-only mounts); a file made for the try is removed."""
    if not text:
        return text
    path = Path(text)
    if path.is_dir():
        raise ValueError(f"{text}: is a folder")
    if not path.parent.is_dir():
        raise ValueError(f"{text}: folder {path.parent} does not exist")
    existed = path.exists()
    try:
        with path.open("a"):
            pass
    except OSError as exc:
        raise ValueError(f"{text}: not writable: {exc.strerror}") from None
    if not existed:
        path.unlink()
    return text


Host = Annotated[str, AfterValidator(check_host)]
Address = Annotated[str, AfterValidator(address)]
ExistingFile = Annotated[str, AfterValidator(existing_file)]
"""A file that must exist and be readable ("" for none)."""
ExistingPath = Annotated[str, AfterValidator(existing_path)]
WritableFile = Annotated[str, AfterValidator(writable_file)]
"""A file that can be written: its folder exists and it (or its folder) is writable."""


def key_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the file names it.

    >>> key_path(("switches", 0, "snmp", "version"))
    'switches[0].snmp.version'
    """
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def config_error(origin: str, error: ValidationError,
                 renames: Mapping[str, str] | None = None) -> ConfigError:
    """The first error of ``error`` as a ConfigError naming ``origin``, the key (or, per
    ``renames``, the environment variable it came from) and the reason; input values are
    never shown, so no secret is either."""
    first = error.errors(include_url=False, include_input=False)[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, LocatedError):  # a whole-model check names its own key
        return ConfigError(origin, key_path(cause.loc), str(cause))
    loc = tuple(p for p in first["loc"] if not str(p).startswith("function-"))
    key = key_path(loc)
    reason = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        reason = "required"
    elif first["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        reason = "unknown key"
    return ConfigError(origin, (renames or {}).get(key, key), reason)


class LocatedError(ValueError):
    """A ValueError of a whole-model check that names the key it is about."""

    def __init__(self, reason: str, loc: tuple[int | str, ...]) -> None:
        super().__init__(reason)
        self.loc = loc


def validate_document(model: type[BaseModel], document: Any, origin: str,
                      environ: Mapping[str, str], renames: Mapping[str, str] | None = None
                      ) -> Any:
    """``document`` as ``model`` (secrets resolved against ``environ``); ConfigError names
    ``origin``, the key and the reason of the first error."""
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "expected a mapping of sections")
    try:
        return model.model_validate(document, context={"environ": environ})
    except ValidationError as exc:
        raise config_error(origin, exc, renames) from None
