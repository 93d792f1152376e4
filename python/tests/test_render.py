"""koma.render_file: the library's render pipeline, the one `koma render` runs: the same settings
give the CLI's files byte for byte (PNG frames, cels, MP4) and its --json figures."""
import json
import os
import pathlib
import subprocess
import warnings

import pytest

import koma

CLIP = "bvh/exporters/bvh-toolbox/walk01.bvh"  # 101 frames at 24 fps: about 4 s
SHORT = "bvh/styles/xia2015/neutral_18_000.bvh"  # 79 frames at 120 fps: 16 at 24


def cli():
    exe = os.environ.get("KOMA_CLI")
    if not exe or not pathlib.Path(exe).exists():
        pytest.skip("KOMA_CLI (the koma executable) not set; CTest sets it")
    return exe


def run_cli(*args):
    p = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p


def files(root):
    root = pathlib.Path(root)
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def render_quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", koma.KomaWarning)
        return koma.render_file(*args, **kwargs)


@pytest.fixture
def report(shared_data, tmp_path):
    """`koma keys --on 2` of the clip: the drawings to hold it on."""
    path = tmp_path / "keys.json"
    run_cli("keys", shared_data / CLIP, "-o", tmp_path / "held.bvh", "--on", "2", "--report", path)
    return path


def test_png_frames_and_json_match_the_cli(shared_data, report, tmp_path):
    clip = shared_data / CLIP
    p = run_cli("render", clip, "--keys", report, "-o", f"{tmp_path}/cli/", "--size", "160x90", "--camera",
                "side,follow", "--onion", "1", "--json")
    figures = render_quiet(clip, f"{tmp_path}/py/", keys=report, size=(160, 90), camera="side,follow", onion_skin=1)
    frames = files(tmp_path / "py")
    assert len(frames) == figures["frames"] == 101
    assert frames == files(tmp_path / "cli")
    expected = json.loads(p.stdout)
    del expected["seconds"]
    expected["output"] = f"{tmp_path}/py/"
    got = {k: v for k, v in figures.items() if k not in ("warnings", "notes")}
    assert got == expected
    assert figures["drawings"] == len(json.loads(report.read_text())["layers"][0]["keys"]) == 51  # on 2s


def test_transparent_cels_match_the_cli(shared_data, report, tmp_path):
    if koma.toon.unavailable_reason() is not None:
        pytest.skip(f"no OpenGL for the toon look: {koma.toon.unavailable_reason()}")
    clip = shared_data / CLIP
    run_cli("render", clip, "--keys", report, "-o", f"{tmp_path}/cli/", "--size", "160x90", "--transparent",
            "--smear", "--tones", "3", "--ink", "#203040", "-q")
    figures = render_quiet(clip, f"{tmp_path}/py/", keys=report, size="160x90", transparent=True, smear="smear",
                           tones=3, ink="#203040")
    assert figures["look"] == "toon" and figures["smear"] == "smear"
    assert files(tmp_path / "py") == files(tmp_path / "cli")


def test_mp4_comparison_matches_the_cli(shared_data, tmp_path):
    clip, other = shared_data / SHORT, shared_data / CLIP
    p = run_cli("render", clip, "--compare", other, "-o", tmp_path / "cli.mp4", "--size", "160x90", "--layout",
                "overlay", "--camera", "persp", "--multiples", "--fps", "12")
    with warnings.catch_warnings(record=True):
        figures = koma.render_file(clip, tmp_path / "py.mp4", compare=other, size=(160, 90), layout="overlay",
                                   camera="persp", smear="multiples", output_rate=12)
    assert (tmp_path / "py.mp4").read_bytes() == (tmp_path / "cli.mp4").read_bytes()
    # One clock for both clips: the shorter one holds its last pose, and says so (the CLI's note).
    assert len(figures["notes"]) == 1 and figures["notes"][0] in p.stderr
    assert figures["frames"] == 51  # the longer clip's 101 frames at 12 fps


def test_bad_settings_name_the_field_and_write_nothing(test_data, tmp_path):
    clip = test_data / "render_walk.bvh"
    cases = [({"tones": 4}, "toon.tones"), ({"shading": "glossy"}, "toon.shading"), ({"look": "anime"}, "look"),
             ({"camera": "fisheye"}, "camera"), ({"size": "0x0"}, "size"), ({"ink": "red"}, "toon.ink"),
             ({"look": "sticks", "smear": "smear"}, "toon.smear"), ({"transparent": True}, "toon.transparent"),
             ({"output_rate": -1}, "output_rate"), ({"onion_skin": 9}, "compare.onion_skin")]
    for settings, field in cases:
        with pytest.raises(koma.InvalidSettingsError, match=field.replace(".", r"\.")):
            koma.render_file(clip, tmp_path / "x.mp4", **settings)
        assert not (tmp_path / "x.mp4").exists()
    with pytest.raises(TypeError, match="unknown setting 'glow'"):
        koma.render_file(clip, tmp_path / "x.mp4", glow=1)
    with pytest.raises(koma.MismatchError):
        koma.render_file(clip, f"{tmp_path}/y/", keys=test_data / "render_report_mismatch.json")
    assert not (tmp_path / "y").exists()
