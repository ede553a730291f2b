#!/usr/bin/python3
"""Debian's real Prometheus scrapes a running local cluster (CTest label `prometheus`).

Starts a coordinator, two workers and a bench client on loopback, each serving /metrics, and a
Prometheus server with a generated config scraping them every second. Passes when Prometheus
reports every target up, the workers' produced-batches counter rose between two queries,
`promtool check metrics` accepts every binary's output, every stoker_ metric served is
documented in docs/metrics.md, and `stoker-ctl status` and `advise` (text and --json) show the
job with the advisor's verdict. Every wait is bounded; every process is stopped on the way out.

usage: prometheus_scrape_test.py BUILD_DIR SOURCE_DIR
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

DEADLINE_SECONDS = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=2.0):
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return reply.read().decode()


def wait_until(what, predicate, deadline):
    """Polls predicate() every 200 ms until it returns a truthy value or the deadline passes."""
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # Not up yet: connection refused, empty reply...
            last_error = error
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last error: {last_error})")


class Cluster:
    def __init__(self, build, tmp):
        self.build, self.tmp, self.procs = build, tmp, []

    def start(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".log"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)))

    def port_file(self, name, deadline):
        path = os.path.join(self.tmp, name + ".port")
        return int(wait_until(f"{name} port file", lambda: open(path).read().strip(), deadline))

    def stop(self):
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, proc in reversed(self.procs):
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def logs(self):
        out = []
        for name, _ in self.procs:
            with open(os.path.join(self.tmp, name + ".log")) as f:
                out.append(f"--- {name}\n{f.read()[-2000:]}")
        return "\n".join(out)


def documented_metrics(source):
    with open(os.path.join(source, "docs", "metrics.md")) as f:
        return set(re.findall(r"`(stoker_[a-z0-9_]+)`", f.read()))


def check_ctl(build, coordinator, deadline):
    """stoker-ctl status prints the job, its ranks, the workers and the advice line (measured or
    saying what it waits for: this light job barely keeps a worker busy); --json parses."""
    def ctl(*args, command="status"):
        return subprocess.run([f"{build}/tools/stoker-ctl", command,
                               f"--coordinator={coordinator}", "--insecure", *args],
                              capture_output=True, text=True, timeout=10, check=True).stdout
    text = wait_until("stoker-ctl to show the rank's report",
                      lambda: (lambda t: t if "  rank " in t else None)(ctl()), deadline)
    assert "job bench-" in text and "advice: " in text and "worker address" in text, text
    assert all(len(line) <= 80 for line in text.splitlines()), text
    status = json.loads(ctl("--json"))
    assert status["jobs"][0]["advice"]["explanation"], status
    assert len(status["workers"]) == 2, status
    # `advise`: the cluster's line and the job's advice; --json holds the advice, not the ranks.
    text = ctl(command="advise")
    assert text.startswith(f"coordinator {coordinator}: 2 workers now, "), text
    assert "\njob bench-" in text and all(len(line) <= 80 for line in text.splitlines()), text
    advice = json.loads(ctl("--json", command="advise"))
    assert advice["cluster"]["workers_now"] == 2 and "ranks" not in advice["jobs"][0], advice


def run(build, source, tmp):
    deadline = time.monotonic() + DEADLINE_SECONDS
    cluster = Cluster(build, tmp)
    try:
        ports = {name: free_port() for name in ("coordinator", "worker1", "worker2", "client",
                                                 "prometheus")}
        cluster.start("coordinator", [
            f"{build}/coordinator/stoker-coordinator", "--listen=127.0.0.1:0",
            f"--port-file={tmp}/coordinator.port", f"--metrics-port={ports['coordinator']}",
            f"--journal={tmp}/coordinator.journal", "--insecure", f"--data-root={tmp}"])
        coordinator = f"127.0.0.1:{cluster.port_file('coordinator', deadline)}"
        for worker in ("worker1", "worker2"):
            cluster.start(worker, [
                f"{build}/worker/stoker-worker", f"--coordinator={coordinator}",
                "--listen=127.0.0.1:0", "--threads=1", f"--port-file={tmp}/{worker}.port",
                f"--metrics-port={ports[worker]}", "--insecure", f"--data-root={tmp}"])
            cluster.port_file(worker, deadline)
        # A job far longer than the test: it runs until stopped.
        cluster.start("client", [
            f"{build}/tools/stoker-bench-client", f"--coordinator={coordinator}",
            "--num-samples=1000000", "--height=32", "--width=32", "--batch-size=16",
            "--epochs=1", "--pipeline=to_float", "--step-ms=5",
            f"--metrics-port={ports['client']}", "--insecure"])

        targets = [f"127.0.0.1:{ports[n]}" for n in ("coordinator", "worker1", "worker2", "client")]
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: stoker\n    static_configs:\n"
                    f"      - targets: {json.dumps(targets)}\n")
        api = f"http://127.0.0.1:{ports['prometheus']}/api/v1"
        cluster.start("prometheus", [
            shutil.which("prometheus") or "/usr/bin/prometheus", f"--config.file={config}",
            f"--storage.tsdb.path={tmp}/tsdb", f"--web.listen-address=127.0.0.1:{ports['prometheus']}"])

        def all_up():
            active = json.loads(http_get(f"{api}/targets"))["data"]["activeTargets"]
            return len(active) == len(targets) and all(t["health"] == "up" for t in active)
        wait_until("every target up in Prometheus", all_up, deadline)

        def produced():
            result = json.loads(http_get(
                f"{api}/query?query=sum(stoker_worker_batches_produced_total)"))["data"]["result"]
            return float(result[0]["value"][1]) if result else None
        first = wait_until("a produced-batches sample", produced, deadline)
        wait_until("the produced-batches counter to rise", lambda: produced() > first, deadline)

        documented = documented_metrics(source)
        for target in targets:
            text = http_get(f"http://{target}/metrics")
            check = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                                   capture_output=True, timeout=30)
            assert check.returncode == 0, f"promtool check metrics {target}:\n{check.stdout}{check.stderr}"
            # A family's name is on its # TYPE line (histogram series add _bucket, _sum, _count).
            served = set(re.findall(r"^# TYPE (stoker_[a-z0-9_]+) ", text, re.M))
            undocumented = served - documented
            assert not undocumented, f"{target} serves undocumented metrics: {sorted(undocumented)}"
        check_ctl(build, coordinator, deadline)
        print(f"OK: {len(targets)} targets up, produced batches rose from {first:.0f}")
    except BaseException:
        cluster.stop()
        print(cluster.logs(), file=sys.stderr)
        raise
    cluster.stop()


def main():
    build, source = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="stoker-prometheus-") as tmp:
        run(os.path.abspath(build), os.path.abspath(source), tmp)


if __name__ == "__main__":
    main()
