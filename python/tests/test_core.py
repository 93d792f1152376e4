"""Core bindings: numpy views without copies, FK, resample, cut, sample motion, settings."""
import copy
import gc

import numpy as np
import pytest

from conftest import runs_without_the_gil

import koma


def test_rotation_view_is_the_motions_memory():
    m = koma.make_sample_motion()
    r = m.rotations
    assert r.shape == (m.frame_count, m.joint_count, 4)
    assert not r.flags["OWNDATA"]
    assert np.shares_memory(r, m.rotations)
    np.testing.assert_allclose(np.linalg.norm(r, axis=2), 1.0, atol=1e-9)
    # Writing through the view changes what the C++ side sees (FK of the root moves with it).
    before = koma.positions(m)[:, 0].copy()
    m.translations[:, 0, 1] += 0.25
    after = koma.positions(m)[:, 0]
    np.testing.assert_allclose(after - before, np.tile([0, 0.25, 0], (m.frame_count, 1)), atol=1e-12)


def test_view_keeps_its_owner_alive():
    r = koma.make_sample_motion().rotations
    t = koma.make_sample_motion().translations
    gc.collect()
    filler = [koma.make_sample_motion() for _ in range(3)]  # reuse freed memory if it were freed
    np.testing.assert_allclose(np.linalg.norm(r, axis=2), 1.0, atol=1e-9)
    assert np.isfinite(t).all() and len(filler) == 3


def test_assigning_arrays_copies_in_and_checks_shape():
    m = koma.make_sample_motion()
    view = m.rotations
    ident = np.zeros_like(view)
    ident[..., 3] = 1.0
    m.rotations = ident
    assert np.shares_memory(view, m.rotations)   # same buffer, old views stay valid
    assert (view[..., 3] == 1.0).all()
    with pytest.raises(ValueError, match="expected an array of shape"):
        m.rotations = np.zeros((3, 2, 4))


def test_motion_from_arrays_round_trips():
    src = koma.make_sample_motion()
    m = koma.Motion(src.skeleton, src.frame_rate, src.rotations, src.translations)
    m.validate()
    assert m.frame_count == src.frame_count
    np.testing.assert_array_equal(m.rotations, src.rotations)
    assert not np.shares_memory(m.rotations, src.rotations)
    np.testing.assert_allclose(koma.positions(m), koma.positions(src))
    with pytest.raises(ValueError, match="rotations must have shape"):
        koma.Motion(src.skeleton, 30.0, np.zeros((4, 3, 4)), np.zeros((4, 3, 3)))


def test_fk_of_rest_pose_is_bind_pose():
    sk = koma.sample_skeleton()
    rest = koma.rest_motion(sk, 24.0, 2)
    pos = koma.positions(rest)
    offsets = sk.offsets
    expected = np.zeros((sk.joint_count, 3))
    for j, p in enumerate(sk.parents):
        expected[j] = offsets[j] + (expected[p] if p >= 0 else 0)
    np.testing.assert_allclose(pos[0, :sk.joint_count], expected, atol=1e-12)
    np.testing.assert_allclose(pos[1], pos[0])


def test_fk_world_rotations_are_unit_and_compose_parents():
    m = koma.make_sample_motion()
    w = koma.forward_kinematics(m)
    assert w.positions.shape == (m.frame_count, m.skeleton.point_count, 3)
    assert w.rotations.shape == (m.frame_count, m.joint_count, 4)
    np.testing.assert_allclose(np.linalg.norm(w.rotations, axis=2), 1.0, atol=1e-9)
    # The root's world rotation is its local rotation.
    np.testing.assert_allclose(w.rotations[:, 0], m.rotations[:, 0], atol=1e-12)


def test_sample_feet_are_planted_on_the_ground():
    m = koma.make_sample_motion()
    y = koma.positions(m)[..., 1]
    assert abs(y.min()) < 0.01          # the lowest foot point touches y = 0
    assert y.max() > 1.5                # a 1.75 m character


def test_resample_and_cut():
    m = koma.make_sample_motion()
    r = koma.resample(m, 24.0)
    assert r.frame_rate == 24.0
    assert r.frame_count == koma.resampled_frame_count(m.frame_count, 60.0, 24.0)
    # 60 -> 24 fps: every 5th source frame is a 24 fps frame every 2nd; they coincide exactly.
    np.testing.assert_allclose(r.translations[::2], m.translations[::5][: len(r.translations[::2])], atol=1e-12)
    c = koma.cut(m, 10, 20)
    assert c.frame_count == 10
    np.testing.assert_array_equal(c.rotations, m.rotations[10:20])
    with pytest.raises(ValueError):
        koma.cut(m, 20, 10)
    with pytest.raises(koma.InvalidSettingsError, match="frame rate"):
        koma.resample(m, 0.0)


def test_copy_is_deep():
    m = koma.make_sample_motion()
    c = copy.copy(m)
    c.translations[:] = 0
    assert np.abs(m.translations).sum() > 0


def test_settings_by_keyword_and_validation():
    s = koma.SampleSettings(walk_cycles=1, jump=False)
    assert s.walk_cycles == 1 and s.jump is False and s.frame_rate == 60.0
    with pytest.raises(TypeError, match="unknown setting 'walk'"):
        koma.SampleSettings(walk=1)
    with pytest.raises(ValueError):
        koma.make_sample_motion(koma.SampleSettings(frame_rate=-5))
    assert "walk_cycles=1" in repr(s)


def test_make_skeleton_and_validate():
    sk = koma.make_skeleton(["Hips", "Spine"], [-1, 0], [[0, 1, 0], [0, 0.2, 0]], end_sites=[(1, [0, 0.3, 0])])
    sk.validate()
    assert sk.point_count == 3 and sk.point_name(2).startswith("Spine")
    assert sk.has_position_channels(0) and not sk.has_position_channels(1)
    with pytest.raises(koma.BadDataError, match="used twice"):  # the constructor validates (issue 17)
        koma.make_skeleton(["A", "A"], [-1, 0], [[0, 0, 0], [0, 1, 0]])


def test_mismatch_error():
    a = koma.sample_skeleton()
    b = koma.make_skeleton(["Hips", "Spine"], [-1, 0], [[0, 1, 0], [0, 0.2, 0]])
    with pytest.raises(koma.MismatchError) as e:
        koma.require_same_topology(a, b)
    assert isinstance(e.value, koma.Error) and e.value.code == "mismatch"


def test_bad_data_error_carries_frame_and_joint():
    m = koma.make_sample_motion()
    m.translations[7, 3, 0] = np.nan
    with pytest.raises(koma.BadDataError, match="frame 7"):
        m.validate()


def test_long_calls_release_the_gil():
    m = koma.make_sample_motion(koma.SampleSettings(walk_cycles=60))
    assert runs_without_the_gil(lambda: [koma.resample(m, 240.0) for _ in range(3)])
