"""The deployment end to end: the chart's pods as podman containers on one network.

A coordinator (journal on a volume), three workers and two trainer ranks (stoker-bench-client
with --dump-indices), each in its own container and network namespace, all started with the
command, args and environment of `helm template` (values-e2e.yaml), run a 2-epoch job. Mid-epoch
one worker is cut off the network (`podman network disconnect`) until the coordinator drops it,
then reconnected (it registers again at the same address); later another is `podman stop`ped
(SIGTERM, SIGKILL after the chart's terminationGracePeriodSeconds): it must drain and exit 0
before the kill. The helm test hook's pod checks the coordinator is SERVING; every worker must
have registered its own container IP (--advertise-address=$(POD_IP)); the metrics the monitors
and the autoscaler read are served on the chart's metrics ports. Delivery is checked from
the trainers' dumps: every (epoch, rank) got each of its batches exactly once
(tests/chaos/chaos_harness.py's check_delivery). Everything runs mutual TLS, the chart's
default: the Secret it mounts holds certificates from scripts/dev-certs.sh, made by the test.

  cluster_test.py            skips (77) when podman cannot run containers here, naming why
"""

import json
import os
import re
import subprocess
import sys

import deploy_tools as dt
from podman_cluster import PodmanCluster, podman_env

sys.path.insert(0, os.path.join(dt.SOURCE_DIR, "tests", "chaos"))
from chaos_harness import ChaosError, Job, check_delivery, wait_until  # noqa: E402

VALUES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "values-e2e.yaml")
WORKERS = ["worker0", "worker1", "worker2"]


def require_podman():
    podman = dt.tool("podman", "--containers")
    probe = subprocess.run([podman, "info", "--format", "{{.Host.OCIRuntime.Name}}"],
                           capture_output=True, text=True, env=podman_env())
    if probe.returncode != 0:
        dt.skip(f"podman cannot run here: {probe.stderr.strip()[:300]}")
    return podman


def pod_spec(objects, kind, suffix):
    return dt.find(objects, kind, suffix)["spec"]["template"]["spec"]


def require_images(cluster, specs):
    for spec in specs:
        for container in spec["containers"]:
            image = container["image"]
            if cluster.run("image", "exists", image, check=False).returncode != 0:
                raise AssertionError(f"image {image} is missing: run scripts/images.sh")


# Where the coordinator's container gets an operator certificate (for stoker-ctl status), and
# the flags of stoker-ctl with it and with the container's own (coordinator) certificate.
OPERATOR_DIR = "/etc/stoker/operator"
OPERATOR_TLS = [f"--tls-cert={OPERATOR_DIR}/operator.pem", f"--tls-key={OPERATOR_DIR}/operator.key",
                f"--tls-ca={OPERATOR_DIR}/ca.pem"]
OWN_TLS = ["--tls-cert=/etc/stoker/tls/coordinator.pem",
           "--tls-key=/etc/stoker/tls/coordinator.key", "--tls-ca=/etc/stoker/tls/ca.pem"]


def make_certs(cluster):
    """dev-certs.sh's files as the chart's Secret; an operator's copy for stoker-ctl status."""
    certs = os.path.join(cluster.dir, "certs")
    subprocess.run([os.path.join(dt.SOURCE_DIR, "scripts", "dev-certs.sh"), certs], check=True)
    cluster.secrets["stoker-tls"] = certs
    operator = os.path.join(cluster.dir, "operator")
    os.mkdir(operator)
    cluster.project_secret({"secretName": "stoker-tls", "items": [
        {"key": k, "path": k} for k in ("ca.pem", "operator.pem", "operator.key")]},
        operator, {"runAsUser": 10001, "fsGroup": 10001})
    return operator


def coordinator_status(cluster, port):
    out = cluster.exec("coordinator", "stoker-ctl", "status", "--json",
                       f"--coordinator=127.0.0.1:{port}", *OPERATOR_TLS).stdout
    return json.loads(out)


def worker_addresses(cluster, port):
    status = coordinator_status(cluster, port)
    return sorted(w["info"]["address"] for w in status.get("workers", []))


