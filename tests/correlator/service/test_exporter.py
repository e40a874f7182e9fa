"""The exporter's sFlow health series."""

from collections import Counter

from correlator.service.exporter import Exposition
from correlator.sflow.accounting import Totals
from correlator.view import View
from inventory.facts import FactSet
from topology.build import build_graph


def test_every_bounded_table_has_its_evictions_series():
    """Loss accounting's and the decoder's tables count evictions, an interval's tables
    the samples they could not take: all six, zero where nothing was let go."""
    totals = Totals(evictions=Counter({"sources": 7, "flows": 3}))
    view = View(build_graph(FactSet()), sflow=totals, ready=True)
    lines = [line for line in Exposition(lambda: view).render().decode().splitlines()
             if line.startswith("fabcorr_sflow_table_evictions_total{")]
    assert lines == [f'fabcorr_sflow_table_evictions_total{{table="{table}"}} {n}'
                     for table, n in (("sequences", "0.0"), ("sources", "7.0"),
                                      ("formats", "0.0"), ("flows", "3.0"),
                                      ("counters", "0.0"), ("discards", "0.0"))]
