"""LocalCluster: a coordinator and workers as real processes on 127.0.0.1, for tests, examples
and trying things out. Every process it starts is stopped when the `with` block ends (SIGTERM,
then SIGKILL after a few seconds); every wait is bounded.

    with stoker.LocalCluster("build", workers=2) as cluster:
        loader = stoker.Loader(coordinator=cluster.address, dataset=1024, ...)

`build_dir` is the CMake build directory (binaries at coordinator/stoker-coordinator and
worker/stoker-worker) or a directory holding both binaries (an installed bin/). `data_roots` are
the processes' --data-root flags (where datasets may be read from); the default, ("/",), allows
every path and URL, which suits a local trial only.
"""

import os
import shutil
import subprocess
import tempfile
import time

from .options import TlsOptions


def _find_binary(build_dir, subdir, name):
    for candidate in (os.path.join(build_dir, subdir, name), os.path.join(build_dir, name)):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"{name}: not found under {build_dir} nor on PATH")


class LocalCluster:
    def __init__(self, build_dir, workers=1, worker_threads=1, start_timeout_s=30, tls_dir=None,
                 data_roots=("/",), worker_flags=()):
        # worker_flags: more stoker-worker flags, e.g. ["--decoded-cache-bytes=..."].
        # tls_dir: certificates laid out as scripts/dev-certs.sh makes them (mutual TLS);
        # None: plaintext (--insecure). tls is the matching stoker.TlsOptions, loader_tls the
        # Loader argument holding it ({"tls": tls}).
        self.coordinator_binary = _find_binary(build_dir, "coordinator", "stoker-coordinator")
        self.worker_binary = _find_binary(build_dir, "worker", "stoker-worker")
        self._root_flags = [f"--data-root={root}" for root in data_roots]
        self._worker_flags = list(worker_flags)
        self.num_workers = workers
        self.worker_threads = worker_threads
        self.start_timeout_s = start_timeout_s
        self.dir = None
        self.address = None
        self.worker_addresses = []
        self._procs = []
        if tls_dir is None:
            self._tls_flags = lambda role: ["--insecure"]
            self.tls = TlsOptions(insecure=True)
        else:
            self._tls_flags = lambda role: [f"--tls-cert={tls_dir}/{role}.pem",
                                            f"--tls-key={tls_dir}/{role}.key",
                                            f"--tls-ca={tls_dir}/ca.pem"]
            self.tls = TlsOptions(cert_file=f"{tls_dir}/trainer.pem",
                                  key_file=f"{tls_dir}/trainer.key", ca_file=f"{tls_dir}/ca.pem")
        self.loader_tls = {"tls": self.tls}

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="stoker-local-")
        try:
            port = self._start("coordinator", [self.coordinator_binary, "--listen=127.0.0.1:0"]
                                + self._tls_flags("coordinator") + self._root_flags)
            self.address = f"127.0.0.1:{port}"
            for i in range(self.num_workers):
                port = self._start(f"worker{i}", [
                    self.worker_binary, f"--coordinator={self.address}", "--listen=127.0.0.1:0",
                    f"--threads={self.worker_threads}"] + self._tls_flags("worker")
                    + self._root_flags + self._worker_flags)
                self.worker_addresses.append(f"127.0.0.1:{port}")
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _start(self, name, argv):
        port_file = os.path.join(self.dir, f"{name}.port")
        log = open(os.path.join(self.dir, f"{name}.log"), "ab")
        proc = subprocess.Popen(argv + [f"--port-file={port_file}"], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        self._procs.append(proc)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode} before serving:\n"
                                   + self.log_tail(name))
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                with open(port_file) as f:
                    text = f.read().strip()
                if text:
                    return int(text)
            time.sleep(0.02)
        raise TimeoutError(f"{name} did not serve within {self.start_timeout_s}s")

    def kill_worker(self, i):
        """Kills worker `i` with SIGKILL (no drain, no last heartbeat), as a crash would: for
        tests of the delivery guarantee."""
        proc = self._procs[1 + i]  # The coordinator is first.
        proc.kill()
        proc.wait(timeout=10)

    def log_tail(self, name, chars=3000):
        path = os.path.join(self.dir, f"{name}.log")
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()[-chars:]

    def stop(self):
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 5
        for proc in self._procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._procs = []
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
