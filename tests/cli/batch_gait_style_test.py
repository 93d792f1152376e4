#!/usr/bin/python3
"""CLI tests of `koma batch gait-style` (issue 44): every output byte-identical to its single run.

    batch_gait_style_test.py KOMA TEST_DATA SHARED_DATA WORK_DIR CASE

CASE fixtures (always runs): inputs made by koma from tests/data: two walks, a gait file made by
  `koma gait analyze` and an adverb made by `koma gait adverb` (in the input folder: folders yield
  .gait.json files, not other .json files), plus a walk too short for a gait and a truncated file.
  Checks: exit 7 and a report naming both bad files with the single run's error; every output and
  its --csv file byte-identical to `koma gait style INPUT ... -o OUT --csv OUT.csv`, the gait file's
  output named .bvh; --jobs 1 gives the same bytes; --json gives one line per file and a summary
  with exit 7; --resume skips the complete outputs (not rewritten) and runs the bad files again
  (exit 8: every file run failed), and refuses other settings; --to glb; --csv given a path is refused before any file runs.
CASE walks: three Bandai-Namco walks from ../shared/data (exit 77, skipped, when absent) under two
  settings, at --jobs 2 and 1: byte-identical to the single runs.
"""
import json
import os
import pathlib
import shutil
import sys

from cli_support import fail, must, run, temp_files

WALKS = "bvh/styles/bandai-namco-1/dataset-1_walk_"


def check_single(koma, work, report, flags, csv):
    """Every ok file of `report` against `koma gait style INPUT FLAGS -o SAME_NAME [--csv SAME_NAME.csv]`."""
    ok = [f for f in report["files"] if f["status"] == "ok"]
    for n, f in enumerate(ok):
        produced = pathlib.Path(f["output"])
        single = work / "single" / str(n) / produced.name
        single.parent.mkdir(parents=True, exist_ok=True)
        extra = ["--csv", single.with_suffix(".csv")] if csv else []
        rc, _, se = run(koma, "gait", "style", f["input"], *flags, "-o", single, *extra)
        if rc != 0 or single.read_bytes() != produced.read_bytes():
            fail(f"{produced} differs from `koma gait style {f['input']} {' '.join(map(str, flags))}` (exit {rc}) {se}")
        if csv:
            if produced.with_suffix(".csv").read_bytes() != single.with_suffix(".csv").read_bytes():
                fail(f"{produced.with_suffix('.csv')} differs from the single run's --csv")
            if f["figures"].get("csv") != str(produced.with_suffix(".csv")):
                fail(f"figures name no csv beside the output: {f['figures']}")
        elif produced.with_suffix(".csv").exists():
            fail(f"a CSV was written without --csv: {produced.with_suffix('.csv')}")
        if f["figures"].get("frames", 0) < 2:
            fail(f"figures: {f['figures']}")
    return ok


