"""Limits the container sets, honoured: workers started from the chart's pod spec under the
resources.limits the kubelet would enforce (podman run --cpus --memory) size themselves from
their cgroup, not the machine.

A coordinator and three workers (mutual TLS, the chart's default), each with --threads and
--memory-bytes left at 0:
  2 CPUs, 1 GiB      reports 2 cores, budgets 512 MiB for batches
  1 CPU, 1 GiB       reports 1 core (this machine has 2: the node's count would be wrong)
  1.5 CPUs, 512 MiB  reports 2 cores (the quota rounded up), budgets 256 MiB
The cores are read where the advisor reads them, from the coordinator's status (stoker-ctl
status); the thread count and batch budget from the worker's start line. Then the 2-CPU, 1-GiB
worker takes the credit attack of hostile_peers (tests/chaos/hostile_client.cc: a trainer
granting credit 2^32-1 for 38.5 MB batches and never reading, for 15 s) and every worker must
still run, not OOM-killed, its cgroup's peak memory inside its batch budget + 64 MiB.

  limits_test.py BUILD_DIR    skips (77) when podman cannot run containers here, naming why
"""

import copy
import json
import os
import re
import subprocess
import sys

import deploy_tools as dt
from cluster_test import (OPERATOR_TLS, VALUES, make_certs, pod_spec, require_images,
                          require_podman, OPERATOR_DIR)
from podman_cluster import PodmanCluster, quantity
from chaos_harness import ChaosError, wait_until

# (container name, limits.cpu, limits.memory, cores it must report)
CASES = [
    ("worker-2cpu-1gi", "2", "1Gi", 2),
    ("worker-1cpu-1gi", "1", "1Gi", 1),
    ("worker-1500m-512mi", "1500m", "512Mi", 2),
]
# Whatever the chart passes, every path is allowed: this test reads no data.
DATA_ROOT = "--data-root=/"
# What a worker may hold beyond its batch budget: the bound hostile_peers holds its RSS to.
PROCESS_OVERHEAD = 64 << 20
START_LINE = re.compile(r"with (\d+) threads and (\d+) bytes for batches")


def limited(worker_spec, cpu, memory):
    """The worker pod spec with these limits (and requests no higher)."""
    spec = copy.deepcopy(worker_spec)
    container = spec["containers"][0]
    container["resources"] = {"requests": {"cpu": cpu, "memory": memory},
                              "limits": {"cpu": cpu, "memory": memory}}
    return spec


def registered_cores(cluster, port):
    """Worker address -> the cores it registered with; {} while the coordinator is not up."""
    result = cluster.exec("coordinator", "stoker-ctl", "status", "--json",
                          f"--coordinator=127.0.0.1:{port}", *OPERATOR_TLS, check=False)
    if result.returncode != 0:
        return {}
    return {w["info"]["address"]: int(w["info"].get("cores", 0))
            for w in json.loads(result.stdout).get("workers", [])}


def check_reports(cluster, name, address, cores, memory, registered):
    """The cores the coordinator was told, and the worker's own threads and batch budget."""
    if registered.get(address) != cores:
        raise ChaosError(f"{name} registered {registered.get(address)} cores, want {cores} "
                         f"(its CPU limit rounded up): {registered}")
    log = cluster.logs(name)
    match = START_LINE.search(log)
    if match is None:
        raise ChaosError(f"{name} printed no start line:\n{log[-2000:]}")
    threads, budget = int(match.group(1)), int(match.group(2))
    limit = int(quantity(memory))
    if threads != cores or budget != limit // 2:
        raise ChaosError(f"{name} runs {threads} threads with {budget} bytes for batches; want "
                         f"{cores} threads and half of its {limit}-byte memory limit")
    limits_line = next((line for line in log.splitlines() if "this process may use" in line), "")
    print(f"{name}: {cores} cores, {threads} threads, {budget} bytes for batches "
          f"({limits_line.split('] ', 1)[-1]})")


