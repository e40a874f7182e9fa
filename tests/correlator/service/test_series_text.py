"""The exposition's text is prometheus-client's: the kept-label render against
``generate_latest`` of the same families, byte for byte (promtool checks the text in
test_prometheus)."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from correlator.service.exporter import Exposition
from correlator.service.series_text import Family, SeriesText
from correlator.sflow.accounting import Totals
from tests.correlator.service.example_view import make_capture, replayed

AWKWARD = ["plain", 'a "quoted" word', "back\\slash", "two\nlines", "ünïcødé ✓", "a b,c=d{e}",
           "", "\\n is not a newline", 'ends with \\"']
NUMBERS = [0.0, -0.0, 1, 7, 0.1, 2.5e10, 1e22, 123456789.0, 1234567.5, -3.25, 1e-9,
           math.inf, -math.inf, math.nan, 2**70]


class _Families:
    """A collector yielding prometheus-client's own families of ``families``."""

    def __init__(self, families: list[Family]) -> None:
        self.families = families

    def collect(self):
        for family in self.families:
            if family.kind == "counter":
                metric = CounterMetricFamily(family.name[:-len("_total")], family.help,
                                             labels=family.labels)
            else:
                metric = GaugeMetricFamily(family.name, family.help, labels=family.labels)
            for labels, value in family.rows:
                metric.add_metric(list(labels), value)
            yield metric


def _theirs(families: list[Family]) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    return generate_latest(registry)


def _family(name: str, kind: str, labels: tuple[str, ...], text: str,
            rows: list[tuple[tuple[str, ...], float]], fixed: bool = False) -> Family:
    return Family(name, kind, labels, text, [key for key, _ in rows],
                  [value for _, value in rows], fixed)


def _families(values: list[float], shift: int = 0) -> list[Family]:
    """Gauges and a counter over awkward label values (rotated by ``shift``) and numbers."""
    names = AWKWARD[shift:] + AWKWARD[:shift]
    return [
        _family("fabcorr_test_link_ratio", "gauge", ("switch", "port", "direction"),
                'help with a \\ backslash,\na newline and "quotes"',
                [((a, b, "in"), v) for a, b, v in zip(names, reversed(names), values,
                                                         strict=False)]),
        _family("fabcorr_test_events_total", "counter", ("kind",), "a counter",
                [((name,), v) for name, v in zip(names, values, strict=False)]),
        _family("fabcorr_test_bare", "gauge", (), "no labels", [((), values[-1])]),
        _family("fabcorr_test_empty", "gauge", ("zone",), "no series", []),
        # label names out of order: the text sorts them
        _family("fabcorr_test_sorted", "gauge", ("zeta", "alpha", "mid"), "sorted",
                [((names[0], names[1], names[2]), 1.0)]),
    ]


def test_awkward_labels_and_numbers_render_as_prometheus_client_renders_them():
    text = SeriesText()
    for shift, values in enumerate([NUMBERS, NUMBERS[::-1], [-0.0] * 9, [0.0] * 9,
                                    NUMBERS[3:] + NUMBERS[:3]]):
        families = _families(values, shift)
        ours = text.render(families)
        assert ours == _theirs(families)
    assert b'direction="in",port="' in ours and b'\\"quoted\\"' in ours
    assert b"two\\nlines" in ours


def test_negative_zero_after_zero_keeps_its_sign():
    text = SeriesText()
    family = _family("fabcorr_test_zero", "gauge", ("k",), "zeros",
                     [(("a",), 0.0), (("b",), -0.0), (("c",), 0)])
    assert text.render([family]) == _theirs([family])
    assert b'fabcorr_test_zero{k="b"} -0.0\n' in text.render([family])


def test_a_fixed_familys_text_is_kept_while_the_same_lists_come_back():
    text = SeriesText()
    keys, values = [("a",)], [1.0]
    fixed = Family("fabcorr_test_kept", "gauge", ("k",), "kept", keys, values, fixed=True)
    first = text.render([fixed])
    assert first == _theirs([fixed])
    keys.append(("b",))  # behind its back: the kept text shows it was not rendered
    values.append(2.0)
    assert text.render([fixed]) == first
    new = replace(fixed, keys=list(keys))
    assert text.render([new]) == _theirs([new]) != first
    unfixed = replace(fixed, keys=[("a",)], values=[3.0], fixed=False)
    assert text.render([unfixed]) == _theirs([unfixed])
    unfixed.values[0] = 4.0  # not fixed: the same lists are rendered again
    assert text.render([unfixed]) == _theirs([unfixed])
    assert b'fabcorr_test_kept{k="a"} 4.0\n' in text.render([unfixed])


