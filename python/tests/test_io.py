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
        koma.write(tmp_path / "x.obj", koma.make_sample_motion())
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
    assert koma.io.is_motion_file("x.glb")
    m = koma.resample(koma.make_sample_motion(koma.SampleSettings(walk_cycles=1, jump=False)), 24.0)
    koma.write(tmp_path / "walk.glb", m)
    back = koma.read(tmp_path / "walk.glb", frame_rate=24.0)
    assert back.frame_count == m.frame_count
    idx = [m.skeleton.find(n) for n in back.skeleton.names]
    assert min(idx) >= 0
    np.testing.assert_allclose(koma.positions(back)[:, :len(idx)], koma.positions(m)[:, idx], atol=1e-4)


def _glb_json(path):
    import json
    import struct
    data = path.read_bytes()
    assert data[:4] == b"glTF"
    length, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A  # "JSON"
    return json.loads(data[20:20 + length])


def test_gltf_read_write_keeps_the_character(shared_data, tmp_path):
    fox = shared_data / "gltf/Fox/Fox.glb"
    if not fox.exists():
        pytest.skip("Fox.glb not in the corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", koma.KomaWarning)
        m = koma.read(fox)
        scene = koma.gltf_scene(m)
        assert isinstance(scene, koma.io.GltfScene)
        assert koma.io.read_motion(str(fox)).gltf_scene is not None
        koma.write(tmp_path / "fox.glb", m)                                   # the character comes along
        koma.write(tmp_path / "bare.glb", koma.cut(m, 0, m.frame_count))     # a new motion: skeleton only
        koma.write(tmp_path / "again.glb", koma.cut(m, 0, m.frame_count), gltf_scene=m)
        back = koma.read(tmp_path / "fox.glb", frame_rate=m.frame_rate)
    src, out = _glb_json(fox), _glb_json(tmp_path / "fox.glb")
    for key in ("meshes", "skins", "materials", "textures", "images"):
        assert len(out.get(key, [])) == len(src.get(key, [])), key
    assert len(src["meshes"]) > 0
    assert "meshes" not in _glb_json(tmp_path / "bare.glb")
    assert len(_glb_json(tmp_path / "again.glb")["meshes"]) == len(src["meshes"])
    assert back.frame_count == m.frame_count
    np.testing.assert_allclose(koma.positions(back), koma.positions(m), atol=1e-4 * m.skeleton.rest_extent())
    opts = koma.io.WriteOptions(gltf_scene=scene)
    assert opts.gltf_scene is not None and koma.io.WriteOptions().gltf_scene is None
    # A character of another skeleton is refused and nothing is written.
    with pytest.raises(koma.MismatchError):
        koma.write(tmp_path / "wrong.glb", koma.make_sample_motion(), gltf_scene=scene)
    assert not (tmp_path / "wrong.glb").exists()


def test_fbx_stacks_and_character(shared_data, tmp_path):
    """Issue 23: the stacks of an FBX file are listed as `koma info` does, and its character goes to GLB."""
    human = shared_data / "fbx/quaternius_AnimatedHuman.fbx"
    if not human.exists():
        pytest.skip("quaternius_AnimatedHuman.fbx not in the corpus")
    stacks = koma.io.list_fbx_animations(str(human))
    assert [s.index for s in stacks] == list(range(len(stacks))) and len(stacks) == 9
    walk = next(s for s in stacks if s.name.endswith("|Walk"))
    assert walk.frame_rate == 24 and walk.frame_count == 25 and not walk.junk
    assert stacks[0].junk
    r = koma.io.read_motion(str(human), koma.io.ReadOptions(animation=walk.name))
    assert r.motion.frame_count == walk.frame_count and r.gltf_scene is not None
    koma.io.write_motion(str(tmp_path / "walk.glb"), r.motion, koma.io.WriteOptions(gltf_scene=r.gltf_scene))
    doc = _glb_json(tmp_path / "walk.glb")
    assert len(doc["meshes"]) == 1 and len(doc["skins"][0]["joints"]) == r.motion.skeleton.joint_count
    with pytest.raises(koma.BadFileError, match="no animation 'Dance'"):
        koma.io.read_motion(str(human), koma.io.ReadOptions(animation="Dance"))
    # Issue 40: the part after the last '|' names a stack; FBX out keeps the name, or the one given.
    walked = koma.read(human, animation="Walk")
    assert walked.name == walk.name
    koma.write(tmp_path / "walk.fbx", walked)
    assert koma.io.list_fbx_animations(str(tmp_path / "walk.fbx"))[0].name == walk.name
    koma.write(tmp_path / "named.fbx", walked, name="walk")
    back = koma.read(tmp_path / "named.fbx")
    assert back.name == "walk" and back.frame_count == walk.frame_count
    opts = koma.io.WriteOptions(fbx_ascii=True, fbx_unit=koma.LengthUnit.metre, fbx_up=koma.io.FbxUpAxis.z)
    koma.io.write_motion(str(tmp_path / "ascii.fbx"), walked, opts)
    assert (tmp_path / "ascii.fbx").read_bytes().startswith(b"; FBX 7.4.0 project file")
    assert koma.read(tmp_path / "ascii.fbx").source_unit == koma.LengthUnit.metre
    fox = shared_data / "gltf/Fox/Fox.glb"
    if fox.exists():
        assert [a.name for a in koma.io.list_gltf_animations(str(fox))] == ["Survey", "Walk", "Run"]
