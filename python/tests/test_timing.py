"""koma.timing bindings: key times, timing sources, re-timing (self-transfer, direction, path kept),
JSON round trip, errors with the C++ messages, GIL release."""
import copy

import numpy as np
import pytest

from conftest import bandai_walks, runs_without_the_gil

import koma
from koma import body

timing = koma.timing


def sample(cycles=6):
    return koma.make_sample_motion(koma.SampleSettings(jump=False, walk_cycles=cycles))


def played_at(motion, factor):
    """The same poses played `factor` times slower (the frame rate relabelled)."""
    slow = copy.copy(motion)
    slow.frame_rate = motion.frame_rate / factor
    return slow


@pytest.fixture(scope="module")
def walk():
    return sample()


def test_key_times_of_the_sample_walk(walk):
    roles = body.find_joint_roles(walk.skeleton)
    report = timing.detect_key_times(walk, roles)
    feet = [e for e in report.effectors if e.kind == timing.KeyKind.contact]
    assert {e.name for e in feet} == {"left_foot", "right_foot"}
    steps = timing.step_keys(report)
    # Six cycles: about two steps per cycle, alternating feet, strictly increasing frames.
    assert 10 <= len(steps) <= 14
    assert all(b.frame > a.frame for a, b in zip(steps, steps[1:]))
    assert all(a.foot != b.foot for a, b in zip(steps[1:], steps[2:]))  # the first step may start twice
    assert report.find("left_foot") is not None and report.find("tail") is None
    for e in feet:
        for k in e.keys:
            assert e.keys and k.begin <= k.frame < k.end and 0 <= k.confidence <= 1


def test_self_transfer_is_the_identity(walk):
    # A walk re-timed like itself: same number of frames, warp = identity, same poses.
    res = koma.retime_like(walk, walk)
    r = res.report
    assert res.motion.frame_count == walk.frame_count and r.output_frames == r.input_frames
    warp = np.asarray(r.warp)
    assert np.abs(warp - np.arange(walk.frame_count)).max() < 0.5
    assert timing.is_monotone_warp(r.warp, walk.frame_count - 1)
    for s in r.segments:
        assert s.output_duration == pytest.approx(s.input_duration, rel=0.02)
    err = np.abs(koma.positions(res.motion) - koma.positions(walk)).max()
    assert err < 0.01 * walk.skeleton.rest_extent()
    assert r.path_deviation < 1e-9


@pytest.mark.parametrize("factor", [0.8, 1.25])
def test_retime_takes_the_examples_tempo_and_keeps_the_path(walk, factor):
    src = koma.timing_source(played_at(walk, factor))
    res = koma.retime_like(walk, src, timing.RetimeSettings(succession=False, amplitude=False))
    r = res.report
    # The same path at the pace of an example played `factor` times slower takes about `factor`
    # times as long (head and tail outside the steps and the matching make it inexact).
    assert r.output_frames / r.input_frames == pytest.approx(factor, rel=0.15)
    assert r.path_deviation < 1e-9 * r.path_length
    # First and last frames are kept.
    np.testing.assert_allclose(koma.positions(res.motion)[[0, -1]], koma.positions(walk)[[0, -1]], atol=1e-9)
    # The output's root path lies on the input's.
    roles = body.find_joint_roles(walk.skeleton)
    hips = timing.path_point(roles)
    a = timing.joint_path(walk, hips)
    b = timing.joint_path(res.motion, hips)
    assert b.shape == (res.motion.frame_count, 3)
    assert timing.polyline_deviation(a, b) < 1e-6
    assert timing.hausdorff_distance(a, b) == pytest.approx(r.path_hausdorff, rel=1e-9, abs=1e-15)
    assert len(r.keys) == len(r.segments) + 1 and r.key_error >= 0
    assert timing.polyline_length(a) == pytest.approx(r.path_length, rel=1e-9)


def test_timing_source_from_several_examples_and_json(tmp_path, walk):
    slow = played_at(walk, 0.8)
    src = koma.timing_source([walk, slow], names=["walk", "slow"])
    assert src.examples == ["walk", "slow"]
    assert {s.example for s in src.segments} == {0, 1}
    one, other = koma.timing_source(walk).mean_cycle_seconds, koma.timing_source(slow).mean_cycle_seconds
    assert min(one, other) < src.mean_cycle_seconds < max(one, other)
    koma.write_timing_source(tmp_path / "t.json", src)
    back = koma.read_timing_source(tmp_path / "t.json")
    assert back.examples == src.examples and len(back.segments) == len(src.segments)
    assert back.mean_cycle_seconds == src.mean_cycle_seconds
    assert [s.duration for s in back.segments] == [s.duration for s in src.segments]
    # A saved source path works as `like`.
    a = koma.retime_like(walk, tmp_path / "t.json").motion
    b = koma.retime_like(walk, src).motion
    np.testing.assert_array_equal(a.rotations, b.rotations)


