"""The device inventory: the commented example loads, and bad input names file, key, reason."""

from pathlib import Path

import pytest

from inventory.devices import Secret, devices_from, load_devices
from inventory.errors import ConfigError

EXAMPLE = Path(__file__).parents[2] / "examples" / "fabcorr.yaml"
ENV = {"FABCORR_SNMP_COMMUNITY": "c0mmunity", "FABCORR_NETCONF_PASSWORD": "n",
       "FABCORR_SNMPV3_AUTH": "authkey1", "FABCORR_SNMPV3_PRIV": "privkey1"}


def example_config(folder: Path, example: Path = EXAMPLE) -> Path:
    """``example`` in ``folder``, its secret and CA files made there."""
    text = example.read_text()
    for name, content in (("/run/secrets/gnmi-password", "s3cret\n"),
                          ("/etc/fabcorr/ca.pem", "CA\n"),
                          ("/etc/fabcorr/tls/ca.pem", "CA\n")):
        local = folder / Path(name).name
        local.write_text(content)
        text = text.replace(name, str(local))
    path = folder / example.name
    path.write_text(text)
    return path


def test_example_config_loads(tmp_path):
    leaf01, leaf02, spine01 = load_devices(example_config(tmp_path), ENV)
    assert (leaf01.protocols, leaf01.vendor, leaf01.role) == (("gnmi", "snmp"), "eos", "leaf")
    assert leaf01.gnmi.password.value == "s3cret" and leaf01.gnmi.port == 6030
    assert leaf01.snmp.community.value == "c0mmunity"
    assert (leaf02.snmp.version, leaf02.snmp.user, leaf02.snmp.auth_key.value) == (
        "3", "fabcorr", "authkey1")
    assert leaf02.snmp.community.value == "c0mmunity"  # defaults still apply
    assert spine01.protocols == ("netconf",)
    assert "s3cret" not in repr(leaf01) and "c0mmunity" not in repr(leaf01)


@pytest.mark.parametrize(("document", "message"), [
    ({}, "switches: required"),
    ({"switches": []}, "switches: Tuple should have at least 1 item after validation, not 0"),
    ({"switches": [{"name": "a"}]}, "switches[0].address: required"),
    ({"switches": [{"name": "a", "address": "x", "protocols": ["ssh"]}]},
     "switches[0].protocols[0]: 'ssh' is not one of gnmi, snmp, netconf"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"community": "public"}}]},
     "switches[0].snmp.community: secrets are never inline: use {env: NAME} or {file: PATH}"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"community": {"env": "NOPE"}}}]},
     "switches[0].snmp.community: environment variable NOPE is not set"),
    ({"switches": [{"name": "a", "address": "x", "gnmi": {"port": 70000}}]},
     "switches[0].gnmi.port: Input should be less than or equal to 65535"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"version": "1"}}]},
     "switches[0].snmp.version: Input should be '2c' or '3'"),
    ({"switches": [{"name": "a", "address": "10.0.0.999"}]},
     "switches[0].address: '10.0.0.999' is not an IP address or host name"),
    ({"switches": [{"name": "a", "address": "x"}, {"name": "a", "address": "y"}]},
     "switches[1].name: duplicate switch 'a'"),
    ({"defaults": {"snmp": {"comunity": {"env": "X"}}}, "switches": [{"name": "a",
                                                                     "address": "x"}]},
     "defaults.snmp.comunity: unknown key"),
])
def test_bad_configs_name_file_key_and_reason(document, message):
    with pytest.raises(ConfigError) as caught:
        devices_from(document, "f.yaml", {})
    assert str(caught.value) == f"f.yaml: {message}"


@pytest.mark.parametrize("version", [2, "2", "2c"])
def test_snmp_version_2_is_2c_quoted_or_not(version):
    switch, = devices_from({"switches": [{"name": "a", "address": "x",
                                          "snmp": {"version": version}}]}, "f.yaml", {})
    assert switch.snmp.version == "2c"


def test_a_short_snmpv3_key_is_refused_without_showing_it():
    with pytest.raises(ConfigError) as caught:
        devices_from({"switches": [{"name": "a", "address": "x", "snmp": {
            "version": 3, "user": "u", "priv_key": {"env": "K"}}}]}, "f.yaml", {"K": "hunter2"})
    assert str(caught.value) == ("f.yaml: switches[0].snmp.priv_key: SNMPv3 keys have at "
                                 "least 8 characters (from env K)")


def test_secret_from_a_missing_file():
    with pytest.raises(ConfigError, match="cannot read /nonexistent"):
        devices_from({"switches": [{"name": "a", "address": "x",
                                    "gnmi": {"password": {"file": "/nonexistent"}}}]},
                     "f.yaml", {})
    assert repr(Secret("x", "env X")) == "Secret(***, from env X)"
