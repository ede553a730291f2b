"""Issue 26, item 4: each verdict of `stoker-ctl report` provoked with real processes.

    python3 footprint_test.py BUILD_DIR SCENARIO

Each scenario starts a coordinator, workers and one bench client (rank 0) on loopback with mutual
TLS (tests/chaos/chaos_harness.py), makes one part of the data path the bottleneck by a wide
margin, runs `stoker-ctl report --json` over a few seconds of the running job and checks that
rank 0's verdict is the expected one (and so none of the four others):

    workers  one single-threaded worker for a heavy blur pipeline
    network  the worker's stream through a proxy that holds the link to 2 MB/s (--link-gbps says so)
    storage  the dataset's shards served over HTTP by a server that sleeps 50 ms per request
    trainer  zstd-compressed, mostly constant float32 batches into a client whose receive
             threads (all but the consumer's) are capped at 5% of a CPU (a cgroup v1 group;
             needs root); --link-gbps says the link has room
    none     a cheap pipeline, two workers and a consumer step of 300 ms

No timing is asserted beyond the verdict. Exit 0 = pass; the report is printed either way.
"""

import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "chaos"))
from chaos_harness import ChaosError, Cluster, Job, scenario_main, wait_until  # noqa: E402

BIN = None
TRACE_SECONDS = 4
LINK_BYTES_PER_SECOND = 2_000_000
SHARD_REQUEST_DELAY_S = 0.05


class FootprintJob(Job):
    """A bench client's job with the image size and client flags of a scenario."""

    def __init__(self, name, size=32, extra=(), **kwargs):
        super().__init__(name, **kwargs)
        self.size = size
        self.extra = list(extra)

    def flags(self):
        mine = [f"--height={self.size}", f"--width={self.size}"] + self.extra
        overridden = {flag.split("=")[0] for flag in mine}
        return [f for f in super().flags() if f.split("=")[0] not in overridden] + mine


def report(cluster, job, extra=(), seconds=TRACE_SECONDS):
    """Runs `stoker-ctl report --json` on the job; returns rank 0's entry (printed)."""
    argv = [os.path.join(BIN, "tools/stoker-ctl"), "report",
            f"--coordinator={cluster.coordinator_address}", f"--job={job.name}",
            f"--seconds={seconds}", "--json", "--timeout-ms=20000"]
    argv += cluster.tls_flags("operator") + list(extra)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    print(done.stdout + done.stderr)
    if done.returncode != 0:
        raise ChaosError(f"stoker-ctl report exited with {done.returncode}")
    ranks = {entry["rank"]: entry for entry in json.loads(done.stdout)["ranks"]}
    if 0 not in ranks:
        raise ChaosError(f"no rank 0 in the report: {sorted(ranks)}")
    return ranks[0]


def expect_verdict(entry, want):
    if entry["verdict"] != want:
        raise ChaosError(f"verdict {entry['verdict']!r}, want {want!r}: {entry['recommendation']}")


def run(want, job, workers=1, worker_extra=(), report_extra=(), before_workers=None,
        once_delivering=None, seconds=TRACE_SECONDS):
    with Cluster(BIN) as cluster:
        cluster.start_coordinator(journal=False)
        client_extra = before_workers(cluster) if before_workers else []
        for i in range(workers):
            cluster.start_worker(f"worker{i}", extra=worker_extra)
        proc = cluster.start_client(job, extra=client_extra)

        def delivering():
            if proc.poll() is not None:
                raise ChaosError(f"the client exited with {proc.returncode} before 3 batches")
            return cluster.delivered("client0") >= 3
        wait_until(delivering, 60, "the client to receive 3 batches")
        if once_delivering:
            once_delivering(cluster, proc)
        expect_verdict(report(cluster, job, report_extra, seconds), want)


def workers():
    job = FootprintJob("fp-workers", size=96, num_samples=100_000, batch_size=8, step_ms=1,
                       pipeline="to_float, gaussian_blur(ksize=21)*10", extra=["--dtype=uint8"])
    run("workers", job, workers=1, worker_extra=["--threads=1"])


def none():
    job = FootprintJob("fp-none", size=32, num_samples=100_000, batch_size=8, step_ms=300,
                       pipeline="to_float")
    run("none", job, workers=2)


