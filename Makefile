# fabcorr: `make demo` runs it on the example fabric, `make test` runs the tests, `make
# image` builds its OCI image into the local Docker engine.
# Every target creates and refreshes the virtualenv (.venv) itself; as root, `make test`
# also installs the Debian packages the tests drive (see APT_PACKAGES).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
APT_PACKAGES := graphviz lldpd snmpd snmp iproute2 nftables pmacct tshark prometheus \
	debootstrap chromium libjemalloc2
EXAMPLE := examples/fabric-small
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
IMAGE ?= fabcorr:$(VERSION)
BASE_IMAGE ?= fabcorr-base:bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian
IMAGE_BUILD := build/image
# Debian's kubectl 1.20 (kubernetes-client, kustomize v2.0.3), unpacked here rather than
# installed: it renders deploy/'s kustomizations in the tests whatever kubectl is on PATH
# (another package may own /usr/bin/kubectl).
KUBECTL := build/kubernetes-client/usr/bin/kubectl

.PHONY: demo tour test bench bench-xl fuzz lint example system-deps clean wheels image

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

test: $(STAMP) system-deps $(KUBECTL)
	$(CARGO) test --quiet --manifest-path wire/Cargo.toml
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# The topology suite on the x-large fabric (issue 15's targets; ~12 GB and minutes before
# the compact graph, run it alone on a quiet machine). The table's peak_rss_mib row is the
# whole suite process's, as /usr/bin/time -v counts it. Then one x-large interval through
# 16 shards (issue 17: benchmarks/shard_suite.py).
bench-xl: $(STAMP)
	$(BIN)/python -m benchmarks --only topology --sizes x-large --repeat 1
	$(BIN)/python -m benchmarks --only shards --repeat 1

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

# The image (Dockerfile): its base a Debian root filesystem from debootstrap, kept as a
# tarball in build/image (rebuilds reuse it) and imported with `docker import`; then the
# wheels, the fabcorr wheel (its Rust extension inside) and every dependency's, installed
# by `docker build`. Needs root (debootstrap) and Docker; asks no registry.
image: wheels $(IMAGE_BUILD)/base-bookworm.tar
	sh deploy/image/base.sh $(IMAGE_BUILD)/base-bookworm.tar $(BASE_IMAGE) $(DEBIAN_MIRROR)
	docker build --quiet --build-arg BASE=$(BASE_IMAGE) --tag $(IMAGE) \
		--label org.opencontainers.image.title=fabcorr \
		--label org.opencontainers.image.version=$(VERSION) \
		--label org.opencontainers.image.licenses=Apache-2.0 .

$(IMAGE_BUILD)/base-bookworm.tar: deploy/image/base.sh
	mkdir -p $(IMAGE_BUILD)
	rm -f $@
	sh deploy/image/base.sh $@ $(BASE_IMAGE) $(DEBIAN_MIRROR)

PY_SOURCES := $(shell find correlator inventory topology simulator -name '*.py' \
	-not -path '*/__pycache__/*')
wheels: $(IMAGE_BUILD)/wheels/.built
$(IMAGE_BUILD)/wheels/.built: pyproject.toml $(WIRE_SOURCES) $(PY_SOURCES) | $(STAMP)
	rm -rf $(IMAGE_BUILD)/wheels
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check \
		--wheel-dir $(IMAGE_BUILD)/wheels .
	touch $@

$(KUBECTL):
	mkdir -p build/kubernetes-client
	cd build && { apt-get download kubernetes-client || \
		{ apt-get update -qq && apt-get download kubernetes-client; }; }
	dpkg-deb -x build/kubernetes-client_*.deb build/kubernetes-client
	rm build/kubernetes-client_*.deb
	touch $@

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
	rm -rf $(VENV) out .pytest_cache .ruff_cache wire/target correlator/_wire*.so build
