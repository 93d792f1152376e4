"""Shared fixtures: the real corpus (skipped when absent) and the repository's tiny fixtures."""
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TEST_DATA = pathlib.Path(os.environ.get("KOMA_TEST_DATA", HERE.parent.parent / "tests" / "data"))
SHARED_DATA = pathlib.Path(os.environ.get("KOMA_SHARED_DATA", HERE.parent.parent.parent / "shared" / "data"))


@pytest.fixture
def test_data():
    return TEST_DATA


@pytest.fixture
def shared_data():
    if not (SHARED_DATA / "bvh").is_dir():
        pytest.skip(f"shared motion corpus not found at {SHARED_DATA}")
    return SHARED_DATA
