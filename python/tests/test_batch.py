"""koma.batch: the local pool and a Dask LocalCluster give the CLI batch's outputs, byte for byte."""
import json
import os
import pathlib
import subprocess

import pytest

import koma
import koma.batch

CLIPS = [
    "bvh/styles/xia2015/neutral_18_000.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_dash_normal_001.bvh",
    "bvh/exporters/bvh-toolbox/walk01.bvh",
    "bvh/styles/semi-mst-m21/content/jump-across.bvh",
]


def records(table):
    """The summary as a list of dicts, whether it came back as a DataFrame or a list."""
    return table.to_dict("records") if hasattr(table, "to_dict") else list(table)


@pytest.fixture
def library(shared_data, tmp_path):
    """Shared clips linked into sub-folders (never copied) plus one broken file."""
    src = tmp_path / "in"
    for rel in CLIPS:
        target = src / pathlib.Path(rel).parent.name / pathlib.Path(rel).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(shared_data / rel)
    (src / "broken").mkdir()
    (src / "broken" / "empty.bvh").write_text("")
    return src


def cli():
    exe = os.environ.get("KOMA_CLI")
    if not exe or not pathlib.Path(exe).exists():
        pytest.skip("KOMA_CLI (the koma executable) not set; CTest sets it")
    return exe


