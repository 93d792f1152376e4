#!/usr/bin/python3
"""CPU time of the Python calls docs/python.md quotes, on the Bandai-Namco normal walk.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_calls.py [shared/data dir]

Best of 5 CPU seconds (time.process_time) per call, plus a baseline in the same run (reading the
file), so numbers from a loaded machine compare as ratios. Prints one line per call."""
import os
import sys
import time

import koma
from koma import gait

data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
walk_path = os.path.join(data, "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh")
sad_path = os.path.join(data, "bvh/styles/bandai-namco-1/dataset-1_walk_sad_001.bvh")
if not os.path.exists(walk_path):
    print(f"skipped: {walk_path} not found")
    sys.exit(0)


def best(fn, n=5):
    t = []
    for _ in range(n):
        t0 = time.process_time()
        fn()
        t.append(time.process_time() - t0)
    return min(t)


walk = koma.read(walk_path)
sad = koma.read(sad_path)
source = koma.timing_source(sad)
base = best(lambda: koma.read(walk_path))
rows = [
    ("koma.read (baseline)", base),
    ("gait.analyze_gait", best(lambda: gait.analyze_gait(walk))),
    ("koma.gait_style (10 s at 24 fps)", best(lambda: koma.gait_style(walk))),
    ("koma.timing_source", best(lambda: koma.timing_source(sad))),
    ("koma.retime_like (source given)", best(lambda: koma.retime_like(walk, source))),
    ("koma.retime_like (motion given)", best(lambda: koma.retime_like(walk, sad))),
]
print(f"{walk.frame_count} frames x {walk.skeleton.joint_count} joints; CPU seconds, best of 5")
for name, s in rows:
    print(f"{name:<36} {s * 1e3:9.2f} ms   {s / base:7.1f}x read")
