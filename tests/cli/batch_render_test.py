#!/usr/bin/python3
"""CLI tests of `koma batch render` (issue 44): every take of a folder rendered as `koma render` renders it.

    batch_render_test.py KOMA DATA SHARED_DATA WORK_DIR CASE

CASE sticks: inputs koma makes from the repo's fixtures (BVH takes, a GLB that koma convert wrote,
  a truncated and an empty file) in sub-folders, `--look sticks`: exit 7 and the bad files named in
  the report and on stderr (with the single run's message); each good MP4 byte-identical to the single
  `koma render` of its file and to a --jobs 1 batch; --json lines; --resume skips the finished takes
  (not rewritten) and redoes a deleted one; a resume with another --size is refused; --to png writes
  one folder of frames per take, frame for frame the single run's.
CASE toon: the same inputs in the toon look (OpenGL through EGL; each pool thread opens its own
  context): MP4s at --jobs 2 and PNG frame folders byte-identical to single runs, transparent cels
  default to folders; --keys takes a folder of `koma keys` reports mirroring the inputs (a report file
  is refused; a missing report fails that take only); --compare takes a folder mirroring the inputs.
CASE real: BVH takes from ../shared/data plus a broken one, sticks and toon at --jobs 2: byte-identical
  to single runs, the broken file named, --resume. Exits 77 (skipped) when the shared data is absent.
"""
import json
import os
import pathlib
import shutil
import sys

from cli_support import fail, must, run, temp_files

REAL = [
    "bvh/styles/xia2015/neutral_18_000.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_dash_normal_001.bvh",
    "bvh/exporters/bvh-toolbox/walk01.bvh",
    "bvh/cmu/cmu-daz/16_36.bvh",
]
SIZE = ["--size", "320x180"]
LEFTOVERS = (".tmp", ".old", ".log")  # a batch render also leaves no .old or .log behind


def same_tree(a, b):
    """True when folders a and b hold the same file names with the same bytes."""
    names_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    names_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return names_a == names_b and len(names_a) > 0 and all((a / n).read_bytes() == (b / n).read_bytes() for n in names_a)


def make_inputs(koma, data, work):
    """in/a/walk.bvh, in/b/gait_walk.bvh, in/b/t20.glb (koma convert), in/broken/{truncated,empty}.bvh."""
    src = work / "in"
    for d in ("a", "b", "broken"):
        (src / d).mkdir(parents=True)
    shutil.copy(data / "render_walk.bvh", src / "a" / "walk.bvh")
    shutil.copy(data / "gait_walk.bvh", src / "b" / "gait_walk.bvh")
    must(koma, "convert", data / "timing_walk20.bvh", src / "b" / "t20.glb")
    shutil.copy(data / "truncated.bvh", src / "broken" / "truncated.bvh")
    (src / "broken" / "empty.bvh").write_text("")
    return src


GOOD = ["a/walk.bvh", "b/gait_walk.bvh", "b/t20.glb"]
BAD = ["broken/empty.bvh", "broken/truncated.bvh"]


def check_report(out, src, expect_ok, expect_bad, koma, flags):
    """The report's statuses, and each failure recorded with the message the single run prints."""
    report = json.loads((out / "batch-report.json").read_text())
    status = {f["relative"]: f["status"] for f in report["files"]}
    want = {**{r: "ok" for r in expect_ok}, **{r: "failed" for r in expect_bad}}
    if status != want:
        fail(f"statuses {status}, expected {want}")
    for f in report["files"]:
        if f["status"] != "failed":
            continue
        rc1, _, err1 = run(koma, "render", f["input"], "-o", out.parent / "single_bad.mp4", *flags)
        if rc1 == 0 or f"koma: error: {f['error']['context']}: {f['error']['message']}" not in err1:
            fail(f"failure {f['error']} is not what the single run says (exit {rc1}): {err1}")
        if pathlib.Path(f["output"]).exists():
            fail(f"a failed take left an output: {f['output']}")
    return report


def single_equal(koma, work, report, flags, folder=False):
    """Each ok output is byte-identical to `koma render INPUT -o OUT FLAGS` (OUT a file or a folder)."""
    for f in report["files"]:
        if f["status"] != "ok":
            continue
        produced = pathlib.Path(f["output"])
        single = work / "single" / (produced.name if not folder else "frames")
        shutil.rmtree(single.parent, ignore_errors=True)
        single.parent.mkdir(parents=True)
        must(koma, "render", f["input"], "-o", str(single) + ("/" if folder else ""), "-q", *flags)
        same = same_tree(single, produced) if folder else single.read_bytes() == produced.read_bytes()
        if not same:
            fail(f"{produced} differs from `koma render {f['input']} {' '.join(flags)}`")


