#!/usr/bin/env python3
"""Survey: hand and head key times on every BVH take of a folder (default ../shared/data).

    PYTHONPATH=build/release/python /usr/bin/python3 scripts/hand_keys_survey.py [FOLDER]

Prints per take "<effector> <acceleration keys>+<extremes>" or "still", and lists the effectors
that move but got no key (docs/timing.md quotes the result).
"""
import glob
import os
import sys

import koma

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'shared', 'data')
rows=[]; bad=[]
for f in sorted(glob.glob(os.path.join(root, '**', '*.bvh'), recursive=True)):
    try:
        m = koma.read(f); m = getattr(m, 'motion', m)
        r = koma.timing.detect_key_times(m, koma.body.find_joint_roles(m.skeleton))
    except Exception as e:
        rows.append((f, 'error: ' + str(e)[:80])); continue
    parts=[]
    for e in r.effectors:
        if 'foot' in e.name: continue
        n = len(e.keys); x = len(e.extremes)
        parts.append(f"{e.name} {'still' if e.still else f'{n}+{x}'}")
        if not e.still and n == 0 and x == 0: bad.append((os.path.relpath(f, root), e.name))
    rows.append((f, ', '.join(parts)))
for f, s in rows: print(os.path.relpath(f, root), '|', s)
print('clips', len(rows), 'effectors with no keys and not still:', bad)
