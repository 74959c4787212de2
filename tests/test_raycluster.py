"""Joining a cluster: an address where no cluster answers gets its sentence in seconds, not after the
minutes Ray's own connection takes to give up. (Joining clusters that answer, and starting a local
Ray, are what every search of test_cluster.py and test_cluster_multinode.py does.)"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.cloud import raycluster
from kernels.errors import BmnError

BMN = Path(sys.executable).parent / "bmn"


@contextlib.contextmanager
def closed_port():
    """A loopback port that refuses connections (bound, so nothing else takes it, but not listening)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@contextlib.contextmanager
def silent_port():
    """A loopback port that never answers, as one behind a firewall that drops packets: a listener
    whose queue of connections is full (Linux then drops the new connection's packets)."""
    with socket.socket() as s, contextlib.ExitStack() as held:
        s.bind(("127.0.0.1", 0))
        s.listen(0)
        port = s.getsockname()[1]
        while True:
            try:
                held.enter_context(socket.create_connection(("127.0.0.1", port), timeout=0.5))
            except TimeoutError:
                break
        yield port


def test_an_address_where_nothing_listens_is_one_sentence_within_seconds(tmp_path):
    """Issue 31: `--address 127.0.0.1:1` took about five minutes before its sentence. The bound is a
    liveness property (seconds, not minutes), held by the subprocess's timeout."""
    with closed_port() as port:
        address = f"127.0.0.1:{port}"
        for flags, env in ((["--address", address], os.environ), ([], {**os.environ, "RAY_ADDRESS": address})):
            done = subprocess.run([str(BMN), "search", "--deals", "10", "--shard-size", "10", "--out",
                                   str(tmp_path / "run"), "--no-progress", *flags], env=env, capture_output=True,
                                  text=True, timeout=30)
            errors = [line for line in done.stderr.splitlines() if line.startswith("bmn: error:")]
            assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
            assert f"cannot join the Ray cluster at {address}: nothing answers there (Connection refused)" in errors[0]


def test_an_address_that_never_answers_is_given_up_after_answer_s(monkeypatch):
    monkeypatch.setattr(raycluster, "ANSWER_S", 1.0)
    with silent_port() as port, pytest.raises(BmnError, match=r"nothing answers there \(no answer in 1 s\)"):
        raycluster._check_answers(f"127.0.0.1:{port}")


def test_an_address_that_answers_and_other_forms_of_address_are_left_to_ray():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        raycluster._check_answers(f"127.0.0.1:{s.getsockname()[1]}")  # a cluster's head accepts at once
    for address in ("auto", "garbage", "ray://127.0.0.1:1"):  # Ray reads these (and says what is wrong)
        raycluster._check_answers(address)