def case_sticks(koma, data, shared, work):
    src = make_inputs(koma, data, work)
    flags = ["--look", "sticks", *SIZE]
    out, out1 = work / "out", work / "out1"
    rc, so, se = run(koma, "batch", "render", *flags, src, "-o", out, "--jobs", 2)
    if rc != 7 or "3 ok, 2 failed" not in so:
        fail(f"batch render: exit {rc} (expected 7), {so}\n{se}")
    for bad in BAD:
        if f"koma: batch: failed [bad_file]: {src / bad}" not in se:
            fail(f"stderr does not name {bad}: {se}")
    report = check_report(out, src, GOOD, BAD, koma, flags)
    for f in report["files"]:
        if f["status"] == "ok" and (pathlib.Path(f["output"]) != (out / f["relative"]).with_suffix(".mp4")
                                    or f["figures"]["look"] != "sticks" or f["figures"]["frames"] < 2):
            fail(f"record {f}")
    single_equal(koma, work, report, flags)
    rc, so, se = run(koma, "batch", "render", *flags, src, "-o", out1, "--jobs", 1, "--json")
    lines = [json.loads(line) for line in so.splitlines()]
    if rc != 7 or [x["event"] for x in lines] != ["file"] * 5 + ["summary"] or lines[-1]["exit"] != 7:
        fail(f"--jobs 1 --json: exit {rc}: {so}")
    for rel in GOOD:
        mp4 = pathlib.Path(rel).with_suffix(".mp4")
        if (out / mp4).read_bytes() != (out1 / mp4).read_bytes():
            fail(f"{mp4}: --jobs 2 and --jobs 1 bytes differ")
    # --resume: finished takes are skipped (not rewritten), a deleted one is rendered again.
    stamps = {rel: os.stat((out / rel).with_suffix(".mp4")).st_mtime_ns for rel in GOOD}
    kept = (out / GOOD[0]).with_suffix(".mp4").read_bytes()
    (out / GOOD[0]).with_suffix(".mp4").unlink()
    rc, so, se = run(koma, "batch", "render", *flags, src, "-o", out, "--jobs", 2, "--resume")
    if rc != 7 or "1 ok, 2 failed, 2 skipped" not in so:
        fail(f"--resume: exit {rc}: {so}\n{se}")
    if (out / GOOD[0]).with_suffix(".mp4").read_bytes() != kept:
        fail("the take rendered again on --resume differs from its first render")
    if any(os.stat((out / rel).with_suffix(".mp4")).st_mtime_ns != stamps[rel] for rel in GOOD[1:]):
        fail("--resume rewrote a finished take")
    rc, so, se = run(koma, "batch", "render", "--look", "sticks", "--size", "320x160", src, "-o", out, "--resume")
    if rc != 2 or 'size: "320x180" -> "320x160"' not in se:
        fail(f"resume with another --size: exit {rc} (expected 2, the difference named): {se}")
    # --to png: a folder of frames per take, OUTDIR/<relative path without extension>/.
    png = work / "png"
    rc, so, se = run(koma, "batch", "render", *flags, src, "-o", png, "--to", "png")
    if rc != 7 or not (png / "a" / "walk" / "frame_00000.png").is_file() or not (png / "b" / "t20").is_dir():
        fail(f"--to png: exit {rc}: {so}\n{se}\n{sorted(png.rglob('*'))[:8]}")
    single_equal(koma, work, json.loads((png / "batch-report.json").read_text()), flags, folder=True)
    rc, so, se = run(koma, "batch", "render", *flags, src, "-o", work / "no", "--to", "bvh")
    if rc != 2 or "'bvh' is not an output format of this command; expected mp4, gif or png" not in se:
        fail(f"--to bvh: exit {rc}: {se}")
    rc, so, se = run(koma, "batch", "render", "--transparent", src, "-o", work / "no", "--to", "mp4")
    if rc != 2 or "koma: error: --transparent: transparent cels are PNG frames: leave --to at png" not in se:
        fail(f"--transparent --to mp4: exit {rc}: {se}")
    if (work / "no").exists():
        fail("a refused batch made its output folder")
    if temp_files(work, LEFTOVERS):
        fail(f"temporary files left: {temp_files(work, LEFTOVERS)}")


