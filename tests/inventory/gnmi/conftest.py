"""Shared fixtures: the generated two-leaf fabric and a test CA for TLS targets."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from inventory.facts import FactSet
from simulator.generator import FabricSpec, generate_facts

SERVER_NAME = "leaf01.fabric.test"


@dataclass(frozen=True)
class Pki:
    """PEM bytes of a server certificate and key, and the CA file that signs it."""

    cert_pem: bytes
    key_pem: bytes
    ca_file: str


@pytest.fixture(scope="session")
def fabric() -> FactSet:
    """2 nodes x 2 rails: leaf01, leaf02, spine01, spine02."""
    return generate_facts(FabricSpec(nodes=2, rails=2, vfs_per_pf=2, spines=2))


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A test CA and a server certificate it signs for 127.0.0.1, 127.1.0.1 and leaf01."""
    ca_key, ca_name = ec.generate_private_key(ec.SECP256R1()), _name("fabcorr test CA")
    ca = _cert(ca_name, ca_name, ca_key.public_key(), ca_key, ca=True)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _cert(_name(SERVER_NAME), ca_name, key.public_key(), ca_key)
    ca_file = tmp_path_factory.mktemp("pki") / "ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return Pki(cert.public_bytes(serialization.Encoding.PEM), _pem(key), str(ca_file))


@pytest.fixture(scope="session")
def untrusted(pki: Pki) -> Pki:
    """A self-signed certificate with the same names, which the test CA did not sign."""
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _cert(_name(SERVER_NAME), _name(SERVER_NAME), key.public_key(), key)
    return Pki(cert.public_bytes(serialization.Encoding.PEM), _pem(key), pki.ca_file)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _cert(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
          signer: ec.EllipticCurvePrivateKey, ca: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([
            x509.DNSName(SERVER_NAME), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("127.1.0.1"))]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
