"""Video of any length in bounded memory (issue 43): `koma keys` on a generated 2-minute 720p video
(ffmpeg's testsrc2, 1280x720, 12 fps, 1440 frames, H.264) with a contact sheet, a report and an
exposure sheet, run under an address-space limit (RLIMIT_AS 400 MiB, plus 16 MiB per core beyond
two: each thread reserves its stack; MALLOC_ARENA_MAX=2, as each malloc arena reserves 64 MiB;
ffmpeg and ffprobe, other programs, run outside the limit through wrappers), must succeed, and koma's peak resident memory (wait4's
ru_maxrss) must stay under 400 MB. Before issue 43 the contact sheet kept every key frame at full
size: 1.75 GB for a 37 s 1600x720 GIF, about 15 GB for this clip.

Also printed, for the record: wall time, koma's CPU seconds, the peak of its ffmpeg children, and
a plain ffmpeg decode of the same clip measured in the same run (the "real time" baseline).

    video_memory_test.py KOMA WORK_DIR
"""
import os
import resource
import shutil
import subprocess
import sys
import time

koma, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
clip = os.path.join(work, "clip_2min_720p.mp4")
LIMIT_MB = 400
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


t0 = time.monotonic()
subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=12:duration=120",
                "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28", "-pix_fmt", "yuv420p", clip], check=True)
print(f"generated {clip}: {os.path.getsize(clip) / 1e6:.1f} MB in {time.monotonic() - t0:.1f} s")

# Baseline: decoding the clip alone, as koma's first pass asks for it.
t0 = time.monotonic()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", clip, "-vf", "scale=640:360:flags=area", "-f", "rawvideo",
                "-pix_fmt", "rgb24", "-y", "/dev/null"], check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
decode_wall = time.monotonic() - t0
decode_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

cores = os.cpu_count() or 2
limit = (LIMIT_MB + 16 * max(0, cores - 2)) * 1024 * 1024


def limited():
    # The soft limit binds koma; the hard one stays, so the ffmpeg wrappers below can lift it.
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))


# ffmpeg and ffprobe are other programs (decoding and encoding run there, threaded, with their own
# memory): koma starts them through wrappers that lift the inherited soft limit, so the limit
# measures koma alone.
bin_dir = os.path.join(work, "bin")
os.makedirs(bin_dir)
for tool in ("ffmpeg", "ffprobe"):
    real = shutil.which(tool)
    with open(os.path.join(bin_dir, tool), "w") as f:
        f.write(f"#!/bin/sh\nulimit -S -v unlimited\nexec {real} \"$@\"\n")
    os.chmod(os.path.join(bin_dir, tool), 0o755)


outs = {name: os.path.join(work, name) for name in ("held.mp4", "sheet.png", "report.json", "x.csv")}
args = [koma, "keys", clip, "-o", outs["held.mp4"], "--on", "2", "--contact-sheet", outs["sheet.png"],
        "--report", outs["report.json"], "--xsheet", outs["x.csv"]]
log_out, log_err = os.path.join(work, "koma.out"), os.path.join(work, "koma.err")
t0 = time.monotonic()
with open(log_out, "w") as fo, open(log_err, "w") as fe:
    # glibc reserves 64 MiB of address space per malloc arena (one per thread, up to 8 per core):
    # address space, not memory, but RLIMIT_AS counts it, for koma and its ffmpeg children alike.
    env = dict(os.environ, MALLOC_ARENA_MAX="2", PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.Popen(args, stdout=fo, stderr=fe, preexec_fn=limited, env=env)
    _, status, usage = os.wait4(proc.pid, 0)  # koma's own rusage (its maxrss covers its reaped children)
wall = time.monotonic() - t0
returncode = os.waitstatus_to_exitcode(status)
print(open(log_out).read().strip())
print(open(log_err).read().strip()[-2000:])
check(returncode == 0, f"koma keys exits 0 under RLIMIT_AS {limit // (1024 * 1024)} MiB (got {returncode})")
for name, path in outs.items():
    check(os.path.exists(path) and os.path.getsize(path) > 0, f"{name} written")
peak_mb = usage.ru_maxrss / 1024  # KiB -> MiB: koma, or the largest ffmpeg it ran
cpu = usage.ru_utime + usage.ru_stime
print(f"clip: 120 s, 1440 frames at 12 fps, 1280x720; cores {cores}")
print(f"koma keys: wall {wall:.1f} s ({120 / wall:.2f}x real time), CPU {cpu:.1f} s (koma and its ffmpegs)")
print(f"baseline ffmpeg decode at 640x360: wall {decode_wall:.1f} s, CPU {decode_cpu:.1f} s; koma / decode wall {wall / max(decode_wall, 1e-9):.1f}x")
print(f"peak resident memory of the largest process (koma or an ffmpeg child): {peak_mb:.0f} MiB")
check(peak_mb < LIMIT_MB, f"peak resident memory {peak_mb:.0f} MiB < {LIMIT_MB} MiB")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