def peak_memory(cluster, name):
    """The container cgroup's peak memory, bytes (v2 memory.peak, else v1's max usage)."""
    for path in ("/sys/fs/cgroup/memory.peak", "/sys/fs/cgroup/memory/memory.max_usage_in_bytes"):
        result = cluster.exec(name, "cat", path, check=False)
        if result.returncode == 0 and result.stdout.strip().isdigit():
            return int(result.stdout.strip())
    return None


def check_stays_inside(cluster, name, memory):
    """Still running, not OOM-killed, its cgroup's peak memory inside its batch budget (half
    the limit) plus 64 MiB for the process itself."""
    state = json.loads(cluster.run("inspect", "--format", "{{json .State}}",
                                   f"{cluster.prefix}-{name}").stdout)
    if not state.get("Running") or state.get("OOMKilled"):
        raise ChaosError(f"{name} is not running (OOM-killed: {state.get('OOMKilled')}):\n"
                         f"{cluster.logs(name)[-2000:]}")
    peak, limit = peak_memory(cluster, name), int(quantity(memory))
    bound = limit // 2 + PROCESS_OVERHEAD
    if peak is not None and peak >= bound:
        raise ChaosError(f"{name} peaked at {peak} bytes, above its batch budget + 64 MiB "
                         f"({bound}; limit {limit})")
    print(f"{name}: running, peak memory {peak} bytes (bound {bound}, limit {limit})")


def credit_attack(cluster, build_dir, coordinator, worker):
    """hostile_peers' credit attack from this host, with a trainer certificate of the cluster's
    CA; the coordinator must answer after it and the worker must still be registered."""
    certs = cluster.secrets["stoker-tls"]
    argv = [os.path.join(build_dir, "tests/chaos/stoker-hostile-client"), "--attack=credit",
            f"--coordinator={coordinator}", f"--worker={worker}", "--hold-seconds=15",
            f"--tls-cert={certs}/trainer.pem", f"--tls-key={certs}/trainer.key",
            f"--tls-ca={certs}/ca.pem"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    if out.returncode != 0:
        raise ChaosError(f"hostile client exited with {out.returncode}: {out.stderr[-2000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"credit attack on {worker}: {result}")
    if not result["credit_written"] or result["status_after"] != "OK" or \
            result["workers_lost"] != 0:
        raise ChaosError(f"credit attack on {worker}: {result}; want the credit written, the "
                         "coordinator answering and no worker lost")


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} BUILD_DIR", file=sys.stderr)
        return 2
    podman = require_podman()
    objects = dt.rendered_objects([VALUES], ["worker.threads=0"], namespace="stoker-limits")
    coordinator = pod_spec(objects, "StatefulSet", "-coordinator")
    worker = pod_spec(objects, "Deployment", "-worker")
    service = dt.find(objects, "Service", "-coordinator")["metadata"]["name"]
    coordinator_port = coordinator["containers"][0]["ports"][0]["containerPort"]
    worker_port = worker["containers"][0]["ports"][0]["containerPort"]
    with PodmanCluster(podman, "stoker-limits") as cluster:
        require_images(cluster, [coordinator, worker])
        operator = make_certs(cluster)
        coordinator_ip = cluster.start("coordinator", coordinator, "coordinator",
                                       aliases=[service], mounts=[(operator, OPERATOR_DIR)],
                                       extra_args=[DATA_ROOT])
        addresses = {}
        for name, cpu, memory, _ in CASES:
            ip = cluster.start(name, limited(worker, cpu, memory), "worker",
                               extra_args=[DATA_ROOT])
            addresses[name] = f"{ip}:{worker_port}"
        wait_until(lambda: set(registered_cores(cluster, coordinator_port)) ==
                   set(addresses.values()), 90, f"workers registered at {addresses}")
        registered = registered_cores(cluster, coordinator_port)
        for name, _, memory, cores in CASES:
            check_reports(cluster, name, addresses[name], cores, memory, registered)
        credit_attack(cluster, sys.argv[1], f"{coordinator_ip}:{coordinator_port}",
                      addresses["worker-2cpu-1gi"])
        for name, _, memory, _ in CASES:
            check_stays_inside(cluster, name, memory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
