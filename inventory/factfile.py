"""Fact documents: a FactSet as plain JSON/YAML data, and the files that hold them.

A fact document is a mapping ``{"schema": "fabcorr/facts", "version": 1, <section>:
[<fact>, ...]}`` whose sections are those of :data:`inventory.facts.FACT_TYPES`. Fields
equal to their default are left out when writing. Reading checks every section, field
name and value type and names the file, section, entry and field of the first error.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from enum import StrEnum
from functools import cache
from pathlib import Path
from types import NoneType, UnionType
from typing import Any

import yaml

from inventory.errors import FactError
from inventory.facts import FACT_TYPES, FactSet
from inventory.files import expand, load_data, replace_file

SCHEMA = "fabcorr/facts"
VERSION = 1


def facts_to_document(facts: FactSet) -> dict[str, Any]:
    """Return ``facts`` as a fact document (non-empty sections only, defaults left out).

    >>> from inventory.facts import NodeFact
    >>> facts_to_document(FactSet(nodes=(NodeFact("gpu01"),)))
    {'schema': 'fabcorr/facts', 'version': 1, 'nodes': [{'name': 'gpu01'}]}
    """
    document: dict[str, Any] = {"schema": SCHEMA, "version": VERSION}
    for section, cls in FACT_TYPES.items():
        items = getattr(facts, section)
        if items:
            defaults = _defaults(cls)
            document[section] = [_fact_to_dict(item, defaults) for item in items]
    return document


def facts_from_document(document: Mapping[str, Any], origin: str = "<document>") -> FactSet:
    """Return the FactSet a fact document describes; raise FactError naming what is wrong.

    >>> facts_from_document({"nodes": [{"name": "gpu01"}]}).nodes
    (NodeFact(name='gpu01', chassis_id=''),)
    >>> facts_from_document({"nodes": [{"nam": "gpu01"}]}, "f.yaml")
    Traceback (most recent call last):
    ...
    inventory.errors.FactError: f.yaml: nodes[0]: unknown field 'nam' (fields: name, chassis_id)
    """
    if not isinstance(document, Mapping):
        raise FactError(f"{origin}: a fact document is a mapping, not {type(document).__name__}")
    schema = document.get("schema", SCHEMA)
    version = document.get("version", VERSION)
    if schema != SCHEMA or version != VERSION:
        raise FactError(f"{origin}: schema {schema!r} version {version!r} is not "
                        f"{SCHEMA!r} version {VERSION}")
    sections: dict[str, tuple[Any, ...]] = {}
    for section, entries in document.items():
        if section in ("schema", "version"):
            continue
        cls = FACT_TYPES.get(section)
        if cls is None:
            raise FactError(f"{origin}: unknown section {section!r} "
                            f"(sections: {', '.join(FACT_TYPES)})")
        if not isinstance(entries, list):
            raise FactError(f"{origin}: {section}: expected a list of facts")
        sections[section] = tuple(
            _fact_from_dict(cls, entry, f"{origin}: {section}[{i}]")
            for i, entry in enumerate(entries)
        )
    return FactSet(**sections)


def facts_to_tables(facts: FactSet) -> dict[str, dict[str, list[Any]]]:
    """``facts`` as compact tables: per section, the field names and one row per fact.

    >>> from inventory.facts import NodeFact
    >>> facts_to_tables(FactSet(nodes=(NodeFact("gpu01", "b8:3f:d3:00:00:01"),)))
    {'nodes': {'fields': ['name', 'chassis_id'], 'rows': [['gpu01', 'b8:3f:d3:00:00:01']]}}
    """
    return dict(fact_tables(facts))


def fact_tables(facts: FactSet) -> Iterator[tuple[str, dict[str, list[Any]]]]:
    """The (section, table) items of :func:`facts_to_tables`, each made when asked (a
    writer holds one section's rows at a time)."""
    for section, cls in FACT_TYPES.items():
        items = getattr(facts, section)
        if items:
            names = list(_defaults(cls))
            yield section, {"fields": names, "rows": [
                [v.value if isinstance(v, StrEnum) else v for v in map(fact.__getattribute__,
                                                                           names)]
                for fact in items
            ]}


def facts_from_tables(tables: Mapping[str, Any], origin: str = "<tables>",
                      trusted: bool = False) -> FactSet:
    """The FactSet written by :func:`facts_to_tables`, every value type-checked unless the
    tables are ``trusted`` (fabcorr wrote them, in a packed snapshot): then only their
    shape is."""
    check_tables(tables, origin)
    sections = {}
    for section, table in tables.items():
        cls = FACT_TYPES[section]
        accepted, enums = _columns(cls)
        if trusted:
            sections[section] = tuple(cls(*_enums(row, enums)) for row in table["rows"])
            continue
        facts = []
        for i, row in enumerate(table["rows"]):
            if not isinstance(row, list) or len(row) != len(accepted):
                raise FactError(f"{origin}: {section}[{i}]: expected a row of "
                                f"{len(accepted)} values")
            try:
                if not all(type(v) in ok for v, ok in zip(row, accepted, strict=True)):
                    raise ValueError
                if enums:
                    row = row.copy()
                    for index, enum in enums:
                        row[index] = enum(row[index])
            except ValueError:
                hints = _hints(cls)
                row = [_coerce(v, hints[n], f"{origin}: {section}[{i}].{n}")
                       for v, n in zip(row, hints, strict=True)]
            facts.append(cls(*row))
        sections[section] = tuple(facts)
    return FactSet(**sections)


def _enums(row: list[Any], enums: list[tuple[int, type[StrEnum]]]) -> list[Any]:
    """``row`` with its enum columns made enums, in place."""
    for index, enum in enums:
        row[index] = enum(row[index])
    return row


def check_tables(tables: Any, origin: str = "<tables>") -> None:
    """Raise FactError unless ``tables`` has the shape :func:`facts_to_tables` writes."""
    if not isinstance(tables, Mapping):
        raise FactError(f"{origin}: fact tables must be a mapping")
    for section, table in tables.items():
        cls = FACT_TYPES.get(section)
        if cls is None:
            raise FactError(f"{origin}: unknown section {section!r}")
        if not isinstance(table, Mapping) or table.get("fields") != list(_defaults(cls)):
            raise FactError(f"{origin}: {section}: fields must be {list(_defaults(cls))}")
        if not isinstance(table.get("rows"), list):
            raise FactError(f"{origin}: {section}: rows must be a list")


def read_facts(paths: Iterable[str | Path]) -> FactSet:
    """Read and merge fact files; a directory contributes its ``*.json``/``*.yaml`` files."""
    facts = FactSet()
    for path in _expand(paths):
        facts = facts.merge(facts_from_document(load_data(path, FactError, 'facts'),
                                                str(path)))
    return facts


def write_facts(facts: FactSet, path: str | Path) -> None:
    """Write ``facts`` as one fact document, YAML or JSON by the file's suffix."""
    replace_file(path, facts_text(facts, as_json=Path(path).suffix == ".json"))


def facts_text(facts: FactSet, as_json: bool = False) -> str:
    """``facts`` as one fact document: YAML, or with ``as_json`` JSON."""
    document = facts_to_document(facts)
    return (json.dumps(document, indent=1) + "\n" if as_json
            else yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=120))


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    for path in map(Path, paths):
        if path.is_dir() and not expand([path], FactError):
            raise FactError(f"{path}: no fact files (*.json, *.yaml) in this directory")
    return expand(paths, FactError)


