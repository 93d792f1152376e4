#!/usr/bin/python3
"""CLI tests of `koma batch` on real clips from ../shared/data (issue 22).

    batch_cli_test.py KOMA SHARED_DATA WORK_DIR CASE

CASE failures: a folder of shared clips (in sub-folders) plus three broken files (truncated, wrong
  channel count, empty). Checks the exit status is 7 (some failed), every good output is
  byte-identical to a single `koma keys` run and to a --jobs 1 batch, the three failures are in
  the report with the message the single command prints, no temporary file is left, and --json
  gives one line per file plus a summary.
CASE interrupt: SIGINT halfway through a --jobs 1 batch (exit 130, no partial file, the report
  says which files are done), then --resume: the done files are skipped (not rewritten), the
  others run, every file is done exactly once.
CASE cartoon: `koma batch cartoon` outputs are byte-identical to single `koma cartoon` runs.
CASE pipelines: every other per-file job (`koma batch retime`, `convert`, ...) at --jobs 2 and
  --jobs 1: each output byte-identical to its single run written under the same name, and the
  report's figures are the single run's --json figures where it has them.
Exits 77 (skipped) when the shared data is absent.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

from cli_support import fail, run, temp_files

GOOD = [
    "bvh/styles/xia2015/neutral_18_000.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_dash_normal_001.bvh",
    "bvh/exporters/bvh-toolbox/walk01.bvh",
    "bvh/styles/semi-mst-m21/content/jump-across.bvh",
    "bvh/cmu/cmu-daz/16_36.bvh",
]
# Long takes kept at their own rate (--fps source): a few seconds at --jobs 1, so Ctrl-C lands halfway.
INTERRUPT = [
    "bvh/cmu/assimp/01_01.bvh",
    "bvh/exporters/assimp/Boxing_Toes.bvh",
    "bvh/cmu/salsa/60_01_scaled.bvh",
    "bvh/cmu/cmu-daz/05_14.bvh",
    "bvh/cmu/bvh11/131_03.bvh",
    "bvh/cmu/cmu-daz/10_02.bvh",
    "bvh/cmu/cmu-daz/05_01.bvh",
    "bvh/cmu/cmu-daz/16_15.bvh",
    "bvh/cmu/cmu-daz/07_03.bvh",
    "bvh/cmu/cmu-daz/13_32.bvh",
]
INTERRUPT_FLAGS = ["--on", "2", "--fps", "source"]
WALKS = "bvh/styles/bandai-namco-1/dataset-1_walk_"


def link_inputs(shared, work, files):
    """Links the clips into work/in/<dataset folder>/<name> (never copies the shared data)."""
    src = work / "in"
    for rel in files:
        target = src / pathlib.Path(rel).parent.name / pathlib.Path(rel).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(shared / rel)
    return src


def outputs(root):
    return sorted(p.relative_to(root) for p in root.rglob("*.bvh"))


def case_failures(koma, shared, work):
    src = link_inputs(shared, work, GOOD)
    broken = src / "broken"
    broken.mkdir()
    text = (shared / GOOD[0]).read_text()
    (broken / "truncated.bvh").write_text(text[: len(text) // 2])
    (broken / "channels.bvh").write_text(text.replace("CHANNELS 3", "CHANNELS 4", 1))
    (broken / "empty.bvh").write_text("")
    out, out1 = work / "out", work / "out1"
    rc, so, se = run(koma, "batch", "keys", "--on", 2, src, "-o", out, "--jobs", 2, "--report", work / "r.json")
    if rc != 7:
        fail(f"exit {rc}, expected 7 (some files failed)\n{so}\n{se}")
    if "5 ok, 3 failed" not in so:
        fail(f"summary line: {so}")
    report = json.loads((work / "r.json").read_text())
    if report["counts"] != {"total": 8, "ok": 5, "failed": 3, "skipped": 0, "cancelled": 0, "pending": 0}:
        fail(f"counts {report['counts']}")
    for f in report["files"]:
        inp = pathlib.Path(f["input"])
        if f["status"] == "failed":
            if inp.parent.name != "broken":
                fail(f"good file failed: {f}")
            rc1, _, err1 = run(koma, "keys", inp, "-o", work / "single_bad.bvh", "--on", 2)
            expected = f"{f['error']['context']}: {f['error']['message']}"
            if rc1 != 3 or f["error"]["code"] != "bad_file" or f"koma: error: {expected}" not in err1:
                fail(f"failure record {f['error']} does not match the single run (exit {rc1}): {err1}")
            if pathlib.Path(f["output"]).exists():
                fail(f"output of a failed file exists: {f['output']}")
            continue
        if f["status"] != "ok" or inp.parent.name == "broken":
            fail(f"unexpected record {f}")
        if f["figures"]["key_count"] < 2 or "error_unit2" not in f["figures"]:
            fail(f"figures missing: {f['figures']}")
        single = work / "single.bvh"
        rc1, _, err1 = run(koma, "keys", inp, "-o", single, "--on", 2)
        if rc1 != 0 or single.read_bytes() != pathlib.Path(f["output"]).read_bytes():
            fail(f"{f['output']} differs from `koma keys {inp} --on 2` (exit {rc1}) {err1}")
        if pathlib.Path(f["output"]) != out / f["relative"]:
            fail(f"output {f['output']} does not mirror {f['relative']}")
    rc, so, se = run(koma, "batch", "keys", "--on", 2, src, "-o", out1, "--jobs", 1, "--json")
    if rc != 7:
        fail(f"--jobs 1: exit {rc}")
    lines = [json.loads(line) for line in so.splitlines()]
    if [x["event"] for x in lines] != ["file"] * 8 + ["summary"] or lines[-1]["exit"] != 7:
        fail(f"--json lines: {so}")
    if [x["done"] for x in lines[:-1]] != list(range(1, 9)):
        fail("--json done counts are not 1..8")
    if outputs(out) != outputs(out1) or len(outputs(out)) != 5:
        fail(f"outputs differ between --jobs 2 and 1: {outputs(out)} vs {outputs(out1)}")
    for rel in outputs(out):
        if (out / rel).read_bytes() != (out1 / rel).read_bytes():
            fail(f"{rel}: --jobs 2 and --jobs 1 bytes differ")
    if temp_files(work):
        fail(f"temporary files left: {temp_files(work)}")
    # Every file failing is its own status.
    rc, so, se = run(koma, "batch", "keys", broken, "-o", work / "out_bad")
    if rc != 8:
        fail(f"all failed: exit {rc}, expected 8\n{so}{se}")


def case_interrupt(koma, shared, work):
    src = link_inputs(shared, work, INTERRUPT)
    out = work / "out"
    total = len(INTERRUPT)
    proc = subprocess.Popen([koma, "batch", "keys", *INTERRUPT_FLAGS, str(src), "-o", str(out), "--jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while len(outputs(out)) < 2 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    if proc.poll() is not None:
        fail(f"the batch ended (exit {proc.returncode}) before it could be interrupted")
    proc.send_signal(signal.SIGINT)
    so, se = proc.communicate(timeout=120)
    if proc.returncode != 130:
        fail(f"interrupted batch: exit {proc.returncode}, expected 130\n{so}\n{se}")
    if temp_files(work):
        fail(f"partial files left: {temp_files(work)}")
    report = json.loads((out / "batch-report.json").read_text())
    done = {f["output"] for f in report["files"] if f["status"] == "ok"}
    if {str(out / p) for p in outputs(out)} != done:
        fail(f"outputs {outputs(out)} are not the files the report calls done {sorted(done)}")
    if not 2 <= len(done) < total:
        fail(f"{len(done)} of {total} done: the interrupt was not halfway")
    before = {p: os.stat(p).st_mtime_ns for p in done}
    rc, so, se = run(koma, "batch", "keys", *INTERRUPT_FLAGS, src, "-o", out, "--jobs", 1, "--resume")
    if rc != 0:
        fail(f"resume: exit {rc}\n{so}\n{se}")
    again = json.loads((out / "batch-report.json").read_text())
    skipped = {f["output"] for f in again["files"] if f["status"] == "skipped"}
    ran = {f["output"] for f in again["files"] if f["status"] == "ok"}
    if skipped != done or len(ran) + len(skipped) != total or ran & skipped:
        fail(f"resume: skipped {len(skipped)} (expected the {len(done)} done), ran {len(ran)}, total {total}")
    if any(os.stat(p).st_mtime_ns != t for p, t in before.items()):
        fail("resume rewrote a file that was already complete")
    if len(outputs(out)) != total or temp_files(work):
        fail("resume left missing or partial outputs")
    # Resuming with other settings would keep the outputs of these as if they were made by those.
    rc, so, se = run(koma, "batch", "keys", "--on", "3", "--fps", "source", src, "-o", out, "--resume")
    if rc != 2 or "cannot resume into" not in se or "settings differ: on: " not in se:
        fail(f"resume with other settings: exit {rc}, expected 2 and the difference named\n{so}\n{se}")
    if any(os.stat(p).st_mtime_ns != t for p, t in before.items()):
        fail("a refused resume rewrote a file")
    for f in again["files"]:
        single = work / "single.bvh"
        rc1, _, _ = run(koma, "keys", f["input"], "-o", single, *INTERRUPT_FLAGS)
        if rc1 != 0 or single.read_bytes() != pathlib.Path(f["output"]).read_bytes():
            fail(f"{f['output']} differs from a single run")


def case_cartoon(koma, shared, work):
    src = link_inputs(shared, work, GOOD[:3])
    out = work / "out"
    rc, so, se = run(koma, "batch", "cartoon", "--keep-feet", src, "-o", out, "--jobs", 2)
    if rc != 0:
        fail(f"batch cartoon: exit {rc}\n{so}\n{se}")
    report = json.loads((out / "batch-report.json").read_text())
    for f in report["files"]:
        single = work / "single.bvh"
        rc1, _, _ = run(koma, "cartoon", "--keep-feet", f["input"], "-o", single)
        if rc1 != 0 or single.read_bytes() != pathlib.Path(f["output"]).read_bytes():
            fail(f"{f['output']} differs from `koma cartoon`")
        if "body_change_mm" not in f["figures"]:
            fail(f"figures: {f['figures']}")

# Every per-file job besides keys and cartoon: (command, flags, --to or None, the single command's
# argv for one input and output), on three Bandai-Namco walks (retime takes the sad walk's timing).
def pipelines(shared, adverb):
    like = shared / "bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh"
    return [
        ("gait-apply", ["--adverb", f"{adverb}:0.8"], None, lambda i, o: ["gait", "apply", i, "--adverb", f"{adverb}:0.8", "-o", o]),
        ("gait-apply", ["--adverb", adverb, "--no-plant"], "glb",
         lambda i, o: ["gait", "apply", i, "--adverb", adverb, "--no-plant", "-o", o]),
        ("retime", ["--like", like], None, lambda i, o: ["retime", i, "--like", like, "-o", o]),
        ("retime", ["--like", like, "--speed", "input", "--global-only", "--fps", "30"], None,
         lambda i, o: ["retime", i, "--like", like, "-o", o, "--speed", "input", "--global-only", "--fps", "30"]),
        ("convert", ["--fps", "24", "--range", "10:-10"], None,
         lambda i, o: ["convert", i, o, "--fps", "24", "--range", "10:-10"]),
        ("convert", ["--out-unit", "m"], "glb", lambda i, o: ["convert", i, o, "--out-unit", "m"]),
    ]


def case_pipelines(koma, shared, work):
    src = link_inputs(shared, work, [WALKS + "normal_001.bvh", WALKS + "happy_001.bvh", WALKS + "tired_001.bvh"])
    adverb = work / "old.adverb.json"
    rc, so, se = run(koma, "gait", "adverb", shared / (WALKS + "normal_001.bvh"), shared / (WALKS + "old_001.bvh"), "-o", adverb)
    if rc != 0:
        fail(f"gait adverb: exit {rc}\n{so}\n{se}")
    for n, (command, flags, to, single_args) in enumerate(pipelines(shared, adverb)):
        outs = []
        for jobs in (2, 1):
            out = work / f"{command}{n}-j{jobs}"
            extra = ["--to", to] if to else []
            rc, so, se = run(koma, "batch", command, *flags, src, "-o", out, "--jobs", jobs, *extra)
            if rc != 0:
                fail(f"batch {command} {flags} --jobs {jobs}: exit {rc}\n{so}\n{se}")
            outs.append(out)
        report = json.loads((outs[0] / "batch-report.json").read_text())
        if report["counts"]["ok"] != 3:
            fail(f"batch {command}: counts {report['counts']}")
        for f in report["files"]:
            produced = pathlib.Path(f["output"])
            # The single run writes a file of the same name (a glTF animation is named after it).
            single = work / f"single{n}" / produced.name
            single.parent.mkdir(exist_ok=True)
            rc1, so1, se1 = run(koma, *single_args(f["input"], single))
            if rc1 != 0 or single.read_bytes() != produced.read_bytes():
                fail(f"{produced} differs from `koma {' '.join(map(str, single_args(f['input'], single)))}` "
                     f"(exit {rc1}) {se1}")
            if (outs[1] / f["relative"]).with_suffix(produced.suffix).read_bytes() != produced.read_bytes():
                fail(f"{f['relative']}: --jobs 2 and --jobs 1 bytes differ")
            if not f["figures"] or "frames" not in f["figures"] and "output_frames" not in f["figures"]:
                fail(f"figures missing: {f['figures']}")
        if temp_files(work):
            fail(f"temporary files left: {temp_files(work)}")


def main():
    koma, shared, work, case = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), sys.argv[4]
    if not (shared / GOOD[0]).exists():
        print(f"SKIP: real motion corpus not found at {shared} (../shared/data beside the checkout)")
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cases = {"failures": case_failures, "interrupt": case_interrupt, "cartoon": case_cartoon, "pipelines": case_pipelines}
    cases[case](koma, shared, work)
    print(f"batch {case}: ok")


if __name__ == "__main__":
    main()
