#!/bin/sh
# Entrypoint of the memcore image: works for every process (workers, beat, Flower, CLI).
set -eu

# Prometheus multiprocess mode (prefork workers): start from an empty directory, otherwise
# the per-pid files of a previous container run would be summed into the new counters.
if [ -n "${PROMETHEUS_MULTIPROC_DIR:-}" ]; then
    mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
    find "$PROMETHEUS_MULTIPROC_DIR" -mindepth 1 -delete
fi

exec "$@"
