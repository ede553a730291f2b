"""Real processes on a bucket (label s3): stoker-pack writes a dataset to the loopback S3 server;
a coordinator, two workers sharing a shard cache (--cache-dir) and a bench client run a 2-epoch
job from s3://; every batch arrives exactly once and every shard is fetched from the bucket once.
Then both workers are killed and restarted and a second job on the same data reads no shard
from the bucket at all: the cache survived the restart. The workers' /metrics show the hits.

usage: s3_processes_test.py BUILD_DIR SOURCE_DIR
"""

import os
import re
import subprocess
import socket
import sys
import tempfile
import urllib.request

BUILD, SOURCE = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "tests", "chaos"))
from chaos_harness import ChaosError, Cluster, Job, check_delivery, wait_until  # noqa: E402

KEY_ID, SECRET = "AKIAPROCESSTEST", "process-test-secret-value"


def start_server(tmp):
    port_file = os.path.join(tmp, "s3.port")
    log = open(os.path.join(tmp, "s3.out"), "ab")
    proc = subprocess.Popen(
        ["node", "--openssl-legacy-provider", os.path.join(SOURCE, "tests/s3/s3_test_server.js"),
         "--dir", os.path.join(tmp, "objects"), "--port-file", port_file,
         "--log", os.path.join(tmp, "requests.log"), "--key", f"{KEY_ID}:{SECRET}",
         "--bucket", "data"], stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: os.path.exists(port_file), 30, "the S3 test server")
    with open(port_file) as f:
        return proc, int(f.read())


def shard_gets(tmp):
    with open(os.path.join(tmp, "requests.log")) as f:
        return sum(1 for line in f if line.startswith("GET /data/ds/shard-"))


def run_job(cluster, name):
    job = Job(name, num_samples=64, batch_size=8, epochs=2, step_ms=5,
              pipeline="decode, center_crop(height=32, width=32)")
    tag = f"client-{name}"
    cluster.start_client(job, tag=tag, extra=["--manifest=s3://data/ds/manifest.json"])
    cluster.wait_clients(timeout_s=90)
    check_delivery(job, cluster.dump_records([tag]))


def metrics_served(port):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        return True
    except OSError:
        return False


def metric(port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    match = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else None


def main():
    tmp = tempfile.mkdtemp(prefix="stoker-s3-processes-")
    server, port = start_server(tmp)
    os.environ.update({"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": KEY_ID,
                       "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_EC2_METADATA_DISABLED": "true"})
    try:
        images = os.path.join(tmp, "images")
        subprocess.run([f"{BUILD}/tools/stoker-gen-images", f"--output={images}", "--classes=4",
                        "--per-class=16"], check=True, capture_output=True)
        packed = subprocess.run([f"{BUILD}/tools/stoker-pack", f"--input={images}",
                                 "--output=s3://data/ds", f"--data-root={images}",
                                 "--shard-mb=1"], check=True,
                                capture_output=True, text=True).stdout
        shards = int(re.search(r"into (\d+) shards", packed).group(1))
        with Cluster(BUILD) as cluster:
            cluster.start_coordinator(journal=False)
            cache = ["--cache-dir=" + os.path.join(tmp, "cache"), "--cache-bytes=1000000000"]
            ports = {"w1": 0, "w2": 0}

            def start_workers():
                for name in ports:
                    ports[name] = free_port()
                    cluster.start_worker(name, extra=cache + [f"--metrics-port={ports[name]}"])
                    # The metrics server starts after the port file is written.
                    wait_until(lambda: metrics_served(ports[name]), 30, f"{name}'s /metrics")

            start_workers()
            before = shard_gets(tmp)
            run_job(cluster, "first")
            fetched = shard_gets(tmp) - before
            if fetched != shards:  # One whole-shard fill each; epoch 2 reads the cache.
                raise ChaosError(f"first job: {fetched} shard GETs for {shards} shards")
            misses = sum(metric(ports[n], "stoker_shard_cache_misses_total") or 0 for n in ports)
            if misses != fetched:
                raise ChaosError(f"{misses} cache misses for {fetched} shard GETs")
            for name in ports:
                cluster.workers[name].kill()
                cluster.workers[name].wait(timeout=10)
            start_workers()
            before = shard_gets(tmp)
            run_job(cluster, "second")
            if shard_gets(tmp) != before:
                raise ChaosError(f"after the restart {shard_gets(tmp) - before} shard GETs")
            hits = sum(metric(ports[n], "stoker_shard_cache_hits_total") or 0 for n in ports)
            if hits < fetched:
                raise ChaosError(f"restarted workers: {hits} cache hits, expected >= {fetched}")
            logs = [os.path.join(cluster.dir, n) for n in os.listdir(cluster.dir)
                    if n.endswith(".log")] + [os.path.join(tmp, "s3.out")]
            for path in logs:
                with open(path, errors="replace") as f:
                    if SECRET in f.read():
                        raise ChaosError(f"the secret appeared in {path}")
        print(f"OK: {fetched} shards fetched once; after a restart {int(hits)} cache hits, 0 GETs")
        print("1 passed, 0 failed")
    finally:
        server.terminate()
        server.wait(timeout=10)
        subprocess.run(["rm", "-rf", tmp], check=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    main()
