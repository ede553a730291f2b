#!/usr/bin/python3
"""`scripts/bench.sh e2e-two-host` (issue 13, item 1, two-host variant): the workers and the
trainer on two "hosts" — network namespaces made (and removed) here, joined by a veth pair whose
both ends are shaped by tc tbf to RATE — and the delivered images/s against that link.

    e2e_two_host.py BUILD_DIR [--rates 1gbit,10gbit] [--rounds 3] [--seconds 5]
                    [--manifest M]

Per rate: the coordinator and 2 `stoker-worker --threads 1` processes in the worker namespace,
`stoker-bench-client` in the trainer namespace (no training step), uint8 224x224x3 batches of
64; alternating rounds of
  iperf3    one TCP stream, -l 1M -Z, worker side → trainer side: what the shaped link carries;
  stoker    simulated production (--simulate-batch-ms 0: batches ready at once, so the link and
            the wire path are what is measured), delivered payload Gbit/s and img/s;
  jpeg      with --manifest (the bench/e2e.sh JPEG set): the real JPEG uint8 pipeline
            (decode, random_resized_crop(224), horizontal_flip), delivered img/s — bounded by
            the workers' 2 cores when the link is faster than they are.
Medians; `vs_link` = delivered payload bits / the tbf rate, `vs_iperf` = / iperf3's goodput.
One RESULT line per rate; the last is the last rate's.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BATCH = 64
IMAGE_BYTES = 224 * 224 * 3
JPEG = "decode, random_resized_crop(height=224, width=224), horizontal_flip"
RATES_BPS = {"1gbit": 1e9, "10gbit": 10e9}


def sh(*argv, check=True):
    return subprocess.run(argv, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class Link:
    """Two namespaces joined by a veth pair, both ends shaped to `rate` by tc tbf."""

    def __init__(self, rate):
        tag = f"{os.getpid() % 100000}"
        self.workers_ns, self.trainer_ns = f"stoker-w{tag}", f"stoker-t{tag}"
        self.worker_ip, self.trainer_ip = "10.213.0.1", "10.213.0.2"
        bps = RATES_BPS[rate]
        # Burst: 2 ms at the rate (tbf needs at least rate / HZ), never below 64 KiB.
        burst = max(int(bps / 8 * 0.002), 64 << 10)
        for ns in (self.workers_ns, self.trainer_ns):
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"sw{tag}", "type", "veth", "peer", "name", f"st{tag}")
        for dev, ns, ip in ((f"sw{tag}", self.workers_ns, self.worker_ip),
                            (f"st{tag}", self.trainer_ns, self.trainer_ip)):
            sh("ip", "link", "set", dev, "netns", ns)
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
               "burst", str(burst), "latency", "20ms")

    def run_in(self, ns, argv, **kwargs):
        return subprocess.Popen(["ip", "netns", "exec", ns, *argv], **kwargs)

    def remove(self):
        for ns in (self.workers_ns, self.trainer_ns):
            sh("ip", "netns", "del", ns, check=False)  # deletes the veth pair with it


def wait_port(path, proc, what):
    for _ in range(300):
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read())
        if proc.poll() is not None:
            sys.exit(f"e2e-two-host: {what} exited with {proc.returncode}")
        time.sleep(0.05)
    sys.exit(f"e2e-two-host: {what} did not write {path}")


def iperf_gbps(link, seconds, tmp):
    server = link.run_in(link.trainer_ns, ["iperf3", "--server", "--bind", link.trainer_ip,
                                           "--port", "5201", "--one-off"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            out = subprocess.run(
                ["ip", "netns", "exec", link.workers_ns, "iperf3", "--client", link.trainer_ip,
                 "--port", "5201", "--time", str(seconds), "--length", "1M", "--zerocopy",
                 "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            # Before the server listens the client may report an error (no sum_received).
            if out.returncode == 0 and "sum_received" in out.stdout:
                return json.loads(out.stdout)["end"]["sum_received"]["bits_per_second"] / 1e9
            time.sleep(0.2)
        sys.exit("e2e-two-host: iperf3 did not run")
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.wait(timeout=10)


def client_run(link, b, coordinator, job, args, tmp, log):
    report = f"{tmp}/{job}.json"
    with open(log, "w") as err:
        code = link.run_in(link.trainer_ns,
                           [f"{b}/tools/stoker-bench-client", "--insecure", "--coordinator",
                            coordinator, "--job", job, "--batch-size", str(BATCH),
                            "--report-json", report, *args],
                           stdout=subprocess.DEVNULL, stderr=err).wait()
    if code != 0:
        sys.exit(f"e2e-two-host: client exited with {code}:\n{open(log).read()[-3000:]}")
    return json.load(open(report))


def start_cluster(link, b, tmp, simulate, name, data_root=None):
    """A coordinator and 2 workers in the worker namespace, reading datasets under `data_root`
    (--data-root; the run's `tmp` when None: synthetic data reads no file)."""
    roots = ["--data-root", data_root or tmp]
    procs = []
    log = open(f"{tmp}/{name}-coordinator.log", "w")
    coordinator = link.run_in(link.workers_ns, [
        f"{b}/coordinator/stoker-coordinator", "--insecure", "--listen", f"{link.worker_ip}:0",
        "--port-file", f"{tmp}/{name}-coordinator.port", *roots], stdout=log, stderr=log)
    procs.append(coordinator)
    address = f"{link.worker_ip}:{wait_port(f'{tmp}/{name}-coordinator.port', coordinator, 'coordinator')}"
    for i in range(2):
        log = open(f"{tmp}/{name}-worker{i}.log", "w")
        extra = ["--simulate-batch-ms", "0"] if simulate else []
        w = link.run_in(link.workers_ns, [
            f"{b}/worker/stoker-worker", "--insecure", "--coordinator", address,
            "--listen", f"{link.worker_ip}:0", "--threads", "1",
            "--port-file", f"{tmp}/{name}-worker{i}.port", *roots, *extra], stdout=log,
            stderr=log)
        procs.append(w)
        wait_port(f"{tmp}/{name}-worker{i}.port", w, f"worker {i}")
    return address, procs


def stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=30)


