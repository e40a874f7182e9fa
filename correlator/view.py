"""What fabcorr knows at one moment, as one immutable view swapped in whole.

Every interval the interval engine (:mod:`correlator.engine`) publishes a new
:class:`View`; the service replaces its old one with it, a replay keeps the last. Readers
(the exporter, the HTTP API, the offline commands) take one view and read a consistent
picture, without locks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from correlator.attribution.attribute import Attribution
from correlator.attribution.hotspots import Hotspot
from correlator.collect.collector import Health
from correlator.collect.rates import Rates
from correlator.sflow.accounting import Totals
from correlator.shards import ALONE, Shard
from topology.graph import FabricGraph


@dataclass(frozen=True)
class View:
    """The fabric, the last attributed interval, and how the service is doing.

    ``rates`` are the latest per port (port node ID); ``hotspots`` the active ones, then
    up to ``ended`` recent ended ones, as judged on the intervals up to ``judged_until``
    (a provisional interval is judged once corrected); ``sflow`` the receiver's totals since start;
    ``attribution_s`` how long the last interval took to attribute; ``components`` each
    of the service's supervised tasks and whether it runs (False while it waits to be
    restarted after a failure); ``shard`` the shard that knows it (its switches' ports,
    rates and hotspots only, when there are several).
    """

    fabric: FabricGraph
    attribution: Attribution | None = None
    rates: Mapping[str, Rates] = field(default_factory=dict)
    hotspots: tuple[Hotspot, ...] = ()
    ended: tuple[Hotspot, ...] = ()
    judged_until: float = 0.0
    health: Mapping[str, Health] = field(default_factory=dict)
    sflow: Totals = field(default_factory=Totals)
    attribution_s: float = 0.0
    started: float = 0.0
    ready: bool = False
    components: Mapping[str, bool] = field(default_factory=dict)
    shard: Shard = ALONE

    @property
    def serving(self) -> bool:
        """Ready, and every component running: what ``/readyz`` answers."""
        return self.ready and all(self.components.values())
