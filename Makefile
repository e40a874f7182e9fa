# fabcorr: `make demo` runs it on the example fabric, `make test` runs the tests.
# Every target creates and refreshes the virtualenv (.venv) itself; as root, `make test`
# also installs the Debian packages the tests drive (see APT_PACKAGES).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := graphviz lldpd snmpd snmp iproute2 nftables pmacct tshark prometheus
EXAMPLE := examples/fabric-small

.PHONY: demo tour test bench bench-xl fuzz lint example system-deps clean

# The Rust crate (wire/) builds into correlator/_wire*.so on install: any change to its
# sources reinstalls, as a change to pyproject.toml does.
WIRE_SOURCES := wire/Cargo.toml wire/Cargo.lock $(shell find wire/src -name '*.rs')
CARGO := cargo

$(STAMP): pyproject.toml $(WIRE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# The service against the emulated fabric of simulator/scenarios/demo.yaml (about a minute).
demo: $(STAMP)
	$(BIN)/fabcorr demo --out out/demo --snmp leaf02,leaf04

# The CLI over the example fabric's files: inventory, topology, a synthetic sFlow capture.
tour: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" sh $(EXAMPLE)/demo.sh out

test: $(STAMP) system-deps
	$(CARGO) test --quiet --manifest-path wire/Cargo.toml
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# The topology suite on the x-large fabric (issue 15's targets; ~12 GB and minutes before
# the compact graph, run it alone on a quiet machine). The table's peak_rss_mib row is the
# whole suite process's, as /usr/bin/time -v counts it.
bench-xl: $(STAMP)
	$(BIN)/python -m benchmarks --only topology --sizes x-large --repeat 1

# The Rust decoder against the Python one over 1,000,000 mutated datagrams (make test: 100,000).
fuzz: $(STAMP)
	FABCORR_DIFF_DATAGRAMS=1000000 $(BIN)/python -m pytest -q tests/correlator/sflow/test_native.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(CARGO) fmt --manifest-path wire/Cargo.toml --check
	$(CARGO) clippy --quiet --manifest-path wire/Cargo.toml -- -D warnings

# Regenerate the example fabric's facts and snapshot from its spec.
example: $(STAMP)
	rm -rf $(EXAMPLE)/kubernetes
	$(BIN)/fabcorr simulate generate --spec $(EXAMPLE)/fabric.yaml \
		--facts-out $(EXAMPLE)/facts.yaml --kube-out $(EXAMPLE)/kubernetes \
		--out $(EXAMPLE)/topology.json

system-deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian packages: $$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
		echo "not root: not installing $$missing; tests that need them will skip and say so"; \
	fi

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache wire/target correlator/_wire*.so
