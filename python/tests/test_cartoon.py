"""koma.cartoon bindings: the filter with the C++ settings, planted feet, errors."""
import numpy as np
import pytest

import koma

cartoon = pytest.importorskip("koma.cartoon", reason="koma built without the cartoon module")


@pytest.fixture(scope="module")
def walk():
    return koma.make_sample_motion()


def test_strength_zero_is_identity(walk):
    s = cartoon.CartoonSettings()
    s.filter.strength = 0.0
    out = cartoon.cartoon_motion(walk, s).motion
    np.testing.assert_allclose(koma.positions(out), koma.positions(walk), atol=1e-9)


def test_filter_changes_motion_and_reports(walk):
    res = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(filter=cartoon.FilterSettings(strength=2.0)))
    assert res.motion.frame_count == walk.frame_count
    assert res.body_change_m > 0 and res.max_change_m >= res.body_change_m
    assert res.sigma_min <= res.sigma_mean <= res.sigma_max
    np.testing.assert_allclose(np.linalg.norm(res.motion.rotations, axis=2), 1.0, atol=1e-9)


def test_channel_filter_passes_ramps():
    x = list(np.linspace(0, 3, 50))
    np.testing.assert_allclose(cartoon.filter_channel(x, 3.0, 2.0), x, atol=1e-9)


def test_keep_feet_reduces_skating(walk):
    free = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(filter=cartoon.FilterSettings(strength=3.0)))
    kept = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(filter=cartoon.FilterSettings(strength=3.0),
                                                                keep_feet=True))
    assert kept.contacts.contact_count() > 0
    assert kept.skating_output_mm <= free.skating_output_mm + 1e-9 or kept.skating_output_mm < 1.0


def test_errors(walk):
    with pytest.raises(ValueError):
        cartoon.cartoon_motion(walk, cartoon.CartoonSettings(filter=cartoon.FilterSettings(window=7)))
    with pytest.raises(koma.BadDataError):
        cartoon.cartoon_motion(koma.cut(walk, 0, 2))
