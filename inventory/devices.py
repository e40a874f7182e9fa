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
``***``; errors never show values). SNMPv3 keys have at least 8 characters; ``version``
is ``2c`` (``2`` too, quoted or not) or ``3``. The models are pydantic dataclasses: what a
file may say is their JSON Schema (``fabcorr config schema``). Every error names the
file, the key and the reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    ValidationInfo,
    model_validator,
)
from pydantic.dataclasses import dataclass as checked_dataclass
from pydantic_core import core_schema

from inventory.files import load_config
from inventory.schema import (
    STRICT,
    ExistingFile,
    Host,
    LocatedError,
    Port,
    Seconds,
    check_host,
    validate_document,
)

PROTOCOLS = ("gnmi", "snmp", "netconf")
Vendor = Literal["openconfig", "sonic", "eos", "cumulus"]
Role = Literal["", "leaf", "spine", "super-spine"]
VENDORS, ROLES = get_args(Vendor), get_args(Role)
_OPTIONS = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Secret:
    """A credential read from the environment or a file; its value never shows in repr.

    In a configuration it is ``{env: NAME}`` or ``{file: PATH}``, resolved against the
    validation context's ``environ``.
    """

    value: str = field(repr=False)
    source: str = ""

    def __repr__(self) -> str:
        return f"Secret(***{', from ' + self.source if self.source else ''})"

    def __bool__(self) -> bool:
        return bool(self.value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler
                                     ) -> core_schema.CoreSchema:
        reference = {name: core_schema.typed_dict_schema(
            {name: core_schema.typed_dict_field(core_schema.str_schema())})
            for name in ("env", "file")}
        return core_schema.with_info_plain_validator_function(
            _read_secret, json_schema_input_schema=core_schema.union_schema(
                list(reference.values())))


def _read_secret(value: Any, info: ValidationInfo) -> Secret:
    if isinstance(value, Secret):
        return value
    if value == "":  # left empty: none
        return NO_SECRET
    if isinstance(value, str):
        raise ValueError("secrets are never inline: use {env: NAME} or {file: PATH}")
    if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str):
        environ = (info.context or {}).get("environ", {})
        if value["env"] not in environ:
            raise ValueError(f"environment variable {value['env']} is not set")
        return Secret(environ[value["env"]], f"env {value['env']}")
    if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
        try:
            return Secret(Path(value["file"]).read_text(encoding="utf-8").strip(),
                          f"file {value['file']}")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {value['file']}: "
                             f"{getattr(exc, 'strerror', None) or 'not UTF-8'}") from exc
    raise ValueError("a secret is {env: NAME} or {file: PATH}")


NO_SECRET = Secret("")


def _usm_key(secret: Secret) -> Secret:
    if secret and len(secret.value) < 8:  # RFC 3414: pysnmp fails later, key in hand
        raise ValueError(f"SNMPv3 keys have at least 8 characters (from {secret.source})")
    return secret


def _snmp_version(value: Any) -> Any:
    return {2: "2c", "2": "2c", 3: "3"}.get(value, value)


def _optional_host(text: str) -> str:
    return check_host(text) if text else text


@checked_dataclass(frozen=True, config=_OPTIONS)
class GnmiOptions:
    """gNMI: TLS verified against ``ca_file`` (or the system CAs) unless ``insecure``."""

    port: Port = 6030
    username: str = ""
    password: Secret = NO_SECRET
    insecure: bool = False
    ca_file: ExistingFile = ""
    server_name: str = ""
    timeout_s: Seconds = 10.0


@checked_dataclass(frozen=True, config=_OPTIONS)
class SnmpOptions:
    """SNMP v2c (community) or v3 (user, auth and privacy protocols and keys)."""

    port: Port = 161
    version: Annotated[Literal["2c", "3"], BeforeValidator(_snmp_version)] = "2c"
    community: Secret = NO_SECRET
    user: str = ""
    auth_protocol: Literal["md5", "sha", "sha256"] = "sha"
    auth_key: Annotated[Secret, AfterValidator(_usm_key)] = NO_SECRET
    priv_protocol: Literal["des", "aes", "aes256"] = "aes"
    priv_key: Annotated[Secret, AfterValidator(_usm_key)] = NO_SECRET
    timeout_s: Seconds = 2.0
    retries: Annotated[int, Field(ge=0, le=10)] = 1