def test_errors_carry_the_cpp_message(walk):
    with pytest.raises(koma.InvalidSettingsError) as e:
        koma.retime_like(walk, walk, timing.RetimeSettings(max_duration_scale=0.5))
    assert str(e.value) == f"{e.value.context}: {e.value.message}" and "max_duration_scale" in str(e.value)
    with pytest.raises(koma.BadDataError, match="timing source"):
        timing.retime(walk, body.find_joint_roles(walk.skeleton), timing.TimingSource())
    still = koma.rest_motion(walk.skeleton, 30.0, 60)
    with pytest.raises(koma.BadDataError, match="foot key time"):
        koma.retime_like(still, walk)
    other = koma.make_skeleton(["root", "a", "b"], [-1, 0, 1], [[0, 1, 0], [0, 0.5, 0], [0, 0.5, 0]])
    with pytest.raises(koma.MismatchError):
        timing.make_timing_source([walk, koma.rest_motion(other, 60.0, walk.frame_count)],
                                  body.find_joint_roles(walk.skeleton))
    with pytest.raises(koma.BadFileError, match="t.json"):
        timing.timing_source_from_json("{}", "t.json")
    with pytest.raises(TypeError, match="unknown setting"):
        timing.RetimeSettings(sucession=False)


def test_retime_releases_the_gil():
    # A long clip, re-timed without key correction (about 0.7 s; the correction's searches would
    # take many seconds more on this 240 fps clip, without telling more about the GIL).
    m = koma.resample(sample(cycles=20), 240.0)
    src = koma.timing_source(played_at(sample(), 1.2))
    assert runs_without_the_gil(lambda: koma.retime_like(m, src, timing.RetimeSettings(key_iterations=0)))


def test_real_walk_retimed_like_a_sad_one(shared_data):
    mn, ms = bandai_walks(shared_data, "normal", "sad")
    src = koma.timing_source(ms)
    res = koma.retime_like(mn, src)
    r = res.report
    assert r.path_deviation < 1e-6 * r.path_length
    hips = timing.path_point(body.find_joint_roles(mn.skeleton))
    p_in, p_out = koma.positions(mn), koma.positions(res.motion)
    np.testing.assert_allclose(p_out[[0, -1], hips], p_in[[0, -1], hips], atol=1e-6)
    # The sad walk is slower: the same path takes longer.
    assert r.output_frames > 1.2 * r.input_frames
    # Steps only (no succession, no amplitude): the first and last poses are the input's.
    steps_only = koma.retime_like(mn, src, timing.RetimeSettings(succession=False, amplitude=False)).motion
    np.testing.assert_allclose(koma.positions(steps_only)[[0, -1]], p_in[[0, -1]], atol=1e-6)
    # Self-transfer on real data is the identity too.
    same = koma.retime_like(mn, mn).report
    assert same.output_frames == same.input_frames
    assert np.abs(np.asarray(same.warp) - np.arange(mn.frame_count)).max() < 0.5


def test_sources_from_a_folder_and_a_roles_file_follow_the_library_rules(tmp_path, walk):
    """koma.timing_source(path) is timing.load_timing_source: the rules the CLI's --like uses."""
    folder = tmp_path / "examples"
    folder.mkdir()
    koma.write(folder / "b.bvh", played_at(walk, 1.5))
    koma.write(folder / "a.bvh", walk)
    (folder / "notes.txt").write_text("not a motion")
    src = koma.timing_source(folder)
    assert list(src.examples) == ["a.bvh", "b.bvh"]
    roles = tmp_path / "roles.json"
    ankle = walk.skeleton.names[body.find_joint_roles(walk.skeleton)[body.Role.left_ankle]]
    roles.write_text('{"left_ankle": "%s"}' % ankle)
    assert list(body.read_roles(walk.skeleton, roles).points) == list(body.find_joint_roles(walk.skeleton).points)
    res = koma.retime_like(walk, folder / "a.bvh", roles=roles)
    report = timing.retime_report(res.report, koma.timing_source(folder / "a.bvh"))
    assert report["output_frames"] == res.motion.frame_count and len(report["warp"]) == res.motion.frame_count
    assert timing.timing_source_summary(src)["examples"] == ["a.bvh", "b.bvh"]
    detect = timing.key_times_report(walk, body.find_joint_roles(walk.skeleton),
                                     timing.detect_key_times(walk, body.find_joint_roles(walk.skeleton)))
    assert detect["frames"] == walk.frame_count
    (tmp_path / "bad.json").write_text("[1]")
    with pytest.raises(koma.BadFileError, match="bad.json"):
        body.read_roles(walk.skeleton, tmp_path / "bad.json")


def test_cli_and_python_give_the_same_frames_for_a_pair(shared_data, tmp_path):
    """`koma retime A --like B` and koma.retime_like(A, B) re-time to the same frame count (the
    Blender add-on's test checks the same pair against koma.retime_like)."""
    import json
    import os
    import subprocess
    normal = shared_data / "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh"
    sad = shared_data / "bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh"
    run = subprocess.run([os.environ["KOMA_CLI"], "retime", str(normal), "--like", str(sad), "-o",
                          str(tmp_path / "out.bvh"), "--json"], capture_output=True, text=True, check=True)
    cli = json.loads(run.stdout)
    res = koma.retime_like(koma.read(normal), str(sad))
    assert res.report.output_frames == cli["output_frames"]
    assert res.report.speed == koma.timing.SpeedFrom.cadence
    assert cli["cadence"]["speed_from"] == "cadence"
    assert cli["cadence"]["output_step_s"] == pytest.approx(res.report.output_step)
    assert res.report.output_step == pytest.approx(res.report.source_step, rel=0.01)
