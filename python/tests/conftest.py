"""Shared fixtures: the real corpus (skipped when absent) and the repository's tiny fixtures."""
import os
import pathlib
import threading
import warnings

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


def read_quiet(path):
    """koma.read without the reader's warnings (real files carry harmless quirks)."""
    import koma

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", koma.KomaWarning)
        return koma.read(path)


def bandai_walks(shared_data, *styles):
    """The Bandai-Namco dataset-1 walks of `styles` ("normal", "sad", ...), read quietly; skips the
    test when one is not in the corpus."""
    folder = shared_data / "bvh/styles/bandai-namco-1"
    paths = [folder / f"dataset-1_walk_{style}_001.bvh" for style in styles]
    if not all(p.exists() for p in paths):
        pytest.skip("Bandai-Namco walks not in the corpus")
    return [read_quiet(p) for p in paths]


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
