"""Chaos-test harness: real stoker processes on 127.0.0.1, killed and restarted on purpose.

Cluster starts a coordinator (optionally on a journal), workers and bench clients (each with
--dump-indices), and stops every process it started when the `with` block ends, on failure too.
Every wait is bounded. check_delivery() compares the clients' dumps with the epoch plan: with
--shuffle=none and num_samples divisible by batch_size * world_size, global batch g holds samples
[g*B, (g+1)*B) and belongs to rank g % R; every (epoch, rank) must receive each of its batches
exactly once, with exactly those samples.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


NGINX = "/usr/sbin/nginx"
DEV_CERTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "scripts", "dev-certs.sh")
NGINX_CONF = """daemon off;
master_process off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {root};
  }}
}}
"""


class ChaosError(AssertionError):
    pass


def wait_until(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise ChaosError(f"timed out after {timeout_s}s waiting for {what}")


def free_port():
    """A TCP port free on loopback now (for a process's --metrics-port)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def metrics_page(port):
    """The text of the /metrics page a process serves on loopback `port`."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
        return page.read().decode()


class Job:
    """The bench client's job flags; small 32x32 images and a cheap pipeline."""

    def __init__(self, name, num_samples=384, batch_size=8, epochs=1, world_size=1,
                 step_ms=15, pipeline="to_float", shuffle="none"):
        self.name = name
        self.num_samples = num_samples
        self.batch_size = batch_size
        self.epochs = epochs
        self.world_size = world_size
        self.step_ms = step_ms
        self.pipeline = pipeline
        self.shuffle = shuffle

    @property
    def batches_per_epoch(self):
        return self.num_samples // self.batch_size

    def flags(self):
        return [f"--job={self.name}", f"--num-samples={self.num_samples}", "--height=32",
                "--width=32", f"--batch-size={self.batch_size}", f"--epochs={self.epochs}",
                f"--world-size={self.world_size}", f"--shuffle={self.shuffle}",
                f"--pipeline={self.pipeline}",
                f"--step-ms={self.step_ms}", "--prefetch-mb=1"]


class Cluster:
    def __init__(self, bin_dir, heartbeat_ms=200, worker_timeout_ms=1000, tenants=()):
        self.bin_dir = bin_dir
        self.heartbeat_ms = heartbeat_ms
        self.worker_timeout_ms = worker_timeout_ms
        self.dir = tempfile.mkdtemp(prefix="stoker-chaos-")
        self.procs = []  # every process started, to stop at the end
        self.coordinator = None
        self.coordinator_port = 0
        self.journal = os.path.join(self.dir, "coordinator.journal")
        # Every process runs mutual TLS with throwaway certificates (the default path); with
        # `tenants`, also a trainer certificate per tenant (tls_flags("trainer", tenant)).
        self.certs = os.path.join(self.dir, "certs")
        subprocess.run([DEV_CERTS, self.certs] +
                       ([f"--tenants={','.join(tenants)}"] if tenants else []), check=True)
        self.workers = {}
        self.clients = {}
        # Replicated coordinators (start_replicas): their fixed ports, processes and state.
        self.replica_ports = []
        self.replicas = []
        self.replica_state = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if exc[0] is not None:
            self.dump_logs()
        shutil.rmtree(self.dir, ignore_errors=True)  # logs were dumped above on failure
        return False

    def dump_logs(self):
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".log"):
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    tail = f.read()[-3000:]
                print(f"===== {name} (tail) =====\n{tail}")

    def tls_flags(self, role, tenant=None):
        """A `role`'s certificate flags; with `tenant`, that tenant's trainer's."""
        c, name = self.certs, (f"{role}-{tenant}" if tenant else role)
        return [f"--tls-cert={c}/{name}.pem", f"--tls-key={c}/{name}.key", f"--tls-ca={c}/ca.pem"]

    @staticmethod
    def data_root_flags(extra):
        """--data-root=/ (datasets anywhere: the tests' temporary folders, nginx, the loopback S3)
        unless `extra` gives roots of its own."""
        if any(arg.startswith("--data-root") for arg in extra):
            return []
        return ["--data-root=/"]

    def _spawn(self, name, argv):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(proc)
        return proc

    def _wait_port(self, port_file, proc, what):
        def ready():
            if proc.poll() is not None:
                raise ChaosError(f"{what} exited with {proc.returncode} before serving")
            return os.path.exists(port_file) and os.path.getsize(port_file) > 0
        wait_until(ready, 30, f"{what} to serve")
        with open(port_file) as f:
            return int(f.read().strip())

    # --- coordinator ---
    def start_coordinator(self, journal=True, expect_fail=False, extra=()):
        port_file = os.path.join(self.dir, "coordinator.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        argv = [os.path.join(self.bin_dir, "coordinator/stoker-coordinator"),
                f"--listen=127.0.0.1:{self.coordinator_port}", f"--port-file={port_file}",
                f"--heartbeat-interval-ms={self.heartbeat_ms}",
                f"--worker-timeout-ms={self.worker_timeout_ms}", "--lease-duration-ms=5000"]
        if journal:
            argv.append(f"--journal={self.journal}")
        argv += self.tls_flags("coordinator") + self.data_root_flags(extra) + list(extra)
        self.coordinator = self._spawn("coordinator", argv)
        if expect_fail:
            try:
                self.coordinator.wait(timeout=20)
            except subprocess.TimeoutExpired:
                raise ChaosError("coordinator started on a corrupt journal")
            return self.coordinator.returncode
        port = self._wait_port(port_file, self.coordinator, "coordinator")
        self.coordinator_port = port
        return port

    def kill_coordinator(self, sig=signal.SIGKILL):
        self.coordinator.send_signal(sig)
        self.coordinator.wait(timeout=20)

    @property
    def coordinator_address(self):
        """What workers and clients are given: every replica's address once there are replicas."""
        if self.replica_ports:
            return ",".join(f"127.0.0.1:{port}" for port in self.replica_ports)
        return f"127.0.0.1:{self.coordinator_port}"

    # --- replicated coordinators (--state=etcd://...) ---
    def start_replicas(self, count, state, extra=()):
        """`count` coordinators sharing `state`, each on a port of its own that a restart keeps,
        so that the address list workers and clients are given stays true."""
        self.replica_state = state
        self.replica_ports = [free_port() for _ in range(count)]
        self.replica_metrics_ports = [free_port() for _ in range(count)]
        self.replicas = [None] * count
        self.replica_extra = list(extra)
        for i in range(count):
            self.start_replica(i)

    def start_replica(self, i):
        name = f"coordinator-{i}"
        port_file = os.path.join(self.dir, f"{name}.port")
        if os.path.exists(port_file):
            os.remove(port_file)
        argv = [os.path.join(self.bin_dir, "coordinator/stoker-coordinator"),
                f"--listen=127.0.0.1:{self.replica_ports[i]}", f"--port-file={port_file}",
                f"--heartbeat-interval-ms={self.heartbeat_ms}",
                f"--worker-timeout-ms={self.worker_timeout_ms}", "--lease-duration-ms=5000",
                f"--state={self.replica_state}",
                f"--metrics-port={self.replica_metrics_ports[i]}", "--metrics-address=127.0.0.1"]
        argv += self.tls_flags("coordinator") + self.data_root_flags(self.replica_extra) + \
            self.replica_extra
        self.replicas[i] = self._spawn(name, argv)
        self._wait_port(port_file, self.replicas[i], name)
        return self.replicas[i]

    def replica_index(self, address):
        """The replica serving at `address` (host:port)."""
        return self.replica_ports.index(int(address.rsplit(":", 1)[1]))

    # --- workers ---
    def start_worker(self, name, drain_deadline_ms=None, extra=()):
        port_file = os.path.join(self.dir, f"{name}.port")
        if os.path.exists(port_file):  # A restart: wait for the new process's port, not the old.
            os.remove(port_file)
        argv = [os.path.join(self.bin_dir, "worker/stoker-worker"),
                f"--coordinator={self.coordinator_address}", "--listen=127.0.0.1:0",
                "--threads=1", f"--port-file={port_file}", "--rpc-timeout-ms=2000",
                "--register-attempts=100"]
        if drain_deadline_ms is not None:
            argv.append(f"--drain-deadline-ms={drain_deadline_ms}")
        proc = self._spawn(name, argv + self.tls_flags("worker") + self.data_root_flags(extra)
                           + list(extra))
        self._wait_port(port_file, proc, name)
        self.workers[name] = proc
        return proc

    # --- an HTTP dataset server (nginx, as data/testing/nginx_server.cc runs it) ---
    def start_nginx(self, root, port=0):
        """Serves `root` on 127.0.0.1:port (a free port when 0); returns the port."""
        if not os.access(NGINX, os.X_OK):
            raise ChaosError(f"{NGINX} is not installed (scripts/install-deps.sh)")
        if port == 0:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
        prefix = os.path.join(self.dir, "nginx")
        os.makedirs(prefix, exist_ok=True)
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(dir=prefix, port=port, root=root))
        self.nginx = self._spawn("nginx", [NGINX, "-p", prefix + "/", "-c", conf,
                                           "-e", os.path.join(prefix, "error.log")])

        def answers():
            if self.nginx.poll() is not None:
                raise ChaosError(f"nginx exited with {self.nginx.returncode}")
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", port)) == 0
        wait_until(answers, 10, "nginx to serve")
        return port

    def stop_nginx(self):
        self.nginx.terminate()
        self.nginx.wait(timeout=10)

    # --- clients ---
    def start_client(self, job, rank=0, tag=None, extra=(), tenant=None):
        tag = tag or f"client{rank}"
        dump = os.path.join(self.dir, f"{tag}.jsonl")
        argv = [os.path.join(self.bin_dir, "tools/stoker-bench-client"),
                f"--coordinator={self.coordinator_address}", f"--rank={rank}",
                f"--dump-indices={dump}"] + job.flags() + self.tls_flags("trainer", tenant) + \
            list(extra)
        proc = self._spawn(tag, argv)
        self.clients[tag] = (proc, dump)
        return proc

    def worker_address(self, name):
        with open(os.path.join(self.dir, f"{name}.port")) as f:
            return f"127.0.0.1:{int(f.read().strip())}"

    def rss_kib(self, name):
        """Resident memory of a started worker or the coordinator (VmRSS, KiB)."""
        proc = self.coordinator if name == "coordinator" else self.workers[name]
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise ChaosError(f"{name} has no VmRSS")

    def delivered(self, tag):
        dump = self.clients[tag][1]
        if not os.path.exists(dump):
            return 0
        with open(dump) as f:
            return sum(1 for line in f if line.endswith("\n"))

    def wait_delivered(self, tag, n, timeout_s=60):
        wait_until(lambda: self.delivered(tag) >= n, timeout_s, f"{tag} to receive {n} batches")

    def wait_clients(self, timeout_s=90):
        for tag, (proc, _) in self.clients.items():
            try:
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise ChaosError(f"{tag} did not finish within {timeout_s}s")
            if rc != 0:
                raise ChaosError(f"{tag} exited with {rc}")

    def dump_records(self, tags=None):
        records = []
        for tag in tags or self.clients:
            with open(self.clients[tag][1]) as f:
                for line in f:
                    if line.endswith("\n"):
                        records.append(json.loads(line))
        return records


