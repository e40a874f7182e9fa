"""The device inventory: the commented example loads, and bad input names file, key, reason."""

from pathlib import Path

import pytest

from inventory.devices import Secret, devices_from, load_devices
from inventory.errors import ConfigError

EXAMPLE = Path(__file__).parents[2] / "examples" / "fabcorr.yaml"
ENV = {"FABCORR_SNMP_COMMUNITY": "c0mmunity", "FABCORR_NETCONF_PASSWORD": "n",
       "FABCORR_SNMPV3_AUTH": "authkey1", "FABCORR_SNMPV3_PRIV": "privkey1"}


def test_example_config_loads(tmp_path, monkeypatch):
    secret = tmp_path / "gnmi-password"
    secret.write_text("s3cret\n")
    text = EXAMPLE.read_text().replace("/run/secrets/gnmi-password", str(secret))
    (tmp_path / "fabcorr.yaml").write_text(text)
    leaf01, leaf02, spine01 = load_devices(tmp_path / "fabcorr.yaml", ENV)
    assert (leaf01.protocols, leaf01.vendor, leaf01.role) == (("gnmi", "snmp"), "eos", "leaf")
    assert leaf01.gnmi.password.value == "s3cret" and leaf01.gnmi.port == 6030
    assert leaf01.snmp.community.value == "c0mmunity"
    assert (leaf02.snmp.version, leaf02.snmp.user, leaf02.snmp.auth_key.value) == (
        "3", "fabcorr", "authkey1")
    assert leaf02.snmp.community.value == "c0mmunity"  # defaults still apply
    assert spine01.protocols == ("netconf",)
    assert "s3cret" not in repr(leaf01) and "c0mmunity" not in repr(leaf01)


@pytest.mark.parametrize(("document", "message"), [
    ({}, "f.yaml: switches: expected a non-empty list of switches"),
    ({"switches": [{"name": "a"}]}, r"f.yaml: switches\[0\].address: required"),
    ({"switches": [{"name": "a", "address": "x", "protocols": ["ssh"]}]},
     r"switches\[0\].protocols: expected a non-empty list of gnmi, snmp, netconf"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"community": "public"}}]},
     r"switches\[0\].snmp.community: secrets are never inline"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"community": {"env": "NOPE"}}}]},
     r"switches\[0\].snmp.community: environment variable NOPE is not set"),
    ({"switches": [{"name": "a", "address": "x", "gnmi": {"port": "6030"}}]},
     r"switches\[0\].gnmi.port: expected int, got '6030'"),
    ({"switches": [{"name": "a", "address": "x", "snmp": {"version": "1"}}]},
     r"switches\[0\].snmp.version: SNMP version must be '2c' or '3'"),
    ({"switches": [{"name": "a", "address": "x"}, {"name": "a", "address": "y"}]},
     r"switches\[1\].name: duplicate switch 'a'"),
    ({"defaults": {"snmp": {"comunity": {"env": "X"}}}, "switches": [{"name": "a",
                                                                     "address": "x"}]},
     r"defaults.snmp.comunity: unknown key"),
])
def test_bad_configs_name_file_key_and_reason(document, message):
    with pytest.raises(ConfigError, match=message):
        devices_from(document, "f.yaml", {})


def test_secret_from_a_missing_file():
    with pytest.raises(ConfigError, match="cannot read /nonexistent"):
        devices_from({"switches": [{"name": "a", "address": "x",
                                    "gnmi": {"password": {"file": "/nonexistent"}}}]},
                     "f.yaml", {})
    assert repr(Secret("x", "env X")) == "Secret(***, from env X)"