def delivered(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for line in f if line.endswith("\n"))


def scrape(cluster, url):
    """GET `url` from inside trainer1's container (python3 is in the trainer image)."""
    code = ("import urllib.request; "
            f"print(urllib.request.urlopen({url!r}, timeout=5).read().decode())")
    return cluster.exec("trainer1", "python3", "-c", code).stdout


def check_metrics(cluster, service, objects, worker_ip):
    """What the ServiceMonitor, PodMonitor and autoscaler read is served where they look."""
    coordinator_port = dt.find(objects, "Service", "-coordinator")["spec"]["ports"]
    metrics = next(p["port"] for p in coordinator_port if p["name"] == "metrics")
    worker = pod_spec(objects, "Deployment", "-worker")["containers"][0]
    worker_metrics = next(p["containerPort"] for p in worker["ports"] if p["name"] == "metrics")
    text = scrape(cluster, f"http://{service}:{metrics}/metrics")
    if not re.search(r'stoker_job_workers_desired\{[^}]*job_name="containers"', text):
        raise ChaosError("the coordinator's metrics lack stoker_job_workers_desired "
                         "for the job:\n" + text[:2000])
    text = scrape(cluster, f"http://{worker_ip}:{worker_metrics}/metrics")
    if "stoker_worker_batches_produced_total" not in text:
        raise ChaosError("the worker's metrics lack stoker_worker_batches_produced_total")


def wait_delivered(cluster, dump, n):
    """Until rank 0 has n batches; fails at once when trainer0 exits."""
    def reached():
        if delivered(dump) >= n:
            return True
        if not cluster.running("trainer0"):
            raise ChaosError(f"trainer0 exited before batch {n}:\n"
                             f"{cluster.logs('trainer0')[-3000:]}")
        return False
    wait_until(reached, 120, f"rank 0 to receive {n} batches")


class Chart:
    """The pods, ports and names of the rendered chart that the test starts and talks to."""

    def __init__(self, job):
        objects = dt.rendered_objects([VALUES], [f"trainer.args={json.dumps(job.flags())}"],
                                      namespace="stoker-e2e")
        self.objects = objects
        self.coordinator = pod_spec(objects, "StatefulSet", "-coordinator")
        self.worker = pod_spec(objects, "Deployment", "-worker")
        self.trainer = pod_spec(objects, "Job", "-trainer")
        self.hook = dt.find(objects, "Pod", "-test-coordinator-serving")["spec"]
        self.service = dt.find(objects, "Service", "-coordinator")["metadata"]["name"]
        self.coordinator_port = self.coordinator["containers"][0]["ports"][0]["containerPort"]
        self.worker_port = self.worker["containers"][0]["ports"][0]["containerPort"]
        self.grace_s = self.worker["terminationGracePeriodSeconds"]


def start_servers(cluster, chart):
    """Coordinator (checked by the helm test hook's pod) and three workers; their IPs."""
    require_images(cluster, [chart.coordinator, chart.worker, chart.trainer])
    operator = make_certs(cluster)
    cluster.start("coordinator", chart.coordinator, "coordinator", aliases=[chart.service],
                  mounts=[(operator, OPERATOR_DIR)])
    cluster.start("helm-test", chart.hook, "health")
    rc = cluster.wait("helm-test", timeout_s=90)
    if rc != 0:
        raise ChaosError(f"helm test hook exited {rc}:\n{cluster.logs('helm-test')}")
    print("helm test hook: coordinator SERVING")
    ips = {name: cluster.start(name, chart.worker, "worker") for name in WORKERS}
    want = sorted(f"{ip}:{chart.worker_port}" for ip in ips.values())
    wait_until(lambda: worker_addresses(cluster, chart.coordinator_port) == want, 60,
               f"workers registered at their container IPs {want}")
    for ip in ips.values():  # Each answers health across the network.
        cluster.exec("coordinator", "stoker-ctl", "health", f"--address={ip}:{chart.worker_port}",
                     *OWN_TLS)
    print(f"workers registered at {want}")
    return ips


