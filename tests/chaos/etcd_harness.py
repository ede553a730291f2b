"""A real etcd cluster on loopback for the chaos tests (never a fake): the Python twin of
tests/testing/etcd_cluster.h.

EtcdCluster(members=3) starts 1 or 3 members of /usr/bin/etcd with free client and peer ports,
data in a temporary directory and short raft timers, and waits (bounded) until every member
answers with a leader known. kill(i) (SIGKILL), stop(i)/resume(i) (SIGSTOP/SIGCONT),
restart(i) (same data and ports), leader_index() (from `etcdctl endpoint status`). The `with`
block kills and reaps every member it started, on failure too.

    with EtcdCluster(members=3) as etcd:
        state_flag = f"--state=etcd://{','.join(etcd.endpoints())}/stoker"
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from chaos_harness import ChaosError, free_port

ETCD = "/usr/bin/etcd"
ETCDCTL = "/usr/bin/etcdctl"
# Short raft timers: an election after a killed member takes well under a second, and etcd's
# shortest lease TTL (1.5 election timeouts) stays under the coordinator's 2 s default.
HEARTBEAT_MS = 50
ELECTION_MS = 500


class EtcdCluster:
    def __init__(self, members=3, quota_backend_bytes=0, extra_args=()):
        for tool in (ETCD, ETCDCTL):
            if not os.access(tool, os.X_OK):
                raise ChaosError(f"{tool} is missing: the etcd tests need a real etcd "
                                 "(scripts/install-deps.sh --etcd)")
        if members not in (1, 3):
            raise ValueError("members: want 1 or 3")
        self.quota_backend_bytes = quota_backend_bytes
        self.extra_args = list(extra_args)  # more etcd flags (a benchmark's diagnostics)
        self.dir = tempfile.mkdtemp(prefix="stoker-etcd-")
        self.names = [f"m{i}" for i in range(members)]
        self.client_ports = [free_port() for _ in range(members)]
        self.peer_ports = [free_port() for _ in range(members)]
        self.initial_cluster = ",".join(
            f"{name}=http://127.0.0.1:{port}" for name, port in zip(self.names, self.peer_ports))
        self.procs = [None] * members
        self.paused = [False] * members
        self.ids = [None] * members
        try:
            for i in range(members):
                self._spawn(i)
            for i in range(members):
                self._await_answer(i)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def endpoints(self):
        return [self.endpoint(i) for i in range(len(self.names))]

    def endpoint(self, i):
        return f"127.0.0.1:{self.client_ports[i]}"

    def log(self, i):
        with open(os.path.join(self.dir, self.names[i] + ".log"), errors="replace") as log:
            return log.read()[-4000:]

    def _spawn(self, i):
        client_url = f"http://127.0.0.1:{self.client_ports[i]}"
        peer_url = f"http://127.0.0.1:{self.peer_ports[i]}"
        argv = [ETCD, f"--name={self.names[i]}",
                f"--data-dir={os.path.join(self.dir, self.names[i] + '.data')}",
                f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster={self.initial_cluster}", "--initial-cluster-state=new",
                f"--initial-cluster-token={self.dir}",
                f"--heartbeat-interval={HEARTBEAT_MS}", f"--election-timeout={ELECTION_MS}",
                f"--quota-backend-bytes={self.quota_backend_bytes}",
                "--logger=zap", "--log-outputs=stderr", "--log-level=warn"] + self.extra_args
        with open(os.path.join(self.dir, self.names[i] + ".log"), "ab") as log:
            self.procs[i] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.paused[i] = False

    def _status(self, i):
        """etcdctl's endpoint status of member i as a dict, or None when it does not answer."""
        try:
            out = subprocess.run(
                [ETCDCTL, f"--endpoints={self.endpoint(i)}", "--command-timeout=1s",
                 "endpoint", "status", "-w", "json"],
                env=dict(os.environ, ETCDCTL_API="3"), capture_output=True, timeout=5)
        except subprocess.TimeoutExpired:
            return None
        if out.returncode != 0:
            return None
        return json.loads(out.stdout)[0]["Status"]

    def _await_answer(self, i, timeout_s=30):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.procs[i].poll() is not None:
                raise ChaosError(f"etcd member {self.names[i]} exited:\n{self.log(i)}")
            status = self._status(i)
            if status is not None and status.get("leader"):
                self.ids[i] = status["header"]["member_id"]
                return
            time.sleep(0.05)
        raise ChaosError(f"etcd member {self.names[i]} did not answer within {timeout_s}s:\n"
                         f"{self.log(i)}")

    def _running(self, i):
        if self.procs[i] is None or self.procs[i].poll() is not None:
            raise ChaosError(f"etcd member {self.names[i]} is not running")
        return self.procs[i]

    def kill(self, i):
        proc = self._running(i)
        proc.kill()
        proc.wait(timeout=10)

    def stop(self, i):
        self._running(i).send_signal(signal.SIGSTOP)
        self.paused[i] = True

    def resume(self, i):
        self._running(i).send_signal(signal.SIGCONT)
        self.paused[i] = False

    def restart(self, i):
        """Starts a killed member again on its data directory and ports."""
        if self.procs[i] is not None and self.procs[i].poll() is None:
            raise ChaosError(f"etcd member {self.names[i]} is running: kill it first")
        self._spawn(i)
        self._await_answer(i)

    def leader_index(self, timeout_s=10):
        """The member raft elected, as a running member reports it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for i in range(len(self.names)):
                if self.procs[i].poll() is not None or self.paused[i]:
                    continue
                status = self._status(i)
                if status is None or not status.get("leader"):
                    continue
                for j, member_id in enumerate(self.ids):
                    if (member_id == status["leader"] and self.procs[j].poll() is None
                            and not self.paused[j]):
                        return j
            time.sleep(0.05)
        raise ChaosError(f"no running etcd member knows a running leader within {timeout_s}s")