@checked_dataclass(frozen=True, config=_OPTIONS)
class NetconfOptions:
    """NETCONF over SSH."""

    port: Port = 830
    username: str = ""
    password: Secret = NO_SECRET
    timeout_s: Seconds = 30.0
    hostkey_verify: bool = True


@checked_dataclass(frozen=True, config=_OPTIONS)
class SwitchConfig:
    """One switch: where it is, which protocols to use, its vendor profile and options."""

    name: Annotated[str, Field(min_length=1)]
    address: Host
    protocols: Annotated[tuple[str, ...], Field(min_length=1)] = ("snmp",)  # PROTOCOLS in files
    vendor: Vendor = "openconfig"
    role: Role = ""
    sflow_agent: Annotated[str, AfterValidator(_optional_host)] = ""
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


Name = Annotated[str, Field(min_length=1)]


class CrawlSection(BaseModel):
    """The ``crawl`` section as written: switches are named, not yet resolved."""

    model_config = STRICT
    template: Name
    seeds: tuple[Name, ...] = ()
    max_switches: Annotated[int, Field(ge=1, le=4096)] = 64
    names: tuple[Name, ...] = ("*",)


class Defaults(BaseModel):
    """Options merged under every switch's own (key by key)."""

    model_config = STRICT
    gnmi: GnmiOptions = GnmiOptions()
    snmp: SnmpOptions = SnmpOptions()
    netconf: NetconfOptions = NetconfOptions()


class DeviceSections(BaseModel):
    """The device inventory's sections of a file; other sections are left to others."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    defaults: Defaults = Defaults()
    switches: Annotated[tuple[SwitchConfig, ...], Field(min_length=1)]
    crawl: CrawlSection | None = None

    @model_validator(mode="before")
    @classmethod
    def _merge_defaults(cls, document: Any) -> Any:
        """Each switch's options over the defaults' (both as written)."""
        if not isinstance(document, dict):
            raise ValueError("expected a mapping of sections")
        defaults, switches = document.get("defaults"), document.get("switches")
        if not isinstance(defaults, dict) or not isinstance(switches, list):
            return document
        merged = []
        for entry in switches:
            if isinstance(entry, dict):
                entry = dict(entry)
                for name in ("gnmi", "snmp", "netconf"):
                    base, own = defaults.get(name), entry.get(name, {})
                    if isinstance(base, dict) and isinstance(own, dict):
                        entry[name] = {**base, **own}
            merged.append(entry)
        return {**document, "switches": merged}

    @model_validator(mode="after")
    def _known_protocols_and_names(self) -> DeviceSections:
        for i, switch in enumerate(self.switches):
            for j, protocol in enumerate(switch.protocols):
                if protocol not in PROTOCOLS:
                    raise LocatedError(f"{protocol!r} is not one of {', '.join(PROTOCOLS)}",
                                       ("switches", i, "protocols", j))
        names = [s.name for s in self.switches]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise LocatedError(f"duplicate switch {name!r}", ("switches", i, "name"))
        if self.crawl is not None:
            if self.crawl.template not in names:
                raise LocatedError(f"{self.crawl.template!r} is not a listed switch",
                                   ("crawl", "template"))
            for i, seed in enumerate(self.crawl.seeds):
                if seed not in names:
                    raise LocatedError(f"{seed!r} is not a listed switch",
                                       ("crawl", "seeds", i))
        return self

    def crawl_config(self) -> CrawlConfig | None:
        """The crawl section with its template resolved; None without one."""
        if self.crawl is None:
            return None
        template = next(s for s in self.switches if s.name == self.crawl.template)
        return CrawlConfig(template, self.crawl.seeds, self.crawl.max_switches,
                           self.crawl.names or ("*",))


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
    inventory.errors.ConfigError: f.yaml: switches[0].vendor: Input should be 'openconfig', ...
    """
    return read_devices(document, origin, environ).switches


def read_devices(document: Any, origin: str, environ: Mapping[str, str]) -> DeviceSections:
    """The device sections of parsed YAML: the switches and the crawl.

    >>> read_devices({"switches": [{"name": "leaf01", "address": "10.0.0.11"}],
    ...               "crawl": {"template": "leaf01", "max_switches": 8}}, "f.yaml",
    ...              {}).crawl_config().max_switches
    8
    """
    return validate_document(DeviceSections, document, origin, environ)
