"""SIGINT and SIGTERM at several moments of a long write leave no file behind (issue 17).

Usage: signal_test.py KOMA WORKDIR. A small BVH is converted to 1000 fps (a long write from a tiny
input); the signal arrives at several moments. Each run must exit with 130 (SIGINT) or 143 (SIGTERM),
or 0 when it had already finished (or die of the signal itself when it arrives during process
start-up, before koma's handler is installed); the folder then holds the input and, at most, a complete output
that reads back (a write that completes within the 3 s grace is committed), and never a temporary
file.
"""
import os
import signal
import subprocess
import sys
import time

koma, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
for f in os.listdir(work):
    os.remove(os.path.join(work, f))

joints = 20
lines = ["HIERARCHY"]
for j in range(joints):
    lines.append(("ROOT" if j == 0 else "JOINT") + f" j{j}\n{{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation")
lines.append("End Site\n{\nOFFSET 0 1 0\n}")
lines += ["}"] * joints
frames = 12000
lines.append(f"MOTION\nFrames: {frames}\nFrame Time: 0.0333333")
for f in range(frames):
    lines.append(" ".join(f"{(f * 7 + j) % 90}" for j in range(3 * joints)))
src = os.path.join(work, "in.bvh")
with open(src, "w") as fh:
    fh.write("\n".join(lines) + "\n")

failures = []
for sig, want in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
    for delay in (0.05, 0.3, 1.0, 2.5):
        out = os.path.join(work, "out.bvh")
        if os.path.exists(out):
            os.remove(out)
        p = subprocess.Popen([koma, "convert", src, out, "--fps", "1000", "--unit", "m"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            failures.append(f"{sig.name} at {delay} s: still running 20 s later")
            continue
        left = sorted(f for f in os.listdir(work) if f not in ("in.bvh", "out.bvh"))
        if left:
            failures.append(f"{sig.name} at {delay} s: left {left}")
        # -sig: the signal came before koma installed its handler (process start-up, nothing written yet)
        if p.returncode not in (want, 0, -sig):
            failures.append(f"{sig.name} at {delay} s: exit {p.returncode}, want {want}: {err.decode()[-300:]}")
        if os.path.exists(out):  # finished before the signal was seen: it must be whole
            r = subprocess.run([koma, "info", out], capture_output=True)
            if r.returncode != 0:
                failures.append(f"{sig.name} at {delay} s: the finished output does not read: {r.stderr.decode()}")
        print(f"{sig.name} at {delay:.2f} s: exit {p.returncode}, left {left}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("no file left behind")
