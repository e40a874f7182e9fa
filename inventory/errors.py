"""The one error tree of fabcorr; every package may raise and catch these.

::

    FabcorrError
    ├── ConfigError            a config or input file is wrong (file, key, reason)
    ├── FactError              a fact document cannot be read as facts
    ├── WriteError             an output file cannot be written
    ├── SourceError            a source of truth failed
    │   ├── SourceTimeout
    │   └── SourceUnreachable
    ├── DecodeError            bytes on the wire do not parse
    │   ├── TruncatedDatagram
    │   └── UnknownFormat
    └── TopologyError          the fabric graph cannot answer
        ├── NotFound           a name given by the user matches nothing
        ├── UnknownPort
        └── SnapshotError      a snapshot file is unreadable or of another schema
"""

from __future__ import annotations


class FabcorrError(Exception):
    """Base of every error fabcorr raises on purpose."""


class ConfigError(FabcorrError):
    """A configuration file, input file or command-line flag is wrong; the message names
    file (or flag), key and reason."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source, self.key, self.reason = source, key, reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


class FactError(FabcorrError):
    """A fact document does not describe facts (unknown section, field or type)."""


class WriteError(FabcorrError):
    """An output file cannot be written; the message names the file and why."""


class SourceError(FabcorrError):
    """A source of truth (switch, API server, file) could not be read."""


class SourceTimeout(SourceError):
    """A source did not answer in time."""


class SourceUnreachable(SourceError):
    """A source refused or could not be reached."""


class DecodeError(FabcorrError):
    """Bytes received on the wire do not parse."""


class TruncatedDatagram(DecodeError):
    """A datagram or record is shorter than its declared length."""


class UnknownFormat(DecodeError):
    """A version or format number this decoder does not know."""


class TopologyError(FabcorrError):
    """The fabric graph cannot answer a question."""


class NotFound(TopologyError):
    """A name given by the user matches nothing; ``suggestions`` holds close matches."""

    def __init__(self, what: str, name: str, suggestions: tuple[str, ...] = ()) -> None:
        self.what, self.name, self.suggestions = what, name, suggestions
        message = f"no {what} named {name!r}"
        if suggestions:
            message += "; did you mean " + ", ".join(repr(s) for s in suggestions) + "?"
        super().__init__(message)


class UnknownPort(TopologyError):
    """A (switch, port) or (agent, ifIndex) that the graph does not hold."""


class SnapshotError(TopologyError):
    """A snapshot file cannot be loaded (unreadable, corrupt or of another schema)."""
