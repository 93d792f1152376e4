#!/usr/bin/python3
"""koma's FBX output in three.js: FBXLoader against GLTFLoader on koma's GLB of the same run (issue 40).

usage: fbx_three_check.py --koma KOMA --chromium CHROMIUM --three THREE_DIR --work DIR --input SOURCE
                          [--animation NAME] [--fbx FILE.fbx --glb FILE.glb --drawings N]
Runs `koma keys SOURCE --on 2` to run.glb (with --json: the drawing count) and to run.fbx, writes a
page that loads both with three.js r147 (THREE.GLTFLoader and THREE.FBXLoader, from THREE_DIR =
view/node_modules/three) from file:// in headless Chromium, and at every frame time samples each
clip with an AnimationMixer: the world position of every bone both have, and the box around every
skinned vertex (SkinnedMesh.boneTransform). FBXLoader ignores the file's UnitScaleFactor, so the
FBX's lengths are scaled by the metres per unit `koma info` reads from it (centimetres: 0.01;
0.01 when koma cannot read it). --fbx/--glb/--drawings check given files (another writer's FBX,
scripts/fbx_writer_compare.py) instead of running koma keys. Checks: joints within 0.1 % of the height, mesh box within
1 %, the clip named after the GLB's animation, and as many distinct poses as drawings.
Exit 0 = pass, 1 = a check failed, 77 = skipped (no corpus, no chromium, no three.js).
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PAGE = r"""<!doctype html><meta charset="utf-8"><title>koma FBX in three.js</title>
<script src="three.min.js"></script><script src="fflate.min.js"></script>
<script src="GLTFLoader.js"></script><script src="FBXLoader.js"></script><script src="data.js"></script>
<script>
function bytes(b64) { const s = atob(b64); const a = new Uint8Array(s.length); for (let i = 0; i < s.length; ++i) a[i] = s.charCodeAt(i); return a.buffer; }
function sample(root, clip, frames, fps, scale, offset) {
  const mixer = new THREE.AnimationMixer(root);
  const action = mixer.clipAction(clip);
  action.setLoop(THREE.LoopOnce); action.clampWhenFinished = true;  // the last frame, not frame 0 again
  action.play();
  const bones = [], meshes = [];
  root.traverse(o => { if (o.isBone) bones.push(o); if (o.isSkinnedMesh) meshes.push(o); });
  const out = [];
  const v = new THREE.Vector3();
  for (let f = 0; f < frames; ++f) {
    mixer.setTime((f + offset) / fps);
    root.updateMatrixWorld(true);
    const joints = {};
    for (const b of bones) { v.setFromMatrixPosition(b.matrixWorld); joints[b.name] = [v.x * scale, v.y * scale, v.z * scale]; }
    let box = null;
    for (const m of meshes) {
      m.skeleton.update();
      const pos = m.geometry.attributes.position;
      for (let i = 0; i < pos.count; ++i) {
        v.fromBufferAttribute(pos, i); m.boneTransform(i, v); v.applyMatrix4(m.matrixWorld).multiplyScalar(scale);
        if (!box) box = [v.x, v.y, v.z, v.x, v.y, v.z];
        box = [Math.min(box[0], v.x), Math.min(box[1], v.y), Math.min(box[2], v.z), Math.max(box[3], v.x), Math.max(box[4], v.y), Math.max(box[5], v.z)];
      }
    }
    out.push({joints, box});
  }
  return out;
}
try {
  new THREE.GLTFLoader().parse(bytes(KOMA_GLB), '', gltf => {
    try {
      const fbx = new THREE.FBXLoader().parse(bytes(KOMA_FBX), '');
      window.kpResult = {
        glb_name: gltf.animations[0].name, fbx_name: fbx.animations[0].name, fbx_clips: fbx.animations.length,
        glb: sample(gltf.scene, gltf.animations[0], KOMA_FRAMES, KOMA_FPS, 1.0, 1e-4),
        fbx: sample(fbx, fbx.animations[0], KOMA_FRAMES, KOMA_FPS, KOMA_FBX_SCALE, 0.0)};
    } catch (e) { window.kpError = String(e && e.stack || e); }
  }, e => { window.kpError = 'GLTFLoader: ' + e; });
} catch (e) { window.kpError = String(e && e.stack || e); }
</script>"""


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def distinct(frames, names, tol):
    if not names:
        return 0
    count = 1
    for a, b in zip(frames, frames[1:]):
        if max(max(abs(x - y) for x, y in zip(a["joints"][n], b["joints"][n])) for n in names) > tol:
            count += 1
    return count


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--koma", "--chromium", "--three", "--work", "--input"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--animation")
    ap.add_argument("--fbx")
    ap.add_argument("--glb")
    ap.add_argument("--drawings", type=int)
    a = ap.parse_args()
    if not os.path.exists(a.input):
        print(f"SKIP: {a.input} not found (the shared corpus sits beside the checkout as ../shared/data)")
        return 77
    if not shutil.which(a.chromium) and not os.path.exists(a.chromium):
        print(f"SKIP: chromium not found ({a.chromium}); make deps installs it")
        return 77
    loaders = os.path.join(a.three, "examples/js/loaders")
    if not os.path.exists(os.path.join(loaders, "FBXLoader.js")):
        print(f"SKIP: three.js not found in {a.three} (make deps: npm ci in view/)")
        return 77
    from check_viewer import Browser, Check  # needs python3-websocket and python3-pil (skips without)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    anim = ["--animation", a.animation] if a.animation else []
    if a.fbx:
        glb, fbx, drawings = a.glb, a.fbx, a.drawings
    else:
        glb, fbx = os.path.join(a.work, "run.glb"), os.path.join(a.work, "run.fbx")
        drawings = json.loads(run([a.koma, "keys", a.input, *anim, "--on", "2", "-o", glb, "--json"]))["key_count"]
        run([a.koma, "keys", a.input, *anim, "--on", "2", "-o", fbx])
    info = json.loads(run([a.koma, "info", glb, "--json"]))
    fbx_info = subprocess.run([a.koma, "info", fbx, "--json"], capture_output=True, text=True)
    fbx_scale = json.loads(fbx_info.stdout)["metres_per_unit"] if fbx_info.returncode == 0 else 0.01
    page = os.path.join(a.work, "page")
    os.makedirs(page)
    for src in ("build/three.min.js", "examples/js/libs/fflate.min.js", "examples/js/loaders/GLTFLoader.js",
                "examples/js/loaders/FBXLoader.js"):
        shutil.copy(os.path.join(a.three, src), page)
    with open(os.path.join(page, "data.js"), "w") as f:
        for name, path in (("KOMA_GLB", glb), ("KOMA_FBX", fbx)):
            f.write(f"const {name} = '{base64.b64encode(open(path, 'rb').read()).decode()}';\n")
        f.write(f"const KOMA_FRAMES = {info['frames']}; const KOMA_FPS = {info['fps']}; "
                f"const KOMA_FBX_SCALE = {fbx_scale};\n")
    with open(os.path.join(page, "index.html"), "w") as f:
        f.write(PAGE)
    browser = Browser(a.chromium, 320, 240)
    try:
        browser.call("Runtime.enable")
        browser.call("Page.navigate", url="file://" + os.path.join(page, "index.html"))
        deadline = time.time() + 120
        result = None
        while time.time() < deadline:
            state = browser.js("JSON.stringify({r: window.kpResult || null, e: window.kpError || null})")
            state = json.loads(state) if state else {}
            if state.get("e"):
                raise Check(f"page error: {state['e']}")
            if state.get("r"):
                result = state["r"]
                break
            time.sleep(0.2)
        if result is None:
            raise Check("the page did not finish loading within 120 s")
        if browser.errors:
            raise Check("; ".join(browser.errors))
    except Check as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        browser.close()
    ref, got = result["glb"], result["fbx"]
    names = sorted(set(ref[0]["joints"]) & set(got[0]["joints"]))
    ys = [p[1] for p in ref[0]["joints"].values()]
    height = max(ys) - min(ys)
    failures = []
    if len(names) < max(2, len(ref[0]["joints"]) // 2):
        failures.append(f"only {len(names)} bones in common")
    worst = max(((max(abs(x - y) for x, y in zip(r["joints"][n], g["joints"][n])), f, n)
                 for f, (r, g) in enumerate(zip(ref, got)) for n in names), default=(0, 0, ""))
    print(f"{os.path.basename(a.input)}: {len(names)} joints over {len(ref)} frames, height {height:.3f} m; worst "
          f"joint {worst[0] * 100:.4f} cm ({worst[0] / height * 100:.4f} % of height) at frame {worst[1]} ({worst[2]})")
    if worst[0] > 1e-3 * height:
        failures.append(f"joint {worst[2]} at frame {worst[1]}: {worst[0]:.5f} m off (> 0.1 % of height)")
    if ref[0]["box"] is not None:
        if got[0]["box"] is None:
            failures.append("the FBX has no skinned mesh in three.js")
        else:
            wb = max((max(abs(x - y) for x, y in zip(r["box"], g["box"])), f) for f, (r, g) in enumerate(zip(ref, got)))
            print(f"  skinned mesh box: worst {wb[0] * 100:.4f} cm ({wb[0] / height * 100:.4f} % of height) at frame {wb[1]}")
            if wb[0] > 1e-2 * height:
                failures.append(f"mesh box at frame {wb[1]}: {wb[0]:.4f} m off (> 1 % of height)")
    print(f"  clip: GLB '{result['glb_name']}', FBX '{result['fbx_name']}' ({result['fbx_clips']} clip(s))")
    if result["fbx_name"] != result["glb_name"] or result["fbx_clips"] != 1:
        failures.append(f"FBX clip '{result['fbx_name']}' ({result['fbx_clips']} clips), expected one named '{result['glb_name']}'")
    poses = distinct(got, names, 1e-5 * height)
    print(f"  distinct poses: FBX {poses}, GLB {distinct(ref, names, 1e-5 * height)}, drawings {drawings}")
    if poses != drawings:
        failures.append(f"{poses} distinct poses in three.js, {drawings} drawings")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
