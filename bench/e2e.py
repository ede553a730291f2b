#!/usr/bin/python3
"""`scripts/bench.sh e2e` (issue 13, item 1, single host): the figure users pay for, end to end
between separate processes on loopback.

    e2e.py BUILD_DIR --workload blur|jpeg-float32|jpeg-float16|jpeg-float32-tail|jpeg-float32-auto|
                                jpeg-uint8
           [--manifest M --images DIR]
           [--workers W] [--batches N] [--torchvision-batches N | --no-torchvision] [--rounds R]
           [--client-flag FLAG]... [--compare-client 'BINARY [FLAG...]']...
           [--security tls|plaintext|both] [--warmup-batches N]

Stoker: a coordinator, W `stoker-worker --threads 1` processes and one `stoker-bench-client`
process (no training step). Workloads (docs/architecture.md, Reference workloads): blur =
to_float and ten 11x11 blurs of 224x224x3, float32 HWC out; jpeg-float32 = the packed JPEGs of
--manifest through decode, random_resized_crop(224) (bilinear), horizontal_flip, to_float,
normalize, float32 CHW out, the tail forced onto the workers (--tail worker); jpeg-float16 =
jpeg-float32 rounded to float16 on the worker, float16 CHW out; jpeg-float32-tail = jpeg-float32
with the to_float/normalize tail run by the client (--tail client: uint8 on the wire);
jpeg-float32-auto = jpeg-float32 with the tail placed by the coordinator (--tail auto, the default:
the client here); jpeg-uint8 = the same up to the flip, uint8 HWC out; detection-uint8 = the
COCO-style set of --manifest (packed with stoker-pack --coco from --images and --annotations)
through --pipeline (the detection references' train transforms, resized to 512x512), uint8 HWC
out with each sample's boxes and box labels. torchvision: a DataLoader
with W worker processes and the same pipeline and filter (bench/e2e_torchvision.py), at the same
boundary (batches reaching the training loop). Alternating rounds, medians. Per round, delivered
img/s and CPU ms per image in two windows:
  - steady (what vs_torchvision uses, the same window as torchvision's): after --warmup-batches
    (default WARMUP, 2) batches reached the loop, as e2e_torchvision.py counts torchvision's
    process and its DataLoader workers after two warm-up batches. For faults in steady state
    (issue 38, item 6) give a warm-up past the heaps' growth: the client's heap grows until its
    buffered batches first reach its prefetch budget (256 MiB: ~27 uint8 batches of 64), the
    workers' during their first ~100 batches (they live across rounds, the client does not),
    so e.g. --warmup-batches 200 --batches 800. The workers' CPU (/proc/PID/stat) between the
    client's batches WARMUP and --batches - 2 (read from its --token-file while it runs, so that
    the batches the workers make for prefetch credit after the last one are not charged to the
    delivered images); the client's own process CPU after its batch WARMUP
    (CLOCK_PROCESS_CPUTIME_ID, its report's steady_cpu_seconds; the client gets the same
    --warmup-batches).
  - whole run (*_whole_run): the workers' CPU before and after the round and the client's whole
    process (wait4), start-up and the extra prefetched batches included.
--batches must be at least 16 (/proc counts worker CPU in 10 ms ticks).
Minor page faults per image in the same steady window (issue "Decode once", item 6): minflt of
/proc/PID/stat, the workers' summed (each image is made by one worker, so this is per image of
the process that made it: workers_minflt_per_image) and the client's (client_minflt_per_image),
both between the client's batches WARMUP and --batches - 2. On VMs where a first touch of a page
costs ~12 µs they are much of the CPU; their counts are not noisy where the CPU figures are.
--no-torchvision skips torchvision's side (for figures of Stoker's processes alone): the
RESULT line then says torchvision=skipped and has no vs_torchvision figures.
blur also reports the wire overhead (issue 13): the workers' steady CPU per delivered image
against the CPU per image of the same pipeline in one thread (`augment_bench --stoker_only`, run
after each round): worker_vs_augment.
Every Stoker connection runs mutual TLS (certificates from scripts/dev-certs.sh), as the chart
deploys it; --plaintext (--security plaintext) runs them all plaintext (--insecure) instead, the
second column of `scripts/bench.sh e2e`. The TCP floor stays plaintext. --security both runs a
mutual-TLS cluster (the stoker side) and a plaintext one (coordinator and workers of their own)
in the same rounds, in alternating order, against the same data: the RESULT line (tls=both)
adds the plaintext side's figures (plaintext_*) and tls_vs_plaintext_worker_cpu, the median of
the per-round ratios of the workers' steady CPU per image (a paired figure: both sides of a
round share the machine's load).
Stage floors beside the figures (issue 24, item 3): the client's, a plain TCP receiver taking the
same bytes (tcp_receive_floor_ms_per_image, client_vs_floor); the workers', with
--decode-floor-ms (the 1/8-scale decode of the same files, jpeg_floor_bench's `eighth` stage, run
once by `scripts/bench.sh e2e`): decode_floor_ms_per_image and worker_vs_decode_floor.
Last line: RESULT name=e2e ... vs_torchvision = torchvision's total CPU per image / Stoker's
(steady; vs_torchvision_whole_run with Stoker's whole-run figure).

A/B of trainer clients: --client-flag adds a flag to stoker-bench-client (e.g. --contiguous);
each --compare-client (another stoker-bench-client binary, e.g. an older build, with its own
flags) also streams the same workload from the same workers in every round, right after Stoker's
client, and its client CPU per image is reported as compare<i>_client_cpu_ms_per_image.

--baseline-worker PATH (A/B of worker changes): a second coordinator and workers running that
binary take part in the same rounds, the two Stoker sides in alternating order; the RESULT line
then adds the baseline's figures and worker_cpu_vs_baseline (baseline worker CPU per image /
this build's, median of the rounds).
"""
import argparse
import json
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

