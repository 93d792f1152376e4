"""io bindings: BVH read/write round trips, warnings, and every error class with its message."""
import warnings

import numpy as np
import pytest

import koma


def test_read_tiny(test_data):
    m = koma.read(test_data / "tiny.bvh")
    assert (m.frame_count, m.joint_count, m.frame_rate) == (5, 2, 30.0)
    assert m.skeleton.names[0] == "Hips"
    res = koma.io.read_motion(str(test_data / "tiny.bvh"))
    assert res.motion.frame_count == 5 and isinstance(res.warnings, list)


def test_write_read_round_trip(tmp_path):
    m = koma.make_sample_motion()
    out = tmp_path / "walk.bvh"
    koma.write(out, m)
    back = koma.read(out)
    assert back.frame_count == m.frame_count and back.skeleton.names == m.skeleton.names
    np.testing.assert_allclose(koma.positions(back), koma.positions(m), atol=1e-6)
    assert back.source_unit == koma.LengthUnit.centimetre


def test_format_parse_bvh_round_trip():
    m = koma.make_sample_motion(koma.SampleSettings(walk_cycles=1, jump=False))
    text = koma.io.format_bvh(m, unit=koma.LengthUnit.metre)
    back = koma.io.parse_bvh(text, "mem.bvh", unit=koma.LengthUnit.metre).motion
    np.testing.assert_allclose(koma.positions(back), koma.positions(m), atol=1e-6)


def test_bad_file_error_has_the_cli_message(test_data):
    with pytest.raises(koma.BadFileError) as e:
        koma.read(test_data / "bad_row.bvh")
    assert str(e.value).endswith("bad_row.bvh:15: frame 1, value 5: 'zero' is not a number")
    assert e.value.code == "bad_file" and e.value.context.endswith("bad_row.bvh:15")
    with pytest.raises(koma.BadFileError, match="ends inside the hierarchy"):
        koma.read(test_data / "truncated.bvh")


def test_missing_file_is_an_oserror(tmp_path):
    with pytest.raises(OSError, match="cannot open"):
        koma.read(tmp_path / "nope.bvh")


def test_unsupported_extension_and_unit(tmp_path):
    with pytest.raises(koma.BadFileError):
        koma.write(tmp_path / "x.fbx", koma.make_sample_motion())
    assert not list(tmp_path.iterdir())   # nothing partial is left behind
    with pytest.raises(ValueError, match="unknown unit 'parsec'"):
        koma.read("x.bvh", unit="parsec")


def test_points_csv_round_trip(tmp_path):
    m = koma.make_sample_motion(koma.SampleSettings(walk_cycles=1, jump=False))
    tracks = koma.io.point_tracks(m, koma.forward_kinematics(m))
    koma.io.write_points_csv(tmp_path / "p.csv", tracks, koma.LengthUnit.centimetre)
    back = koma.io.read_points_csv(tmp_path / "p.csv", koma.LengthUnit.centimetre)
    assert back.names == tracks.names
    np.testing.assert_allclose(back.positions, tracks.positions, atol=1e-6)


@pytest.mark.parametrize("rel", ["bvh/cmu/cmu-daz/05_01.bvh",
                                 "bvh/styles/bandai-namco-1/dataset-1_bow_normal_001.bvh"])
def test_real_files_round_trip(shared_data, tmp_path, rel):
    path = shared_data / rel
    if not path.exists():
        pytest.skip(f"{rel} not in the corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", koma.KomaWarning)
        m = koma.read(path)
        koma.write(tmp_path / "out.bvh", m)
        back = koma.read(tmp_path / "out.bvh")
    assert back.frame_count == m.frame_count
    scale = m.skeleton.rest_extent()
    np.testing.assert_allclose(koma.positions(back), koma.positions(m), atol=1e-5 * scale)


def test_gltf_round_trip(tmp_path):
    if not koma.io.is_motion_file("x.glb"):
        pytest.skip("koma built without glTF")
    m = koma.resample(koma.make_sample_motion(koma.SampleSettings(walk_cycles=1, jump=False)), 24.0)
    koma.write(tmp_path / "walk.glb", m)
    back = koma.read(tmp_path / "walk.glb", frame_rate=24.0)
    assert back.frame_count == m.frame_count
    idx = [m.skeleton.find(n) for n in back.skeleton.names]
    assert min(idx) >= 0
    np.testing.assert_allclose(koma.positions(back)[:, :len(idx)], koma.positions(m)[:, idx], atol=1e-4)
