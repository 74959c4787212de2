"""pytest set-up: the hypothesis profile, the engine fixture, the session's Ray cluster (helpers live in
helpers.py and cluster_helpers.py)."""

from __future__ import annotations

import os
import secrets

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
    from cluster_helpers import ray_head

    with ray_head(num_cpus=2) as address:
        yield address


@pytest.fixture(scope="module")
def ray_address(ray_cluster):
    """This process joined to the session's cluster for one test module (as a driver); the address
    for `bmn ... --address`."""
    import ray

    ray.init(address=ray_cluster, logging_level="ERROR")
    yield ray_cluster
    ray.shutdown()



# -- the order in which the files reach the two pytest workers ---------------------------------------
# `make test` hands whole files to two workers (--dist loadfile --no-loadscope-reorder), in the order
# collected; a worker takes its next file while its last two tests run. pytest-xdist's own order
# (files with most tests first) left the long files of few tests (a multi-node cluster, the
# notebook) to the end, one worker finishing them while the other waited. Longest first (the files
# as measured on a fresh clone, benchmarks/README.md), the rest after in name order: the workers end
# within seconds of each other.
LONGEST_FIRST = ("test_faults", "test_cluster", "test_cluster_multinode", "test_gpu", "test_cycle_factory",
                 "test_cluster_elastic", "test_cluster_gpu", "test_pool", "test_cluster_s3", "test_notebook",
                 "test_query", "test_atlas", "test_cycles_cluster", "test_cli_play", "test_exercism", "test_config")


def pytest_collection_modifyitems(items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}

    def file_rank(item):
        name = item.path.stem
        return (rank.get(name, len(rank)), name)

    items.sort(key=file_rank)  # (stable: the tests of a file keep their order)
