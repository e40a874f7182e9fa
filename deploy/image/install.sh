#!/bin/sh
# The image's steps, shared by every stage of the Dockerfile:
#   install.sh runtime       Python 3.11 and jemalloc (from apt when the base lacks them),
#                            and the non-root user fabcorr (65532, as deploy/deployment.yaml
#                            runs)
#   install.sh app WHEELS    a venv at /opt/fabcorr with the fabcorr wheel and its
#                            dependencies from the directory WHEELS only (no index)
set -eu
case $1 in
runtime)
    if ! python3 -c 'import sys, venv; assert sys.version_info[:2] == (3, 11)' 2>/dev/null \
            || ! ldconfig -p | grep -q libjemalloc.so.2; then
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            python3 python3-venv ca-certificates libjemalloc2
        rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
    fi
    groupadd --gid 65532 fabcorr
    useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin fabcorr
    ;;
app)
    python3 -m venv /opt/fabcorr
    /opt/fabcorr/bin/pip install --quiet --no-index --no-cache-dir --find-links "$2" fabcorr
    # the venv needs no installer at run time
    /opt/fabcorr/bin/pip uninstall --quiet --yes pip setuptools
    ;;
*)
    echo "install.sh: runtime | app WHEELS" >&2
    exit 2
    ;;
esac