def _fact_to_dict(fact: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    return {
        name: value.value if isinstance(value, StrEnum) else value
        for name in defaults
        if (value := getattr(fact, name)) != defaults[name]
    }


def _fact_from_dict(cls: type, entry: Any, where: str) -> Any:
    if not isinstance(entry, Mapping):
        raise FactError(f"{where}: expected a mapping of fields")
    hints = _hints(cls)
    values = {}
    for name, value in entry.items():
        allowed = hints.get(name)
        if allowed is None:
            raise FactError(f"{where}: unknown field {name!r} (fields: {', '.join(hints)})")
        values[name] = _coerce(value, allowed, f"{where}.{name}")
        check = _CHECKS.get(name)
        if check is not None and value not in (None, ""):
            try:
                check(value)
            except ValueError as exc:
                raise FactError(f"{where}.{name}: {exc}") from None
    missing = [name for name in _required(cls) if name not in values]
    if missing:
        raise FactError(f"{where}: missing field(s) {', '.join(missing)}")
    return cls(**values)


def _ip_interface(version: int) -> Callable[[str], None]:
    def check(text: str) -> None:
        try:
            found = ipaddress.ip_interface(text)
        except ValueError:
            raise ValueError(f"{text!r} is not an IPv{version} address/prefix") from None
        if found.version != version:
            raise ValueError(f"{text!r} is not an IPv{version} address/prefix")
    return check


def _at_least(low: int, high: int | None = None) -> Callable[[int], None]:
    def check(value: int) -> None:
        if value < low or (high is not None and value > high):
            bounds = f"between {low} and {high}" if high is not None else f">= {low}"
            raise ValueError(f"must be {bounds}, not {value}")
    return check


_CHECKS: dict[str, Callable[[Any], None]] = {
    "ipv4": _ip_interface(4), "ipv6": _ip_interface(6), "speed_bps": _at_least(0),
    "ifindex": _at_least(0), "vf_index": _at_least(0), "vlan": _at_least(0, 4095),
}
"""Value checks by field name, over the type checks: what a document may not claim."""


def _coerce(value: Any, allowed: tuple[type, ...], where: str) -> Any:
    for kind in allowed:
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if issubclass(kind, StrEnum) and isinstance(value, str):
            try:
                return kind(value)
            except ValueError:
                choices = ", ".join(member.value for member in kind)
                raise FactError(f"{where}: {value!r} is not one of {choices}") from None
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return value
    names = " or ".join("null" if k is NoneType else k.__name__ for k in allowed)
    raise FactError(f"{where}: expected {names}, got {type(value).__name__} {value!r}")


@cache
def _hints(cls: type) -> dict[str, tuple[type, ...]]:
    hints = typing.get_type_hints(cls)
    return {
        f.name: typing.get_args(hints[f.name])
        if isinstance(hints[f.name], UnionType)
        else (hints[f.name],)
        for f in dataclasses.fields(cls)
    }


@cache
def _columns(cls: type) -> tuple[list[frozenset[type]], list[tuple[int, type[StrEnum]]]]:
    """Per field, the value types a row may hold as is; and the enum fields, by position."""
    accepted, enums = [], []
    for index, allowed in enumerate(_hints(cls).values()):
        enum = next((k for k in allowed if issubclass(k, StrEnum)), None)
        if enum is not None:
            enums.append((index, enum))
        accepted.append(frozenset({str}) if enum is not None else frozenset(allowed))
    return accepted, enums


@cache
def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls)}


@cache
def _required(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING)
