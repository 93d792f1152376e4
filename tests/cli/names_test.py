"""Every koma command that writes glTF or FBX keeps the source animation's name, or the one --name
gives (issue 40). Run by CTest (tests/cli/CMakeLists.txt):
    python3 names_test.py KOMA SHARED_DATA TESTS_DATA WORKDIR
Skips (exit 77) when the shared corpus is absent. For each command it writes a .glb and a .fbx
and reads the name back with `koma info --json` (the file's first animation / stack).
"""
import json
import os
import shutil
import subprocess
import sys

from cli_support import require_shared

koma, shared, data, work = sys.argv[1:5]
fox = os.path.join(shared, "gltf/Fox/Fox.glb")
human = os.path.join(shared, "fbx/quaternius_AnimatedHuman.fbx")
walk_bvh = os.path.join(shared, "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh")
like_bvh = os.path.join(shared, "bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh")
require_shared(fox, human, walk_bvh, like_bvh)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def run(*argv):
    out = subprocess.run([koma, *argv], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"koma {' '.join(argv)} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def name_of(path):
    if not os.path.exists(path):
        return None
    return json.loads(run("info", path, "--json"))["animations"][0]["name"]


def expect(path, name, what):
    got = name_of(path)
    print(f"{what}: {os.path.basename(path)} -> '{got}'")
    if got != name:
        failures.append(f"{what}: {path} is named '{got}', expected '{name}'")


adverb = os.path.join(work, "swing.adverb.json")
run("gait", "adverb", os.path.join(data, "gait_walk.bvh"), os.path.join(data, "gait_walk_swing.bvh"), "-o", adverb)
for ext in ("glb", "fbx"):
    o = lambda stem: os.path.join(work, f"{stem}.{ext}")  # noqa: E731
    # The Fox's "Walk" and the Quaternius stack "Human Armature|Walk" (asked for as "Walk").
    run("keys", fox, "--animation", "Walk", "--on", "2", "-o", o("keys"))
    expect(o("keys"), "Walk", "keys")
    run("keys", fox, "--animation", "1", "--on", "2", "-o", o("keys_named"), "--name", "walk")
    expect(o("keys_named"), "walk", "keys --name")
    run("cartoon", human, "--animation", "Walk", "-o", o("cartoon"))
    expect(o("cartoon"), "Human Armature|Walk", "cartoon")
    run("cartoon", human, "--animation", "Walk", "-o", o("cartoon_named"), "--name", "walk")
    expect(o("cartoon_named"), "walk", "cartoon --name")
    run("convert", fox, o("convert"), "--animation", "Walk")
    expect(o("convert"), "Walk", "convert")
    run("convert", human, o("convert_named"), "--animation", "Walk", "--name", "walk")
    expect(o("convert_named"), "walk", "convert --name")
    run("gait", "apply", human, "--animation", "Walk", "--period", "1", "--adverb", adverb, "-o", o("apply"))
    expect(o("apply"), "Human Armature|Walk", "gait apply")
    run("gait", "apply", human, "--animation", "Walk", "--period", "1", "--adverb", adverb, "-o", o("apply_named"),
        "--name", "walk")
    expect(o("apply_named"), "walk", "gait apply --name")
    # Re-timing needs two steps: a BVH walk, named after its file.
    run("retime", walk_bvh, "--like", like_bvh, "-o", o("retime"))
    expect(o("retime"), "dataset-1_walk_normal_001", "retime")
    run("retime", walk_bvh, "--like", like_bvh, "-o", o("retime_named"), "--name", "walk")
    expect(o("retime_named"), "walk", "retime --name")
    # Non-ASCII names are written and read back intact.
    utf8 = "歩き|Gehen — «walk»"
    run("convert", human, o("utf8"), "--animation", "Walk", "--name", utf8)
    expect(o("utf8"), utf8, "convert --name (non-ASCII)")
    # Batch: every output keeps its own file's animation name (each command's pipeline).
    for cmd, src, name in (("keys", fox, "Walk"), ("cartoon", fox, "Walk"), ("convert", fox, "Walk"),
                           ("gait-apply", human, "Human Armature|Walk")):
        out_dir = os.path.join(work, f"batch_{cmd}_{ext}")
        extra = {"keys": ["--on", "2"], "gait-apply": ["--period", "1", "--adverb", adverb]}.get(cmd, [])
        run("batch", cmd, *extra, src, "--animation", "Walk", "-o", out_dir, "--to", ext)
        stem = os.path.splitext(os.path.basename(src))[0]
        expect(os.path.join(out_dir, f"{stem}.{ext}"), name, f"batch {cmd}")
    out_dir = os.path.join(work, f"batch_retime_{ext}")
    run("batch", "retime", "--like", like_bvh, walk_bvh, "-o", out_dir, "--to", ext)
    expect(os.path.join(out_dir, f"dataset-1_walk_normal_001.{ext}"), "dataset-1_walk_normal_001", "batch retime")
    # --animations all: one output per animation, each named after its own.
    out_dir = os.path.join(work, f"batch_all_{ext}")
    run("batch", "convert", fox, "--animations", "all", "-o", out_dir, "--to", ext)
    for anim in ("Survey", "Walk", "Run"):
        expect(os.path.join(out_dir, f"Fox.{anim}.{ext}"), anim, "batch convert --animations all")
    # Round trip: koma's own file read and written again keeps the name.
    run("convert", o("keys"), o("again") if ext == "fbx" else os.path.join(work, "again_from_glb.fbx"))
    expect(o("again") if ext == "fbx" else os.path.join(work, "again_from_glb.fbx"), "Walk", "convert koma's file")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("ok")
