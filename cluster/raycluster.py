"""Joining a Ray cluster, or starting a local one, for a search."""

from __future__ import annotations

import logging
import os

import ray

from kernels.errors import BmnError


def cluster_address(address: str | None) -> str | None:
    """The cluster to join: --address, else RAY_ADDRESS; None means a local Ray of our own."""
    return address or os.environ.get("RAY_ADDRESS")


class _QuietStartup(logging.Filter):
    """Drops Ray's notice that it turned token authentication on for the local instance bmn starts
    (it is on, as it should be; the notice is not bmn's output). Real warnings still show."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Token authentication is enabled for this Ray cluster")


_QUIET = _QuietStartup()


def connect(address: str | None, workers: int) -> bool:
    """Join the cluster, or start a local one with `workers` CPUs (0: this machine's). True if this
    call started Ray."""
    if ray.is_initialized():
        return False
    address = cluster_address(address)
    try:
        if address:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
        else:
            logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(_QUIET)
            ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False,
                     logging_level="WARNING", log_to_driver=False)
    except ConnectionError as error:
        raise BmnError(f"cannot reach the Ray cluster at {address}: {error}") from None
    return True
