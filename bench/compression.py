#!/usr/bin/python3
"""`scripts/bench.sh compression` (issue 13, item 4): per-stream payload compression over a shaped
link. The workers (and the coordinator) and the trainer client run in two network namespaces
joined by a veth pair shaped by tc tbf to RATE (bench/e2e_two_host.py's Link), with the real JPEG
uint8 pipeline (decode, random_resized_crop(224), horizontal_flip; 2 `stoker-worker --threads 1`).

    compression.py BUILD_DIR --manifest M [--rate 1gbit] [--rounds 3] [--batches 40]
                   [--modes none,lz4,zstd,auto]

Each round runs every mode once, in an order rotated per round (alternating rounds), one
`stoker-bench-client --compression MODE` (no training step) per run. Per run: delivered img/s,
the workers' CPU ms per delivered image (utime+stime from /proc, both workers), the client's CPU
ms per image (its rusage), and the wire/raw byte ratio of the payloads (the client's report).
Medians per mode; `vs_none` = a mode's img/s / none's. The machine is shared: the load average
and the cores are printed with every round, and the CPU figures include whatever the
compression stole from production on the same cores.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_two_host as two_host  # noqa: E402  (Link, start_cluster, stop, BATCH)
from e2e import cpu_seconds  # noqa: E402

JPEG = two_host.JPEG
BATCH = two_host.BATCH


def client_run(link, build_dir, coordinator, job, mode, args, tmp):
    """One bench client run; returns (report, client CPU seconds)."""
    report = f"{tmp}/{job}.json"
    log = open(f"{tmp}/{job}.log", "w")
    # `ip netns exec` execs the client: its pid is the client's, and wait4 gives its rusage.
    proc = link.run_in(link.trainer_ns, [
        f"{build_dir}/tools/stoker-bench-client", "--insecure", "--coordinator", coordinator,
        "--job", job, "--batch-size", str(BATCH), "--pipeline", JPEG, "--manifest",
        args.manifest, "--max-batches", str(args.batches), "--compression", mode,
        "--report-json", report], stdout=subprocess.DEVNULL, stderr=log)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"compression: client exited with {proc.returncode}:\n"
                 f"{open(f'{tmp}/{job}.log').read()[-3000:]}")
    return json.load(open(report)), usage.ru_utime + usage.ru_stime


def measure(args, tmp):
    link = two_host.Link(args.rate)
    procs = []
    rows = {mode: [] for mode in args.modes}
    try:
        address, procs = two_host.start_cluster(link, args.build_dir, tmp, False, "compression",
                                                os.path.dirname(args.manifest))
        workers = procs[1:]
        # A first run warms the workers' caches of the shards and their pools.
        client_run(link, args.build_dir, address, "warmup", "none", args, tmp)
        for r in range(args.rounds):
            order = args.modes[r % len(args.modes):] + args.modes[:r % len(args.modes)]
            for mode in order:
                before = sum(cpu_seconds(w.pid) for w in workers)
                report, client_cpu = client_run(link, args.build_dir, address,
                                                f"{mode.replace(':', '-')}-{r}", mode, args, tmp)
                worker_cpu = sum(cpu_seconds(w.pid) for w in workers) - before
                images = report["images"]
                raw = sum(w["bytes"] for w in report["workers"])
                wire = sum(w["wire_bytes"] for w in report["workers"])
                rows[mode].append({
                    "ips": report["images_per_second"],
                    "worker_ms": 1000 * worker_cpu / images,
                    "client_ms": 1000 * client_cpu / images,
                    "ratio": wire / raw if raw else 1.0,
                    "gbit": wire * 8 / report["wall_seconds"] / 1e9,
                })
                row = rows[mode][-1]
                print(f"round {r + 1} {mode:>7}: {row['ips']:7.1f} img/s, link "
                      f"{row['gbit']:.3f} Gbit/s, wire/raw {row['ratio']:.3f}, worker "
                      f"{row['worker_ms']:.3f} ms/img, client {row['client_ms']:.3f} ms/img",
                      flush=True)
            print(f"  load average {open('/proc/loadavg').read().split()[:3]} on "
                  f"{os.cpu_count()} cores", flush=True)
    finally:
        two_host.stop(procs)
        link.remove()
    return {mode: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            for mode, runs in rows.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--rate", default="1gbit", choices=sorted(two_host.RATES_BPS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--modes", default="none,lz4,zstd,auto")
    args = parser.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    args.manifest = os.path.abspath(args.manifest)
    args.modes = args.modes.split(",")
    if "none" not in args.modes:
        sys.exit("compression: --modes must include none (the baseline)")
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        med = measure(args, tmp)
    print(f"medians over {args.rounds} rounds ({time.time() - started:.0f} s):")
    for mode, m in med.items():
        print(f"  {mode:>7}: {m['ips']:7.1f} img/s ({m['ips'] / med['none']['ips']:.3f}x none), "
              f"wire/raw {m['ratio']:.3f}, worker {m['worker_ms']:.3f} ms/img, client "
              f"{m['client_ms']:.3f} ms/img")
    fields = [f"rate={args.rate}"]
    for mode, m in med.items():
        key = mode.replace(":", "")
        fields += [f"{key}_ips={m['ips']:.1f}", f"{key}_vs_none={m['ips'] / med['none']['ips']:.4f}",
                   f"{key}_wire_ratio={m['ratio']:.4f}", f"{key}_worker_ms={m['worker_ms']:.4f}",
                   f"{key}_client_ms={m['client_ms']:.4f}"]
    print("RESULT name=compression " + " ".join(fields))


if __name__ == "__main__":
    main()
