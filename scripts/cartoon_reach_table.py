#!/usr/bin/python3
"""The cartoon filter's reach on the fastest shared takes (docs/cartoon.md, "Within a body's reach").

For each take, at the CLI's default (--strength 8 --keep-feet) and at docs/cartoon.md's kick
settings (--strength 20 --sigma 0.15s --keep-feet): the largest move of the head and of any joint
relative to the root, the largest move of an ankle or toe during the input's contacts, and the
mean world move of all joints; lengths in body heights (the standing height from the leg bones,
as body::estimate_height), feet in cm. The same measures as the test
CartoonBound.FastActionStaysWithinABodysReach.

    PYTHONPATH=build/release/python /usr/bin/python3 scripts/cartoon_reach_table.py [--data ../shared/data]

Run it with an older build's PYTHONPATH to get the "before" columns.
"""
import argparse
import os
import sys
import warnings

import numpy as np

import koma
from koma import body
from koma.cartoon import CartoonSettings, cartoon_motion

TAKES = [
    "bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh",
    "bvh/styles/xia2015/neutral_22_000.bvh",
    "bvh/styles/xia2015/angry_22_000.bvh",
    "bvh/styles/xia2015/neutral_16_000.bvh",
    "bvh/styles/xia2015/neutral_18_000.bvh",
    "bvh/cmu/cmu-daz/10_02.bvh",
    "bvh/cmu/cmu-daz/13_32.bvh",
    "bvh/cmu/cmu-daz/05_14.bvh",
    "bvh/cmu/bvh11/131_03.bvh",
    "bvh/styles/semi-mst-m21/content/kick.bvh",
    "bvh/styles/semi-mst-m21/content/jump-across.bvh",
    "bvh/styles/semi-mst-m21/content/dance.bvh",
    "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh",
    "bvh/styles/xia2015/neutral_01_000.bvh",
    "bvh/cmu/cmu-daz/05_01.bvh",
]
SETTINGS = {"default": dict(strength=8, keep_feet=True),
            "kick": dict(strength=20, sigma_seconds=0.15, keep_feet=True)}


def standing_height(m):
    roles = body.find_joint_roles(m.skeleton)
    p = koma.positions(koma.cut(m, 0, 1))[0]
    legs = []
    for side in ("left", "right"):
        h, k, a = (getattr(body.Role, f"{side}_{part}") for part in ("hip", "knee", "ankle"))
        if roles.has(h) and roles.has(k) and roles.has(a):
            legs.append(np.linalg.norm(p[roles[k]] - p[roles[h]]) + np.linalg.norm(p[roles[a]] - p[roles[k]]))
    return np.mean(legs) / (0.530 - 0.039)  # Winter's hip and ankle heights (body/height.hpp)


def measure(m, res):
    height = standing_height(m)
    a, b = koma.positions(m), koma.positions(res.motion)
    joints = m.skeleton.joint_count
    moved = np.linalg.norm((b[:, :joints] - b[:, :1]) - (a[:, :joints] - a[:, :1]), axis=2) / height
    head = body.find_joint_roles(m.skeleton)[body.Role.head]
    feet = 0.0
    for ec in res.contacts.effectors:
        for c in ec.contacts:
            for p in ec.effector.points:
                feet = max(feet, np.linalg.norm(b[c.begin:c.end, p] - a[c.begin:c.end, p], axis=1).max())
    mean = np.linalg.norm(b[:, :joints] - a[:, :joints], axis=2).mean() / height
    return moved[:, head].max(), moved.max(), 100 * feet, mean


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("| take | settings | head | any joint | feet at contacts, cm | mean |")
    print("|---|---|---|---|---|---|")
    for take in TAKES:
        m = koma.read(os.path.join(args.data, take))
        for name, s in SETTINGS.items():
            head, joint, feet, mean = measure(m, cartoon_motion(m, CartoonSettings(**s)))
            print(f"| {take.split('/')[-1]} | {name} | {head:.3f} | {joint:.3f} | {feet:.1f} | {mean:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