def case_fixtures(koma, data, work):
    gait, adverb = work / "walk.gait.json", work / "swing.adverb.json"
    must(koma, "gait", "analyze", data / "gait_walk.bvh", "-o", gait)
    must(koma, "gait", "adverb", data / "gait_walk.bvh", data / "gait_walk_swing.bvh", "-o", adverb)
    src = work / "in"
    for rel, target in [("gait_walk.bvh", data / "gait_walk.bvh"), ("sub/gait_walk_swing.bvh", data / "gait_walk_swing.bvh"),
                        ("sub/short.bvh", data / "gait_walk_short.bvh"), ("broken/truncated.bvh", data / "truncated.bvh")]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).symlink_to(target)
    (src / "gaits").mkdir()
    shutil.copy(gait, src / "gaits" / "walk.gait.json")
    shutil.copy(adverb, src / "swing.adverb.json")  # not a gait file: a folder does not yield it
    flags = ["--adverb", f"{adverb}:0.7", "--seconds", 4, "--stride", 1.1, "--fps", 30]
    out, out1 = work / "out", work / "out1"
    rc, so, se = run(koma, "batch", "gait-style", *flags, src, "-o", out, "--jobs", 2, "--csv")
    if rc != 7 or "3 ok, 2 failed" not in so:
        fail(f"exit {rc}, expected 7 with 3 ok, 2 failed\n{so}\n{se}")
    for name in ("short.bvh", "truncated.bvh"):
        if name not in se:
            fail(f"stderr does not name {name}: {se}")
    report = json.loads((out / "batch-report.json").read_text())
    rels = sorted(f["relative"] for f in report["files"])
    if rels != ["broken/truncated.bvh", "gait_walk.bvh", "gaits/walk.gait.json", "sub/gait_walk_swing.bvh", "sub/short.bvh"]:
        fail(f"inputs found: {rels}")
    for f in report["files"]:
        if f["status"] != "failed":
            continue
        if pathlib.Path(f["input"]).name not in ("short.bvh", "truncated.bvh"):
            fail(f"good file failed: {f}")
        rc1, _, err1 = run(koma, "gait", "style", f["input"], *flags, "-o", work / "bad.bvh")
        if rc1 == 0 or f"koma: error: {f['error']['context']}: {f['error']['message']}" not in err1:
            fail(f"failure record {f['error']} is not the single run's error (exit {rc1}): {err1}")
        if pathlib.Path(f["output"]).exists() or pathlib.Path(f["output"]).with_suffix(".csv").exists():
            fail(f"output of a failed file exists: {f['output']}")
    if (out / "gaits" / "walk.gait.bvh") not in [pathlib.Path(f["output"]) for f in report["files"]]:
        fail("the gait file's output is not gaits/walk.gait.bvh")
    ok = check_single(koma, work, report, flags, csv=True)
    if len(ok) != 3:
        fail(f"{len(ok)} ok")
    # --jobs 1, --json: the same bytes, one line per file and a summary.
    rc, so, se = run(koma, "batch", "gait-style", *flags, src, "-o", out1, "--jobs", 1, "--csv", "--json")
    lines = [json.loads(line) for line in so.splitlines()]
    if rc != 7 or [x["event"] for x in lines] != ["file"] * 5 + ["summary"] or lines[-1]["exit"] != 7:
        fail(f"--json: exit {rc}\n{so}\n{se}")
    if lines[-1]["counts"]["ok"] != 3 or lines[-1]["frames"] != sum(f["figures"]["frames"] for f in ok):
        fail(f"--json summary: {lines[-1]}")
    for f in ok:
        for p in (pathlib.Path(f["output"]), pathlib.Path(f["output"]).with_suffix(".csv")):
            if (out1 / p.relative_to(out)).read_bytes() != p.read_bytes():
                fail(f"{p}: --jobs 2 and --jobs 1 bytes differ")
    # --resume: complete outputs skipped and not rewritten, the bad files run again.
    before = {p: os.stat(p).st_mtime_ns for p in out.rglob("*") if p.suffix in (".bvh", ".csv")}
    rc, so, se = run(koma, "batch", "gait-style", *flags, src, "-o", out, "--csv", "--resume")
    again = json.loads((out / "batch-report.json").read_text())
    # exit 8: every file that ran failed
    if rc != 8 or sorted(f["status"] for f in again["files"]) != ["failed"] * 2 + ["skipped"] * 3:
        fail(f"resume: exit {rc}, {[f['status'] for f in again['files']]}\n{so}\n{se}")
    if any(os.stat(p).st_mtime_ns != t for p, t in before.items()) or len(before) != 6:
        fail(f"resume rewrote a complete output ({len(before)} outputs)")
    rc, so, se = run(koma, "batch", "gait-style", *flags[:-2], src, "-o", out, "--csv", "--resume")
    if rc != 2 or "cannot resume into" not in se or "fps" not in se:
        fail(f"resume with other settings: exit {rc}\n{so}\n{se}")
    # --to glb, no CSV; the gait file alone.
    glb = work / "glb"
    rc, so, se = run(koma, "batch", "gait-style", "--adverb", adverb, src / "gaits", src / "gait_walk.bvh", "-o", glb, "--to", "glb")
    report = json.loads((glb / "batch-report.json").read_text())
    if rc != 0 or sorted(pathlib.Path(f["output"]).name for f in report["files"]) != ["gait_walk.glb", "walk.gait.glb"]:
        fail(f"--to glb: exit {rc}, {[f['output'] for f in report['files']]}\n{so}\n{se}")
    check_single(koma, work / "glb-single", report, ["--adverb", adverb], csv=False)
    # One CSV path cannot serve every file: --csv is a flag here, a .csv input is refused up front.
    rc, so, se = run(koma, "batch", "gait-style", "--csv", work / "angles.csv", src, "-o", work / "never")
    if rc != 2 or "--csv" not in se or (work / "never").exists():
        fail(f"--csv PATH: exit {rc}, expected 2 before any file\n{so}\n{se}")
    if temp_files(work):
        fail(f"temporary files left: {temp_files(work)}")


def case_walks(koma, shared, work):
    if not (shared / (WALKS + "normal_001.bvh")).exists():
        print(f"SKIP: real motion corpus not found at {shared} (../shared/data beside the checkout)")
        sys.exit(77)
    src = work / "in"
    src.mkdir()
    for style in ("normal", "happy", "tired"):
        (src / f"walk_{style}.bvh").symlink_to(shared / f"{WALKS}{style}_001.bvh")
    adverb = work / "old.adverb.json"
    must(koma, "gait", "adverb", shared / (WALKS + "normal_001.bvh"), shared / (WALKS + "old_001.bvh"), "-o", adverb)
    for n, flags in enumerate([["--adverb", f"{adverb}:0.8"],
                               ["--adverb", adverb, "--speed", 0.8, "--seconds", 6, "--harmonics", 6, "--in-place"]]):
        outs = [work / f"out{n}-j{jobs}" for jobs in (2, 1)]
        for jobs, out in zip((2, 1), outs):
            rc, so, se = run(koma, "batch", "gait-style", *flags, src, "-o", out, "--jobs", jobs, "--csv")
            if rc != 0 or "3 ok, 0 failed" not in so:
                fail(f"batch gait-style {flags} --jobs {jobs}: exit {rc}\n{so}\n{se}")
        report = json.loads((outs[0] / "batch-report.json").read_text())
        check_single(koma, work / f"single{n}", report, flags, csv=True)
        for f in report["files"]:
            if (outs[1] / f["relative"]).read_bytes() != pathlib.Path(f["output"]).read_bytes():
                fail(f"{f['relative']}: --jobs 2 and --jobs 1 bytes differ")


def main():
    koma, data, shared, work, case = sys.argv[1], *map(pathlib.Path, sys.argv[2:5]), sys.argv[5]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if case == "fixtures":
        case_fixtures(koma, data, work)
    else:
        case_walks(koma, shared, work)
    print(f"batch gait-style {case}: ok")


if __name__ == "__main__":
    main()
