"""Hostile input at the binding (issue 17): bad indices, sizes, dtypes, strides and NaN/inf raise
IndexError / ValueError / TypeError (or a koma.Error naming the broken invariant), never crash or hang.
A crash fails the whole run, so the regression cases run in-process."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import koma

REFUSED = (IndexError, ValueError, TypeError, koma.Error)
FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def motion():
    return koma.make_sample_motion()


def chain_skeleton(n):
    return koma.make_skeleton([f"j{i}" for i in range(n)], [-1] + list(range(n - 1)), np.full((n, 3), 0.1))


# ---- the measured cases -----------------------------------------------------------------------
def test_assigning_a_skeleton_of_another_joint_count_is_refused(motion):
    m = koma.make_sample_motion()
    with pytest.raises(ValueError, match=r"200 joints.*19"):
        m.skeleton = chain_skeleton(200)
    assert m.joint_count == 19
    assert np.isfinite(m.rotations.sum())
    assert koma.forward_kinematics(m).point_count == m.skeleton.point_count


def test_assigning_a_skeleton_of_the_same_joint_count_works(motion):
    m = koma.make_sample_motion()
    m.skeleton = chain_skeleton(m.joint_count)
    assert m.skeleton.names[0] == "j0"
    koma.forward_kinematics(m)


@pytest.mark.parametrize("joint", [-1, 19, 999, 10**8])
def test_timing_joint_indices_are_checked(motion, joint):
    with pytest.raises(IndexError, match=r"index .* out of range \[0, 19\)"):
        koma.timing.joint_path(motion, joint)
    with pytest.raises(IndexError, match="out of range"):
        koma.timing.rotation_range(motion, joint)
    with pytest.raises(IndexError, match="parent"):
        koma.timing.rotation_peak_lag(motion, joint, 1, 5, 3.0)
    with pytest.raises(IndexError, match="child"):
        koma.timing.rotation_peak_lag(motion, 1, joint, 5, 3.0)


def test_rotation_range_999_is_an_error_not_garbage(motion):
    with pytest.raises(IndexError):
        koma.timing.rotation_range(motion, 999)
    assert 0.0 <= koma.timing.rotation_range(motion, 1) < np.pi


@pytest.mark.parametrize("index", [-1, 10**8, 2**31 - 1])
def test_skeleton_queries_check_their_index(motion, index):
    sk = motion.skeleton
    for query in (sk.point_name, sk.point_parent, sk.euler_order, sk.has_position_channels):
        with pytest.raises(IndexError, match="out of range"):
            query(index)
    assert sk.point_name(sk.point_count - 1)
    with pytest.raises(IndexError):
        sk.euler_order(sk.joint_count)  # an end site is a point, not a joint


@pytest.mark.parametrize("parents", [[-1, 5], [-1, 1], [-1, 2, 1], [0, -1], [-1, -1]])
def test_a_skeleton_with_bad_parents_is_refused(parents):
    n = len(parents)
    with pytest.raises(koma.BadDataError, match="parent|root"):
        koma.make_skeleton([f"j{i}" for i in range(n)], parents, np.zeros((n, 3)))


def test_end_sites_must_hang_from_a_joint(motion):
    sk = chain_skeleton(3)
    with pytest.raises(koma.BadDataError):
        sk.end_sites = [koma.EndSite(7, np.zeros(3))]
    assert sk.end_site_count == 0


@pytest.mark.parametrize("rate", [0.0, -30.0, float("nan"), float("inf")])
def test_frame_rate_must_be_finite_and_positive(rate):
    m = koma.make_sample_motion()
    with pytest.raises(ValueError, match="frame_rate"):
        m.frame_rate = rate
    src = m
    with pytest.raises(koma.BadDataError, match="frame rate"):
        koma.Motion(src.skeleton, rate, src.rotations, src.translations)


def test_rest_motion_needs_frames(motion):
    with pytest.raises(ValueError, match="frames"):
        koma.rest_motion(motion.skeleton, 30.0, -1)
    with pytest.raises(ValueError, match="frames"):
        koma.rest_motion(motion.skeleton, 30.0, 0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_hausdorff_of_non_finite_points_raises(bad):
    a = np.zeros((5, 3))
    a[:, 0] = np.arange(5)
    b = a.copy()
    b[2, 1] = bad
    with pytest.raises(ValueError, match="finite"):
        koma.timing.hausdorff_distance(a, b)
    with pytest.raises(ValueError, match="finite"):
        koma.timing.hausdorff_distance(b, a)
    with pytest.raises(ValueError, match="finite"):
        koma.timing.polyline_deviation(a, b)
    with pytest.raises(ValueError, match="finite"):
        koma.timing.polyline_length(b)


def test_pose_descriptor_and_root_progress_check_indices(motion):
    poses = koma.forward_kinematics(motion)
    roles = koma.body.find_joint_roles(motion.skeleton)
    with pytest.raises(IndexError, match="frame"):
        koma.timing.pose_descriptor(poses, motion.frame_count, roles, 1.0)
    with pytest.raises(IndexError, match="root_point"):
        koma.timing.root_progress(motion, poses, 10**6)
    other = koma.forward_kinematics(koma.cut(motion, 0, 3))
    with pytest.raises(ValueError, match="poses have"):
        koma.timing.root_progress(motion, other, 0)


# ---- property-based ---------------------------------------------------------------------------
huge = st.one_of(st.integers(-(2**40), -1), st.integers(19, 2**40))


@FAST
@given(index=huge)
def test_any_out_of_range_index_is_an_index_error(motion, index):
    calls = [
        lambda: koma.timing.joint_path(motion, index),
        lambda: koma.timing.rotation_range(motion, index),
        lambda: koma.timing.rotation_peak_lag(motion, 0, index, 3, 3.0),
        lambda: motion.skeleton.euler_order(index),
        lambda: motion.skeleton.has_position_channels(index),
    ]
    if index < 0 or index >= motion.skeleton.point_count:
        calls += [lambda: motion.skeleton.point_name(index), lambda: motion.skeleton.point_parent(index)]
    for call in calls:
        with pytest.raises((IndexError, TypeError)):  # TypeError: beyond a C++ long long
            call()


@FAST
@given(n=st.integers(1, 40), data=st.data())
def test_assigning_any_skeleton_keeps_views_valid(n, data):
    m = koma.make_sample_motion()
    parents = [-1] + [data.draw(st.integers(-3, n + 3)) for _ in range(n - 1)]
    try:
        sk = koma.make_skeleton([f"j{i}" for i in range(n)], parents, np.zeros((n, 3)))
    except REFUSED:
        return
    assert all(-1 <= p < i for i, p in enumerate(sk.parents))
    try:
        m.skeleton = sk
    except ValueError:
        assert n != 19
    assert m.joint_count == m.rotations.shape[1] == m.translations.shape[1]
    koma.forward_kinematics(m)


arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int32, np.int64, np.bool_, np.complex128]),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6),
    elements=None,
)


def hostile(array, transpose, step):
    if transpose and array.ndim >= 2:
        array = array.T
    if step > 1 and array.ndim >= 1:
        array = array[::step]
    return array


@pytest.mark.filterwarnings("ignore::numpy.ComplexWarning")
@FAST
@given(a=arrays, b=arrays, transpose=st.booleans(), step=st.integers(1, 3))
def test_polyline_functions_on_any_array(a, b, transpose, step):
    a, b = hostile(a, transpose, step), hostile(b, transpose, step)
    for call in (
        lambda: koma.timing.hausdorff_distance(a, b),
        lambda: koma.timing.polyline_deviation(a, b),
        lambda: koma.timing.polyline_length(a),
    ):
        try:
            result = call()
        except REFUSED:
            continue
        assert not np.isnan(result)


@FAST
@given(data=st.data(), transpose=st.booleans(), step=st.integers(1, 2))
def test_motion_arrays_of_any_shape_dtype_and_stride(motion, data, transpose, step):
    m = koma.make_sample_motion(koma.SampleSettings(walk_cycles=1))
    shape = data.draw(st.sampled_from([m.rotations.shape, m.translations.shape, (3, 19, 4), (0,), ()]))
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64, np.bool_]))
    array = data.draw(hnp.arrays(dtype=dtype, shape=shape))
    array = hostile(array, transpose, step)
    for target in ("rotations", "translations"):
        before = getattr(m, target).shape
        try:
            setattr(m, target, array)
        except REFUSED:
            pass
        assert getattr(m, target).shape == before
    try:
        koma.Motion(m.skeleton, m.frame_rate, array, array)
    except REFUSED:
        pass


@FAST
@given(points=hnp.arrays(np.float64, st.tuples(st.integers(1, 12), st.just(3)),
                         elements=st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_non_finite_polylines_raise_or_return_finite(points):
    line = np.stack([np.arange(4.0), np.zeros(4), np.zeros(4)], axis=1)
    try:
        result = koma.timing.hausdorff_distance(line, points)
    except ValueError as e:
        assert not np.isfinite(points).all() and "finite" in str(e)
        return
    assert np.isfinite(points).all() and not np.isnan(result)  # 1e154 squared may overflow to inf


@pytest.mark.parametrize("joint", [-1, 19, 10**8])
def test_gait_joint_rotation_checks_the_joint(joint):
    walk = koma.make_sample_motion(koma.SampleSettings(jump=False, walk_cycles=6))
    basis = koma.gait.fourier_analyze(koma.gait.extract_cycle(walk), koma.gait.FourierSettings(harmonics=3)).basis
    with pytest.raises(IndexError, match="joint_rotation"):
        koma.gait.joint_rotation(basis, joint, [0.0, 0.0, 0.0])


def test_roles_pointing_past_the_skeleton_are_refused(motion):
    roles = koma.body.find_joint_roles(motion.skeleton)
    roles.set(koma.body.Role.left_hip, 10**6)
    poses = koma.forward_kinematics(motion)
    with pytest.raises(IndexError, match="detect_key_times: roles"):
        koma.timing.detect_key_times(motion, roles)
    with pytest.raises(IndexError, match="pose_descriptor: roles"):
        koma.timing.pose_descriptor(poses, 0, roles, 1.0)
    with pytest.raises(IndexError, match="make_timing_source: roles"):
        koma.timing.make_timing_source([motion, motion], roles)
    with pytest.raises(IndexError, match="segment_timings: roles"):
        koma.timing.segment_timings(motion, poses, roles, [], [0.0] * motion.frame_count)


@pytest.mark.parametrize("point", [-1, 10**6])
def test_effector_points_are_checked(motion, point):
    effector = koma.body.Effector(name="bad", points=[0, point])
    with pytest.raises(IndexError, match="effector points"):
        koma.body.detect_contacts(motion, [effector])


def test_point_tracks_need_the_motions_poses(motion):
    short = koma.forward_kinematics(koma.cut(motion, 0, 3))
    with pytest.raises(ValueError, match="point_tracks: poses have 3 frames"):
        koma.io.point_tracks(motion, short)
    tracks = koma.io.point_tracks(motion, koma.forward_kinematics(motion))
    assert tracks.positions.shape == (motion.frame_count, motion.skeleton.point_count, 3)
