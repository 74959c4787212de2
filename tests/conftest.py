"""pytest set-up: the hypothesis profile and the engine fixture (helpers live in helpers.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from helpers import KERNELS

settings.register_profile("bmn", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bmn"))


@pytest.fixture(params=("reference",) + KERNELS)
def engine(request):
    return request.param
