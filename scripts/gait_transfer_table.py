#!/usr/bin/env python3
"""Transfer quality of gait adverbs on the real style pairs of ../shared/data (issue 20).

For every style pair whose style also exists as another take (another content of the same
actor, or the same content by another performer), learns the adverb neutral -> styled on one
pair (gait.make_adverb, as `koma gait adverb`), applies it to the other neutral take with
koma.gait_apply (`koma gait apply`, default settings, alpha 1) and measures how much closer the
result gets to the real styled take, in the phase-free per-joint rotation distance:

  per joint j   posture  = angle between the takes' mean rotations (the log map's centre)
                spread   = |sigma_a - sigma_b|, sigma = per-axis standard deviation over the take
                           of the joint's log-map channels (gait.motion_channels: root heading-free)
                d_j      = sqrt(posture^2 + spread^2)                           radians
  distance      sqrt(mean over joints of d_j^2), also per body part (koma.body.joint_parts)

"closer" = 1 - after / before. The style "is in" the part holding the largest share of
before^2 (summed over its joints). Prints a markdown table (and --json rows).

  PYTHONPATH=build/release/python /usr/bin/python3 scripts/gait_transfer_table.py [--data DIR] [--json]

--check (the CTest `gait.transfer_table`, about 1 s): every row must still be computed, and its
"closer" (overall, and in the part the style is in) may not fall more than 5 points below the
figure measured when the table in docs/gait.md was made (MEASURED). Exit 77 (skipped) when the
shared data is absent.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

import koma
from koma import body, gait

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "data"))
PARTS = ("torso", "head", "arms", "legs")
D1_WALK_STYLES = ("active", "angry", "childish", "feminine", "happy", "masculinity", "not-confident", "old", "proud",
                  "sad", "tired")

# (pair, relation) -> (closer overall, closer in the part the style is in), as measured for
# docs/gait.md (2026-12, per-channel K, koma gait apply defaults). A regression bar, not a goal.
MEASURED = {
    ("Xia angry", "same actor: walk -> run"): (-0.06, -0.10),
    ("Xia childlike", "same actor: walk -> run"): (-0.28, -0.28),
    ("Xia old", "same actor: walk -> run"): (-0.33, 0.37),
    ("Xia proud", "same actor: walk -> run"): (-0.10, -0.11),
    ("Bandai d1 happy", "same dataset: walk -> run"): (0.05, 0.07),
    ("Bandai d1 sad", "same dataset: walk -> run"): (0.12, 0.11),
    ("Bandai d1 angry", "same dataset: walk -> run"): (0.34, 0.39),
    ("Bandai d1 tired", "same dataset: walk -> run"): (0.17, 0.20),
    ("Bandai active", "other performer: d1 -> d2"): (0.07, 0.07),
    ("Bandai active", "other performer: d2 -> d1"): (-0.52, -0.59),
    ("Bandai feminine", "other performer: d1 -> d2"): (0.20, 0.25),
    ("Bandai feminine", "other performer: d2 -> d1"): (-0.76, -0.71),
    ("Bandai d1 active", "held-out half: 1st -> 2nd"): (0.63, 0.76),
    ("Bandai d1 active", "held-out half: 2nd -> 1st"): (0.64, 0.81),
    ("Bandai d1 angry", "held-out half: 1st -> 2nd"): (0.68, 0.71),
    ("Bandai d1 angry", "held-out half: 2nd -> 1st"): (0.76, 0.79),
    ("Bandai d1 childish", "held-out half: 1st -> 2nd"): (0.49, 0.61),
    ("Bandai d1 childish", "held-out half: 2nd -> 1st"): (0.58, 0.76),
    ("Bandai d1 feminine", "held-out half: 1st -> 2nd"): (0.49, 0.55),
    ("Bandai d1 feminine", "held-out half: 2nd -> 1st"): (0.58, 0.69),
    ("Bandai d1 happy", "held-out half: 1st -> 2nd"): (0.46, 0.58),
    ("Bandai d1 happy", "held-out half: 2nd -> 1st"): (0.46, 0.65),
    ("Bandai d1 masculinity", "held-out half: 1st -> 2nd"): (0.62, 0.70),
    ("Bandai d1 masculinity", "held-out half: 2nd -> 1st"): (0.64, 0.76),
    ("Bandai d1 not-confident", "held-out half: 2nd -> 1st"): (0.80, 0.89),
    ("Bandai d1 old", "held-out half: 1st -> 2nd"): (0.52, 0.73),
    ("Bandai d1 old", "held-out half: 2nd -> 1st"): (0.56, 0.84),
    ("Bandai d1 proud", "held-out half: 1st -> 2nd"): (0.39, 0.58),
    ("Bandai d1 proud", "held-out half: 2nd -> 1st"): (0.34, 0.60),
    ("Bandai d1 sad", "held-out half: 1st -> 2nd"): (0.64, 0.71),
    ("Bandai d1 sad", "held-out half: 2nd -> 1st"): (0.71, 0.79),
    ("Bandai d1 tired", "held-out half: 1st -> 2nd"): (0.63, 0.78),
    ("Bandai d1 tired", "held-out half: 2nd -> 1st"): (0.70, 0.83),
    ("Bandai d2 active", "held-out half: 1st -> 2nd"): (0.76, 0.79),
    ("Bandai d2 active", "held-out half: 2nd -> 1st"): (0.73, 0.77),
    ("Bandai d2 feminine", "held-out half: 1st -> 2nd"): (0.67, 0.77),
    ("Bandai d2 feminine", "held-out half: 2nd -> 1st"): (0.62, 0.77),
}


def pairs(data):
    """(label, relation, neutral_a, styled_a, neutral_b, styled_b[, (half_a, half_b)]): learn on a,
    apply to b; with halves, a and b are those halves of the files (half())."""
    s = os.path.join(data, "bvh", "styles")
    d1 = lambda c, st: os.path.join(s, "bandai-namco-1", f"dataset-1_{c}_{st}_001.bvh")  # noqa: E731
    d2 = lambda st: os.path.join(s, "bandai-namco-2", f"dataset-2_walk_{st}_001.bvh")  # noqa: E731
    xia = lambda st, c: os.path.join(s, "xia2015", f"{st}_{c}_000.bvh")  # noqa: E731
    out = []
    # Xia 2015: one actor; walk (01) and run (13) of each style.
    for st in ("angry", "childlike", "depressed", "old", "proud"):
        out.append((f"Xia {st}", "same actor: walk -> run", xia("neutral", "01"), xia(st, "01"),
                    xia("neutral", "13"), xia(st, "13")))
        out.append((f"Xia {st}", "same actor: run -> walk", xia("neutral", "13"), xia(st, "13"),
                    xia("neutral", "01"), xia(st, "01")))
    # Bandai-Namco dataset-1: walk and run of each style.
    for st in ("happy", "sad", "angry", "tired"):
        out.append((f"Bandai d1 {st}", "same dataset: walk -> run", d1("walk", "normal"), d1("walk", st),
                    d1("run", "normal"), d1("run", st)))
    # Bandai-Namco dataset-1 <-> dataset-2: the same style walked by the other dataset's performer.
    for st in ("active", "feminine"):
        out.append((f"Bandai {st}", "other performer: d1 -> d2", d1("walk", "normal"), d1("walk", st),
                    d2("normal"), d2(st)))
        out.append((f"Bandai {st}", "other performer: d2 -> d1", d2("normal"), d2(st),
                    d1("walk", "normal"), d1("walk", st)))
    # No style has a second take by the same performer: the nearest thing is the held-out half of
    # each styled recording. Learn on one half of the neutral and styled walks, apply to the other
    # half of the neutral walk, compare with the other half of the styled walk (both ways).
    for label, path in [(f"Bandai d1 {st}", lambda st=st: d1("walk", st)) for st in D1_WALK_STYLES] + \
                       [(f"Bandai d2 {st}", lambda st=st: d2(st)) for st in ("active", "feminine")]:
        neutral = d1("walk", "normal") if label.startswith("Bandai d1") else d2("normal")
        out.append((label, "held-out half: 1st -> 2nd", neutral, path(), neutral, path(), (0, 1)))
        out.append((label, "held-out half: 2nd -> 1st", neutral, path(), neutral, path(), (1, 0)))
    return out


def half(motion, which):
    """Frames [0, n/2) (which = 0) or [n/2, n) (which = 1) of a motion."""
    h = motion.frame_count // 2
    return koma.cut(motion, 0, h) if which == 0 else koma.cut(motion, h, motion.frame_count)


def stats(motion):
    """Per joint: mean rotation (x, y, z, w) and per-axis spread (radians) of the log map."""
    ch = gait.motion_channels(motion)
    n = motion.skeleton.joint_count
    means = [np.asarray(ch.basis.mean_rotations[j]) for j in range(n)]
    spread = [np.std(ch.values[3 + 3 * j:6 + 3 * j, :], axis=1) for j in range(n)]
    return means, spread


def joint_distances(a, b):
    (ma, sa), (mb, sb) = a, b
    out = []
    for qa, qb, xa, xb in zip(ma, mb, sa, sb):
        posture = 2 * math.acos(min(1.0, abs(float(np.dot(qa, qb)))))
        out.append(math.hypot(posture, float(np.linalg.norm(xa - xb))))
    return np.array(out)


def summary(d, parts):
    res = {"all": float(np.sqrt(np.mean(d ** 2)))}
    for p in PARTS:
        sel = d[[i for i, q in enumerate(parts) if q == p]]
        res[p] = float(np.sqrt(np.mean(sel ** 2))) if len(sel) else float("nan")
    return res


def run(data, posture_only=False):
    """The rows; with `posture_only` the adverb keeps its posture (mean-rotation) part only, its
    harmonic deltas zeroed (does the oscillation part of a walk adverb hurt on a run?)."""
    rows = []
    for label, relation, na, sa, nb, sb, *cut in pairs(data):
        if not all(os.path.exists(f) for f in (na, sa, nb, sb)):
            continue
        ha, hb = cut[0] if cut else (None, None)
        read = lambda path, h: koma.read(path) if h is None else half(koma.read(path), h)  # noqa: E731
        names = ("1st half of ", "2nd half of ")
        row = {"pair": label, "relation": relation, "take": ("" if hb is None else names[hb]) + os.path.basename(nb),
               "target": ("" if hb is None else names[hb]) + os.path.basename(sb)}
        try:
            neutral = gait.analyze_gait(read(na, ha))
            adverb = gait.make_adverb(neutral, gait.analyze_gait(read(sa, ha)))
            if posture_only:
                adverb.delta = np.zeros_like(np.asarray(adverb.delta))
        except koma.Error as e:
            row["error"] = f"adverb not learned: {e}"
            rows.append(row)
            continue
        take, target = read(nb, hb), read(sb, hb)
        try:
            res = koma.gait_apply(take, [(adverb, 1.0)])
        except koma.BadDataError:
            # No gait detected in the take (a clip of about one cycle): apply at the adverb's own
            # period (`koma gait apply --period`); the distance is phase-free.
            res = koma.gait_apply(take, [(adverb, 1.0)], period=neutral.basis.period)
        parts = [str(p).split(".")[-1] for p in body.joint_parts(take.skeleton)]
        t = stats(target)
        before, after = joint_distances(stats(take), t), joint_distances(stats(res.motion), t)
        b, a = summary(before, parts), summary(after, parts)
        share = {p: float(np.sum(before[[i for i, q in enumerate(parts) if q == p]] ** 2)) for p in PARTS}
        row.update(before=b, after=a, style_in=max(share, key=share.get), phase=str(res.phase.source).split(".")[-1],
                   harmonics=adverb.harmonics,
                   closer={k: (1 - a[k] / b[k]) if b[k] > 0 else 0.0 for k in b})
        rows.append(row)
    return rows


def pct(x):
    return f"{100 * x:+.0f} %"


def markdown(rows):
    lines = ["| pair | learned -> applied | take -> target | phase | style in | distance before -> after (rad) | closer | "
             "torso | legs | arms | head |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['pair']} | {r['relation']} | {r['take']} -> {r['target']} | | | {r['error']} | | | | | |")
            continue
        b, a, c = r["before"], r["after"], r["closer"]
        cells = [f"{b[p]:.3f} -> {a[p]:.3f} ({pct(c[p])})" for p in ("torso", "legs", "arms", "head")]
        lines.append(f"| {r['pair']} | {r['relation']} | {r['take']} -> {r['target']} | {r['phase']} | {r['style_in']} | "
                     f"{b['all']:.3f} -> {a['all']:.3f} | **{pct(c['all'])}** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("KOMA_SHARED_DATA", DEFAULT_DATA))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--check", action="store_true", help="fail when a row falls below MEASURED (regression)")
    ap.add_argument("--posture-only", action="store_true", help="apply only the adverbs' posture part (an experiment)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.data, "bvh", "styles")):
        print(f"skipped: shared data not found at {args.data} (set KOMA_SHARED_DATA)", file=sys.stderr)
        return 77 if args.check else 2
    if args.check and args.posture_only:
        ap.error("--check measures the full adverbs; drop --posture-only")
    rows = run(args.data, args.posture_only)
    print(json.dumps(rows, indent=1) if args.json else markdown(rows))
    if not args.check:
        return 0
    failed = []
    done = {(r["pair"], r["relation"]): r for r in rows if "error" not in r}
    for key, (overall, part) in MEASURED.items():
        r = done.get(key)
        if r is None:
            failed.append(f"{key}: not computed any more")
            continue
        got = (r["closer"]["all"], r["closer"][r["style_in"]])
        if got[0] < overall - 0.05 or got[1] < part - 0.05:
            failed.append(f"{key}: closer {pct(got[0])} (style in {r['style_in']}: {pct(got[1])}), "
                          f"measured {pct(overall)} ({pct(part)})")
    for f in failed:
        print("REGRESSION " + f, file=sys.stderr)
    print(f"{len(MEASURED) - len(failed)} of {len(MEASURED)} rows at or above the measured transfer")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