def check_delivery(job, records):
    """Raises ChaosError unless every (epoch, rank) got each of its batches exactly once."""
    B, R = job.batch_size, job.world_size
    if job.num_samples % (B * R) != 0:
        raise ValueError("choose num_samples divisible by batch_size * world_size")
    got = {}
    for rec in records:
        key = (rec["epoch"], rec["rank"])
        g = rec["batch"]
        if g % R != rec["rank"]:
            raise ChaosError(f"batch {g} reached rank {rec['rank']}")
        if rec["samples"] != list(range(g * B, (g + 1) * B)):
            raise ChaosError(f"batch {g} of epoch {rec['epoch']} has samples {rec['samples']}")
        got.setdefault(key, []).append(g)
    for epoch in range(job.epochs):
        for rank in range(R):
            want = list(range(rank, job.batches_per_epoch, R))
            have = sorted(got.get((epoch, rank), []))
            if have != want:
                missing = sorted(set(want) - set(have))
                dups = sorted({g for g in have if have.count(g) > 1})
                raise ChaosError(f"epoch {epoch} rank {rank}: {len(have)} batches, want "
                                 f"{len(want)}; missing {missing[:20]} duplicated {dups[:20]}")
    extra = set(got) - {(e, r) for e in range(job.epochs) for r in range(R)}
    if extra:
        raise ChaosError(f"batches of unexpected (epoch, rank): {sorted(extra)}")


