"""The device inventory: which switches to talk to, how, and with which credentials.

A YAML file (the ``switches:`` section of fabcorr.yaml, or a file of its own)::

    defaults:
      snmp: {version: "2c", community: {env: FABCORR_SNMP_COMMUNITY}}
      gnmi: {port: 6030, insecure: false, ca_file: /etc/fabcorr/ca.pem}
    switches:
      - name: leaf01
        address: 10.0.0.11
        protocols: [gnmi, snmp]
        vendor: eos                # openconfig | sonic | eos | cumulus
        role: leaf                 # optional hint; inferred from cabling otherwise
        gnmi: {username: fabcorr, password: {file: /run/secrets/gnmi}}

An optional ``crawl:`` section (:class:`CrawlConfig`) also discovers switches that are
not listed but that the listed ones see as LLDP neighbours with a management address::

    crawl:
      template: leaf01             # new switches are reached like this listed one
      seeds: [leaf01]              # whose neighbours to start from (default: all listed)
      max_switches: 64             # at most this many new switches
      names: ["leaf*", "spine*"]   # LLDP system names to follow (default: any)

Secrets (passwords, communities, SNMPv3 keys) are never inline: ``{env: NAME}`` or
``{file: PATH}``. They are read when the file is loaded and never printed (``repr`` shows
``***``). Every error names the file, the key and the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from inventory.errors import ConfigError
from inventory.files import load_config

PROTOCOLS = ("gnmi", "snmp", "netconf")
VENDORS = ("openconfig", "sonic", "eos", "cumulus")
ROLES = ("", "leaf", "spine", "super-spine")


@dataclass(frozen=True)
class Secret:
    """A credential read from the environment or a file; its value never shows in repr."""

    value: str = field(repr=False)
    source: str = ""

    def __repr__(self) -> str:
        return f"Secret(***{', from ' + self.source if self.source else ''})"

    def __bool__(self) -> bool:
        return bool(self.value)


NO_SECRET = Secret("")


@dataclass(frozen=True)
class GnmiOptions:
    """gNMI: TLS verified against ``ca_file`` (or the system CAs) unless ``insecure``."""

    port: int = 6030
    username: str = ""
    password: Secret = NO_SECRET
    insecure: bool = False
    ca_file: str = ""
    server_name: str = ""
    timeout_s: float = 10.0


@dataclass(frozen=True)
class SnmpOptions:
    """SNMP v2c (community) or v3 (user, auth and privacy protocols and keys)."""

    port: int = 161
    version: str = "2c"
    community: Secret = NO_SECRET
    user: str = ""
    auth_protocol: str = "sha"
    auth_key: Secret = NO_SECRET
    priv_protocol: str = "aes"
    priv_key: Secret = NO_SECRET
    timeout_s: float = 2.0
    retries: int = 1


@dataclass(frozen=True)
class NetconfOptions:
    """NETCONF over SSH."""

    port: int = 830
    username: str = ""
    password: Secret = NO_SECRET
    timeout_s: float = 30.0
    hostkey_verify: bool = True


@dataclass(frozen=True)
class SwitchConfig:
    """One switch: where it is, which protocols to use, its vendor profile and options."""

    name: str
    address: str
    protocols: tuple[str, ...] = ("snmp",)
    vendor: str = "openconfig"
    role: str = ""
    sflow_agent: str = ""
    gnmi: GnmiOptions = GnmiOptions()
    snmp: SnmpOptions = SnmpOptions()
    netconf: NetconfOptions = NetconfOptions()


@dataclass(frozen=True)
class CrawlConfig:
    """Discovery beyond the list: LLDP neighbours of the ``seeds`` (all listed switches if
    empty) that announce a management address and whose system name matches one of
    ``names``, then theirs, and so on; at most ``max_switches`` new switches, each reached
    with the protocols, vendor and options (credentials) of ``template``."""

    template: SwitchConfig
    seeds: tuple[str, ...] = ()
    max_switches: int = 64
    names: tuple[str, ...] = ("*",)

    def follows(self, system_name: str) -> bool:
        """Whether a neighbour of this LLDP system name is worth a try.

        >>> CrawlConfig(SwitchConfig("t", "x"), names=("spine*",)).follows("spine01")
        True
        """
        return any(fnmatchcase(system_name, pattern) for pattern in self.names)

    def switch(self, name: str, address: str) -> SwitchConfig:
        """A switch found over LLDP, reached like the template."""
        return replace(self.template, name=name, address=address, role="", sflow_agent="")


_OPTION_TYPES = {"gnmi": GnmiOptions, "snmp": SnmpOptions, "netconf": NetconfOptions}
_CRAWL_KEYS = ("template", "seeds", "max_switches", "names")


def load_devices(path: str | Path, environ: Mapping[str, str] | None = None
                 ) -> tuple[SwitchConfig, ...]:
    """Read the switches of a device inventory (or fabcorr.yaml) file."""
    return devices_from(load_config(path), str(path),
                        os.environ if environ is None else environ)


def devices_from(document: Any, origin: str, environ: Mapping[str, str]
                 ) -> tuple[SwitchConfig, ...]:
    """Switches from parsed YAML; ``environ`` resolves ``{env: NAME}`` secrets.

    >>> devices_from({"switches": [{"name": "leaf01", "address": "10.0.0.11",
    ...     "snmp": {"community": {"env": "C"}}}]}, "f.yaml", {"C": "public"})[0].snmp.community
    Secret(***, from env C)
    >>> devices_from({"switches": [{"name": "leaf01", "address": "10.0.0.11",
    ...     "vendor": "junos"}]}, "f.yaml", {})
    Traceback (most recent call last):
    ...
    inventory.errors.ConfigError: f.yaml: switches[0].vendor: 'junos' is not one of openconfig, ...
    """
    if not isinstance(document, dict):
        raise ConfigError(origin, "", "expected a mapping with a 'switches' list")
    reader = _Reader(origin, environ)
    defaults = reader.mapping(document.get("defaults", {}), "defaults")
    default_options = {
        name: reader.options(cls, defaults.get(name, {}), f"defaults.{name}", cls())
        for name, cls in _OPTION_TYPES.items()}
    switches = document.get("switches")
    if not isinstance(switches, list) or not switches:
        raise ConfigError(origin, "switches", "expected a non-empty list of switches")
    found = [reader.switch(entry, f"switches[{i}]", default_options)
             for i, entry in enumerate(switches)]
    names = [s.name for s in found]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ConfigError(origin, f"switches[{i}].name", f"duplicate switch {name!r}")
    return tuple(found)


def crawl_from(document: Any, origin: str, switches: tuple[SwitchConfig, ...]
               ) -> CrawlConfig | None:
    """The ``crawl`` section of parsed YAML, its template and seeds among ``switches``;
    None without one.

    >>> crawl_from({"crawl": {"template": "leaf01", "max_switches": 8}}, "f.yaml",
    ...            (SwitchConfig("leaf01", "10.0.0.11"),)).max_switches
    8
    """
    section = document.get("crawl") if isinstance(document, dict) else None
    if section is None:
        return None
    reader = _Reader(origin, {})
    section = reader.mapping(section, "crawl")
    for key in section:
        if key not in _CRAWL_KEYS:
            raise reader.fail(f"crawl.{key}", f"unknown key (keys: {', '.join(_CRAWL_KEYS)})")
    by_name = {s.name: s for s in switches}
    template = section.get("template")
    if not isinstance(template, str) or template not in by_name:
        raise reader.fail("crawl.template", "required, the name of a listed switch")
    seeds = reader.names(section.get("seeds", []), "crawl.seeds")
    for i, seed in enumerate(seeds):
        if seed not in by_name:
            raise reader.fail(f"crawl.seeds[{i}]", f"{seed!r} is not a listed switch")
    bound = section.get("max_switches", CrawlConfig.max_switches)
    if type(bound) is not int or bound < 1:
        raise reader.fail("crawl.max_switches", f"expected a positive int, got {bound!r}")
    names = reader.names(section.get("names", ["*"]), "crawl.names")
    return CrawlConfig(by_name[template], seeds, bound, names or ("*",))


class _Reader:
    def __init__(self, origin: str, environ: Mapping[str, str]) -> None:
        self.origin, self.environ = origin, environ

    def fail(self, key: str, reason: str) -> ConfigError:
        return ConfigError(self.origin, key, reason)

    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, "expected a mapping")
        return value

    def switch(self, entry: Any, key: str, defaults: dict[str, Any]) -> SwitchConfig:
        entry = self.mapping(entry, key)
        for required in ("name", "address"):
            if not isinstance(entry.get(required), str) or not entry[required]:
                raise self.fail(f"{key}.{required}", "required, a non-empty string")
        known = {f.name for f in fields(SwitchConfig)}
        for name in entry:
            if name not in known:
                raise self.fail(f"{key}.{name}", f"unknown key (keys: {', '.join(known)})")
        protocols = entry.get("protocols", ["snmp"])
        if not isinstance(protocols, list) or not protocols or \
                any(p not in PROTOCOLS for p in protocols):
            raise self.fail(f"{key}.protocols",
                            f"expected a non-empty list of {', '.join(PROTOCOLS)}")
        for name, choices in (("vendor", VENDORS), ("role", ROLES)):
            if name in entry and entry[name] not in choices:
                raise self.fail(f"{key}.{name}", f"{entry[name]!r} is not one of "
                                f"{', '.join(c for c in choices if c)}")
        options = {name: self.options(cls, entry.get(name, {}), f"{key}.{name}",
                                      defaults[name])
                   for name, cls in _OPTION_TYPES.items()}
        return SwitchConfig(
            name=entry["name"], address=entry["address"], protocols=tuple(protocols),
            vendor=entry.get("vendor", "openconfig"), role=entry.get("role", ""),
            sflow_agent=str(entry.get("sflow_agent", "")), **options)

    def options(self, cls: type, entry: Any, key: str, base: Any) -> Any:
        entry = self.mapping(entry, key)
        types = {f.name: type(getattr(base, f.name)) for f in fields(cls)}
        values = {}
        for name, value in entry.items():
            if name not in types:
                raise self.fail(f"{key}.{name}", f"unknown key (keys: {', '.join(types)})")
            expected = types[name]
            if expected is Secret:
                values[name] = self.secret(value, f"{key}.{name}")
            elif expected is float and isinstance(value, int) and not isinstance(value, bool):
                values[name] = float(value)
            elif not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise self.fail(f"{key}.{name}", f"expected {expected.__name__}, got {value!r}")
            else:
                values[name] = value
        result = replace(base, **values)
        if isinstance(result, SnmpOptions) and result.version not in ("2c", "3"):
            raise self.fail(f"{key}.version", "SNMP version must be '2c' or '3'")
        return result

    def names(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, "expected a list of non-empty strings")
        return tuple(value)

    def secret(self, value: Any, key: str) -> Secret:
        if isinstance(value, str):
            raise self.fail(key, "secrets are never inline: use {env: NAME} or {file: PATH}")
        value = self.mapping(value, key)
        if set(value) == {"env"}:
            name = value["env"]
            if name not in self.environ:
                raise self.fail(key, f"environment variable {name} is not set")
            return Secret(self.environ[name], f"env {name}")
        if set(value) == {"file"}:
            try:
                return Secret(Path(value["file"]).read_text(encoding="utf-8").strip(),
                              f"file {value['file']}")
            except OSError as exc:
                raise self.fail(key, f"cannot read {value['file']}: {exc.strerror}") from exc
        raise self.fail(key, "a secret is {env: NAME} or {file: PATH}")
