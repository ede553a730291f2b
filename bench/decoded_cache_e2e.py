#!/usr/bin/python3
"""`scripts/bench.sh decoded-cache-e2e` (issue "Decode once", item 5): what the workers' decoded
cache saves, end to end between separate processes on loopback.

    decoded_cache_e2e.py BUILD_DIR --manifest M [--epochs E] [--rounds R] [--recipe NAME]...
                     [--plaintext] [--auto] [--pretouch] [--aligned-sweep BLOCK]

One coordinator and one `stoker-worker --threads 1` per run (started fresh, so every run begins
with an empty cache), --decoded-cache-bytes large enough for the whole data set, and
stoker-bench-client processes under mutual TLS (--plaintext: all plaintext). Each run is made
twice in every round, the job's cache switch on (`--decoded-cache always`: every entry kept,
the set is known to fit) and off (today's path, the fused decode-and-crop where the pipeline
allows it), in alternating order. Two measurements per recipe:
  (a) epochs: one job of E epochs; the worker's CPU ms and minor page faults per image in each
      epoch, between the client's batches (e-1)*B + 3 and e*B - 3 of epoch e (B batches an
      epoch; the margins keep the worker's prefetch on the epoch's side of the boundary).
      epochs_vs_first = CPU per image of epochs >= 2 / epoch 1 (bar <= 0.5 with the cache on;
      the cache-off run is the negative control, ~1 by construction).
  (b) sweep: 4 jobs (seeds 1-4) started together on the same data and pipeline, one epoch each;
      the worker's CPU over the whole sweep per delivered image. sweep_vs_off = cache on / cache
      off (bar <= 0.4).
Beside them, the worker's VmRSS at the end of each cache-on run and --decoded-cache-bytes.
--pretouch starts every worker with --decoded-cache-pretouch (the cache mapped and touched before
it registers): the sweep worker's CPU at start is reported beside the sweep (start_cpu_s), and
sweep_vs_off_with_start charges it to the sweep.
--auto adds a third run to each round, the job's switch unset (AUTO: the worker times the job's
first samples both ways and keeps the cheaper, decision 0084): auto_vs_best = its worker CPU per
image over all epochs (and its sweep's) / the cheaper of the other two's, and the worker's
choice as its log states it.
--aligned-sweep BLOCK measures instead a sweep on a data set larger than the cache (set
--cache-bytes below the set's entries): 4 jobs with shuffle "block" (BLOCK samples a block), each
round four arms: "aligned" (the cache always, the jobs sharing --sweep-seed: the same blocks in
step, decision 0087), "unaligned" (the cache always, each job its own block order), "off", and
"aligned_auto" (aligned, the job's switch unset: AUTO, the workers' choices printed);
RESULT name=decoded-cache-aligned-sweep with aligned_vs_off, unaligned_vs_off and
aligned_auto_vs_off. --workers N runs the sweeps on N workers (their CPU summed; tasks go to
whichever asks: there is no routing, so each worker caches what it decodes).
Recipes: resize-crop = decode, resize(256x256), random_crop(224), horizontal_flip (the prefix is
decode and the resize: entries of 256x256x3); rrc = decode, random_resized_crop(224),
horizontal_flip (the prefix is the decode alone: entries of the full 500x375x3 image; with the
cache off the worker decodes only the crop's window, DCT-downscaled where it can). uint8 HWC out.
One RESULT line per recipe.
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402  (the harness the e2e benchmark uses: processes, CPU, faults, TLS)

RECIPES = {
    "resize-crop": "decode, resize(height=256, width=256), random_crop(height=224, width=224), "
                   "horizontal_flip",
    "rrc": e2e.JPEG,
}
SWEEP_JOBS = 4


def vm_rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def client_argv(b, address, job, pipeline, manifest, cache, epochs, seed, tmp, extra=()):
    return [f"{b}/tools/stoker-bench-client", *e2e.security("trainer"), "--coordinator", address,
            "--job", job, "--pipeline", pipeline, "--manifest", manifest,
            "--batch-size", str(e2e.BATCH), "--epochs", str(epochs), "--seed", str(seed),
            *([] if cache == "auto" else ["--decoded-cache", cache]),
            "--report-json", f"{tmp}/{job}-report.json",
            "--token-file", f"{tmp}/{job}-token", *extra]


def run_epochs(b, args, pipeline, cache, batches_per_epoch, tmp, procs, worker_flags):
    """(a): per-epoch worker CPU ms and minor faults per image, and the worker's RSS at the end."""
    address, workers = e2e.start_cluster(b, f"{b}/worker/stoker-worker", 1, f"{tmp}/c", procs,
                                         os.path.dirname(os.path.abspath(args.manifest)),
                                         worker_flags)
    job = f"epochs-{cache}"
    windows = [e2e.SteadyWindow(f"{tmp}/{job}-token", workers,
                                e * batches_per_epoch + (e2e.WARMUP if e == 0 else 3),
                                (e + 1) * batches_per_epoch - 3)
               for e in range(args.epochs)]

    def poll(pid):
        for window in windows:
            window(pid)

    e2e.run_child(client_argv(b, address, job, pipeline, args.manifest, cache, args.epochs, 1, tmp),
                  f"{tmp}/{job}-client.log", poll)
    rss = vm_rss_bytes(workers[0].pid)
    return [w.per_image() for w in windows], rss


