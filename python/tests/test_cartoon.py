"""koma.cartoon bindings: the filter with the C++ settings, planted feet, errors."""
import numpy as np
import pytest

import koma

cartoon = koma.cartoon


@pytest.fixture(scope="module")
def walk():
    return koma.make_sample_motion()


def test_strength_zero_is_identity(walk):
    s = cartoon.CartoonSettings()
    s.strength = 0.0
    out = cartoon.cartoon_motion(walk, s).motion
    np.testing.assert_allclose(koma.positions(out), koma.positions(walk), atol=1e-9)


def test_filter_changes_motion_and_reports(walk):
    res = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(strength=2.0))
    assert res.motion.frame_count == walk.frame_count
    assert res.body_change_m > 0 and res.max_change_m >= res.body_change_m
    assert res.sigma_min <= res.sigma_mean <= res.sigma_max
    np.testing.assert_allclose(np.linalg.norm(res.motion.rotations, axis=2), 1.0, atol=1e-9)


def test_channel_filter_passes_ramps():
    x = list(np.linspace(0, 3, 50))
    np.testing.assert_allclose(cartoon.filter_channel(x, 3.0, 2.0), x, atol=1e-9)


def test_keep_feet_reduces_skating(walk):
    free = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(strength=3.0))
    kept = cartoon.cartoon_motion(walk, cartoon.CartoonSettings(strength=3.0, keep_feet=True))
    assert kept.contacts.contact_count() > 0
    assert kept.skating_output_mm <= free.skating_output_mm + 1e-9 or kept.skating_output_mm < 1.0


def test_errors(walk):
    with pytest.raises(ValueError):
        cartoon.cartoon_motion(walk, cartoon.CartoonSettings(per_frame=cartoon.FilterSettings(window=7)))
    with pytest.raises(ValueError, match="min_sigma_seconds"):
        cartoon.cartoon_motion(walk, cartoon.CartoonSettings(min_sigma_seconds=0.0))
    with pytest.raises(koma.BadDataError):
        cartoon.cartoon_motion(koma.cut(walk, 0, 2))


def test_result_names_worst_joint_and_frame_and_reports(walk):
    settings = cartoon.CartoonSettings(strength=3.0, keep_feet=True)
    res = cartoon.cartoon_motion(walk, settings)
    moved = np.linalg.norm(koma.positions(res.motion) - koma.positions(walk), axis=2)[:, :walk.joint_count]
    assert moved[res.max_change_frame, res.max_change_joint] == pytest.approx(res.max_change_m)
    summary = cartoon.cartoon_summary(res, settings)
    assert summary["body_change_mm"]["worst_joint"] == walk.skeleton.names[res.max_change_joint]
    assert summary["body_change_mm"]["worst_frame"] == res.max_change_frame
    assert summary["contacts"] == res.contacts.contact_count()
    assert isinstance(cartoon.cartoon_report(res, settings)["contacts"], list)


def test_rate_independent_strength_and_per_frame_escape(walk):
    s = cartoon.CartoonSettings(strength=2.0)
    at30, at120 = s.filter_at(30.0), s.filter_at(120.0)
    assert at30.strength == pytest.approx(2.0) and at120.strength == pytest.approx(32.0)
    assert at120.window == 4 * at30.window and at120.min_sigma == pytest.approx(4 * at30.min_sigma)
    # per-frame settings are used as given, whatever the rate
    fixed = cartoon.CartoonSettings(per_frame=cartoon.FilterSettings(strength=2.0))
    assert fixed.filter_at(120.0).strength == 2.0 and fixed.filter_at(120.0).window == 32
    res = cartoon.cartoon_motion(walk, s)
    assert res.frame_rate == walk.frame_rate
    assert res.filter.strength == pytest.approx(2.0 * (walk.frame_rate / 30.0) ** 2)
    assert cartoon.cartoon_summary(res, s)["sigma_seconds"]["mean"] == pytest.approx(res.sigma_mean / walk.frame_rate)
