"""Joining a Ray cluster, or starting a local one, for a search."""

from __future__ import annotations

import concurrent.futures as futures
import contextlib
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time

import ray

from kernels.errors import BmnError

from ..runs.storage import first_line as _first_line


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
    if address and address.lower().startswith(("http://", "https://")):
        raise BmnError(f"{address} is the address of a Ray dashboard and its Jobs API, not of a cluster to "
                       f"join: give --address (or RAY_ADDRESS) the cluster's HOST:6379, or submit bmn as a "
                       f"job (`ray job submit --address {address} -- bmn search ...`)")
    # ray.init replaces the process's SIGTERM handler with one that exits at once (status 15). A
    # handler the caller set (the command line's: SIGTERM, as `ray job stop` sends it, interrupts the
    # search like Ctrl-C, which saves its state and releases the run) is put back afterwards.
    main = threading.current_thread() is threading.main_thread()
    caller_handler = signal.getsignal(signal.SIGTERM) if main else None
    try:
        if address:
            _check_answers(address)
            with _core_warnings() as said:
                try:
                    ray.init(address=address, logging_level="WARNING", log_to_driver=False)
                except Exception:
                    if any(sign in said() for sign in _REFUSED_TOKEN):
                        raise BmnError(
                            f"the Ray cluster at {address} refused this client's authentication token: give bmn "
                            f"the cluster's token (RAY_AUTH_MODE=token with RAY_AUTH_TOKEN, or ~/.ray/auth_token; "
                            f"`ray get-auth-token` on one of its nodes prints it)") from None
                    raise
        else:
            logging.getLogger("ray._private.authentication.authentication_token_setup").addFilter(_QUIET)
            # address="local": a Ray of our own even where `ray start` left a cluster (or only the
            # record of one) on this machine; joining that takes --address or RAY_ADDRESS.
            ray.init(address="local", num_cpus=workers or os.cpu_count(), include_dashboard=False,
                     logging_level="WARNING", log_to_driver=False)
    except BmnError:
        raise
    except Exception as error:  # ConnectionError, ValueError (a malformed address), ...
        if not address:
            raise BmnError(f"cannot start a local Ray instance: {_first_line(error)}") from None
        raise BmnError(f"cannot join the Ray cluster at {address}: {_first_line(error)}") from None
    finally:
        if callable(caller_handler):
            signal.signal(signal.SIGTERM, caller_handler)
    return True


# How long a cluster's address may take to answer before bmn gives up on it. Ray's own connection
# goes on for minutes (a control store it cannot reach is asked again and again) before it fails.
ANSWER_S = 10.0


def _check_answers(address: str) -> None:
    """One sentence, within ANSWER_S, where nothing answers at a HOST:PORT address: refused (no
    cluster there, or not on that port), or no answer at all (a firewall or security group dropping
    the connection, a host that is down). A running cluster's control store accepts at once. Other
    forms of address ("auto", ray://...) are left to Ray."""
    host, colon, port = address.rpartition(":")
    if not (colon and host and port.isdigit()) or "://" in host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=ANSWER_S).close()  # [::1]:6379
    except OSError as error:
        why = f"no answer in {ANSWER_S:.0f} s" if isinstance(error, TimeoutError) else (error.strerror or
                                                                                    _first_line(error))
        raise BmnError(f"cannot join the Ray cluster at {address}: nothing answers there ({why}); give --address "
                       f"(or RAY_ADDRESS) the HOST:PORT of a running cluster's head node (`ray start --head` prints "
                       f"it; port 6379 unless --port says otherwise), reachable from this machine") from None


# What Ray's core prints when the cluster refuses the client's token (it retries for 20 s, then
# raises only "Failed to connect").
_REFUSED_TOKEN = ("InvalidAuthToken", "Authentication token is missing or incorrect")


@contextlib.contextmanager
def _core_warnings():
    """Holds what is written to file descriptor 2 (where Ray's C++ core logs) while joining a
    cluster; yields a function returning it. Afterwards it is passed on to stderr, unless joining
    failed for a reason bmn says in a sentence of its own (then it is only noise)."""
    sys.stderr.flush()
    saved = os.dup(2)
    held = tempfile.TemporaryFile()
    os.dup2(held.fileno(), 2)

    def said() -> str:
        held.seek(0)
        return held.read().decode(errors="replace")

    failed = False
    try:
        yield said
    except BmnError:
        failed = True
        raise
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        if not failed:
            text = said()
            if text:
                sys.stderr.write(text)
        held.close()


# How long the cluster's control store may stay unreachable before the search gives up on it.
UNREACHABLE_S = 60.0
_HEAD = "node:__internal_head__"


class ClusterHealth:
    """Tells the coordinator when the cluster it runs on is gone for good.

    Lost worker nodes are routine (their shards run elsewhere); these are not: the node this driver
    runs on (on a local run, the whole cluster) or the head node marked dead, or the cluster's control
    store unreachable for UNREACHABLE_S. Each check asks the control store for the node table in a
    thread of its own, so a control store that does not answer cannot hang the search.
    """

    def __init__(self):
        self.own_node = ray.get_runtime_context().get_node_id()
        self.unreachable_since: float | None = None
        self._pool = futures.ThreadPoolExecutor(1, thread_name_prefix="bmn-health")
        self._pending: futures.Future | None = None

    def problem(self) -> str | None:
        """None while the cluster can run shards; else one sentence saying what is gone."""
        if self._pending is None:
            self._pending = self._pool.submit(ray.nodes)
        try:
            nodes = self._pending.result(timeout=10)
        except futures.TimeoutError:
            return self._unreachable("does not answer")
        except Exception as error:
            self._pending = None
            return self._unreachable(str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__)
        self._pending = None
        self.unreachable_since = None
        by_id = {n["NodeID"]: n for n in nodes}
        own = by_id.get(self.own_node)
        if own is not None and not own["Alive"]:
            return "the Ray node this search runs on died (its raylet is gone)"
        heads = [n for n in nodes if _HEAD in n.get("Resources", {}) or n.get("IsHeadNode")]
        if heads and not any(n["Alive"] for n in heads):
            return "the Ray cluster's head node died"
        return None

    def close(self) -> None:
        """Let the checking thread go (without waiting for a control store that does not answer)."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _unreachable(self, why: str) -> str | None:
        now = time.time()
        if self.unreachable_since is None:
            self.unreachable_since = now
        if now - self.unreachable_since >= UNREACHABLE_S:
            return f"the Ray cluster has not answered for {UNREACHABLE_S:.0f} s ({why})"
        return None


_requested: list[int] = []


def request_capacity(cpus: int) -> None:
    """Ask the cluster's autoscaler (if it has one) for `cpus` CPUs for the pending shards; the
    request stands until replaced, so it is sent again only when the number changes."""
    cpus = max(0, int(cpus))
    if _requested and _requested[-1] == cpus:
        return
    try:
        from ray.autoscaler.sdk import request_resources

        request_resources(num_cpus=cpus)
        _requested.append(cpus)
    except Exception:
        pass  # no autoscaler: the cluster is what it is


def withdraw_capacity() -> None:
    """Withdraw the standing request, if this process made one: a search that ended, failed or was
    interrupted must not keep an autoscaler's nodes up (they would never idle out)."""
    if _requested and _requested[-1] != 0:
        request_capacity(0)
