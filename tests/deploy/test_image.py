"""The OCI image that ``make image`` builds (Dockerfile FROM the debootstrap base that
deploy/image/base.sh imports): its version, its user, a read-only root, and ``fabcorr
run`` in a container against the emulated fabric (the example's switches as gNMI targets
in another container of the same image) on a private Docker network, scraped over HTTP.

Skips, saying why, only without a running Docker engine (or, with no cached base
tarball, without root for debootstrap). The image is built once per run (``make image``
is incremental: the base tarball, the wheels and Docker's layer cache are reused)."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import yaml

from inventory.factfile import read_facts
from tests.deploy.containers import (
    BASE,
    ROOT,
    VERSION,
    answers,
    docker,
    get,
    ip,
    logs,
    subnet,
    wait,
)

EXAMPLE = ROOT / "examples" / "fabric-small"
PASSWORD = "lab-only"
AGENT_FIRST_PORT = 57400  # tests/deploy/fabric_agents.py FIRST_PORT
# the example's switches in fact-file order (the agents' ports) and their sFlow agent
# addresses, what their datagrams carry
SWITCHES = {s.name: s.mgmt_address for s in read_facts([EXAMPLE / "facts.yaml"]).switches}


def test_version_user_and_base(image):
    out = docker("run", "--rm", "--read-only", "--network", "none", image, "--version")
    assert out == f"fabcorr {VERSION}\n"
    config = json.loads(docker("image", "inspect", image, "--format", "{{json .Config}}"))
    assert config["User"] == "65532:65532"  # deploy/base/deployment.yaml runs as 65532
    assert config["Entrypoint"] == ["fabcorr"]
    assert config["Labels"]["org.opencontainers.image.version"] == VERSION
    # built FROM the imported debootstrap root filesystem: its one layer comes first
    layers = json.loads(docker("image", "inspect", image, "--format",
                                "{{json .RootFS.Layers}}"))
    (base_layer,) = json.loads(docker("image", "inspect", BASE, "--format",
                                       "{{json .RootFS.Layers}}"))
    assert layers[0] == base_layer and len(layers) > 1
    uid = docker("run", "--rm", "--read-only", "--network", "none", "--entrypoint",
                  "id", image)
    assert uid.startswith("uid=65532(fabcorr) gid=65532(fabcorr)")


def _metric(exposition: str, name: str, labels: str = "") -> float | None:
    """The sample's value; None while the series is not exposed."""
    match = re.search(rf"^{re.escape(name + labels)} (\S+)$", exposition, re.MULTILINE)
    return float(match.group(1)) if match else None


