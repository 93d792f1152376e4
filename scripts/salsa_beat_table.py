#!/usr/bin/env python3
"""Why the CMU salsa take 60_01 gets no confident beat (docs/timing.md): fits one beat grid
(koma.timing.fit_beat) to the touch-downs, the stance keys and the lift-offs of both feet, over the
whole take and over its steadiest stretch (8.5-16.7 s), and prints the inter-onset intervals.

    PYTHONPATH=build/release/python /usr/bin/python3 scripts/salsa_beat_table.py [SHARED_DATA]
"""
import os
import sys
import warnings

import koma

warnings.simplefilter("ignore", koma.KomaWarning)  # the take is 1.31 m tall: the unit note is expected
root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")
m = koma.read(os.path.join(root, "bvh", "cmu", "salsa", "60_01_scaled.bvh"))
r = koma.timing.detect_key_times(m, koma.body.find_joint_roles(m.skeleton))
events = sorted((k.begin / m.frame_rate, k.frame / m.frame_rate, k.end / m.frame_rate)
                for foot in ("left_foot", "right_foot") for k in r.find(foot).keys)
steady = (8.5, 16.7)
touch = [e[0] for e in events if steady[0] < e[0] < steady[1]]
gaps = [b - a for a, b in zip(touch, touch[1:])]
print(f"{len(events)} contacts; touch-down intervals in {steady[0]}-{steady[1]} s: "
      f"{min(gaps):.2f}-{max(gaps):.2f} s, median {sorted(gaps)[len(gaps) // 2]:.2f} s")
print("| keys | span | tempo (bpm) | on the beat | R | confidence |")
print("|---|---|---|---|---|---|")
for name, idx in (("touch-downs", 0), ("stance keys", 1), ("lift-offs", 2)):
    for label, (lo, hi) in (("whole take", (-1.0, 1e9)), (f"{steady[0]}-{steady[1]} s", steady)):
        b = koma.timing.fit_beat([e[idx] for e in events if lo < e[idx] < hi])
        print(f"| {name} | {label} | {b.tempo_bpm:.1f} | {b.on_beat} of {b.keys} | {b.resultant:.2f} | {b.confidence:.2f} |")
