#!/usr/bin/python3
"""Re-timing keeps the example's cadence (docs/timing.md, "Cadence"): every shared style walk used
as the example on walks of other performers; the output's median step against the example's.

Steps are measured without koma's contact detector: the feet's separation along the direction of
travel, s(t) = (left ankle - right ankle) . d(t), d(t) the horizontal direction along which the
separation varies most within +-1 s (the direction of travel on a walk, and the stepping direction
of a walk on the spot), low-passed (Gaussian, sigma 0.05 s); a step is the time
between consecutive extrema of s (left foot ahead, then right foot ahead), extrema counted only
when they stand out from the neighbouring opposite extremum by at least a third of the take's
median swing. The median over the take's interior steps is its step time.

    PYTHONPATH=build/release/python /usr/bin/python3 scripts/cadence_table.py [--data ../shared/data]
        [--check 0.15]

Each pair is re-timed with the default (--speed cadence) and, for comparison, --speed source (the
default before issue 39). --check R exits 1 when any pair's output median step (cadence) is not
within R of the example's, over the examples whose own steps are regular (interquartile range at
most MAX_SPREAD of their median: a skip, a dragged foot or shuffling on the spot has no one
cadence); the test timing.cadence_table runs it with 0.15.
"""
import argparse
import glob
import os
import sys
import warnings

import numpy as np

import koma
from koma import body, timing

# An example whose own steps spread more than this (interquartile range over median) has no one
# cadence (a skip, a drag, shuffling on the spot): it is listed, not checked.
MAX_SPREAD = 0.25

INPUTS = {"cmu": "bvh/cmu/cmu-daz/05_01.bvh",
          "xia": "bvh/styles/xia2015/neutral_01_000.bvh",
          "bandai": "bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh"}


def examples(data):
    """(label, path, the inputs that are other performers) for every shared style walk."""
    out = []
    for path in sorted(glob.glob(os.path.join(data, "bvh/styles/bandai-namco-[12]/dataset-[12]_walk_*.bvh"))):
        out.append((os.path.basename(path), path, ("cmu", "xia")))
    for path in sorted(glob.glob(os.path.join(data, "bvh/styles/xia2015/*_01_000.bvh"))):
        out.append((os.path.basename(path), path, ("cmu", "bandai")))
    for path in sorted(glob.glob(os.path.join(data, "bvh/styles/semi-mst-m21/style/*.bvh"))):
        out.append(("m21 " + os.path.basename(path), path, ("cmu", "bandai")))
    return out


def smooth(x, sigma):
    if sigma <= 0:
        return x
    r = int(np.ceil(4 * sigma))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    pad = np.concatenate([np.repeat(x[:1], r, axis=0), x, np.repeat(x[-1:], r, axis=0)])
    return np.stack([np.convolve(pad[:, i], k, mode="valid") for i in range(x.shape[1])], axis=1) \
        if x.ndim == 2 else np.convolve(pad, k, mode="valid")


def step_times(motion):
    """Seconds between consecutive opposite extrema of the feet's separation along the travel."""
    roles = body.find_joint_roles(motion.skeleton)
    p = koma.positions(motion)
    fps = motion.frame_rate
    left, right = p[:, roles[body.Role.left_ankle]], p[:, roles[body.Role.right_ankle]]
    sep = (left - right)[:, [0, 2]]  # horizontal separation
    axis = np.zeros_like(sep)
    w = int(round(fps))  # the direction the feet separate along most, over +-1 s
    for f in range(len(sep)):
        win = sep[max(0, f - w):f + w + 1]
        cov = np.cov((win - win.mean(axis=0)).T)
        a = np.linalg.eigh(cov)[1][:, -1]
        if f > 0 and a @ axis[f - 1] < 0:
            a = -a
        axis[f] = a
    s = smooth(np.sum(sep * axis, axis=1), 0.05 * fps)
    ext = [f for f in range(1, len(s) - 1) if (s[f] - s[f - 1]) * (s[f + 1] - s[f]) < 0]
    if len(ext) < 2:
        return []
    swing = np.median(np.abs(np.diff(s[ext])))
    keep = []  # alternate max/min, dropping small wiggles: keep the stronger of two same-sign extrema
    for f in ext:
        kind = 1 if s[f] > s[f - 1] else -1  # 1 = maximum
        if keep and keep[-1][1] == kind:
            if kind * s[f] > kind * s[keep[-1][0]]:
                keep[-1] = (f, kind)
            continue
        if keep and abs(s[f] - s[keep[-1][0]]) < swing / 3:
            continue
        keep.append((f, kind))
    frames = [f for f, _ in keep]
    return list(np.diff(frames) / fps)


def median_step(motion):
    steps = step_times(motion)
    return float(np.median(steps)) if steps else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    ap.add_argument("--check", type=float, default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if not os.path.isdir(os.path.join(args.data, "bvh")):
        print(f"skipped: shared data not found at {args.data}")
        return 77
    inputs = {k: koma.read(os.path.join(args.data, v)) for k, v in INPUTS.items()}
    modes = [("cadence", timing.SpeedFrom.cadence), ("source", timing.SpeedFrom.source)]
    print("| example | its step, s | spread | input | its step, s | output's step (cadence) | / example "
          "| output's step (--speed source) | / example |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, worst_pair = 0.0, ""
    for label, path, others in examples(args.data):
        steps = step_times(koma.read(path))
        ex_step = float(np.median(steps))
        q1, q3 = np.percentile(steps, [25, 75])
        spread = (q3 - q1) / ex_step  # interquartile range of its own steps over their median
        regular = spread <= MAX_SPREAD
        source = koma.timing_source(path)
        for name in others:
            cells = []
            for mode_name, mode in modes:
                out_step = median_step(koma.retime_like(inputs[name], source, timing.RetimeSettings(speed=mode)).motion)
                ratio = out_step / ex_step
                cells += [f"{out_step:.3f}", f"{ratio:.2f}"]
                if mode_name == "cadence" and regular and abs(ratio - 1) > worst:
                    worst, worst_pair = abs(ratio - 1), f"{label} on {INPUTS[name].split('/')[-1]}"
            mark = "" if regular else " (irregular)"
            print(f"| {label} | {ex_step:.3f} | {spread:.2f}{mark} | {INPUTS[name].split('/')[-1]} "
                  f"| {median_step(inputs[name]):.3f} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nlargest deviation of the output's median step from the example's, regular examples "
          f"(spread <= {MAX_SPREAD}): {100 * worst:.1f} % ({worst_pair})")
    if args.check is not None and not worst <= args.check:
        print(f"FAIL: above {100 * args.check:.0f} %")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
