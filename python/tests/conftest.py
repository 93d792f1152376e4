"""Shared fixtures: the real corpus (skipped when absent) and the repository's tiny fixtures."""
import os
import pathlib
import threading

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


def runs_without_the_gil(call):
    """Runs `call` on a thread and counts how often this thread gets to run meanwhile. A binding
    that held the GIL for the whole call would leave it at (almost) zero."""
    started = threading.Event()
    ticks = 0

    def work():
        started.set()
        call()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    while t.is_alive():
        ticks += 1
    t.join()
    return ticks > 1000