def case_toon(koma, data, shared, work):
    src = make_inputs(koma, data, work)
    out = work / "out"
    rc, so, se = run(koma, "batch", "render", *SIZE, src, "-o", out, "--jobs", 2)
    if rc != 7 or "3 ok, 2 failed" not in so:
        fail(f"batch render (toon): exit {rc} (expected 7), {so}\n{se}")
    report = check_report(out, src, GOOD, BAD, koma, SIZE)
    if any(f["status"] == "ok" and f["figures"]["look"] != "toon" for f in report["files"]):
        fail(f"not drawn in the toon look: {report['files']}")
    single_equal(koma, work, report, SIZE)
    # PNG frames and transparent cels (folders by default), each the single run's.
    for extra, to in ((["--to", "png"], "png"), (["--transparent"], "cels")):
        dest = work / to
        rc, so, se = run(koma, "batch", "render", *SIZE, *extra, src, "-o", dest, "--jobs", 2)
        if rc != 7 or not (dest / "b" / "t20" / "frame_00000.png").is_file():
            fail(f"batch render {extra}: exit {rc}: {so}\n{se}")
        single_equal(koma, work, json.loads((dest / "batch-report.json").read_text()),
                     [*SIZE, *extra[:1]] if to == "cels" else SIZE, folder=True)
    # --keys: a folder of reports that mirrors the inputs; a take without a report fails alone.
    keys = work / "keys"
    (keys / "a").mkdir(parents=True)
    must(koma, "keys", src / "a" / "walk.bvh", "--on", 2, "-o", work / "held.bvh", "--report", keys / "a" / "walk.json")
    rc, so, se = run(koma, "batch", "render", *SIZE, "--keys", keys, src, "-o", work / "held", "--jobs", 2)
    if rc != 7 or "1 ok, 4 failed" not in so or "keys/b/gait_walk.json: cannot open" not in se:
        fail(f"--keys folder: exit {rc}: {so}\n{se}")
    held = json.loads((work / "held" / "batch-report.json").read_text())
    single = work / "single_held.mp4"
    must(koma, "render", src / "a" / "walk.bvh", "--keys", keys / "a" / "walk.json", *SIZE, "-o", single, "-q")
    walk = [f for f in held["files"] if f["relative"] == "a/walk.bvh"][0]
    if walk["figures"].get("drawings", 0) < 2 or single.read_bytes() != pathlib.Path(walk["output"]).read_bytes():
        fail(f"--keys: {walk} differs from the single run")
    rc, so, se = run(koma, "batch", "render", "--keys", keys / "a" / "walk.json", src, "-o", work / "no")
    if rc != 2 or "koma: error: --keys: " not in se or "a batch needs a folder of `koma keys` reports" not in se:
        fail(f"--keys FILE: exit {rc} (expected 2): {se}")
    # --compare: a folder that mirrors the inputs (each held take beside its source).
    rc, so, se = run(koma, "batch", "keys", "--on", 2, src / "a", "-o", work / "on2")
    rc, so, se = run(koma, "batch", "render", *SIZE, "--compare", src / "a", work / "on2", "-o", work / "cmp")
    if rc != 0:
        fail(f"--compare folder: exit {rc}: {so}\n{se}")
    single = work / "single_cmp.mp4"
    must(koma, "render", work / "on2" / "walk.bvh", "--compare", src / "a" / "walk.bvh", *SIZE, "-o", single, "-q")
    if single.read_bytes() != (work / "cmp" / "walk.mp4").read_bytes():
        fail("--compare folder: the take differs from `koma render HELD --compare SOURCE`")
    if temp_files(work, LEFTOVERS):
        fail(f"temporary files left: {temp_files(work, LEFTOVERS)}")


def case_real(koma, data, shared, work):
    if not (shared / REAL[0]).exists():
        print(f"SKIP: real motion corpus not found at {shared} (../shared/data beside the checkout)")
        sys.exit(77)
    src = work / "in"
    for rel in REAL:
        target = src / pathlib.Path(rel).parent.name / pathlib.Path(rel).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(shared / rel)
    (src / "broken").mkdir()
    text = (shared / REAL[0]).read_text()
    (src / "broken" / "truncated.bvh").write_text(text[: len(text) // 2])
    good = sorted(str(p.relative_to(src)) for p in src.rglob("*.bvh") if p.parent.name != "broken")
    for flags in (["--look", "sticks", *SIZE], SIZE):
        out = work / flags[1]
        rc, so, se = run(koma, "batch", "render", *flags, src, "-o", out, "--jobs", 2)
        if rc != 7 or f"{len(REAL)} ok, 1 failed" not in so or "broken/truncated.bvh" not in se:
            fail(f"batch render {flags}: exit {rc} (expected 7): {so}\n{se}")
        report = check_report(out, src, good, ["broken/truncated.bvh"], koma, flags)
        single_equal(koma, work, report, flags)
        rc, so, se = run(koma, "batch", "render", *flags, src, "-o", out, "--jobs", 2, "--resume")
        if rc != 8 or f"0 ok, 1 failed, {len(REAL)} skipped" not in so:
            fail(f"--resume {flags}: exit {rc}: {so}\n{se}")
    if temp_files(work, LEFTOVERS):
        fail(f"temporary files left: {temp_files(work, LEFTOVERS)}")


def main():
    koma, data, shared, work, case = (sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]),
                                      pathlib.Path(sys.argv[4]), sys.argv[5])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    {"sticks": case_sticks, "toon": case_toon, "real": case_real}[case](koma, data, shared, work)
    print(f"batch render {case}: ok")


if __name__ == "__main__":
    main()