def measure_rate(rate, args, tmp):
    link = Link(rate)
    procs = []
    try:
        sim_address, sim_procs = start_cluster(link, args.build_dir, tmp, True, f"sim-{rate}")
        procs += sim_procs
        jpeg_address = None
        if args.manifest:
            jpeg_address, jpeg_procs = start_cluster(link, args.build_dir, tmp, False,
                                                     f"jpeg-{rate}",
                                                     os.path.dirname(args.manifest))
            procs += jpeg_procs
        rows = {"iperf": [], "stoker": [], "jpeg": []}
        batch_bits = BATCH * IMAGE_BYTES * 8
        batches = max(20, int(args.seconds * RATES_BPS[rate] / batch_bits))
        for r in range(args.rounds):
            rows["iperf"].append(iperf_gbps(link, args.seconds, tmp))
            rep = client_run(link, args.build_dir, sim_address, f"sim-{rate}-{r}",
                             ["--pipeline", "", "--num-samples", str((batches + 1) * BATCH),
                              "--max-batches", str(batches), "--prefetch-mb", "80"],
                             tmp, f"{tmp}/sim-{rate}-{r}.log")
            rows["stoker"].append(rep["batches_per_second"] * batch_bits / 1e9)
            line = (f"{rate} round {r + 1}: iperf3 {rows['iperf'][-1]:.3f} Gbit/s, stoker "
                    f"(simulated producers) {rows['stoker'][-1]:.3f} Gbit/s")
            if jpeg_address:
                rep = client_run(link, args.build_dir, jpeg_address, f"jpeg-{rate}-{r}",
                                 ["--pipeline", JPEG, "--manifest", args.manifest,
                                  "--max-batches", str(args.jpeg_batches)],
                                 tmp, f"{tmp}/jpeg-{rate}-{r}.log")
                rows["jpeg"].append(rep["images_per_second"])
                line += f", stoker JPEG uint8 {rows['jpeg'][-1]:.0f} img/s"
            print(line, flush=True)
    finally:
        stop(procs)
        link.remove()
    med = {k: statistics.median(v) for k, v in rows.items() if v}
    capacity = RATES_BPS[rate] / 1e9
    result = (f"RESULT name=e2e-two-host rate={rate} link_gbit_per_s={capacity:g} "
              f"iperf_gbit_per_s={med['iperf']:.3f} stoker_gbit_per_s={med['stoker']:.3f} "
              f"stoker_ips={med['stoker'] * 1e9 / (IMAGE_BYTES * 8):.1f} "
              f"vs_link={med['stoker'] / capacity:.4f} vs_iperf={med['stoker'] / med['iperf']:.4f}")
    if "jpeg" in med:
        jpeg_gbps = med["jpeg"] * IMAGE_BYTES * 8 / 1e9
        result += (f" jpeg_uint8_ips={med['jpeg']:.1f} jpeg_gbit_per_s={jpeg_gbps:.3f} "
                   f"jpeg_vs_link={jpeg_gbps / capacity:.4f}")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--rates", default="1gbit,10gbit")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--manifest", default="")
    parser.add_argument("--jpeg-batches", type=int, default=60)
    args = parser.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if args.manifest:
        args.manifest = os.path.abspath(args.manifest)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for rate in args.rates.split(","):
            if rate not in RATES_BPS:
                sys.exit(f"e2e-two-host: --rates: unknown rate '{rate}' (1gbit, 10gbit)")
            results.append(measure_rate(rate, args, tmp))
            print(results[-1], flush=True)


if __name__ == "__main__":
    main()
