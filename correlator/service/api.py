"""The HTTP JSON API as pure request handlers over a :class:`View`: no sockets here.

``handle(view, method, path, query)`` answers ``(status, body)``; the body is plain JSON
data. Read-only: ``GET`` (and ``HEAD``) only. The same answers back the CLI's read
commands, whether they ask a server (``--server URL``) or files (``--snapshot``).

Topology (the fabric graph; exactly what ``fabcorr topology ... -o json`` prints):

- ``/api/v1/topology/summary``: nodes by kind, switches by role, cables, problems.
- ``/api/v1/topology/where?q=THING[&at=TIME]``: where a pod, pod interface, IP, VF, PF
  or node plugs in. ``at``: ISO 8601 or Unix seconds; IPs resolve to their owner then.
- ``/api/v1/topology/path?a=A&b=B[&at=TIME][&limit=N]``: equal-cost paths (default 256
  listed per interface pair).
- ``/api/v1/topology/link?port=SWITCH:PORT``: the cable and whose traffic can cross it.
- ``/api/v1/topology/job?name=NS/NAME``, ``/api/v1/topology/tenant?name=NAME``.
- ``/api/v1/topology/problems[?kind=K]``.
- ``/api/v1/topology/facts[?part=switches|hosts|workloads]``: the facts the graph was
  built from, as a fact document: all, or what the switches reported, the hosts and their
  NICs, or the pods, jobs and tenants. Every shard's switches and hosts (a shard keeps the
  NICs cabled to its switches) and one shard's workloads make the whole fabric.

Traffic (the last attributed interval; 503 until there is one):

- ``/api/v1/links``: the interval and every link direction's traffic (samples, bytes,
  utilization, tenant / job / pod / pair shares with 95 % intervals, CNP-throttled jobs).
- ``/api/v1/links/SWITCH:PORT``: who fills that link: its ``in`` and ``out`` direction,
  each read from whichever end of the cable sampled it.
- ``/api/v1/hotspots``: active hotspots, then ended ones (most recent first).
- ``/api/v1/top/tenants|jobs|pods[?link=SWITCH:PORT][&limit=N]``: the N (default 10)
  biggest senders per tier fabric-wide, or per direction of one link with their shares.
- ``/api/v1/jobs``, ``/api/v1/tenants``: every job / tenant with its bytes/s per tier.

The fabric map (:mod:`correlator.service.fabric_map`; the page at ``/`` draws them):

- ``/api/v1/map/layout``: where every switch, host and cable is drawn.
- ``/api/v1/map/state``: each cable's utilisation and senders, the active hotspots and a
  timeline of the last intervals' hotspots (empty before the first interval).

``/api/v1/status``: ready, start time, the last interval, hotspot counts, sFlow totals
and collector health (never 503).

Errors are ``{"error": "..."}``: 400 a bad or unknown parameter, 404 an unknown endpoint
or thing (named, with close matches), 405 another method, 503 no interval attributed yet.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from correlator.attribution.attribute import Attribution
from correlator.data import to_data
from correlator.service import fabric_map, traffic
from correlator.view import View
from inventory.errors import FabcorrError, NotFound
from inventory.factfile import facts_to_document
from inventory.facts import FactSet
from inventory.problems import PROBLEM_KINDS
from topology import queries
from topology.resolve import check_reference

PREFIX = "/api/v1/"
MAX_LIMIT = 100_000
"""The most paths or senders one answer lists (counts stay exact)."""
Query = Mapping[str, list[str]]


class BadRequest(ValueError):
    """A parameter is missing, unknown or malformed (400)."""


class NotReady(Exception):
    """No interval has been attributed yet (503)."""


@dataclass(frozen=True)
class Params:
    """The query parameters of one request, and the rest of a prefixed path."""

    query: Query
    rest: str = ""

    def text(self, name: str) -> str | None:
        """The last value of ``name``, or None."""
        values = self.query.get(name)
        return values[-1] if values else None

    def required(self, name: str) -> str:
        """The last value of ``name``; missing or empty: BadRequest."""
        value = self.text(name)
        if not value:
            raise BadRequest(f"missing parameter {name!r}")
        return value

    def integer(self, name: str, default: int, minimum: int) -> int:
        """``name`` as an integer from ``minimum`` to :data:`MAX_LIMIT`, or ``default``
        when missing."""
        text = self.text(name)
        if text is None:
            return default
        try:
            value = int(text)
        except ValueError:
            raise BadRequest(f"{name}: not an integer: {text!r}") from None
        if not minimum <= value <= MAX_LIMIT:
            raise BadRequest(f"{name}: must be between {minimum} and {MAX_LIMIT}, not {value}")
        return value

    def checked(self, name: str, check: Callable[[str], str]) -> str:
        """The required ``name`` through ``check``, whose ValueError is a BadRequest."""
        text = self.required(name)
        try:
            return check(text)
        except ValueError as exc:
            raise BadRequest(f"{name}: {exc}") from None

    def time(self, name: str) -> float | None:
        """``name`` as Unix seconds (:func:`parse_time`), or None when missing."""
        text = self.text(name)
        if text is None:
            return None
        try:
            return parse_time(text)
        except ValueError as exc:
            raise BadRequest(f"{name}: {exc}") from None


Handler = Callable[[View, Params], Any]


_OFFSET = re.compile(r"[+-]\d\d:?(\d\d)(?::?(\d\d))?(?:\.\d+)?$")


def parse_time(text: str) -> float:
    """Unix seconds from Unix seconds or an ISO 8601 time (``Z`` or an offset; UTC if none).

    >>> parse_time("1767225600"), parse_time("2026-01-01T00:00:00Z")
    (1767225600.0, 1767225600.0)
    >>> parse_time("2026-01-01T00:00:00+05:99")
    Traceback (most recent call last):
    ...
    ValueError: not a time: '2026-01-01T00:00:00+05:99' (offset minutes or seconds over 59)
    """
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(seconds):
            raise ValueError(f"not a time: {text!r} (not a finite number)")
        return seconds
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a time: {text!r}") from None
    offset = _OFFSET.search(text[10:])  # past the date, whose dashes are no offset
    if offset and any(int(part) > 59 for part in offset.groups() if part):
        raise ValueError(f"not a time: {text!r} (offset minutes or seconds over 59)")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def handle(view: View, method: str, path: str, query: Query) -> tuple[int, Any]:
    """The status and JSON body answering ``method path?query`` from ``view``.

    >>> handle(View(example_fabric), "GET", "/api/v1/topology/job", {"name": ["a/lm"]})
    (404, {'error': "no job named 'a/lm'; did you mean 'a/llm'?"})
    """
    if method not in ("GET", "HEAD"):
        return 405, {"error": f"method {method} not allowed: the API is read-only"}
    name, rest = path.removeprefix(PREFIX), ""
    route = _ROUTES.get(name) if path.startswith(PREFIX) else None
    if route is None and path.startswith(PREFIX):
        head, slash, rest = name.partition("/")
        route = _PREFIXED.get(head + slash)
    if route is None:
        return 404, {"error": f"no API endpoint {path!r}{_close(name)}"}
    run, known = route
    unknown = sorted(set(query) - set(known))
    if unknown:
        allowed = ", ".join(known) or "none"
        return 400, {"error": f"unknown parameter {', '.join(map(repr, unknown))} "
                              f"(allowed: {allowed})"}
    try:
        return 200, run(view, Params(query, rest))
    except NotFound as exc:
        return 404, {"error": str(exc)}
    except NotReady as exc:
        return 503, {"error": str(exc)}
    except (BadRequest, FabcorrError) as exc:
        return 400, {"error": str(exc)}


def _close(name: str) -> str:
    found = difflib.get_close_matches(name, [*_ROUTES, *_PREFIXED], n=3, cutoff=0.6)
    return f"; did you mean {', '.join(repr(PREFIX + f) for f in found)}?" if found else ""


def _interval(view: View) -> Attribution:
    if view.attribution is None:
        raise NotReady("no interval attributed yet")
    return view.attribution


def _where(view: View, p: Params) -> Any:
    return to_data(queries.where(view.fabric, p.checked("q", check_reference), p.time("at")))


def _path(view: View, p: Params) -> Any:
    return to_data(queries.paths(view.fabric, p.checked("a", check_reference),
                                 p.checked("b", check_reference), p.time("at"),
                                 p.integer("limit", 256, 0)))


def _link(view: View, p: Params) -> Any:
    return to_data(queries.link(view.fabric, p.required("port")))


def _job(view: View, p: Params) -> Any:
    return to_data(queries.job(view.fabric, p.required("name")))


def _tenant(view: View, p: Params) -> Any:
    return to_data(queries.tenant(view.fabric, p.required("name")))


def _problems(view: View, p: Params) -> Any:
    kind = p.text("kind")
    if kind is not None and kind not in PROBLEM_KINDS:
        raise BadRequest(f"kind: unknown problem kind {kind!r} (kinds: "
                         f"{', '.join(sorted(PROBLEM_KINDS))})")
    return to_data([x for x in view.fabric.problems if kind in (None, x.kind)])


_FACT_PARTS: dict[str | None, Callable[[FactSet], FactSet]] = {
    None: lambda facts: facts, "switches": FactSet.of_switches, "hosts": FactSet.hosts,
    "workloads": FactSet.workloads}


def _facts(view: View, p: Params) -> Any:
    part = p.text("part")
    if part not in _FACT_PARTS:
        raise BadRequest(f"part: 'switches', 'hosts' or 'workloads', not {part!r}")
    return facts_to_document(_FACT_PARTS[part](view.fabric.facts))


def _hotspots(view: View, _: Params) -> Any:
    _interval(view)
    return traffic.hotspots(view)


def _who(view: View, p: Params) -> Any:
    if not p.rest:
        raise BadRequest("name the link: /api/v1/links/SWITCH:PORT")
    return traffic.who(view.fabric, _interval(view), p.rest)


def _top(view: View, p: Params) -> Any:
    if p.rest not in traffic.GROUPS:
        raise NotFound("top list", p.rest, tuple(difflib.get_close_matches(
            p.rest, traffic.GROUPS, n=3, cutoff=0.5)) or traffic.GROUPS)
    return traffic.top(view.fabric, _interval(view), p.rest, p.text("link") or None,
                       p.integer("limit", 10, 1))


_ROUTES: dict[str, tuple[Handler, tuple[str, ...]]] = {
    "topology/summary": (lambda view, _: to_data(queries.summary(view.fabric)), ()),
    "topology/where": (_where, ("q", "at")),
    "topology/path": (_path, ("a", "b", "at", "limit")),
    "topology/link": (_link, ("port",)),
    "topology/job": (_job, ("name",)),
    "topology/tenant": (_tenant, ("name",)),
    "topology/problems": (_problems, ("kind",)),
    "topology/facts": (_facts, ("part",)),
    "links": (lambda view, _: traffic.links(_interval(view)), ()),
    "hotspots": (_hotspots, ()),
    "jobs": (lambda view, _: traffic.jobs(view.fabric, _interval(view)), ()),
    "tenants": (lambda view, _: traffic.tenants(view.fabric, _interval(view)), ()),
    "status": (lambda view, _: traffic.status(view), ()),
    "map/layout": (lambda view, _: fabric_map.layout_data(view.fabric), ()),
    "map/state": (lambda view, _: fabric_map.state_data(view), ()),
}
_PREFIXED: dict[str, tuple[Handler, tuple[str, ...]]] = {
    "links/": (_who, ()),
    "top/": (_top, ("link", "limit")),
}
