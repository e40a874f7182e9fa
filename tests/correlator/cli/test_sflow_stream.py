"""``fabcorr sflow decode`` on the example capture: json, yaml and jsonl written as the
capture is read (jsonl in memory that does not grow with the capture), the same records
from pcap and pcapng, and a capture cut short decoded up to the cut with exit 3."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from correlator.cli.main import main
from tests.tools import require

EXAMPLE = Path(__file__).parents[3] / "examples" / "fabric-small"
SNAPSHOT = str(EXAMPLE / "topology.json")


def capture(folder: Path, seconds: int) -> Path:
    """The example's flows over ``seconds`` (counter samples every 5 s), as a pcap."""
    spec = folder / f"flows-{seconds}.yaml"
    spec.write_text((EXAMPLE / "flows.yaml").read_text().replace("seconds: 30",
                                                                 f"seconds: {seconds}"))
    pcap = folder / f"capture-{seconds}.pcap"
    assert main(["simulate", "capture", "--snapshot", SNAPSHOT, "--flows", str(spec),
                 "--out", str(pcap)]) == 0
    return pcap


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream")
    return {seconds: capture(folder, seconds) for seconds in (5, 20)}


def test_json_yaml_and_jsonl_hold_the_same_records(capsys, captures):
    pcap = str(captures[5])
    found = {}
    for fmt in ("json", "yaml", "jsonl"):
        assert main(["sflow", "decode", pcap, "--snapshot", SNAPSHOT, "-o", fmt]) == 0
        found[fmt] = capsys.readouterr().out
    records = json.loads(found["json"])
    assert len(records) > 1000
    assert yaml.safe_load(found["yaml"]) == records
    assert [json.loads(line) for line in found["jsonl"].splitlines()] == records
    assert found["yaml"] == yaml.safe_dump(records, sort_keys=False)
    assert found["json"] == json.dumps(records, indent=2) + "\n"


def test_jsonl_streams_in_memory_that_does_not_grow_with_the_capture(captures):
    peaks, lines = {}, {}
    for seconds, pcap in captures.items():
        peaks[seconds], lines[seconds] = _peak(pcap)
    assert lines[20] > 3.5 * lines[5]  # four times the samples...
    assert peaks[20] - peaks[5] < 8 * 1024, peaks  # ...in the same memory (KiB)


def _peak(pcap: Path) -> tuple[int, int]:
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from correlator.cli.main import main; "
         "sys.exit(main())", "sflow", "decode", str(pcap), "--snapshot", SNAPSHOT, "-o",
         "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = sum(1 for _ in process.stdout)
    _, status, usage = os.wait4(process.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss, lines


def test_pcapng_decodes_as_its_pcap_and_a_cut_capture_exits_3(capsys, captures, tmp_path):
    pcap, pcapng = captures[5], tmp_path / "capture.pcapng"
    subprocess.run([require("editcap", "tshark"), "-F", "pcapng", str(pcap), str(pcapng)],
                   check=True, capture_output=True, timeout=120)
    assert main(["sflow", "decode", str(pcap), "-o", "jsonl"]) == 0
    whole, err = capsys.readouterr()
    assert main(["sflow", "decode", str(pcapng), "-o", "jsonl"]) == 0
    assert capsys.readouterr() == (whole, err)
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(pcapng.read_bytes()[:-1000])
    assert main(["sflow", "decode", str(cut), "-o", "jsonl"]) == 3
    out, err = capsys.readouterr()
    assert 0 < len(out.splitlines()) < len(whole.splitlines())
    assert whole.startswith(out)
    records = [json.loads(line) for line in out.splitlines()]
    datagrams = len({(r["agent"], r["sub_agent"], r["datagram_seq"]) for r in records})
    assert err.splitlines() == [
        f"fabcorr: {cut}: warning: the capture ends inside a record (cut short); what came "
        "before it was read",
        f"{datagrams:,} datagrams, {len(records):,} samples"]


def test_attribute_of_a_cut_capture_warns_and_exits_3(capsys, captures, tmp_path):
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(captures[5].read_bytes()[:-100])
    assert main(["attribute", "--snapshot", SNAPSHOT, "--pcap", str(cut), "-o", "json"]) == 3
    assert capsys.readouterr().err == (f"fabcorr: {cut}: warning: the capture ends inside a "
                                       "record (cut short); what came before it was read\n")
    assert main(["attribute", "--snapshot", SNAPSHOT, "--pcap", str(captures[5]), "-o",
                 "json"]) == 0
