"""Shared fixtures: a seeded random generator per test (failures reproduce)."""

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))
