"""The read commands ask a service (``--server URL``) or files (``--snapshot``, ``--pcap``)
and print the same thing either way; basic auth, TLS and unreachable servers."""

import json
import re

import pytest

from correlator.cli.main import main
from correlator.service.exporter import Exposition
from correlator.service.http import HttpServer
from tests.correlator.service.certs import self_signed
from tests.correlator.service.example_view import SNAPSHOT, make_capture, replayed

TRAFFIC = [
    ["hotspots"],
    ["who", "spine01:Ethernet1"],
    ["who", "leaf01:Ethernet5"],
    ["who", "leaf01:Ethernet1"],
    ["top", "tenants"],
    ["top", "jobs", "--limit", "1"],
    ["top", "pods", "--link", "spine01:Ethernet1"],
    ["who", "spine01:Ethernet9"],  # not found: exit 1, same message
    ["top", "pods", "--limit", "0"],  # refused: exit 2, same message
]
TOPOLOGY = [
    ["topology", "where", "team-b/bert-large-worker-3"],
    ["topology", "where", "10.101.0.2", "--at", "2026-01-01T01:00:00Z"],
    ["topology", "path", "team-a/llm-pretrain-worker-0", "team-a/llm-pretrain-worker-1"],
    ["topology", "link", "spine01:Ethernet1"],
    ["topology", "job", "team-b/bert-large"],
    ["topology", "tenant", "team-a"],
    ["topology", "summary"],
    ["topology", "problems"],
    ["topology", "job", "team-a/llm"],  # not found
]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The example capture, and a server of the view its replay gives."""
    folder = tmp_path_factory.mktemp("read")
    pcap = make_capture(folder)
    view = replayed(pcap)
    server = HttpServer("127.0.0.1", 0, lambda: view, Exposition(lambda: view))
    server.start()
    yield pcap, f"http://127.0.0.1:{server.port}", view
    server.close()


def answer(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fmt", ["table", "wide", "json"])
@pytest.mark.parametrize("argv", TRAFFIC + TOPOLOGY, ids=" ".join)
def test_server_and_files_answer_the_same(capsys, run, argv, fmt):
    pcap, url, _ = run
    files = ["--snapshot", str(SNAPSHOT)] + (["--pcap", str(pcap)] if argv[0] != "topology"
                                             else [])
    remote = answer(capsys, [*argv, "-o", fmt, "--server", url])
    local = answer(capsys, [*argv, "-o", fmt, *files])
    assert remote == local
    assert remote[0] in (0, 1, 2) and (remote[1] if remote[0] == 0 else remote[2])


def test_who_prints_both_directions(capsys, run):
    _, url, _ = run
    code, out, _ = answer(capsys, ["who", "spine01:Ethernet1", "--server", url])
    assert code == 0
    assert out.splitlines() == [
        "spine01:Ethernet1 (peer leaf01:Ethernet5): interval 2026-01-01T03:00:20+02:00 +10 s",
        "DIR  SAMPLED AT            SAMPLES  BYTES            UTIL  TENANTS (SHARE, 95%)",
        "in   spine01:Ethernet1 in  10,436   438,270,000,000  88%   team-a 85.6% (85.0%-86.3%), "
        "team-b 14.4% (13.7%-15.0%)",
        "out  leaf01:Ethernet5 in   67       46,800,000       0%    team-b 100.0% (94.6%-100.0%)"]


def test_hotspots_and_top_tables(capsys, run):
    _, url, _ = run
    code, out, _ = answer(capsys, ["hotspots", "--server", url])
    lines = out.splitlines()
    assert code == 0 and lines[0] == "Hotspots: 1 active, 0 ended"
    assert re.split(r"\s{2,}", lines[2]) == [
        "leaf01:Ethernet5", "out", "utilization", "warning", "2026-01-01T03:00:10+02:00",
        "active", "team-a 86.0% (85.3%-86.7%)", "team-b 14.0% (13.3%-14.7%)",
        "team-b/bert-large 100.0% (92.6%-100.0%)",
        "team-a sends 86% (85%-87%) of a link that team-b also use"]
    code, out, _ = answer(capsys, ["hotspots", "-o", "wide", "--server", url])
    assert re.split(r"\s{2,}", out.splitlines()[2])[10:] == [
        "team-a/llm-pretrain 86.0% (85.3%-86.7%)", "team-b/bert-large 14.0% (13.3%-14.7%)",
        "spine01:Ethernet1", "utilization 88%, discards 0/s"]
    code, out, _ = answer(capsys, ["top", "tenants", "--server", url])
    assert out.splitlines() == ["Fabric-wide, per tier: interval 2026-01-01T03:00:20+02:00 +10 s",
                                "TIER        TENANT  RATE",
                                "leaf-spine  team-a  300 Gb/s",
                                "leaf-spine  team-b  50.4 Gb/s"]
    code, out, _ = answer(capsys, ["top", "tenants", "-o", "wide", "--server", url])
    assert out.splitlines()[1:] == ["TIER        TENANT  RATE       BYTES",
                                    "leaf-spine  team-a  300 Gb/s   375,360,028,747",
                                    "leaf-spine  team-b  50.4 Gb/s  62,956,771,253"]
    code, out, _ = answer(capsys, ["top", "pods", "--link", "spine01:Ethernet1", "-o", "wide",
                                   "--server", url])
    assert out.splitlines()[1:3] == [
        "DIR  POD                           SHARE (95%)            RATE       SAMPLES  BYTES"
        "            BYTES (95%)",
        "in   team-a/llm-pretrain-worker-0  66.8% (65.9%-67.7%)    234 Gb/s   6,971    "
        "292,753,944,998  288,738,683,877-296,743,547,710"]


def test_not_found_and_refused_exit_codes(capsys, run):
    _, url, _ = run
    assert answer(capsys, ["who", "spine01:Ethernet9", "--server", url])[::2] == (
        1, "fabcorr: no port named 'spine01:Ethernet9'; did you mean 'spine01:Ethernet4', "
           "'spine01:Ethernet3', 'spine01:Ethernet2'?\n")
    assert answer(capsys, ["top", "pods", "--limit", "0", "--server", url])[::2] == (
        2, "fabcorr: limit: must be between 1 and 100000, not 0\n")


def test_files_need_a_capture_for_traffic(capsys):
    assert answer(capsys, ["hotspots", "--snapshot", str(SNAPSHOT)])[::2] == (
        2, "fabcorr: --pcap: needed to answer from files (or ask a service with --server "
           "URL)\n")


def test_server_or_snapshot_not_both(capsys):
    assert main(["topology", "summary", "--snapshot", str(SNAPSHOT), "--server", "http://x"]) \
        == 2
    assert capsys.readouterr().err == (
        "fabcorr: --server: not allowed with argument --snapshot\n")


@pytest.mark.parametrize(("server", "error"), [
    ("http://127.0.0.1:1", "cannot reach http://127.0.0.1:1: [Errno 111] Connection refused"),
    ("127.0.0.1:8080", "--server: '127.0.0.1:8080' is not an http:// or https:// URL"),
    ("http://[::1", "--server: 'http://[::1' is not a URL: Invalid IPv6 URL"),
])
def test_an_unreachable_server_exits_2_naming_it(capsys, server, error):
    assert answer(capsys, ["topology", "summary", "--server", server]) == (
        2, "", f"fabcorr: {error}\n")


def test_basic_auth_and_tls(capsys, run, tmp_path, monkeypatch):
    pcap, _, view = run
    cert, key = self_signed(tmp_path)
    server = HttpServer("127.0.0.1", 0, lambda: view, Exposition(lambda: view),
                        tls=(str(cert), str(key)), auth=("ops", "pw"))
    server.start()
    try:
        url = f"https://127.0.0.1:{server.port}"
        argv = ["who", "spine01:Ethernet1", "-o", "json", "--server", url]
        code, _, err = answer(capsys, argv)
        assert code == 2 and err.startswith(f"fabcorr: cannot reach {url}: ")
        assert "CERTIFICATE_VERIFY_FAILED" in err
        trusted = [*argv, "--ca-file", str(cert)]
        assert answer(capsys, trusted)[::2] == (
            2, f"fabcorr: {url}: authentication required (--user or $FABCORR_USER, and "
               "$FABCORR_PASSWORD)\n")
        monkeypatch.setenv("FABCORR_USER", "ops")
        monkeypatch.delenv("FABCORR_PASSWORD", raising=False)
        assert answer(capsys, trusted)[::2] == (
            2, "fabcorr: $FABCORR_PASSWORD: not set; --user ops needs it\n")
        monkeypatch.setenv("FABCORR_PASSWORD", "wrong")
        assert answer(capsys, trusted)[0] == 2
        monkeypatch.setenv("FABCORR_PASSWORD", "pw")
        code, out, _ = answer(capsys, trusted)
        local = answer(capsys, ["who", "spine01:Ethernet1", "-o", "json", "--snapshot",
                                str(SNAPSHOT), "--pcap", str(pcap)])
        assert (code, out) == local[:2] and json.loads(out)["link"] == "spine01:Ethernet1"
    finally:
        server.close()


def test_fabcorr_server_is_the_default_server(capsys, run, monkeypatch):
    pcap, url, _ = run
    asked = answer(capsys, ["who", "spine01:Ethernet1", "-o", "json", "--server", url])
    monkeypatch.setenv("FABCORR_SERVER", url)
    assert answer(capsys, ["who", "spine01:Ethernet1", "-o", "json"]) == asked
    monkeypatch.setenv("FABCORR_SERVER", "http://127.0.0.1:1")  # nobody listens
    files = answer(capsys, ["who", "spine01:Ethernet1", "-o", "json", "--snapshot",
                            str(SNAPSHOT), "--pcap", str(pcap)])
    assert files == asked  # files named: the variable is not asked
    assert answer(capsys, ["topology", "summary", "--snapshot", str(SNAPSHOT)])[0] == 0
    assert answer(capsys, ["topology", "summary"]) == (
        2, "", "fabcorr: cannot reach http://127.0.0.1:1: [Errno 111] Connection refused\n")
    monkeypatch.setenv("FABCORR_SERVER", "127.0.0.1:8080")
    assert answer(capsys, ["topology", "summary"]) == (
        2, "", "fabcorr: $FABCORR_SERVER: '127.0.0.1:8080' is not an http:// or https:// "
               "URL\n")


DEAD = "http://127.0.0.1:1"  # a shard that does not answer
NO_ANSWER = (f"fabcorr: {DEAD}: warning: no answer (cannot reach {DEAD}: [Errno 111] "
             "Connection refused); answering from the other shards\n")


@pytest.mark.parametrize("argv", TRAFFIC + TOPOLOGY, ids=" ".join)
def test_a_shard_that_does_not_answer_is_named_and_the_rest_answer(capsys, run, argv):
    """Of two shards one is down: the answer is the other's, exit 3 (done in part); what
    the one that answers refuses is refused as from one server (after the warning, for a
    topology question: the fabric it is asked of is built from the shards' facts first)."""
    _, url, _ = run
    code, out, err = answer(capsys, [*argv, "-o", "json", "--server", url])
    merged = answer(capsys, [*argv, "-o", "json", "--server", DEAD, "--server", url])
    warned = NO_ANSWER if argv[0] == "topology" else ""
    assert merged == ((3, out, NO_ANSWER) if code == 0 else (code, out, warned + err))


def test_fabcorr_server_lists_shards_with_commas(capsys, run, monkeypatch):
    _, url, _ = run
    monkeypatch.setenv("FABCORR_SERVER", f"{url}, {DEAD}")
    assert answer(capsys, ["topology", "summary", "-o", "json"]) == (
        3, answer(capsys, ["topology", "summary", "-o", "json", "--server", url])[1],
        NO_ANSWER)
    monkeypatch.setenv("FABCORR_SERVER", f"{DEAD},{DEAD}")  # one URL, asked once
    assert answer(capsys, ["topology", "summary"]) == (
        2, "", f"fabcorr: cannot reach {DEAD}: [Errno 111] Connection refused\n")
