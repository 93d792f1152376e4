#!/usr/bin/python3
"""Throughput of `koma batch` (issue 22): every BVH below the shared data through `keys --on 2` and
`cartoon`, as a sum of single-file `koma` runs (the baseline), as `koma batch --jobs 1` and
`--jobs 2`, and through koma.batch.run on a Dask LocalCluster with 2 worker processes.

    /usr/bin/python3 bench/batch_throughput.py [--koma build/release/apps/koma/koma]
        [--python-dir build/release/python] [--data ../shared/data/bvh] [--work /tmp/koma-batch-bench]
        [--commands keys,cartoon] [--repeat 1]

Prints a markdown table (files/s, frames/s, wall seconds, CPU seconds, speed-up against the sum of
single runs, by wall clock and by CPU time) and the machine line; docs/perf.md quotes it. CPU
seconds are user + system of koma's processes (getrusage of the children; for Dask, of the worker
processes through /proc). The machine is shared: prefer the CPU columns and the ratios, which are
measured in the same run. Frames are the outputs' frames (keys: at 24 fps; cartoon: the input's).
"""
import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import time

SETTINGS = {"keys": (["--on", "2"], {"on": 2}), "cartoon": ([], {})}


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(fn):
    c0, t0 = cpu_children(), time.monotonic()
    out = fn()
    return out, time.monotonic() - t0, cpu_children() - c0


def frames_of(files):
    return sum(f["figures"]["frames"] for f in files if f["status"] == "ok" and f.get("figures"))


def single_runs(koma, command, files, out):
    def go():
        ok = 0
        for f in files:
            target = out / "single.bvh"
            p = subprocess.run([koma, command, str(f), "-o", str(target), *SETTINGS[command][0]],
                               capture_output=True, text=True)
            ok += p.returncode == 0
        return ok
    return timed(go)


def cli_batch(koma, command, data, out, jobs):
    shutil.rmtree(out, ignore_errors=True)

    def go():
        subprocess.run([koma, "batch", command, *SETTINGS[command][0], str(data), "-o", str(out), "--jobs", str(jobs),
                        "--report", str(out) + ".json"], capture_output=True, text=True)
        return json.loads(pathlib.Path(str(out) + ".json").read_text())
    return timed(go)


def proc_cpu(pid):
    """User + system CPU seconds of a live process (Linux /proc)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dask_batch(client, command, data, out):
    import koma.batch
    shutil.rmtree(out, ignore_errors=True)
    pids = list(client.run(os.getpid).values())
    c0 = sum(proc_cpu(p) for p in pids)
    t0 = time.monotonic()
    koma.batch.run(command, [str(data)], str(out), client=client, **SETTINGS[command][1])
    wall = time.monotonic() - t0
    return koma.batch.last_report(), wall, sum(proc_cpu(p) for p in pids) - c0


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--koma", default=str(root / "build/release/apps/koma/koma"))
    ap.add_argument("--python-dir", default=str(root / "build/release/python"))
    ap.add_argument("--data", default=str(root.parent / "shared/data/bvh"))
    ap.add_argument("--work", default="/tmp/koma-batch-bench")
    ap.add_argument("--commands", default="keys,cartoon")
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    data, work = pathlib.Path(args.data), pathlib.Path(args.work)
    if not data.is_dir():
        sys.exit(f"no data at {data}")
    files = sorted(data.rglob("*.bvh"))
    work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, args.python_dir)
    flags = subprocess.run("grep -m1 -o -w -E 'avx2|avx512f|fma|bmi2' /proc/cpuinfo | sort -u | tr '\\n' ' '",
                           shell=True, capture_output=True, text=True).stdout.strip()
    print(f"machine: {os.cpu_count()} cores, CPU flags: {flags or 'none of avx2/avx512f/fma/bmi2'}; "
          f"load average before: {os.getloadavg()[0]:.2f}; {len(files)} BVH files in {data}")
    client = None
    if not args.no_dask:
        from dask.distributed import Client, LocalCluster
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None))
        # A cluster imports koma once, not per batch: load it on the workers before any timing (the
        # CLI rows' process start-up is timed, as it is paid per batch).
        client.run(lambda: __import__("koma.batch") and None)
    rows = []
    for command in args.commands.split(","):
        ok, s_wall, s_cpu = single_runs(args.koma, command, files, work)
        runs = [("sum of single-file runs", ok, None, s_wall, s_cpu)]
        for jobs in (1, 2):
            rep, wall, cpu = cli_batch(args.koma, command, data, work / f"{command}-j{jobs}", jobs)
            runs.append((f"`koma batch {command} --jobs {jobs}`", rep["counts"]["ok"], frames_of(rep["files"]), wall, cpu))
        if client is not None:
            rep, wall, cpu = dask_batch(client, command, data, work / f"{command}-dask")
            runs.append(("koma.batch.run, Dask LocalCluster 2 workers", rep["counts"]["ok"], frames_of(rep["files"]), wall, cpu))
        frames = runs[1][2]
        runs[0] = runs[0][:2] + (frames,) + runs[0][3:]
        for name, n_ok, n_frames, wall, cpu in runs:
            rows.append((command, name, n_ok, len(files), n_frames, wall, cpu, s_wall / wall, s_cpu / cpu if cpu else float("nan")))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print("| command | run | files ok | files/s | frames/s | wall s | CPU s | speed-up (wall) | CPU vs single runs |")
    print("|---|---|---|---|---|---|---|---|---|")
    for command, name, n_ok, n, frames, wall, cpu, sw, sc in rows:
        print(f"| {command} | {name} | {n_ok}/{n} | {n / wall:.2f} | {frames / wall:,.0f} | {wall:.2f} | {cpu:.2f} | "
              f"{sw:.2f}x | {sc:.2f}x |")
    if client is not None:
        client.close()


if __name__ == "__main__":
    main()