NORMALIZE = "normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"
JPEG = "decode, random_resized_crop(height=224, width=224), horizontal_flip"
# Per workload: stoker-bench-client's pipeline and extra flags.
WORKLOADS = {
    "blur": ("to_float, gaussian_blur(ksize=11)*10", []),
    "jpeg-float32": (f"{JPEG}, to_float, {NORMALIZE}", ["--layout", "chw", "--tail", "worker"]),
    "jpeg-float16": (f"{JPEG}, to_float, {NORMALIZE}",
                     ["--layout", "chw", "--dtype", "float16", "--tail", "worker"]),
    "jpeg-float32-tail": (f"{JPEG}, to_float, {NORMALIZE}", ["--layout", "chw", "--tail", "client"]),
    "jpeg-float32-auto": (f"{JPEG}, to_float, {NORMALIZE}", ["--layout", "chw", "--tail", "auto"]),
    "jpeg-uint8": (JPEG, []),
    # The pipeline comes from --pipeline (bench/detection_recipe.sh's DETECTION_UINT8).
    "detection-uint8": (None, ["--field", "image", "--field", "boxes", "--field", "box_labels"]),
}
BATCH = 64
# Batches that reach the loop before the steady window opens (as e2e_torchvision.py's WARMUP).
WARMUP = 2
TICK = os.sysconf("SC_CLK_TCK")
HERE = os.path.dirname(os.path.abspath(__file__))


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command name (the first is the state, field 3)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid):
    """utime + stime of a live process, seconds."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / TICK


def minor_faults(pid):
    """minflt of a live process: pages it touched for the first time since the kernel gave them
    (or gave them back), file cache hits included."""
    return int(proc_stat(pid)[7])


def run_child(argv, log, poll=None):
    """Runs argv to completion, calling poll(its pid) every 5 ms meanwhile if given; returns
    (stdout, CPU seconds of it and its waited-for children)."""
    with open(log, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        pid = 0
        while poll is not None and pid == 0:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == 0:
                poll(proc.pid)
                time.sleep(0.005)
        out = proc.stdout.read()
        if pid == 0:
            _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        with open(log) as f:
            sys.exit(f"e2e: {argv[0]} exited with {proc.returncode}:\n{f.read()[-3000:]}")
    return out, usage.ru_utime + usage.ru_stime


class SteadyWindow:
    """The workers' CPU seconds and minor page faults, and the client's minor page faults,
    between two batch counts of the client (read from its --token-file), so that the batches the
    workers make for the client's prefetch credit after its last batch, and the start-up, are not
    charged to the delivered images."""

    def __init__(self, token_file, workers, first, last):
        self.token_file, self.workers = token_file, workers
        self.marks = {first: None, last: None}

    def __call__(self, client_pid):
        try:
            with open(self.token_file) as f:
                batches = int(f.readline())
        except (OSError, ValueError):
            return
        for mark, seen in self.marks.items():
            if seen is None and batches >= mark:
                self.marks[mark] = dict(
                    batches=batches, cpu=sum(cpu_seconds(w.pid) for w in self.workers),
                    worker_minflt=sum(minor_faults(w.pid) for w in self.workers),
                    client_minflt=minor_faults(client_pid))

    def per_image(self):
        """{cpu, worker_minflt, client_minflt} per image over the window (CPU in ms)."""
        missing = [m for m, seen in self.marks.items() if seen is None]
        if missing:  # a figure from half a window would be wrong, not merely noisy
            sys.exit(f"e2e: the client's token file ({self.token_file}) never reached batch "
                     f"{missing[0]} of the steady window {sorted(self.marks)}: --batches over "
                     f"what one epoch of the data set holds?")
        first, last = (self.marks[m] for m in sorted(self.marks))
        images = (last["batches"] - first["batches"]) * BATCH
        scale = dict(cpu=1e3, worker_minflt=1, client_minflt=1)
        return {k: scale[k] * (last[k] - first[k]) / images for k in scale}


def augment_ms_per_image(build_dir):
    """CPU ms per image of the same blur pipeline run in one thread (augment_bench)."""
    out = subprocess.run([f"{build_dir}/bench/augment_bench", "--stoker_only", "--seconds=2",
                          "--rounds=1"], check=True, capture_output=True, text=True).stdout
    fields = dict(kv.split("=") for kv in out.strip().splitlines()[-1].split()[1:])
    return 1e3 / float(fields["stoker_ips_per_core"])


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tcp_receive_floor_ms(image_bytes, images, images_per_second, log):
    """The client's floor on this machine: CPU ms per image of a plain TCP receiver (iperf3's
    server, 1 MiB reads) taking the same bytes at the same rate over 127.0.0.1 (iperf3 -Z -l 1M
    -b RATE -n BYTES), start-up included."""
    port = str(free_port())
    rate = int(8 * image_bytes * images_per_second)
    with open(log, "w") as out:
        server = subprocess.Popen(["iperf3", "--server", "--bind", "127.0.0.1", "--port", port,
                                   "--one-off"], stdout=out, stderr=out)
        for _ in range(50):  # until the server listens (before, the client fails at once)
            client = subprocess.run(
                ["iperf3", "--client", "127.0.0.1", "--port", port, "--zerocopy", "--length",
                 "1M", "--bitrate", str(rate), "--bytes", str(image_bytes * images)],
                stdout=out, stderr=out)
            if client.returncode == 0:
                break
            time.sleep(0.1)
        else:
            server.kill()
        _, status, usage = os.wait4(server.pid, 0)
    if client.returncode != 0 or os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"e2e: iperf3 did not run; see {log}")
    return 1e3 * (usage.ru_utime + usage.ru_stime) / images


def wait_port(path, proc, what):
    for _ in range(200):
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        if proc.poll() is not None:
            sys.exit(f"e2e: {what} exited with {proc.returncode}")
        time.sleep(0.05)
    sys.exit(f"e2e: {what} did not write {path}")


# The flags that secure each process: the mutual-TLS files of scripts/dev-certs.sh (set by main),
# or --insecure with --plaintext.
CERTS = None


def security(role, tls=None):
    """`role`'s flags: mutual TLS with CERTS, or --insecure (tls=None: TLS whenever CERTS is
    set; False: plaintext, the plaintext side of --security both)."""
    if CERTS is None or tls is False:
        return ["--insecure"]
    return ["--tls-ca", f"{CERTS}/ca.pem", "--tls-cert", f"{CERTS}/{role}.pem",
            "--tls-key", f"{CERTS}/{role}.key"]


def start_cluster(b, worker_binary, workers, prefix, procs, data_root, worker_flags=(), tls=None):
    """A coordinator and `workers` workers of `worker_binary` (with `worker_flags`) on loopback,
    reading datasets under `data_root` (--data-root), secured as security(role, tls); appends
    them to procs. Returns (coordinator address, worker processes)."""
    log = open(f"{prefix}-coordinator.log", "w")
    coordinator = subprocess.Popen(
        [f"{b}/coordinator/stoker-coordinator", *security("coordinator", tls), "--listen",
         "127.0.0.1:0", "--port-file", f"{prefix}-coordinator.port", "--data-root", data_root],
        stdout=log, stderr=log)
    procs.append(coordinator)
    address = f"127.0.0.1:{wait_port(f'{prefix}-coordinator.port', coordinator, 'coordinator')}"
    started = []
    for i in range(workers):
        log = open(f"{prefix}-worker{i}.log", "w")
        w = subprocess.Popen(
            [worker_binary, *security("worker", tls), "--coordinator", address, "--threads", "1",
             "--port-file", f"{prefix}-worker{i}.port", "--data-root", data_root,
             *worker_flags],
            stdout=log, stderr=log)
        procs.append(w)
        started.append(w)
        wait_port(f"{prefix}-worker{i}.port", w, f"worker {i}")
    return address, started


def stoker_round(b, cluster, client, args, pipeline, source, extra, prefix, job, augment,
                 tls=None):
    """One run of `client` (stoker-bench-client argv: binary, flags; secured as
    security("trainer", tls)) against `cluster`: img/s and CPU ms per image over the whole run,
    and in steady state: the workers' CPU between the client's batches --warmup-batches and
    --batches - 2 (SteadyWindow) and the client's own CPU after its batch --warmup-batches (its
    report's steady_* figures; the whole run where an older client has none). With `augment`
    (blur), also augment's CPU per image for the same pipeline."""
    address, workers = cluster
    before = sum(cpu_seconds(w.pid) for w in workers)
    report = f"{prefix}-report.json"
    window = SteadyWindow(f"{prefix}-token", workers, args.warmup_batches, args.batches - 2)
    # Only when asked: clients built before the flag (--compare-client) still run without it.
    warmup = ([] if args.warmup_batches == WARMUP
              else ["--warmup-batches", str(args.warmup_batches)])
    _, client_cpu = run_child(
        [client[0], *security("trainer", tls), "--coordinator", address,
         "--job", f"e2e-{args.workload}-{job}", "--pipeline", pipeline, *source,
         *extra, "--batch-size", str(BATCH), "--max-batches", str(args.batches),
         "--report-json", report, "--token-file", f"{prefix}-token", *warmup, *client[1:]],
        f"{prefix}-client.log", window)
    worker_cpu = sum(cpu_seconds(w.pid) for w in workers) - before
    rep = json.load(open(report))
    images = rep["images"]
    s = dict(ips=images / rep["wall_seconds"], worker_ms=1e3 * worker_cpu / images,
             client_ms=1e3 * client_cpu / images)
    s["total_ms"] = s["worker_ms"] + s["client_ms"]
    s["image_bytes"] = sum(w["wire_bytes"] for w in rep["workers"]) / images
    steady = window.per_image()
    s["steady_ms"] = steady["cpu"]
    # Summed over the workers: each image is made by one of them, so this is the faults of the
    # process that made it, per image.
    s["worker_minflt"] = steady["worker_minflt"]
    s["client_minflt"] = steady["client_minflt"]
    s["client_steady_ms"] = (1e3 * rep["steady_cpu_seconds"] / rep["steady_images"]
                             if rep.get("steady_images") else s["client_ms"])
    s["steady_total_ms"] = s["steady_ms"] + s["client_steady_ms"]
    if augment:
        s["augment_ms"] = augment_ms_per_image(b)
        s["wire"] = s["steady_ms"] / s["augment_ms"]
        print(f"{job}: workers {s['steady_ms']:.3f} CPU ms per delivered image in steady state, "
              f"augment {s['augment_ms']:.3f} ms per image: {s['wire']:.3f}x", flush=True)
    return s