class ShapedLink:
    """A TCP proxy on loopback whose worker-to-client direction, over all its connections
    together, carries at most `rate` bytes per second (a token bucket of 64 KiB)."""

    def __init__(self, rate):
        self.rate = rate
        self.target_port = None  # a function: the worker's port, known once it serves
        self.lock = threading.Lock()
        self.next_free = time.monotonic()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port()))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _wait_for(self, size):
        with self.lock:
            now = time.monotonic()
            self.next_free = max(self.next_free, now - 65536 / self.rate) + size / self.rate
            delay = self.next_free - now
        if delay > 0:
            time.sleep(delay)

    def _pump(self, src, dst, shaped):
        try:
            while True:
                data = src.recv(16384)
                if not data:
                    break
                if shaped:
                    self._wait_for(len(data))
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def network():
    link = ShapedLink(LINK_BYTES_PER_SECOND)
    job = FootprintJob("fp-network", size=64, num_samples=100_000, batch_size=8, step_ms=1,
                       pipeline="to_float", extra=["--prefetch-mb=4"])

    def aim_the_proxy(cluster):
        link.target_port = lambda: int(cluster.worker_address("worker0").rsplit(":", 1)[1])
        return []

    gbps = LINK_BYTES_PER_SECOND * 8 / 1e9
    try:
        run("network", job, workers=1,
            worker_extra=["--threads=2", f"--advertise-address=127.0.0.1:{link.port}"],
            report_extra=[f"--link-gbps={gbps}"], before_workers=aim_the_proxy)
    finally:
        link.listener.close()


class SlowShardServer:
    """Serves a folder over HTTP/1.1 on loopback (HEAD, GET, single byte ranges: what the
    workers' HTTP reader asks) and sleeps `delay_s` before answering each request: a shard
    store far away."""

    def __init__(self, root, delay_s):
        root_dir = root

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _body(self):
                path = os.path.join(root_dir, os.path.basename(self.path))
                if not os.path.isfile(path):
                    self.send_error(404)
                    return None
                with open(path, "rb") as f:
                    data = f.read()
                match = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
                if match is None:
                    self.send_response(200)
                    return data
                first, last = int(match.group(1)), int(match.group(2))
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
                return data[first:last + 1]

            def do_HEAD(self):
                time.sleep(delay_s)
                body = self._body()
                if body is not None:
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()

            def do_GET(self):
                time.sleep(delay_s)
                body = self._body()
                if body is not None:
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    try:
                        self.wfile.write(body)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # a worker that stopped reading: the test is ending

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def storage():
    job = FootprintJob("fp-storage", num_samples=2048, batch_size=8, step_ms=1,
                       pipeline="decode, resize(height=32, width=32), to_float")
    servers = []

    def serve_shards_slowly(cluster):
        images = os.path.join(cluster.dir, "images")
        shards = os.path.join(cluster.dir, "shards")
        subprocess.run([os.path.join(BIN, "tools/stoker-gen-images"), f"--output={images}",
                        "--classes=4", "--per-class=512", "--width=64", "--height=64",
                        "--threads=1"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(BIN, "tools/stoker-pack"), f"--input={images}",
                        f"--output={shards}", f"--data-root={images}", "--threads=1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        servers.append(SlowShardServer(shards, SHARD_REQUEST_DELAY_S))
        return [f"--manifest=http://127.0.0.1:{servers[0].port}/manifest.json"]

    try:
        run("storage", job, workers=1, worker_extra=["--threads=2"],
            before_workers=serve_shards_slowly)
    finally:
        for server in servers:
            server.stop()


class CpuCap:
    """A cgroup v1 cpu group holding the threads put in it to `share` of one CPU (v1, because it
    moves single threads). Needs root: raises (the test fails, loudly) when none can be made."""

    def __init__(self, share):
        period = 100_000
        self.path = f"/sys/fs/cgroup/cpu/stoker-footprint-{os.getpid()}"
        try:
            os.mkdir(self.path)
            self._write("cpu.cfs_period_us", str(period))
            self._write("cpu.cfs_quota_us", str(int(period * share)))
        except OSError as e:
            raise ChaosError(f"the trainer scenario caps the client's receive threads with a "
                             f"cgroup v1 cpu group and could not make one (needs root and "
                             f"/sys/fs/cgroup/cpu): {e}")

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def add_threads_but_main(self, pid):
        """Caps every thread of process `pid` but its main one (the consumer's loop, whose step
        must keep its length): the receive path's threads (cgroup v1 moves single threads)."""
        for tid in os.listdir(f"/proc/{pid}/task"):
            if int(tid) != pid:
                self._write("tasks", tid)

    def remove(self):
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def trainer():
    cap = CpuCap(0.05)
    # 32x32 pixels padded to 224x224 float32: 98% constant, so the wire carries little (TLS and
    # gRPC's reading cost little) and the receive path's time is the callback's decompression.
    job = FootprintJob("fp-trainer", size=32, num_samples=100_000, batch_size=8, step_ms=1,
                       pipeline="pad(padding=[96]), to_float",
                       extra=["--dtype=float32", "--compression=zstd", "--prefetch-mb=64"])
    try:
        run("trainer", job, workers=4, worker_extra=["--threads=1"],
            report_extra=["--link-gbps=100"],
            once_delivering=lambda _c, proc: cap.add_threads_but_main(proc.pid),
            seconds=2 * TRACE_SECONDS)  # most of the client's 10-second rates capped
    finally:
        cap.remove()


SCENARIOS = {f.__name__: f for f in [workers, network, storage, trainer, none]}


def run_scenario(build_dir, name):
    global BIN
    BIN = build_dir
    SCENARIOS[name]()


if __name__ == "__main__":
    sys.exit(scenario_main(run_scenario, SCENARIOS))
