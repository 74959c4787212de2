"""Shared test helpers: the engines under test and the published figures."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from kernels.notation import parse_deal
from kernels.play import play
from kernels.reference import play_reference

DATA = Path(__file__).parent / "data"
SHARED_VECTORS = Path(__file__).resolve().parents[2] / "shared" / "vectors"

settings.register_profile("bmn", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "bmn"))

KERNELS = ("fast", "percard", "general")


def play_engine(deal, engine: str, leader: int = 0):
    if engine == "reference":
        return play_reference(deal, leader)
    return play(deal, leader=leader, engine_name=engine)


def records():
    with open(DATA / "records.tsv", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(params=("reference",) + KERNELS)
def engine(request):
    return request.param


def deal(text: str):
    return parse_deal(text)
