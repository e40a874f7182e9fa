"""The service's HTTP server over real HTTP on loopback: metrics, probes, the API, basic
auth and TLS."""

import base64
import http.client
import json
import selectors
import socket
import ssl
import statistics
import time
import urllib.error
import urllib.request
from dataclasses import replace

import pytest

from correlator.service.api import handle
from correlator.service.exporter import Exposition
from correlator.service.http import METRICS_TYPE, HttpServer
from tests.correlator.service.certs import self_signed
from tests.correlator.service.example_view import make_capture, replayed


@pytest.fixture(scope="module")
def view(tmp_path_factory):
    return replayed(make_capture(tmp_path_factory.mktemp("http")))


class Holder:
    """What the service does: one current view, swapped in whole."""

    def __init__(self, view):
        self.view = view

    def __call__(self):
        return self.view


@pytest.fixture
def serve():
    started = []

    def start(current, **options):
        server = HttpServer("127.0.0.1", 0, current, Exposition(current), **options)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def fetch(url, auth=None, context=None):
    """(status, headers, body) of a GET; HTTP errors are answers too."""
    request = urllib.request.Request(url)
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.headers, exc.read()


def test_metrics_are_the_exposition_of_the_current_view(serve, view):
    current = Holder(view)
    server = serve(current)
    assert server.port != 0
    status, headers, body = fetch(f"http://127.0.0.1:{server.port}/metrics")
    assert (status, headers["Content-Type"]) == (200, METRICS_TYPE)
    assert body == Exposition(current).render()
    assert b'fabcorr_hotspot_active{direction="out",kinds="utilization"' in body


def test_probes_and_readiness(serve, view):
    current = Holder(replace(view, ready=False))
    base = f"http://127.0.0.1:{serve(current).port}"
    assert fetch(base + "/healthz")[::2] == (200, b"ok\n")
    assert fetch(base + "/readyz")[::2] == (503, b"not ready\n")
    current.view = view
    assert fetch(base + "/readyz")[::2] == (200, b"ready\n")


def test_the_api_answers_what_its_handlers_answer(serve, view):
    base = f"http://127.0.0.1:{serve(Holder(view)).port}"
    status, headers, body = fetch(base + "/api/v1/links/leaf01%3AEthernet5")
    assert (status, headers["Content-Type"]) == (200, "application/json; charset=utf-8")
    assert json.loads(body) == handle(view, "GET", "/api/v1/links/leaf01:Ethernet5", {})[1]
    status, _, body = fetch(base + "/api/v1/top/pods?link=spine01:Ethernet1&limit=1")
    assert (status, json.loads(body)) == handle(
        view, "GET", "/api/v1/top/pods", {"link": ["spine01:Ethernet1"], "limit": ["1"]})
    status, _, body = fetch(base + "/api/v1/hotspot")
    assert (status, json.loads(body)) == (404, {
        "error": "no API endpoint '/api/v1/hotspot'; did you mean '/api/v1/hotspots'?"})


def test_basic_auth_guards_everything_but_the_probes(serve, view):
    base = f"http://127.0.0.1:{serve(Holder(view), auth=('prom', 's3cret:x')).port}"
    for path in ("/metrics", "/api/v1/status"):
        status, headers, body = fetch(base + path)
        assert (status, headers["WWW-Authenticate"], json.loads(body)) == (
            401, 'Basic realm="fabcorr", charset="UTF-8"', {"error": "authentication required"})
        assert fetch(base + path, ("prom", "wrong"))[0] == 401
        assert fetch(base + path, ("prometheus", "s3cret:x"))[0] == 401
        assert fetch(base + path, ("prom", "s3cret:x"))[0] == 200
    assert fetch(base + "/healthz")[0] == fetch(base + "/readyz")[0] == 200


def test_tls_with_a_certificate_the_client_verifies(serve, view, tmp_path):
    cert, key = self_signed(tmp_path)
    server = serve(Holder(view), tls=(str(cert), str(key)), auth=("prom", "pw"))
    trusting = ssl.create_default_context(cafile=str(cert))
    status, headers, body = fetch(f"https://127.0.0.1:{server.port}/metrics", ("prom", "pw"),
                                  trusting)
    assert (status, headers["Content-Type"], body) == (
        200, METRICS_TYPE, Exposition(Holder(view)).render())
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(f"https://127.0.0.1:{server.port}/healthz", context=ssl.create_default_context())
    # plain HTTP to the TLS port: the server is there (not refused) and resets the
    # connection when the handshake fails
    assert isinstance(_failure(f"http://127.0.0.1:{server.port}/healthz"),
                      ConnectionResetError)


def _failure(url):
    """The error a GET of ``url`` fails with, unwrapped from urllib's URLError."""
    try:
        fetch(url)
    except urllib.error.URLError as exc:
        return exc.reason
    except OSError as exc:
        return exc
    raise AssertionError(f"{url} answered")


def test_close_releases_the_port(view):
    server = HttpServer("127.0.0.1", 0, Holder(view), Exposition(Holder(view)))
    server.start()
    port = server.port
    server.close()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass


@pytest.mark.parametrize("clients", [300, 1000])
def test_simultaneous_clients_are_all_answered(serve, view, clients):
    """Every client connects at once (far more than the workers: the rest wait in the
    listen backlog), then all send; every one gets its 200. Prints the p99."""
    port = serve(Holder(view)).port
    request = b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    selector = selectors.DefaultSelector()
    sockets = []
    try:
        for _ in range(clients):
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            sock.setblocking(False)
            sockets.append(sock)
        began = time.monotonic()
        for sock in sockets:
            sock.send(request)
            selector.register(sock, selectors.EVENT_READ, [])
        took, answers = [], []
        deadline = began + 120
        while len(answers) < clients:
            assert time.monotonic() < deadline, f"{len(answers)} of {clients} answered"
            for key, _ in selector.select(timeout=1):
                data = key.fileobj.recv(65536)
                key.data.append(data)
                if not data:  # the server closed: the answer is whole
                    selector.unregister(key.fileobj)
                    answers.append(b"".join(key.data))
                    took.append(time.monotonic() - began)
    finally:
        selector.close()
        for sock in sockets:
            sock.close()
    assert [answer.split(b" ", 2)[1] for answer in answers] == [b"200"] * clients
    assert all(answer.endswith(b"}") for answer in answers)
    p99 = statistics.quantiles(took, n=100)[98]
    print(f"{clients} simultaneous clients answered, p99 {p99 * 1000:.0f} ms")


def test_a_keep_alive_client_is_not_held_by_a_delayed_ack(serve, view):
    """Headers and body leave in one write, Nagle off: a request on a kept-alive
    connection is not held ~40 ms waiting for the client's delayed ACK."""
    port = serve(Holder(view)).port
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    took = []
    for _ in range(40):
        began = time.perf_counter()
        connection.request("GET", "/api/v1/status")
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())["ready"]) == (200, True)
        took.append(time.perf_counter() - began)
    connection.close()
    median = statistics.median(took)
    print(f"keep-alive request median {median * 1000:.1f} ms")
    assert median < 0.02
