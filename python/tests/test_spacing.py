"""Spacing charts (issue 42) through Python and the CLI, measured with numpy from the source's
forward kinematics: every inbetween covers its chart's share of the pose path (within 0.03), key
poses never move, `source` reproduces the keys-only output byte for byte, bad charts are refused."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import koma
from conftest import read_quiet

keys = koma.keys
CHARTS = ["source", "even", "slow-in", "slow-out", "slow-in-out", "halves", [0.05, 0.3, 0.9]]


def _joints(motion, world):
    return world[:, :motion.joint_count]


def measured_share(src_pos, from_at, from_pose, to_at, to_pose, shown, at):
    """Share of the pose path from `from_pose` through the source frames strictly between the keys
    to `to_pose` covered by the pose `shown` (lying near source position `at`)."""
    inner = [f for f in range(int(np.floor(from_at)) + 1, int(np.ceil(to_at))) if from_at < f < to_at]
    points = [from_pose] + [src_pos[f] for f in inner] + [to_pose]
    steps = [np.linalg.norm(b - a, axis=1).sum() for a, b in zip(points, points[1:])]
    total = float(np.sum(steps))
    before = sum(1 for f in inner if f < at)  # path points before the shown pose (besides the key)
    covered = float(np.sum(steps[:before])) + float(np.linalg.norm(shown - points[before], axis=1).sum())
    return covered / total if total > 0 else None, total


def check_spacing(src, spacing, out, tol=0.03):
    src_pos = _joints(src, koma.positions(src))
    out_pos = _joints(src, koma.positions(out))
    rate, checked = spacing.frame_rate, 0
    for d in spacing.drawings:
        if d.kind != keys.DrawingKind.inbetween:
            continue
        g = spacing.gaps[d.gap]
        from_at = g.start / rate * src.frame_rate
        to_at = min(g.end / rate * src.frame_rate, src.frame_count - 1)
        share, total = measured_share(src_pos, from_at, out_pos[g.start], to_at, out_pos[g.end], out_pos[d.frame],
                                      d.source_time * src.frame_rate)
        if total < 1e-6:
            continue
        assert abs(share - d.chart) <= tol, (g.chart.name(), g.start, g.end, d.frame, share, d.chart)
        checked += 1
    return checked


@pytest.fixture(scope="module")
def sample():
    return koma.make_sample_motion()


def test_every_chart_covers_its_share_on_the_sample(sample):
    drawn = koma.resample(sample, 24.0)
    k = keys.select_keys(drawn, keys.KeySettings(keys=5)).keys()
    for chart in CHARTS:
        spacing, out = koma.space(sample, k, 24.0, on=2, chart=chart)
        assert check_spacing(sample, spacing, out) > 0, chart
        for key in k:  # key poses never move: bit for bit the resampled frame
            np.testing.assert_array_equal(out.rotations[key], drawn.rotations[key])


def test_every_chart_on_a_shared_walk_and_punch(shared_data):
    folder = shared_data / "bvh/styles/bandai-namco-1"
    for name in ("dataset-1_walk_normal_001.bvh", "dataset-1_punch_normal_001.bvh"):
        src = read_quiet(folder / name)
        k = keys.select_keys(koma.resample(src, 24.0), keys.KeySettings(keys=10)).keys()
        for chart in CHARTS:
            spacing, out = koma.space(src, k, 24.0, on=2, chart=chart)
            assert check_spacing(src, spacing, out) > 10, (name, chart)


def test_slow_in_out_crowds_both_keys(sample):
    k = keys.select_keys(koma.resample(sample, 24.0), keys.KeySettings(keys=4)).keys()

    def shares(chart):
        spacing = koma.space(sample, k, on=2, chart=chart)[0]
        return [[d.chart for d in spacing.drawings if d.gap == g and d.kind == keys.DrawingKind.inbetween]
                for g in range(len(spacing.gaps))]

    compared = 0
    for e, s in zip(shares("even"), shares("slow-in-out")):
        if len(s) >= 2:
            assert s[0] < e[0] and s[-1] > e[-1]
            compared += 1
    assert compared >= 2


def test_gap_charts_by_key_frame(sample):
    k = [0, 10, 20, koma.resample(sample, 24.0).frame_count - 1]
    spacing, _ = koma.space(sample, k, on=2, chart="even", gaps={10: "halves", 20: [0.1, 0.2]})
    assert [g.chart.name() for g in spacing.gaps] == ["even", "halves", "0.1 0.2"]
    halves = [d.chart for d in spacing.drawings if d.gap == 1 and d.kind == keys.DrawingKind.inbetween]
    assert halves == [0.5, 0.75, 0.875, 0.9375]
    with pytest.raises(koma.MismatchError, match="gap from frame 11"):
        koma.space(sample, k, gaps={11: "even"})


def test_bad_charts_are_refused(sample):
    with pytest.raises(ValueError, match=r"fraction 2 \(0.2\) does not increase on fraction 1 \(0.5\)"):
        koma.make_chart([0.5, 0.2])
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        koma.make_chart("0.5,1.2")
    with pytest.raises(ValueError, match="unknown chart 'zippy'"):
        koma.make_chart("zippy")
    with pytest.raises(ValueError, match="1 key pose gives no gap"):
        koma.space(sample, [0], chart="even")


def test_sheet_charts_round_trip(sample):
    k = [0, 10, 20, koma.resample(sample, 24.0).frame_count - 1]
    spacing, _ = koma.space(sample, k, on=3, chart="even", gaps={10: [0.2, 0.9]})
    text = keys.spacing_sheet_csv(spacing)
    assert text.splitlines()[0] == "frame,sheet_frame,time_s,main,kind,chart,source_time_s,gap_chart"
    back = keys.read_sheet_charts(text, "x.csv")
    assert back.keys == k
    assert [(g.start, g.chart.name()) for g in back.gaps] == [(0, "even"), (10, "0.2 0.9"), (20, "even")]
    with pytest.raises(koma.BadFileError, match=r"x.csv:12: gap_chart: fraction 2"):
        keys.read_sheet_charts(text.replace("0.2 0.9", "0.9 0.2"), "x.csv")


def _cli(*args):
    return subprocess.run([os.environ.get("KOMA_CLI", "koma"), *map(str, args)], capture_output=True, text=True)


@pytest.mark.skipif(not os.environ.get("KOMA_CLI"), reason="KOMA_CLI not set")
def test_cli_report_lists_every_drawing_and_source_is_byte_identical(shared_data, tmp_path):
    take = shared_data / "bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh"
    base = ["keys", take, "--keys", "9"]
    plain = _cli(*base, "-o", tmp_path / "a.bvh", "--report", tmp_path / "a.json", "--xsheet", tmp_path / "a.csv",
                 "--xsheet-png", tmp_path / "a.png")
    same = _cli(*base, "--chart", "source", "-o", tmp_path / "b.bvh", "--report", tmp_path / "b.json",
                "--xsheet", tmp_path / "b.csv", "--xsheet-png", tmp_path / "b.png")
    assert plain.returncode == 0 and same.returncode == 0, plain.stderr + same.stderr
    for ext in ("bvh", "csv", "png"):
        assert (tmp_path / f"a.{ext}").read_bytes() == (tmp_path / f"b.{ext}").read_bytes(), ext
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab")
    a.pop("input"), b.pop("input")
    assert a == b
    spaced = _cli(*base, "--on", "2", "--chart", "slow-in-out", "-o", tmp_path / "c.bvh", "--report",
                  tmp_path / "c.json", "--json")
    assert spaced.returncode == 0, spaced.stderr
    report = json.loads((tmp_path / "c.json").read_text())
    drawings = report["spacing"]["drawings"]
    assert [d["kind"] for d in drawings].count("key") == 9
    assert set(drawings[0]) == {"frame", "source_time", "kind", "chart"}
    # The written file: every inbetween's pose covers its reported share of the source's pose path.
    src, out = read_quiet(take), koma.read(tmp_path / "c.bvh")
    src_pos, out_pos = _joints(src, koma.positions(src)), _joints(src, koma.positions(out))
    gaps = report["spacing"]["gaps"]
    checked = 0
    for d in drawings:
        if d["kind"] != "inbetween":
            continue
        g = next(g for g in gaps if g["from"] < d["frame"] < g["to"])
        f0, f1 = g["from"] / 24 * src.frame_rate, min(g["to"] / 24 * src.frame_rate, src.frame_count - 1)
        share, total = measured_share(src_pos, f0, out_pos[g["from"]], f1, out_pos[g["to"]], out_pos[d["frame"]],
                                      d["source_time"] * src.frame_rate)
        if total > 1e-3:
            assert abs(share - d["chart"]) <= 0.03, (d, share)  # BVH text keeps 6 decimals
            checked += 1
    assert checked > 10


@pytest.mark.skipif(not os.environ.get("KOMA_CLI"), reason="KOMA_CLI not set")
def test_cli_bad_charts(test_data, tmp_path):
    walk = test_data / "render_walk.bvh"
    r = _cli("keys", walk, "-o", tmp_path / "x.bvh", "--keys", "6", "--chart", "0.5,0.2")
    assert r.returncode == 2 and "--chart: fraction 2 (0.2) does not increase on fraction 1 (0.5)" in r.stderr
    r = _cli("keys", walk, "-o", tmp_path / "x.bvh", "--keys", "1", "--chart", "even")
    assert r.returncode == 2 and "--chart: a chart spaces the drawings between key poses; --keys 1" in r.stderr
    r = _cli("keys", walk, "-o", tmp_path / "x.bvh", "--on", "2", "--chart", "even")
    assert r.returncode == 2 and "give their number with --keys" in r.stderr
    assert not (tmp_path / "x.bvh").exists()
    r = _cli("keys", walk, "-o", tmp_path / "x.bvh", "--keys", "30", "--on", "2", "--chart", "even", "--json")
    assert r.returncode == 0, r.stderr
    assert "too short for an inbetween every 2 frames, held" in r.stderr or json.loads(r.stdout)["spacing"]["held_gaps"]


@pytest.mark.skipif(not os.environ.get("KOMA_CLI"), reason="KOMA_CLI not set")
def test_batch_spacing_matches_the_single_run(shared_data, tmp_path):
    import koma.batch

    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("dataset-1_walk_normal_001.bvh", "dataset-1_punch_normal_001.bvh"):
        (folder / name).symlink_to(shared_data / "bvh/styles/bandai-namco-1" / name)
    table = koma.batch.run("keys", [str(folder)], str(tmp_path / "py"), keys=8,
                           spacing={"on": 2, "chart": "halves", "gaps": {}})
    rows = table.to_dict("records") if hasattr(table, "to_dict") else list(table)
    assert all(r["status"] == "ok" for r in rows), rows
    cli = _cli("batch", "keys", folder, "-o", tmp_path / "cli", "--keys", "8", "--on", "2", "--chart", "halves")
    assert cli.returncode == 0, cli.stderr
    for name in ("dataset-1_walk_normal_001.bvh", "dataset-1_punch_normal_001.bvh"):
        single = tmp_path / f"one_{name}"
        r = _cli("keys", folder / name, "-o", single, "--keys", "8", "--on", "2", "--chart", "halves")
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "py" / name).read_bytes() == single.read_bytes() == (tmp_path / "cli" / name).read_bytes()
    fig = next(r for r in rows if r["input"].endswith("punch_normal_001.bvh"))["figures"]
    assert fig["spacing"]["on"] == 2 and fig["spacing"]["inbetweens"] > 0
