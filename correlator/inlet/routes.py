"""The inlet's table: each known agent, the addresses it may send from, and its shard.

>>> from correlator.shards import owner
>>> table = routes([("leaf01", ("10.0.0.1", "192.0.2.1")), ("spine01", ("10.0.0.9", ""))], 3)
>>> [(agent.hex(), len(sources), shard) for agent, sources, shard in table]
[('0a000001', 2, 1), ('0a000009', 1, 0)]
>>> owner("leaf01", 3), owner("spine01", 3)
(1, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from correlator.sflow.admission import Admission, parse_address
from correlator.shards import owner

Route = tuple[bytes, list[bytes], int]
"""An agent (packed), the addresses (packed) it may send from, the index of its shard."""


def routes(switches: Iterable[tuple[str, Sequence[str]]], count: int) -> list[Route]:
    """The routes of ``switches`` (name, addresses with the agent address first, as
    :func:`~correlator.sflow.admission.switch_addresses` gives them) over ``count``
    shards; the sources as :class:`~correlator.sflow.admission.Admission` allows them."""
    switches = list(switches)
    shards: dict[bytes, int] = {}
    for name, addresses in switches:
        known = [a for a in map(parse_address, addresses) if a is not None]
        if known:
            shards[known[0].packed] = owner(name, count)
    agents, _ = Admission(addresses for _, addresses in switches).rules()
    return [(agent, sources, shards[agent]) for agent, sources in agents]
