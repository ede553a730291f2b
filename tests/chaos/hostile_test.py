"""Hostile peers (issue 28; docs/security.md, "Authenticated peers"): real processes on loopback,
every one with mutual TLS.

    python3 hostile_test.py BUILD_DIR ATTACK      ATTACK: open_job, acks or credit

A coordinator and one worker (--memory-bytes=256 MiB) serve a real job; beside it
stoker-hostile-client, holding a trainer certificate like any user, runs one attack:

  open_job  world_size 4,000,000,000 over a 1-sample dataset, alone and with a crafted
            same-world resume token: both INVALID_ARGUMENT, and the coordinator answers after.
  acks      2,000,000 acknowledgements of tasks the worker never sent: every stream carrying
            them ends INVALID_ARGUMENT and the worker counts them as protocol errors.
  credit    one stream grants credit 2^32-1 for 38.5 MB batches and never reads for 20 s.

Checked for every attack: the coordinator still answers; the worker was never removed
(workers_lost 0) and is still live; the real job receives every batch exactly once; the
worker's peak RSS (VmHWM) stays below --memory-bytes + 64 MiB. Exit 0 = pass.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

from chaos_harness import ChaosError, Cluster, Job, check_delivery, scenario_main, wait_until

MEMORY_BYTES = 256 << 20
PEAK_RSS_BOUND_KIB = (MEMORY_BYTES + (64 << 20)) // 1024
HOLD_SECONDS = 20


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_kib(proc):
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise ChaosError("the worker has no VmHWM")


def metric_sum(port, name):
    """Sum of every sample of metric `name` on a /metrics page (0 when absent)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
        text = page.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def attack(cluster, name):
    argv = [os.path.join(cluster.bin_dir, "tests/chaos/stoker-hostile-client"),
            f"--attack={name.replace('_', '-')}",
            f"--coordinator={cluster.coordinator_address}",
            f"--worker={cluster.worker_address('worker0')}",
            f"--hold-seconds={HOLD_SECONDS}"] + cluster.tls_flags("trainer")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=HOLD_SECONDS + 180)
    if out.returncode != 0:
        raise ChaosError(f"hostile client exited with {out.returncode}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def expect(got, want, what):
    if got != want:
        raise ChaosError(f"{what}: got {got!r}, expected {want!r}")


def check_attack(name, result, metrics_port):
    if name == "open_job":
        expect(result["world_size"], "INVALID_ARGUMENT", "OpenJob with world_size 4e9")
        expect(result["world_size_with_token"], "INVALID_ARGUMENT",
               "OpenJob with world_size 4e9 and a crafted resume token")
    elif name == "acks":
        ends = result["ack_streams"]
        if set(ends) != {"INVALID_ARGUMENT"}:
            raise ChaosError(f"streams acking unsent tasks ended {ends}; every one must end "
                             "INVALID_ARGUMENT")
        errors = metric_sum(metrics_port, "stoker_worker_protocol_errors_total")
        if errors < ends["INVALID_ARGUMENT"]:
            raise ChaosError(f"stoker_worker_protocol_errors_total is {errors}, but "
                             f"{ends['INVALID_ARGUMENT']} streams were ended for bad acks")
    elif name == "credit":
        expect(result["credit_written"], True, "the attacker's Open and Credit were written")
    expect(result["status_after"], "OK", "GetStatus after the attack")
    expect(result["workers_lost"], 0, "workers removed by the coordinator")
    expect(result["workers"], 1, "live workers after the attack")


def run(bin_dir, name):
    with Cluster(bin_dir) as cluster:
        metrics_port = free_port()
        cluster.start_coordinator(journal=False)
        cluster.start_worker("worker0", extra=[f"--memory-bytes={MEMORY_BYTES}",
                                               f"--metrics-port={metrics_port}",
                                               "--metrics-address=127.0.0.1"])
        # Long enough to run beside the whole attack (about 500 batches of 40 ms steps).
        job = Job("beside-the-attack", num_samples=4000, step_ms=40)
        cluster.start_client(job)
        wait_until(lambda: cluster.delivered("client0") > 0, 60, "the real job's first batch")
        started = time.monotonic()
        result = attack(cluster, name)
        print(f"{name} attack took {time.monotonic() - started:.1f}s: {result}; the real job "
              f"had {cluster.delivered('client0')} of {job.batches_per_epoch} batches by its end")
        peak = peak_rss_kib(cluster.workers["worker0"])
        print(f"worker peak RSS {peak} KiB (bound {PEAK_RSS_BOUND_KIB} KiB)")
        check_attack(name, result, metrics_port)
        if peak > PEAK_RSS_BOUND_KIB:
            raise ChaosError(f"worker peak RSS {peak} KiB, over --memory-bytes + 64 MiB "
                             f"({PEAK_RSS_BOUND_KIB} KiB)")
        cluster.wait_clients(timeout_s=180)
        check_delivery(job, cluster.dump_records())
        if cluster.workers["worker0"].poll() is not None:
            raise ChaosError("the worker exited")


if __name__ == "__main__":
    sys.exit(scenario_main(run, ("open_job", "acks", "credit"),
                           label=lambda name: f"hostile_peers_{name}"))