def start_trainers(cluster, chart, job):
    """The trainer Job's ranks; their dump files on the host."""
    out_dir = os.path.join(cluster.dir, "out")
    os.mkdir(out_dir)
    os.chmod(out_dir, 0o777)  # The trainers run as uid 10001.
    dumps = {}
    for rank in range(job.world_size):
        dumps[rank] = os.path.join(out_dir, f"rank{rank}.jsonl")
        cluster.start(f"trainer{rank}", chart.trainer, "trainer",
                      field_values={
                          "metadata.annotations['batch.kubernetes.io/job-completion-index']":
                              str(rank)},
                      extra_args=[f"--dump-indices=/out/rank{rank}.jsonl"],
                      mounts=[(out_dir, "/out")])
    return dumps


def disconnect_and_reconnect(cluster, chart, ips, name):
    """Cuts `name` off until the coordinator drops it; it must register again once back."""
    want = sorted(f"{ip}:{chart.worker_port}" for ip in ips.values())
    cluster.disconnect(name)
    lost = f"{ips[name]}:{chart.worker_port}"
    wait_until(lambda: lost not in worker_addresses(cluster, chart.coordinator_port), 60,
               f"the coordinator to drop the disconnected {name}")
    cluster.reconnect(name)
    wait_until(lambda: worker_addresses(cluster, chart.coordinator_port) == want, 60,
               f"{name} to register again after reconnecting")


def stop_and_check_drain(cluster, chart, name):
    """podman stop: the worker must drain and exit 0 before the grace period's SIGKILL."""
    rc, elapsed = cluster.stop(name, chart.grace_s)
    log = cluster.logs(name)
    if rc != 0 or "drained: handing back" not in log:
        raise ChaosError(f"{name} exited {rc} after {elapsed:.1f}s (grace {chart.grace_s}s), "
                         f"without draining:\n{log[-2000:]}")
    return elapsed


def check_trainers(cluster, job, dumps):
    """Every rank exits 0 and every (epoch, rank) got each of its batches exactly once."""
    for rank in range(job.world_size):
        rc = cluster.wait(f"trainer{rank}", timeout_s=240)
        if rc != 0:
            raise ChaosError(f"trainer{rank} exited {rc}:\n"
                             f"{cluster.logs(f'trainer{rank}')[-3000:]}")
    records = []
    for path in dumps.values():
        with open(path) as f:
            records += [json.loads(line) for line in f if line.endswith("\n")]
    check_delivery(job, records)
    print(f"exactly once: {len(records)} batches over {job.epochs} epochs and "
          f"{job.world_size} ranks")


def main():
    podman = require_podman()
    job = Job("containers", num_samples=6144, batch_size=8, epochs=2, world_size=2, step_ms=25)
    chart = Chart(job)
    with PodmanCluster(podman, "stoker-e2e") as cluster:
        ips = start_servers(cluster, chart)
        dumps = start_trainers(cluster, chart, job)
        per_rank = job.batches_per_epoch * job.epochs // job.world_size

        wait_delivered(cluster, dumps[0], per_rank // 10)
        check_metrics(cluster, chart.service, chart.objects, ips["worker0"])
        print("metrics served: coordinator via its Service, worker via its pod IP")
        disconnect_and_reconnect(cluster, chart, ips, "worker1")
        at = delivered(dumps[0])
        print(f"worker1 disconnected and back at rank 0 batch {at} of {per_rank}")

        wait_delivered(cluster, dumps[0], at + per_rank // 10)
        at = delivered(dumps[0])
        if at >= per_rank or not cluster.running("trainer0"):
            raise ChaosError("the job ended before worker2 was stopped: make it longer")
        elapsed = stop_and_check_drain(cluster, chart, "worker2")
        print(f"worker2 stopped at rank 0 batch {at}: drained, exit 0 in {elapsed:.1f}s "
              f"(grace period {chart.grace_s}s)")

        check_trainers(cluster, job, dumps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
