"""pytest set-up: the hypothesis profile, the engine fixture, the session's Ray cluster (helpers live in
helpers.py and cluster_helpers.py)."""

from __future__ import annotations

import contextlib
import os
import secrets
import sys

import pytest
from hypothesis import HealthCheck, settings

# Ray's token authentication (on, as on every cluster bmn's configs start), with a token of the
# session's own, since a fresh machine has none in ~/.ray/auth_token: for the session's cluster, this
# process, and the bmn commands and Ray instances the tests start. Set before anything imports Ray,
# which reads its settings once.
os.environ["RAY_AUTH_MODE"] = "token"
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

from helpers import KERNELS  # noqa: E402

settings.register_profile("bmn", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bmn"))


@pytest.fixture(params=("reference",) + KERNELS)
def engine(request):
    return request.param


# -- one Ray cluster for the session ---------------------------------------------------------------
# Starting Ray takes seconds; the tests that run searches on an existing cluster (in this process, or
# through `bmn ... --address`) share one: a real `ray start --head`, as users start a cluster. The
# tests about starting Ray (bmn's own local instance, nodes joining and leaving) start their own.

@pytest.fixture(scope="session")
def ray_cluster():
    """The address of a `ray start --head` cluster with 2 CPUs, token authentication on (as on a real
    cluster), kept in a temporary directory of its own so it leaves no record where Ray looks for a
    cluster to join. Stopped (every process it started) when the session ends."""
    import shutil
    import signal
    import subprocess
    import tempfile
    import time

    temp = tempfile.mkdtemp(prefix="bmnray-")  # short: Ray's socket paths must fit in 107 bytes
    ray_exe = os.path.join(os.path.dirname(sys.executable), "ray")
    log = open(os.path.join(temp, "head.log"), "wb")
    head = subprocess.Popen([ray_exe, "start", "--head", "--block", "--num-cpus=2", "--port=0",
                             f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats",
                             "--object-store-memory=500000000"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        record = os.path.join(temp, "ray_current_cluster")
        deadline = time.monotonic() + 120
        while not (os.path.exists(record) and open(record).read().strip()):
            if head.poll() is not None or time.monotonic() > deadline:
                with open(os.path.join(temp, "head.log"), "rb") as said:
                    raise RuntimeError(f"ray start --head failed: {said.read().decode()[-2000:]}")
            time.sleep(0.1)
        yield open(record).read().strip()
    finally:
        # Every process of the cluster is in the head's process group: the test cluster holds
        # nothing worth a graceful stop, and `ray start --block` takes many seconds to stop gracefully.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait()
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_address(ray_cluster):
    """This process joined to the session's cluster for one test module (as a driver); the address
    for `bmn ... --address`."""
    import ray

    ray.init(address=ray_cluster, logging_level="ERROR")
    yield ray_cluster
    ray.shutdown()