def test_kept_label_strings_are_bounded_by_the_latest_series():
    text = SeriesText()
    many = _family("fabcorr_test_many", "gauge", ("k",), "many",
                   [((str(n),), float(n)) for n in range(1000)])
    text.render([many])
    assert text.kept == 1000
    few = replace(many, keys=[("1",), ("x",)], values=[1.0, 2.0])
    assert text.render([few]) == _theirs([few])
    assert text.kept == 2
    assert text.render([many]) == _theirs([many])  # gone and back: rendered again


def test_label_values_must_match_the_labels():
    family = Family("fabcorr_test_wrong", "gauge", ("a", "b"), "wrong", [("x",)], [1.0])
    with pytest.raises(ValueError, match="fabcorr_test_wrong: 1 label values for 2 labels"):
        SeriesText().render([family])


def _random_schema(rng: random.Random) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, kind, labels) of a few families, label names in random order."""
    schema = []
    for number in range(8):
        kind = rng.choice(["gauge", "counter"])
        schema.append((f"fabcorr_random_{number}" + ("_total" if kind == "counter" else ""),
                       kind, tuple(rng.sample(["switch", "port", "direction", "tenant", "job",
                                               "a_b", "zone"], rng.randint(0, 4)))))
    return schema


def _random_families(rng: random.Random, schema: list[tuple[str, str, tuple[str, ...]]],
                     known: list[str], last: dict[str, list[tuple[str, ...]]]) -> list[Family]:
    """Some of the families of ``schema`` with random series: label values drawn from
    ``known`` mostly, awkward and new ones sometimes; sorted or in random order; or the
    series of the family's ``last`` render again, in new tuples, one dropped or added."""
    families = []
    for name, kind, labels in rng.sample(schema, rng.randint(1, len(schema))):
        if name in last and rng.random() < 0.5:
            keys = [tuple(list(key)) for key in last[name]]
            at, new = rng.randint(0, len(keys)), _random_key(rng, known, len(labels))
            if rng.random() < 0.5 and keys:
                del keys[min(at, len(keys) - 1)]
            elif new not in keys:
                keys.insert(at, new)
        else:
            keys = sorted({_random_key(rng, known, len(labels))
                           for _ in range(rng.randint(0, 60 if labels else 1))})
        if rng.random() < 0.2:
            rng.shuffle(keys)
        last[name] = keys
        values = [rng.choice(NUMBERS) if rng.random() < 0.2 else
                  rng.uniform(-1, 1) * 10.0 ** rng.randint(-8, 18) for _ in keys]
        families.append(Family(name, kind, labels, f"help of {name}", keys, values))
    return families


def _random_key(rng: random.Random, known: list[str], count: int) -> tuple[str, ...]:
    return tuple(rng.choice(known) if rng.random() < 0.9
                 else rng.choice([*AWKWARD, str(rng.random())]) for _ in range(count))


def test_random_registries_render_as_generate_latest_writes_them():
    """Many renders of random families through one SeriesText: series coming, going,
    moving and coming back, in new tuples each time; every text is generate_latest's."""
    rng = random.Random("series-text/14")
    schema, known = _random_schema(rng), [f"v{n}" for n in range(4)]
    text, last = SeriesText(), {}
    for _ in range(300):
        families = _random_families(rng, schema, known, last)
        assert text.render(families) == _theirs(families)
    assert text.kept > 0


def test_the_exposition_of_a_replayed_scenario_is_generate_latest_of_its_registry(tmp_path):
    """The example scenario (hotspot, attribution, sFlow health), then the next view:
    label strings kept from the first, values and series of the second."""
    view = replayed(make_capture(tmp_path))
    current = [view]
    exposition = Exposition(lambda: current[0])
    first = exposition.render()
    assert first == generate_latest(exposition.registry)
    assert b"fabcorr_hotspot_active{" in first and b"fabcorr_link_tenant_bytes" in first
    current[0] = replace(view, sflow=Totals(datagrams=12, rejects={"bad-version": 3}),
                         hotspots=view.hotspots[1:], attribution_s=0.25)
    second = exposition.render()
    assert second == generate_latest(exposition.registry)
    assert second != first
    assert b'fabcorr_sflow_rejects_total{reason="bad-version"} 3.0\n' in second