def run_sweep(b, args, pipeline, cache, tmp, procs, worker_flags, client_extra=()):
    """(b): the workers' CPU ms per delivered image over SWEEP_JOBS jobs run together (--workers
    of them, summed), the workers' CPU at start, and the images."""
    address, workers = e2e.start_cluster(b, f"{b}/worker/stoker-worker", args.workers, f"{tmp}/s",
                                         procs, os.path.dirname(os.path.abspath(args.manifest)),
                                         worker_flags)

    def workers_cpu():
        return sum(e2e.cpu_seconds(w.pid) for w in workers)
    start = before = workers_cpu()
    clients = []
    for seed in range(1, SWEEP_JOBS + 1):
        job = f"sweep-{cache}-{seed}"
        log = open(f"{tmp}/{job}-client.log", "w")
        clients.append((job, subprocess.Popen(
            client_argv(b, address, job, pipeline, args.manifest, cache, 1, seed, tmp,
                        client_extra),
            stdout=subprocess.DEVNULL, stderr=log)))
    images = 0
    for job, client in clients:
        if client.wait() != 0:
            sys.exit(f"decoded_cache_e2e: the client of {job} exited with {client.returncode}; see "
                     f"{tmp}/{job}-client.log")
        images += json.load(open(f"{tmp}/{job}-report.json"))["images"]
    return 1e3 * (workers_cpu() - before) / images, start, images


def auto_choices(tmp):
    """The AUTO choices the run's workers logged (decision 0084), counted: '; auto: 5 use, 0 off'."""
    chosen = {"use the cache": 0, "leave it off": 0}
    for root, _, files in os.walk(tmp):
        for name in files:
            if "worker" not in name or not name.endswith(".log"):
                continue
            for line in open(os.path.join(root, name), errors="replace"):
                for verdict in chosen:
                    if "decoded cache (auto)" in line and verdict in line:
                        chosen[verdict] += 1
    return f"; auto chose: {chosen['use the cache']} use, {chosen['leave it off']} off"


def auto_result(rows):
    """The AUTO arm against the cheaper of the forced ones, epochs and sweep, per round."""
    def ratio(key):
        return statistics.median(a[key] / min(on[key], off[key]) for a, on, off in
                                 zip(rows["auto"], rows["always"], rows["off"]))
    return (f" auto_total_ms={statistics.median(r['total'] for r in rows['auto']):.4f} "
            f"auto_vs_best={ratio('total'):.3f} auto_sweep_vs_best={ratio('sweep'):.3f}")


@contextlib.contextmanager
def recipe_runs(args):
    """A temporary folder (holding certificates under TLS) and the list of processes for one
    recipe's runs; any process left is stopped at the end."""
    with tempfile.TemporaryDirectory() as tmp:
        if args.tls:
            e2e.CERTS = f"{tmp}/certs"
            subprocess.run([f"{e2e.HERE}/../scripts/dev-certs.sh", e2e.CERTS], check=True,
                           stdout=subprocess.DEVNULL)
        procs = []
        try:
            yield tmp, procs
        finally:
            stop(procs)