def read_token_count(path):
    """Batches covered by a --token-file checkpoint (0 when none was written yet)."""
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return int(f.readline().strip() or 0)


def check_exactly_once(batches_per_epoch, batch_size, num_samples, epochs, records,
                       max_pads=0):
    """Resumed runs: per epoch, across all ranks, every global batch of the plan exactly once.

    `records` are dump records of every incarnation (killed runs cut at their last checkpoint),
    each with an extra "world" key: the world size of the run that delivered it, and "resumed":
    the epoch that run resumed at (or None). Batches past the plan (pads added by a resume with
    another world size) may appear, each at most once and fewer than max_pads per epoch; every
    batch must hold the samples at positions [g*B, (g+1)*B) of the order, wrapping around (the
    checkers' jobs use --shuffle=none). In epochs a run did not resume at, batch g must reach
    rank g % world.
    """
    B, N = batch_size, num_samples
    seen = {}
    for rec in records:
        g, epoch = rec["batch"], rec["epoch"]
        if rec["samples"] != [(g * B + i) % N for i in range(B)]:
            raise ChaosError(f"batch {g} of epoch {epoch} has samples {rec['samples']}")
        if rec.get("resumed") != epoch and g % rec["world"] != rec["rank"]:
            raise ChaosError(f"batch {g} of epoch {epoch} reached rank {rec['rank']} of "
                             f"{rec['world']}")
        seen.setdefault(epoch, []).append(g)
    for epoch in range(epochs):
        have = seen.get(epoch, [])
        dups = sorted({g for g in have if have.count(g) > 1})
        missing = sorted(set(range(batches_per_epoch)) - set(have))
        pads = sorted(g for g in set(have) if g >= batches_per_epoch)
        if dups or missing or len(pads) > max_pads:
            raise ChaosError(f"epoch {epoch}: {len(have)} batches; missing {missing[:20]} "
                             f"duplicated {dups[:20]} pads {pads}")
    extra = set(seen) - set(range(epochs))
    if extra:
        raise ChaosError(f"batches of unexpected epochs: {sorted(extra)}")


def scenario_main(run, names, label=lambda name: name):
    """`PROG BUILD_DIR NAME` for a chaos-style test script: run(BUILD_DIR, NAME) for NAME in
    `names`, then one PASS or FAIL line naming label(NAME). Returns the exit code: 0 pass,
    1 fail (ChaosError), 2 usage."""
    if len(sys.argv) != 3 or sys.argv[2] not in names:
        print(f"usage: {sys.argv[0]} BUILD_DIR {{{'|'.join(names)}}}", file=sys.stderr)
        return 2
    build_dir, name = sys.argv[1], sys.argv[2]
    start = time.monotonic()
    try:
        run(build_dir, name)
    except ChaosError as e:
        print(f"FAIL {label(name)}: {e}")
        return 1
    print(f"PASS {label(name)} in {time.monotonic() - start:.1f}s")
    return 0
