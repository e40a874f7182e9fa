#!/bin/sh
# The image's base: a Debian root filesystem from debootstrap (minbase, Python 3.11, venv
# and jemalloc, fabcorr run's allocator: correlator/allocator.py), written as a tarball
# once (a rebuild reuses it) and imported into the local Docker engine with `docker
# import`: no registry is asked for anything.
#   deploy/image/base.sh TARBALL TAG [MIRROR]
set -eu
tarball=$1 tag=$2 mirror=${3:-http://deb.debian.org/debian}
suite=bookworm
packages=python3,python3-venv,ca-certificates,libjemalloc2

if [ ! -s "$tarball" ]; then
    [ "$(id -u)" = 0 ] || { echo "base.sh: debootstrap needs root" >&2; exit 2; }
    command -v debootstrap >/dev/null || { echo "base.sh: no debootstrap (make system-deps)" >&2; exit 2; }
    root=$(mktemp -d "$(dirname "$tarball")/rootfs.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >&2
    # what a container never needs: package downloads and indexes, logs, docs and man
    # pages (the packages' copyright files stay)
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin \
        "$root"/var/lib/apt/lists/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
        "$root"/var/log/*.log "$root"/var/log/apt/*
    find "$root"/usr/share/doc -type f ! -name copyright -delete
    tar --numeric-owner -C "$root" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
fi
# imported again only when the tarball changed (its digest is the image's label)
digest=$(sha256sum "$tarball" | cut -d' ' -f1)
label='{{index .Config.Labels "fabcorr.base.sha256"}}'
if [ "$(docker image inspect --format "$label" "$tag" 2>/dev/null)" != "$digest" ]; then
    docker import --change 'CMD ["/bin/bash"]' --change "LABEL fabcorr.base.sha256=$digest" \
        "$tarball" "$tag" >/dev/null
fi
