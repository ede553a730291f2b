#!/usr/bin/python3
"""`scripts/bench.sh plan-scale` (issue 22): epoch plans at any dataset size.

    plan_scale.py BUILD_DIR [--sizes N,N,...] [--jobs J] [--jobs-samples N] [--batches B]

Real processes on loopback: for each size a fresh coordinator, one `stoker-worker --threads 1`
and one `stoker-bench-client` taking --batches (4) batches of 64 synthetic 8x8x3 images
(pipeline to_float) from a dataset of that many samples. Reports the time from starting the
client to its first batch (its --dump-indices line) and the peak RSS (VmHWM of /proc/PID/status)
of the coordinator and the worker (and the client's, from wait4). Then, on another fresh pair, --jobs (20) clients at once, each
its own job of --jobs-samples (10^9) samples: the worker's and coordinator's peak RSS.
Last line: RESULT name=plan-scale key=value ...
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def vm_hwm_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def wait_file(path, proc, what, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path) and open(path).read().strip():
            return open(path).read()
        if proc.poll() is not None:
            sys.exit(f"plan-scale: {what} exited with {proc.returncode}")
        time.sleep(0.002)
    sys.exit(f"plan-scale: {what} did not write {path} in {seconds} s")


def data_root_flags(binary):
    # --data-root is required by newer binaries; older ones do not know it.
    helped = subprocess.run([binary, "--help"], capture_output=True, text=True)
    return ["--data-root=/"] if "data-root" in helped.stdout + helped.stderr else []


class Cluster:
    """A coordinator and one worker on loopback."""

    def __init__(self, b, tmp, name):
        self.procs = []
        prefix = os.path.join(tmp, name)
        coordinator = f"{b}/coordinator/stoker-coordinator"
        self.coordinator = self._start(
            [coordinator, "--insecure", "--listen", "127.0.0.1:0", *data_root_flags(coordinator),
             "--port-file", f"{prefix}-coordinator.port"], f"{prefix}-coordinator.log")
        port = wait_file(f"{prefix}-coordinator.port", self.coordinator, "coordinator")
        self.address = f"127.0.0.1:{int(port)}"
        worker = f"{b}/worker/stoker-worker"
        self.worker = self._start(
            [worker, "--insecure", "--coordinator", self.address, "--threads", "1",
             *data_root_flags(worker), "--port-file", f"{prefix}-worker.port"],
            f"{prefix}-worker.log")
        wait_file(f"{prefix}-worker.port", self.worker, "worker")

    def _start(self, argv, log):
        out = open(log, "w")
        proc = subprocess.Popen(argv, stdout=out, stderr=out)
        self.procs.append(proc)
        return proc

    def peaks(self):
        return vm_hwm_mb(self.coordinator.pid), vm_hwm_mb(self.worker.pid)

    def stop(self):
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start_client(b, cluster, tmp, job, samples, batches):
    dump = os.path.join(tmp, f"{job}.indices")
    log = open(os.path.join(tmp, f"{job}.log"), "w")
    client = subprocess.Popen(
        [f"{b}/tools/stoker-bench-client", "--insecure", "--coordinator", cluster.address,
         "--job", job, "--num-samples", str(samples), "--height", "8", "--width", "8",
         "--channels", "3", "--batch-size", "64", "--pipeline", "to_float",
         "--max-batches", str(batches), "--prefetch-mb", "4", "--dump-indices", dump],
        stdout=log, stderr=log)
    return client, dump


def finish(client, job):
    """Waits for `client`; its peak RSS in MB."""
    _, status, usage = os.wait4(client.pid, 0)
    client.returncode = os.waitstatus_to_exitcode(status)
    if client.returncode != 0:
        sys.exit(f"plan-scale: client of {job} exited with {client.returncode}")
    return usage.ru_maxrss / 1024


def one_size(b, tmp, samples, batches):
    cluster = Cluster(b, tmp, f"n{samples}")
    try:
        started = time.monotonic()
        client, dump = start_client(b, cluster, tmp, f"scale-{samples}", samples, batches)
        wait_file(dump, client, f"client of {samples} samples", seconds=60)
        first = time.monotonic() - started
        client_mb = finish(client, samples)
        coordinator_mb, worker_mb = cluster.peaks()
    finally:
        cluster.stop()
    print(f"{samples} samples: first batch {first:.3f} s, peak RSS coordinator "
          f"{coordinator_mb:.1f} MB, worker {worker_mb:.1f} MB, client {client_mb:.1f} MB",
          flush=True)
    return first, coordinator_mb, worker_mb, client_mb


def many_jobs(b, tmp, jobs, samples, batches):
    cluster = Cluster(b, tmp, "jobs")
    try:
        clients = [start_client(b, cluster, tmp, f"many-{j}", samples, batches)[0]
                   for j in range(jobs)]
        for j, client in enumerate(clients):
            finish(client, f"many-{j}")
        coordinator_mb, worker_mb = cluster.peaks()
    finally:
        cluster.stop()
    print(f"{jobs} jobs of {samples} samples: peak RSS coordinator {coordinator_mb:.1f} MB, "
          f"worker {worker_mb:.1f} MB", flush=True)
    return coordinator_mb, worker_mb


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir")
    parser.add_argument("--sizes", default=f"{10**6},{10**8},{10**9},{2**36}")
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--jobs-samples", type=int, default=10**9)
    parser.add_argument("--batches", type=int, default=4)
    args = parser.parse_args()
    fields = []
    with tempfile.TemporaryDirectory(prefix="plan-scale-") as tmp:
        for samples in [int(s) for s in args.sizes.split(",")]:
            first, coordinator_mb, worker_mb, client_mb = one_size(args.build_dir, tmp, samples,
                                                                   args.batches)
            fields += [f"first_batch_s_{samples}={first:.3f}",
                       f"coordinator_mb_{samples}={coordinator_mb:.1f}",
                       f"worker_mb_{samples}={worker_mb:.1f}", f"client_mb_{samples}={client_mb:.1f}"]
        coordinator_mb, worker_mb = many_jobs(args.build_dir, tmp, args.jobs, args.jobs_samples,
                                              args.batches)
        fields += [f"jobs={args.jobs}", f"jobs_coordinator_mb={coordinator_mb:.1f}",
                   f"jobs_worker_mb={worker_mb:.1f}"]
    print("RESULT name=plan-scale " + " ".join(fields))


if __name__ == "__main__":
    main()