def rotated(arms, r):
    """The arms in round r's order: each round starts one further on."""
    return arms[r % len(arms):] + arms[:r % len(arms)]


def aligned_sweep(b, args, worker_flags):
    """--aligned-sweep: the sweep of SWEEP_JOBS block-shuffled jobs over a set larger than the
    cache, aligned by a shared sweep seed, unaligned, and with the cache off; per recipe a RESULT."""
    block = ["--shuffle", "block", "--shuffle-block", str(args.aligned_sweep)]
    aligned = block + ["--sweep-seed", "7"]
    arms = {"aligned": ("always", aligned), "unaligned": ("always", block),
            "off": ("off", block), "aligned_auto": ("auto", aligned)}
    for recipe in args.recipe or sorted(RECIPES):
        rows = {arm: [] for arm in arms}
        with recipe_runs(args) as (tmp, procs):
            for r in range(args.rounds):
                for arm in rotated(list(arms), r):
                    run_tmp = f"{tmp}/{recipe}-{arm}-{r}"
                    os.makedirs(run_tmp)
                    cache, extra = arms[arm]
                    sweep, _, _ = run_sweep(b, args, RECIPES[recipe], cache, run_tmp, procs,
                                            worker_flags, extra)
                    stop(procs)
                    rows[arm].append(sweep)
                    print(f"{recipe} round {r + 1} {arm}: sweep of {SWEEP_JOBS} block-shuffled "
                          f"jobs {sweep:.3f} ms/image (load average "
                          f"{os.getloadavg()[0]:.1f})"
                          f"{auto_choices(run_tmp) if cache == 'auto' else ''}", flush=True)

        def vs_off(arm):
            return statistics.median(a / o for a, o in zip(rows[arm], rows["off"]))
        print(f"RESULT name=decoded-cache-aligned-sweep recipe={recipe} workers={args.workers} "
              f"tls={'on' if args.tls else 'off'} block={args.aligned_sweep} "
              f"decoded_cache_mib={args.cache_bytes / 2**20:.0f} "
              + " ".join(f"{arm}_ms={statistics.median(rows[arm]):.4f}" for arm in arms)
              + f" aligned_vs_off={vs_off('aligned'):.3f} "
              f"unaligned_vs_off={vs_off('unaligned'):.3f} "
              f"aligned_auto_vs_off={vs_off('aligned_auto'):.3f}", flush=True)


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=30)
    procs.clear()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--manifest", required=True, help="stoker-pack manifest of the JPEGs")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--recipe", action="append", choices=sorted(RECIPES),
                        help="default: every recipe")
    parser.add_argument("--cache-bytes", type=int, default=3 << 30,
                        help="the worker's --decoded-cache-bytes (the set must fit)")
    parser.add_argument("--plaintext", dest="tls", action="store_false")
    parser.add_argument("--workers", type=int, default=1,
                        help="workers of the sweep (b), each --threads 1, their CPU summed; "
                        "tasks go to whichever asks (no routing)")
    parser.add_argument("--pretouch", action="store_true",
                        help="workers map and touch their decoded cache before registering")
    parser.add_argument("--aligned-sweep", type=int, default=0, metavar="BLOCK",
                        help="measure aligned against unaligned block-shuffled sweeps instead")
    parser.add_argument("--auto", action="store_true",
                        help="also run each round with the job's switch unset (AUTO)")
    args = parser.parse_args()
    b = args.build_dir
    if args.epochs < 2:
        sys.exit("decoded_cache_e2e: --epochs must be at least 2")
    manifest = json.load(open(args.manifest))
    samples = sum(int(s["records"]) for s in manifest["shards"])
    batches_per_epoch = math.ceil(samples / e2e.BATCH)  # the bench client wraps the last batch
    if batches_per_epoch < 16:
        sys.exit(f"decoded_cache_e2e: {samples} samples are {batches_per_epoch} batches an epoch; "
                 f"the per-epoch windows need 16")
    # The cache a documented share of the worker's budget: give it twice the cache.
    worker_flags = ["--decoded-cache-bytes", str(args.cache_bytes),
                    "--memory-bytes", str(2 * args.cache_bytes)]
    worker_flags += ["--decoded-cache-pretouch"] if args.pretouch else []
    if args.aligned_sweep:
        return aligned_sweep(b, args, worker_flags)
    for recipe in args.recipe or sorted(RECIPES):
        pipeline = RECIPES[recipe]
        arms = ["always", "off"] + (["auto"] if args.auto else [])
        rows = {arm: [] for arm in arms}
        with recipe_runs(args) as (tmp, procs):
            for r in range(args.rounds):
                for cache in rotated(arms, r):
                    run_tmp = f"{tmp}/{recipe}-{cache}-{r}"
                    os.makedirs(run_tmp)
                    epochs, rss = run_epochs(b, args, pipeline, cache, batches_per_epoch,
                                             run_tmp, procs, worker_flags)
                    stop(procs)
                    sweep, start, images = run_sweep(b, args, pipeline, cache, run_tmp, procs,
                                                     worker_flags)
                    stop(procs)
                    later = statistics.mean(e["cpu"] for e in epochs[1:])
                    rows[cache].append(dict(
                        total=statistics.mean(e["cpu"] for e in epochs),
                        first=epochs[0]["cpu"], later=later, ratio=later / epochs[0]["cpu"],
                        first_minflt=epochs[0]["worker_minflt"],
                        later_minflt=statistics.mean(e["worker_minflt"] for e in epochs[1:]),
                        sweep=sweep, start=start,
                        sweep_with_start=sweep + 1e3 * start / images, rss=rss))
                    cpu = " ".join("%.3f" % e["cpu"] for e in epochs)
                    faults = " ".join("%.2f" % e["worker_minflt"] for e in epochs)
                    print(f"{recipe} round {r + 1} cache {cache}: worker CPU ms/image by "
                          f"epoch {cpu} (epochs >= 2 / epoch 1 = "
                          f"{later / epochs[0]['cpu']:.3f}), minor faults/image {faults}"
                          f"; sweep of {SWEEP_JOBS}: {sweep:.3f} ms/image (worker start "
                          f"{start:.2f} CPU s); worker RSS "
                          f"{rss / 2**20:.0f} MiB (load average {os.getloadavg()[0]:.1f})"
                          f"{auto_choices(run_tmp) if cache == 'auto' else ''}", flush=True)

        def med(cache, key):
            return statistics.median(row[key] for row in rows[cache])

        def on_vs_off(key):
            return statistics.median(
                on[key] / off[key] for on, off in zip(rows["always"], rows["off"]))
        print(f"RESULT name=decoded-cache-e2e recipe={recipe} tls={'on' if args.tls else 'off'} "
              f"samples={samples} epochs={args.epochs} "
              f"cache_epoch1_ms={med('always', 'first'):.4f} "
              f"cache_later_ms={med('always', 'later'):.4f} "
              f"epochs_vs_first={med('always', 'ratio'):.3f} "
              f"off_epoch1_ms={med('off', 'first'):.4f} off_later_ms={med('off', 'later'):.4f} "
              f"off_epochs_vs_first={med('off', 'ratio'):.3f} "
              f"cache_epoch1_minflt={med('always', 'first_minflt'):.2f} "
              f"cache_later_minflt={med('always', 'later_minflt'):.2f} "
              f"off_later_minflt={med('off', 'later_minflt'):.2f} "
              f"sweep_cache_ms={med('always', 'sweep'):.4f} sweep_off_ms={med('off', 'sweep'):.4f} "
              f"sweep_vs_off={on_vs_off('sweep'):.3f} "
              f"start_cpu_s={med('always', 'start'):.2f} "
              f"sweep_vs_off_with_start={on_vs_off('sweep_with_start'):.3f} "
              f"worker_rss_mib={med('always', 'rss') / 2**20:.0f} "
              f"decoded_cache_mib={args.cache_bytes / 2**20:.0f}"
              f"{auto_result(rows) if args.auto else ''}", flush=True)


if __name__ == "__main__":
    main()
