#!/usr/bin/python3
"""Plots for hand-labelling key times (tests/data/labels/*.json; docs/timing.md "Ground truth").

For each foot: heel (ankle) and toe height above their lowest point and their horizontal speed; for
each hand and the head: position relative to the hips (x, y, z) and speed relative to the hips.
Frame grid lines every 5 frames, labelled every 10, so contacts and reversals can be read off by eye.
The labels are made from these pictures, never from the detector's output.

  PYTHONPATH=build/release/python /usr/bin/python3 scripts/label_plots.py CLIP.bvh OUT_PREFIX \
      [--fps 30] [--from F] [--to F]

Needs python3-matplotlib (not a koma dependency; used only to label).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import koma  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("clip")
    ap.add_argument("out")
    ap.add_argument("--fps", type=float, default=0, help="resample to this rate first (0 = the file's)")
    ap.add_argument("--from", dest="begin", type=int, default=0)
    ap.add_argument("--to", dest="end", type=int, default=-1)
    ap.add_argument("--only", choices=["feet", "hands", "all"], default="all", help="which panels to draw")
    a = ap.parse_args()
    m = koma.read(a.clip)
    if a.fps > 0:
        m = koma.resample(m, a.fps)
    roles = koma.body.find_joint_roles(m.skeleton)
    pos = koma.positions(m)
    n = pos.shape[0]
    end = n if a.end < 0 else min(a.end, n)
    f = np.arange(a.begin, end)
    rate = m.frame_rate

    def role(name):
        r = getattr(koma.body.Role, name)
        return roles[r] if roles.has(r) else None

    hips = role("hips")
    panels = []
    if a.only in ("feet", "all"):
        for side in ("left", "right"):
            panels.append(("foot", side, role(side + "_ankle"), role(side + "_toe")))
    if a.only in ("hands", "all"):
        for side in ("left", "right"):
            panels.append(("hand", side, role(side + "_hand"), None))
        panels.append(("head", "", role("head"), None))
    fig, axes = plt.subplots(len(panels) * 2, 1, figsize=(max(12, len(f) / 10), 2.2 * len(panels) * 2), sharex=True)
    for i, (kind, side, p, q) in enumerate(panels):
        ax_a, ax_b = axes[2 * i], axes[2 * i + 1]
        if p is None:
            continue
        if kind == "foot":
            for pt, lab in ((p, "heel"), (q, "toe")):
                if pt is None:
                    continue
                y = pos[:, pt, 1] - pos[:, pt, 1].min()
                v = np.linalg.norm(np.gradient(pos[:, pt, [0, 2]], axis=0), axis=1) * rate
                ax_a.plot(f, y[f], label=f"{side} {lab} height (m)")
                ax_b.plot(f, v[f], label=f"{side} {lab} horizontal speed (m/s)")
            ax_b.set_ylim(0, 1.0)
        else:
            rel = pos[:, p, :] - pos[:, hips, :]
            for k, c in enumerate("xyz"):
                ax_a.plot(f, rel[f, k] - rel[f, k].mean(), label=f"{side} {kind} {c} rel. hips (m)")
            v = np.linalg.norm(np.gradient(rel, axis=0), axis=1) * rate
            ax_b.plot(f, v[f], label=f"{side} {kind} speed rel. hips (m/s)")
        for ax in (ax_a, ax_b):
            ax.legend(loc="upper right", fontsize=7)
            ax.set_xticks(np.arange(a.begin - a.begin % 10, end, 10))
            ax.set_xticks(np.arange(a.begin - a.begin % 5, end, 5), minor=True)
            ax.grid(True, which="both", linewidth=0.3)
            ax.tick_params(labelsize=6, labelbottom=True)
    fig.tight_layout()
    fig.savefig(a.out + ".png", dpi=80)
    print(a.out + ".png", n, "frames at", rate)


if __name__ == "__main__":
    main()
