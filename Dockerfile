# fabcorr's image. `make image` builds it FROM a Debian root filesystem made here with
# debootstrap and imported with `docker import` (deploy/image/base.sh), no registry asked;
# with a registry, any Debian bookworm base does:
#   make wheels
#   docker build --build-arg BASE=debian:bookworm-slim -t fabcorr:0.1.0 .
# The context needs only build/image/wheels (`make wheels`: the fabcorr wheel with its
# Rust extension, and every dependency's) and deploy/image/install.sh (.dockerignore).
# The image runs as user 65532 and writes nothing outside /tmp: run it with a read-only
# root and a tmpfs or volume on /tmp. It listens on 9460/tcp (metrics, API) and 6343/udp
# (sFlow). Labels come from the command line (`make image`: --label), as each metadata
# instruction costs the classic builder a layer commit.
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS runtime
COPY deploy/image/install.sh /usr/local/sbin/fabcorr-install
RUN fabcorr-install runtime

FROM runtime AS build
COPY build/image/wheels /wheels
RUN fabcorr-install app /wheels

FROM runtime
COPY --from=build /opt/fabcorr /opt/fabcorr
ENV PATH=/opt/fabcorr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["fabcorr"]