def test_run_in_a_container_against_the_emulated_fabric(image, tmp_path):
    """Agents in one container, ``fabcorr run`` (read-only root, /tmp a tmpfs, non-root)
    in another, both on a network of their own; the test scrapes the service over HTTP
    and sends it the example's sFlow from a third container."""
    tag = f"fabcorr-test-{uuid.uuid4().hex[:8]}"
    network, agents, service, unready = (f"{tag}-net", f"{tag}-agents", f"{tag}-run",
                                         f"{tag}-unready")
    mounts = ["-v", f"{EXAMPLE}:/example:ro",
              "-v", f"{Path(__file__).parent / 'fabric_agents.py'}:/agents.py:ro"]
    python = ["--entrypoint", "/opt/fabcorr/bin/python"]
    docker("network", "create", network)
    try:
        docker("run", "-d", "--name", agents, "--network", network, "--read-only",
                *mounts, *python, image, "/agents.py", "serve", "/example/facts.yaml",
                PASSWORD)
        agents_logs = lambda: logs(agents)  # noqa: E731
        wait(lambda: "ready" in agents_logs(), 120, "agents ready", agents_logs)
        agents_ip = ip(agents, network)
        addresses, _ = subnet(network)
        config = {
            "defaults": {"gnmi": {"insecure": True, "username": "fabcorr", "timeout_s": 5.0,
                                  "password": {"env": "FABCORR_GNMI_PASSWORD"}}},
            "switches": [{"name": name, "address": agents_ip, "sflow_agent": agent,
                          "protocols": ["gnmi"], "gnmi": {"port": AGENT_FIRST_PORT + n}}
                         for n, (name, agent) in enumerate(SWITCHES.items())],
            "service": {"listen": "0.0.0.0:9460"},
            "kubernetes": {"source": ["/example/kubernetes"]},
            "topology": {"discover_every_s": 0},
            "telemetry": {"interval_s": 1.0},
            # one sender container relays every switch's datagrams
            "sflow": {"listen": "0.0.0.0:6343", "relays": [addresses]},
            "attribution": {"interval_s": 1.0},
        }
        (tmp_path / "fabcorr.yaml").write_text(yaml.safe_dump(config))
        tmp_path.chmod(0o755)  # the container's user 65532 reads it
        began = time.monotonic()
        docker("run", "-d", "--name", service, "--network", network, "--read-only",
                "--tmpfs", "/tmp", "-e", f"FABCORR_GNMI_PASSWORD={PASSWORD}",
                "-v", f"{tmp_path}:/etc/fabcorr:ro", "-v", f"{EXAMPLE}:/example:ro",
                image, "run", "--config", "/etc/fabcorr/fabcorr.yaml")
        service_logs = lambda: logs(service)  # noqa: E731
        url = f"http://{ip(service, network)}:9460"

        statuses: list[int] = []

        def ready() -> bool:
            try:
                statuses.append(get(url + "/readyz")[0])
            except ConnectionError:  # not listening yet
                return False
            return statuses[-1] == 200

        wait(ready, 180, "ready", service_logs)
        print(f"\nfabcorr run in a container: ready {time.monotonic() - began:.1f} s "
              f"after docker run")
        assert set(statuses) <= {503, 200}, statuses  # 503 until the fabric is built
        assert get(url + "/readyz") == (200, b"ready\n")
        assert get(url + "/healthz")[0] == 200
        assert get(url + "/api/v1/no-such-thing")[0] == 404
        # fabcorr run started itself again with the image's jemalloc (allocator.py)
        assert "libjemalloc.so.2" in docker("exec", service, "cat", "/proc/1/maps")
        status, body = get(url + "/metrics")
        assert status == 200
        exposition = body.decode()
        for name in SWITCHES:  # every switch answered discovery and streams counters
            wait(lambda n=name: _metric(get(url + "/metrics")[1].decode(),
                                         "fabcorr_collector_up",
                                         f'{{protocol="gnmi",switch="{n}"}}') == 1,
                  60, f"{name} collected", service_logs)
        assert _metric(exposition, "fabcorr_sflow_datagrams_total") == 0

        sent = int(docker("run", "--rm", "--network", network, "--read-only", *mounts,
                           *python, image, "/agents.py", "send", "/example/facts.yaml",
                           "/example/flows.yaml", f"{ip(service, network)}:6343",
                           timeout=300))
        assert sent > 1000
        decoded = lambda: _metric(get(url + "/metrics")[1].decode(),  # noqa: E731
                                  "fabcorr_sflow_datagrams_total")
        wait(lambda: decoded() == sent, 60, f"{sent} datagrams decoded",
              lambda: f"decoded {decoded()}\n" + service_logs())
        docker("stop", "--time", "30", service, timeout=60)
        assert docker("inspect", service, "--format", "{{.State.ExitCode}}") == "0\n"

        # the live Kubernetes inventory with its API server unreachable (nothing listens
        # on the agents' port 1): alive, but not ready until its first lists complete
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://{agents_ip}:1"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        config["kubernetes"] = {"source": ["live"], "kubeconfig": "/etc/fabcorr/kubeconfig"}
        (tmp_path / "unready.yaml").write_text(yaml.safe_dump(config))
        docker("run", "-d", "--name", unready, "--network", network, "--read-only",
                "--tmpfs", "/tmp", "-e", f"FABCORR_GNMI_PASSWORD={PASSWORD}",
                "-v", f"{tmp_path}:/etc/fabcorr:ro", image, "run", "--config",
                "/etc/fabcorr/unready.yaml")
        unready_url = f"http://{ip(unready, network)}:9460"
        unready_logs = lambda: logs(unready)  # noqa: E731

        wait(lambda: answers(unready_url + "/healthz"), 120, "alive", unready_logs)
        assert get(unready_url + "/readyz") == (503, b"not ready\n")
    finally:
        for container in (unready, service, agents):
            docker("rm", "-f", container, check=False)
        docker("network", "rm", network, check=False)