def outputs(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*.bvh"))}


def test_local_pool_matches_cli_batch(library, tmp_path):
    rc = subprocess.run([cli(), "batch", "keys", "--on", "2", str(library), "-o", str(tmp_path / "cli"), "--jobs", "2"],
                        capture_output=True, text=True).returncode
    assert rc == 7  # some failed: the empty file
    table = koma.batch.run("keys", [library], tmp_path / "py", on=2, jobs=2, report=tmp_path / "py.json")
    rows = records(table)
    assert len(rows) == len(CLIPS) + 1
    failed = [r for r in rows if r["status"] == "failed"]
    assert [pathlib.Path(r["input"]).name for r in failed] == ["empty.bvh"]
    assert failed[0]["error"]["code"] == "bad_file"
    assert outputs(tmp_path / "py") == outputs(tmp_path / "cli") and len(outputs(tmp_path / "cli")) == len(CLIPS)
    report = json.loads((tmp_path / "py.json").read_text())
    assert report["counts"]["ok"] == len(CLIPS) and report["counts"]["failed"] == 1
    assert all(r["figures"]["key_count"] >= 2 for r in rows if r["status"] == "ok")
    # resume: everything complete is skipped, the broken file runs (and fails) again
    again = records(koma.batch.run("keys", [library], tmp_path / "py", on=2, resume=True))
    assert sorted(r["status"] for r in again) == ["failed"] + ["skipped"] * len(CLIPS)
    # resume with other settings would keep outputs of on 2 as if they were on 3: refused, nothing run
    with pytest.raises(ValueError, match=r"cannot resume into .*settings differ: on: 2 -> 3"):
        koma.batch.run("keys", [library], tmp_path / "py", on=3, resume=True)
    # and a folder filled by the CLI is not resumed from Python (settings are compared per front end)
    with pytest.raises(ValueError, match="filled from cli"):
        koma.batch.run("keys", [library], tmp_path / "cli", on=2, resume=True)


def test_dask_local_cluster_matches_cli_batch(library, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    exe = cli()
    for command, flags, settings in [("keys", ["--on", "2"], {"on": 2}), ("cartoon", ["--keep-feet"], {"keep_feet": True})]:
        subprocess.run([exe, "batch", command, *flags, str(library), "-o", str(tmp_path / f"cli-{command}")],
                       capture_output=True, text=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for command, _, settings in [("keys", ["--on", "2"], {"on": 2}), ("cartoon", [], {"keep_feet": True})]:
            rows = records(koma.batch.run(command, [str(library)], tmp_path / f"dask-{command}", client=client, **settings))
            assert sorted(r["status"] for r in rows) == ["failed"] + ["ok"] * len(CLIPS), command
            assert outputs(tmp_path / f"dask-{command}") == outputs(tmp_path / f"cli-{command}"), command
            assert len(outputs(tmp_path / f"cli-{command}")) == len(CLIPS)
        assert koma.batch.last_report()["counts"]["failed"] == 1


def test_settings_errors_before_any_file(tmp_path, test_data):
    with pytest.raises(TypeError, match="unknown setting 'onn'"):
        koma.batch.run("keys", [test_data / "tiny.bvh"], tmp_path / "o", onn=2)
    with pytest.raises(ValueError, match="selector: unknown value 'magic'"):
        koma.batch.run("keys", [test_data / "tiny.bvh"], tmp_path / "o", selector="magic")
    with pytest.raises(ValueError, match="unknown command"):
        koma.batch.run("paint", [test_data / "tiny.bvh"], tmp_path / "o")
    with pytest.raises(OSError):
        koma.batch.run("keys", [tmp_path / "nope.bvh"], tmp_path / "o", on=2)
    assert not (tmp_path / "o").exists()


def test_nested_settings_reach_the_job():
    job = koma.batch.make_job("keys", {"on": 3, "constraints": {"min_hold": 2}, "output_rate": 12, "selector": "uniform"})
    assert job.keys.on == 3 and job.keys.constraints.min_hold == 2 and job.output_rate == 12
    assert job.keys.selector == koma.keys.Selector.uniform
    job = koma.batch.make_job("cartoon", {"strength": 12.0, "sigma_seconds": 0.1, "keep_feet": True, "unit": "cm"})
    assert job.cartoon.strength == 12.0 and job.cartoon.sigma_seconds == 0.1 and job.cartoon.keep_feet and job.read.unit == koma.LengthUnit.centimetre


WALKS = ["bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", "bvh/styles/bandai-namco-1/dataset-1_walk_happy_001.bvh"]
SAD = "bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh"


def every_output(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.suffix in (".bvh", ".glb")}


@pytest.fixture
def walks(shared_data, tmp_path):
    src = tmp_path / "walks"
    src.mkdir()
    for rel in WALKS:
        (src / pathlib.Path(rel).name).symlink_to(shared_data / rel)
    return src


def pipeline_cases(shared_data, adverb):
    """(command, CLI flags, Python settings, --to): every per-file job besides keys and cartoon."""
    like = str(shared_data / SAD)
    return [("gait-apply", ["--adverb", f"{adverb}:0.8", "--no-root-height"],
             {"adverbs": [f"{adverb}:0.8"], "root_height": False}, None),
            ("gait-style", ["--adverb", f"{adverb}:0.8", "--seconds", "6", "--in-place"],
             {"adverbs": [f"{adverb}:0.8"], "seconds": 6, "in_place": True}, None),
            ("retime", ["--like", like, "--speed", "input"], {"like": like, "speed": "input"}, None),
            ("convert", ["--fps", "30", "--range", "5:-5", "--out-unit", "m"],
             {"output_rate": 30, "range": "5:-5", "out_unit": "m"}, None)]


def test_every_pipeline_local_and_dask_match_cli_batch(walks, shared_data, tmp_path):
    exe = cli()
    adverb = tmp_path / "sad.adverb.json"
    subprocess.run([exe, "gait", "adverb", str(shared_data / WALKS[0]), str(shared_data / SAD), "-o", str(adverb)],
                   check=True, capture_output=True)
    cases = pipeline_cases(shared_data, adverb)
    for command, flags, settings, _ in cases:
        rc = subprocess.run([exe, "batch", command, *flags, str(walks), "-o", str(tmp_path / f"cli-{command}")],
                            capture_output=True, text=True).returncode
        assert rc == 0, command
        rows = records(koma.batch.run(command, [walks], tmp_path / f"py-{command}", jobs=2, **settings))
        assert [r["status"] for r in rows] == ["ok"] * len(WALKS), (command, rows)
        assert every_output(tmp_path / f"py-{command}") == every_output(tmp_path / f"cli-{command}"), command
        assert len(every_output(tmp_path / f"cli-{command}")) == len(WALKS)
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for command, _, settings, _ in cases:
            rows = records(koma.batch.run(command, [str(walks)], tmp_path / f"dask-{command}", client=client, **settings))
            assert [r["status"] for r in rows] == ["ok"] * len(WALKS), command
            assert every_output(tmp_path / f"dask-{command}") == every_output(tmp_path / f"cli-{command}"), command


def test_pipeline_jobs_from_settings(shared_data):
    job = koma.batch.make_job("retime", {"like": "sad.bvh", "speed": "input", "output_rate": 30, "unit": "cm"})
    assert str(job.like) == "sad.bvh" and job.retime.speed == koma.timing.SpeedFrom.input
    assert job.retime.output_rate == 30 and job.read.unit == koma.LengthUnit.centimetre
    job = koma.batch.make_job("convert", {"range": "10:-2", "output_rate": 24, "out_unit": "m", "unit": 0.056})
    assert job.range.first == 10 and job.range.end == -2 and job.output_rate == 24
    assert job.write.unit == koma.LengthUnit.metre and job.read.scale == 0.056 and job.read.unit is None
    with pytest.raises(ValueError, match="range"):
        koma.batch.make_job("convert", {"range": "10"})
    with pytest.raises(ValueError, match="like"):
        koma.batch.make_job("retime", {})


def every_file(root):
    """Every output and CSV below root (not the report or the manifest)."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.suffix in (".bvh", ".glb", ".csv")}


def test_gait_style_walks_and_gait_files_local_and_dask_match_cli_batch(test_data, tmp_path):
    """koma.batch.run("gait-style") on walks and a gait file (inputs koma makes from tests/data, so it
    always runs): the local pool and a Dask LocalCluster write the CLI batch's outputs and CSVs, byte
    for byte, with every kind of setting (adverbs, synthesis, analysis dicts, skeleton, csv)."""
    exe = cli()
    src = tmp_path / "in"
    (src / "gaits").mkdir(parents=True)
    walk, swing = test_data / "gait_walk.bvh", test_data / "gait_walk_swing.bvh"
    (src / "walk.bvh").symlink_to(walk)
    (src / "swing.bvh").symlink_to(swing)
    adverb = tmp_path / "swing.adverb.json"
    subprocess.run([exe, "gait", "analyze", str(walk), "-o", str(src / "gaits" / "walk.gait.json")], check=True, capture_output=True)
    subprocess.run([exe, "gait", "adverb", str(walk), str(swing), "-o", str(adverb)], check=True, capture_output=True)
    (src / "swing.adverb.json").write_bytes(adverb.read_bytes())  # not a gait file: left alone
    flags = ["--adverb", f"{adverb}:0.7", "--seconds", "4", "--fps", "30", "--stride", "1.1", "--min-period", "0.4",
             "--harmonics", "6", "--skeleton", str(swing), "--csv"]
    settings = {"adverbs": [f"{adverb}:0.7"], "seconds": 4, "frame_rate": 30, "stride": 1.1, "cycle": {"min_period": 0.4},
                "fourier": {"harmonics": 6}, "skeleton": str(swing), "csv": True}
    p = subprocess.run([exe, "batch", "gait-style", *flags, str(src), "-o", str(tmp_path / "cli")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    expected = every_file(tmp_path / "cli")
    assert sorted(map(str, expected)) == ["gaits/walk.gait.bvh", "gaits/walk.gait.csv", "swing.bvh", "swing.csv",
                                          "walk.bvh", "walk.csv"]
    rows = records(koma.batch.run("gait-style", [src], tmp_path / "py", jobs=2, **settings))
    assert [r["status"] for r in rows] == ["ok"] * 3 and all(r["figures"]["csv"] for r in rows)
    assert every_file(tmp_path / "py") == expected
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        rows = records(koma.batch.run("gait-style", [str(src)], tmp_path / "dask", client=client, **settings))
    assert [r["status"] for r in rows] == ["ok"] * 3
    assert every_file(tmp_path / "dask") == expected


def test_gait_style_job_from_settings(test_data):
    job = koma.batch.make_job("gait-style", {"seconds": 6, "frame_rate": 30, "loop": False, "csv": True,
                                             "cycle": {"period_method": "contacts"}, "fourier": {"harmonics": 4},
                                             "skeleton": str(test_data / "gait_walk.bvh"), "unit": "cm"})
    assert job.style.synth.seconds == 6 and job.style.synth.frame_rate == 30 and not job.style.synth.loop
    assert job.style.cycle.period_method == koma.gait.PeriodMethod.contacts and job.style.fourier.harmonics == 4
    assert job.csv_beside_output and job.read.unit == koma.LengthUnit.centimetre
    assert job.style.target.joint_count > 0 and len(job.style.target_bones) == job.style.target.joint_count
    with pytest.raises(TypeError, match="csv=True writes each output's angles beside it"):
        koma.batch.make_job("gait-style", {"csv": "angles.csv"})
    with pytest.raises(TypeError, match="unknown setting 'sconds'"):
        koma.batch.make_job("gait-style", {"sconds": 6})


def rendered(root):
    """Every file a render batch wrote (MP4s, GIFs, frames in folders), by path below root."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix in (".mp4", ".gif", ".png")}


@pytest.mark.parametrize("look", ["sticks", "toon"])
def test_batch_render_pool_and_dask(test_data, tmp_path, look):
    """koma.batch.run("render") on the local pool and on a Dask LocalCluster writes the bytes of
    `koma batch render` (MP4s and folders of PNG frames), one bad file failing alone. Text is drawn
    hinted or not as fontconfig decides for the first size a process draws (cairo keeps the toy
    font's first resolution), so this process draws nothing at another size before these runs."""
    exe = cli()
    src = tmp_path / "takes"
    for rel, name in (("a/walk.bvh", "render_walk.bvh"), ("b/gait_walk.bvh", "gait_walk.bvh")):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).symlink_to(test_data / name)
    (src / "b" / "empty.bvh").write_text("")
    settings = {"look": look, "size": "320x180"}
    for to in ("mp4", "png"):
        cli_out = tmp_path / f"cli-{to}"
        rc = subprocess.run([exe, "batch", "render", "--look", look, "--size", "320x180", str(src), "-o", str(cli_out),
                             "--to", to], capture_output=True, text=True).returncode
        assert rc == 7, to
        assert len(rendered(cli_out)) >= 2
        rows = records(koma.batch.run("render", [src], tmp_path / f"py-{to}", jobs=2, to=to, **settings))
        assert sorted((pathlib.Path(r["input"]).name, r["status"]) for r in rows) == [
            ("empty.bvh", "failed"), ("gait_walk.bvh", "ok"), ("walk.bvh", "ok")]
        assert all(r["figures"]["look"] == look for r in rows if r["status"] == "ok")
        assert rendered(tmp_path / f"py-{to}") == rendered(cli_out), to
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for to in ("mp4", "png"):
            rows = records(koma.batch.run("render", [str(src)], tmp_path / f"dask-{to}", client=client, to=to, **settings))
            assert sorted(r["status"] for r in rows) == ["failed", "ok", "ok"], to
            assert rendered(tmp_path / f"dask-{to}") == rendered(tmp_path / f"cli-{to}"), to


def test_batch_render_settings_refused_before_any_file(test_data, tmp_path):
    (tmp_path / "reports").mkdir()
    report = tmp_path / "reports" / "walk.json"
    report.write_text("{}")
    with pytest.raises(koma.InvalidSettingsError, match="a batch needs a folder of `koma keys` reports"):
        koma.batch.run("render", [test_data / "render_walk.bvh"], tmp_path / "out", keys=report)
    with pytest.raises(ValueError, match="'bvh' is not an output format of this command; expected mp4, gif or png"):
        koma.batch.run("render", [test_data / "render_walk.bvh"], tmp_path / "out", to="bvh")
    assert not (tmp_path / "out").exists()