def main():
    global CERTS
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="blur")
    parser.add_argument("--manifest", default="", help="jpeg: stoker-pack manifest")
    parser.add_argument("--images", default="", help="jpeg: the same JPEGs, a folder per class")
    parser.add_argument("--annotations", default="",
                        help="detection: the COCO instances file --manifest was packed from")
    parser.add_argument("--pipeline", default="", help="detection: the pipeline text")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--torchvision-batches", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-torchvision", dest="torchvision", action="store_false",
                        help="skip torchvision's side (no vs_torchvision figures), for "
                             "figures of Stoker's processes alone")
    parser.add_argument("--client-flag", action="append", default=[])
    parser.add_argument("--compare-client", action="append", default=[])
    parser.add_argument("--baseline-worker", default="",
                        help="A/B: another stoker-worker binary, run as a second cluster in the "
                             "same rounds (order alternating); adds baseline_* figures")
    parser.add_argument("--decode-floor-ms", type=float, default=0.0,
                        help="jpeg: CPU ms per image of the 1/8-scale decode of the same files "
                             "(the workers' floor), printed beside their figure")
    parser.add_argument("--security", choices=["tls", "plaintext", "both"], default="tls",
                        help="tls: every Stoker connection mutual TLS (scripts/dev-certs.sh), as "
                             "deployed; plaintext: --insecure; both: a TLS and a plaintext "
                             "cluster in the same rounds (paired tls_vs_plaintext_worker_cpu)")
    parser.add_argument("--plaintext", dest="security", action="store_const", const="plaintext",
                        help="--security plaintext")
    # The default since issue 24; kept so that the commands recorded before it still run.
    parser.add_argument("--tls", dest="security", action="store_const", const="tls",
                        help="--security tls (the default)")
    parser.add_argument("--warmup-batches", type=int, default=WARMUP,
                        help="batches before the steady window opens (the client's heap grows "
                             "until its buffered batches reach its prefetch budget)")
    args = parser.parse_args()
    b = args.build_dir
    if args.warmup_batches < 1 or args.batches - 2 - args.warmup_batches < 12:
        sys.exit("e2e: --batches must be at least --warmup-batches + 14 (a steady window of 12 "
                 "batches: /proc counts CPU in 10 ms ticks), and --warmup-batches at least 1")
    if args.security == "both" and args.baseline_worker:
        sys.exit("e2e: --security both and --baseline-worker each add a second cluster; "
                 "give one of them")
    pipeline, extra = WORKLOADS[args.workload]
    if pipeline is None:
        if not args.pipeline or not args.annotations:
            sys.exit(f"e2e: --pipeline and --annotations are required for {args.workload}")
        pipeline = args.pipeline
    if args.workload == "blur":
        source = ["--num-samples", str(args.batches * BATCH)]
        tv_extra = []
    else:
        if not args.manifest or not args.images:
            sys.exit("e2e: --manifest and --images are required for the jpeg workloads")
        source = ["--manifest", args.manifest]
        tv_extra = [args.images] + ([args.annotations] if args.annotations else [])
    with tempfile.TemporaryDirectory() as tmp:
        if args.security != "plaintext":
            CERTS = f"{tmp}/certs"
            subprocess.run([f"{HERE}/../scripts/dev-certs.sh", CERTS], check=True)
        procs = []
        # Synthetic data reads no file: the temporary folder will do as the root.
        root = os.path.dirname(os.path.abspath(args.manifest)) if args.manifest else tmp
        try:
            clusters = {"stoker": start_cluster(b, f"{b}/worker/stoker-worker", args.workers,
                                                f"{tmp}/a", procs, root)}
            if args.baseline_worker:
                clusters["baseline"] = start_cluster(b, args.baseline_worker, args.workers,
                                                     f"{tmp}/b", procs, root)
            if args.security == "both":
                clusters["plaintext"] = start_cluster(b, f"{b}/worker/stoker-worker", args.workers,
                                                      f"{tmp}/p", procs, root, tls=False)
            clients = [[f"{b}/tools/stoker-bench-client", *args.client_flag]]
            compares = [shlex.split(c) for c in args.compare_client]
            rows = {side: [] for side in [*clusters, "torchvision"]}
            rows.update({f"compare{i}": [] for i in range(1, len(compares) + 1)})
            for r in range(args.rounds):
                sides = list(clusters) if r % 2 == 0 else list(reversed(clusters))
                for side in sides:
                    rows[side].append(stoker_round(
                        b, clusters[side], clients[0], args, pipeline, source, extra,
                        f"{tmp}/{side}{r}", f"{side}-{r}",
                        augment=side == "stoker" and args.workload == "blur",
                        tls=False if side == "plaintext" else None))
                # The control: a plain TCP receiver taking the same bytes at the same rate.
                s = rows["stoker"][-1]
                s["floor_ms"] = tcp_receive_floor_ms(
                    s["image_bytes"], args.batches * BATCH, s["ips"], f"{tmp}/iperf{r}.log")
                # Other clients against this build's cluster, right after its own client.
                for i, client in enumerate(compares, start=1):
                    c = stoker_round(b, clusters["stoker"], client, args, pipeline, source, extra,
                                     f"{tmp}/compare{i}-{r}", f"compare{i}-{r}", augment=False)
                    rows[f"compare{i}"].append(c)
                    print(f"round {r + 1}: compare{i} ({' '.join(client)}) {c['ips']:.0f} img/s, "
                          f"client {c['client_steady_ms']:.4f} CPU ms/image, "
                          f"{c['client_minflt']:.2f} minor faults/image", flush=True)
                line = f"round {r + 1}: "
                if args.torchvision:
                    out, _ = run_child(
                        [sys.executable, f"{HERE}/e2e_torchvision.py", args.workload,
                         str(args.workers), str(args.torchvision_batches), *tv_extra],
                        f"{tmp}/torchvision{r}.log")
                    fields = dict(kv.split("=") for kv in out.split())
                    tv_images = int(fields["images"])
                    t = dict(ips=tv_images / float(fields["wall_seconds"]),
                             total_ms=1e3 * float(fields["cpu_seconds"]) / tv_images)
                    rows["torchvision"].append(t)
                for side in clusters:
                    s = rows[side][-1]
                    line += (f"{side} {s['ips']:.0f} img/s, worker {s['steady_ms']:.3f} + client "
                             f"{s['client_steady_ms']:.3f} = {s['steady_total_ms']:.3f} CPU "
                             f"ms/image (whole run {s['total_ms']:.3f}), minor faults per image "
                             f"worker {s['worker_minflt']:.2f} client {s['client_minflt']:.2f}; ")
                line += f"TCP receive floor {rows['stoker'][-1]['floor_ms']:.3f} ms/image; "
                if args.decode_floor_ms:
                    line += f"1/8-scale decode floor {args.decode_floor_ms:.3f} ms/image; "
                line += (f"torchvision {t['ips']:.1f} img/s, {t['total_ms']:.2f} CPU ms/image "
                         if args.torchvision else "torchvision skipped (--no-torchvision) ")
                print(line + f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)

    def med(side, key):
        return statistics.median(row[key] for row in rows[side])

    def ratio(key):
        return statistics.median(
            t["total_ms"] / s[key] for s, t in zip(rows["stoker"], rows["torchvision"]))

    second_side = ""  # the figures of --baseline-worker or of --security both's plaintext side
    if "baseline" in rows:
        # How many times the baseline worker's CPU per image this one's is, median of the rounds.
        speedups = [a["steady_ms"] / s["steady_ms"]
                    for s, a in zip(rows["stoker"], rows["baseline"])]
        second_side = (f" baseline_worker_cpu_ms_per_image={med('baseline', 'steady_ms'):.4f}"
                    f" baseline_workers_minflt_per_image={med('baseline', 'worker_minflt'):.3f}"
                    f" baseline_cpu_ms_per_image={med('baseline', 'steady_total_ms'):.4f}"
                    f" worker_cpu_vs_baseline={statistics.median(speedups):.3f}")
    if "plaintext" in rows:
        # The TLS side's worker CPU per image over the plaintext side's of the same round.
        tls_costs = [s["steady_ms"] / p["steady_ms"]
                     for s, p in zip(rows["stoker"], rows["plaintext"])]
        second_side = (f" plaintext_worker_cpu_ms_per_image={med('plaintext', 'steady_ms'):.4f}"
                    f" plaintext_client_cpu_ms_per_image="
                    f"{med('plaintext', 'client_steady_ms'):.4f}"
                    f" plaintext_workers_minflt_per_image={med('plaintext', 'worker_minflt'):.3f}"
                    f" plaintext_client_minflt_per_image={med('plaintext', 'client_minflt'):.3f}"
                    f" tls_vs_plaintext_worker_cpu={statistics.median(tls_costs):.3f}"
                    f" tls_vs_plaintext_worker_cpu_rounds="
                    + ",".join(f"{c:.3f}" for c in tls_costs))
    print(f"RESULT name=e2e workload={args.workload} workers={args.workers} "
          f"tls={dict(tls='on', plaintext='off', both='both')[args.security]} "
          f"warmup_batches={args.warmup_batches} batches={args.batches} "
          f"stoker_ips={med('stoker', 'ips'):.1f} "
          f"stoker_worker_cpu_ms_per_image={med('stoker', 'steady_ms'):.4f} "
          f"stoker_client_cpu_ms_per_image={med('stoker', 'client_steady_ms'):.4f} "
          f"stoker_cpu_ms_per_image={med('stoker', 'steady_total_ms'):.4f} "
          f"workers_minflt_per_image={med('stoker', 'worker_minflt'):.3f} "
          f"client_minflt_per_image={med('stoker', 'client_minflt'):.3f} "
          + (f"torchvision_ips={med('torchvision', 'ips'):.2f} "
             f"torchvision_cpu_ms_per_image={med('torchvision', 'total_ms'):.3f} "
             f"vs_torchvision={ratio('steady_total_ms'):.2f} "
             if args.torchvision else "torchvision=skipped ")
          + f"stoker_worker_cpu_ms_per_image_whole_run={med('stoker', 'worker_ms'):.4f} "
          f"stoker_client_cpu_ms_per_image_whole_run={med('stoker', 'client_ms'):.4f} "
          + (f"vs_torchvision_whole_run={ratio('total_ms'):.2f} " if args.torchvision else "")
          + f"tcp_receive_floor_ms_per_image={med('stoker', 'floor_ms'):.4f} "
          f"client_vs_floor={statistics.median(s['client_steady_ms'] / s['floor_ms'] for s in rows['stoker']):.2f}"
          f"{second_side}"
          + (f" decode_floor_ms_per_image={args.decode_floor_ms:.4f} worker_vs_decode_floor="
             f"{med('stoker', 'steady_ms') / args.decode_floor_ms:.2f}"
             if args.decode_floor_ms else "")
          + "".join(f" compare{i}_client_cpu_ms_per_image="
                    f"{med(f'compare{i}', 'client_steady_ms'):.4f}"
                    f" compare{i}_client_minflt_per_image={med(f'compare{i}', 'client_minflt'):.3f}"
                    for i in range(1, len(compares) + 1))
          + (f" augment_cpu_ms_per_image={med('stoker', 'augment_ms'):.4f} "
             f"worker_vs_augment={med('stoker', 'wire'):.3f}"
             if "augment_ms" in rows["stoker"][0] else ""))


if __name__ == "__main__":
    main()
