"""A Stoker cluster of podman containers, each started the way Kubernetes would start the pod the
chart renders: command, args ($(VAR) expanded), environment (downward API fields resolved to
the container's own IP or the Job's completion index), user, read-only root, dropped
capabilities, resource limits (--cpus, --memory), and volumes (emptyDir: a tmpfs; the journal claim: a host directory owned by the
pod's fsGroup; a Secret: its items copied from the host directory given for it in `secrets`,
owned by the pod's user, mounted read-only). Every container has its own network namespace on one podman network, so
addresses are real cross-host ones; names resolve through the network's DNS as Service names do.

PodmanCluster removes every container, the network and its temporary directory when the `with`
block ends, on failure too (printing the containers' logs first). Every wait is bounded.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def podman_env():
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF",
                   os.path.join(SOURCE_DIR, ".cache", "containers", "containers.conf"))
    return env


def security_flags(pod_spec, container):
    """podman run flags for the pod's and container's securityContext."""
    pod, own = pod_spec.get("securityContext", {}), container.get("securityContext", {})
    merged = {**pod, **own}
    argv = []
    if "runAsUser" in merged:
        argv += ["--user", f"{merged['runAsUser']}:{merged.get('runAsGroup', 0)}"]
    if own.get("readOnlyRootFilesystem"):
        argv += ["--read-only", "--read-only-tmpfs=false"]
    if "ALL" in own.get("capabilities", {}).get("drop", []):
        argv += ["--cap-drop", "all"]
    if own.get("allowPrivilegeEscalation") is False:
        argv += ["--security-opt", "no-new-privileges"]
    return argv


# Kubernetes quantity suffixes (binary and decimal) as multipliers.
QUANTITY_SUFFIXES = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
                     "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "m": 1e-3}


def quantity(value):
    """A Kubernetes quantity ("2", "1500m", "1Gi", 512) as a number."""
    text = str(value)
    for suffix, scale in QUANTITY_SUFFIXES.items():
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * scale
    return float(text)


def resource_flags(container):
    """podman run flags enforcing the container's resources.limits, as the kubelet's cgroup does."""
    limits = (container.get("resources") or {}).get("limits") or {}
    argv = []
    if "cpu" in limits:
        argv += ["--cpus", f"{quantity(limits['cpu']):g}"]
    if "memory" in limits:
        argv += ["--memory", str(int(quantity(limits["memory"])))]
    return argv


class PodmanCluster:
    def __init__(self, podman, prefix, secrets=None):
        self.podman = podman
        self.secrets = dict(secrets or {})  # Secret name -> host directory of its keys
        self.prefix = f"{prefix}-{os.getpid()}"
        self.network = self.prefix
        self.dir = tempfile.mkdtemp(prefix=f"{self.prefix}-")
        os.chmod(self.dir, 0o755)
        self.containers = []  # names, in start order
        self.ips = {}
        self._next_host = 10

    # --- plumbing ---
    def run(self, *argv, check=True, timeout=120):
        result = subprocess.run([self.podman, *argv], capture_output=True, text=True,
                                timeout=timeout, env=podman_env())
        if check and result.returncode != 0:
            raise AssertionError(f"podman {' '.join(argv[:3])}... failed "
                                 f"({result.returncode}): {result.stderr.strip()}")
        return result

    def __enter__(self):
        self.run("network", "create", self.network)
        subnet = json.loads(self.run("network", "inspect", self.network).stdout)[0]
        self.subnet = subnet["subnets"][0]["subnet"]  # e.g. 10.89.3.0/24
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is not None:
            self.dump_logs()
        for name in reversed(self.containers):
            self.run("rm", "--force", "--time", "0", name, check=False)
        self.run("network", "rm", "--force", self.network, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def dump_logs(self):
        for name in self.containers:
            logs = self.run("logs", name, check=False)
            print(f"--- {name} (last lines) ---\n" + (logs.stdout + logs.stderr)[-3000:])

    def next_ip(self):
        base = self.subnet.split("/")[0].rsplit(".", 1)[0]
        self._next_host += 1
        return f"{base}.{self._next_host}"

    # --- pods ---
    def start(self, short_name, pod_spec, container_name, aliases=(), field_values=None,
              extra_args=(), mounts=()):
        """Starts `container_name` of `pod_spec` as container PREFIX-short_name; returns its IP.

        field_values: downward-API fieldPath → value, besides status.podIP. mounts: extra
        (host path, container path) binds, for the test's own outputs.
        """
        container = next(c for c in pod_spec["containers"] if c["name"] == container_name)
        name = f"{self.prefix}-{short_name}"
        ip = self.next_ip()
        fields = {"status.podIP": ip, **(field_values or {})}
        env = {}
        for entry in container.get("env", []):
            if "value" in entry:
                env[entry["name"]] = entry["value"]
            else:
                env[entry["name"]] = fields[entry["valueFrom"]["fieldRef"]["fieldPath"]]
        args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a)
                for a in container.get("args", [])] + list(extra_args)
        argv = ["run", "--detach", "--init", "--no-healthcheck", "--name", name,
                "--network", self.network, "--ip", ip]
        for alias in aliases:
            argv += ["--network-alias", alias]
        argv += security_flags(pod_spec, container)
        argv += resource_flags(container)
        argv += self._volumes(pod_spec, container, short_name)
        for host, path in mounts:
            argv += ["--volume", f"{host}:{path}"]
        for key, value in env.items():
            argv += ["--env", f"{key}={value}"]
        argv += ["--entrypoint", json.dumps(container["command"][:1]), container["image"]]
        argv += container["command"][1:] + args
        self.run(*argv)
        self.containers.append(name)
        self.ips[short_name] = ip
        return ip

    def _volumes(self, pod_spec, container, short_name):
        """emptyDir → tmpfs; a claim (volumeClaimTemplates) → a host directory owned by fsGroup."""
        volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
        owner = pod_spec.get("securityContext", {})
        argv = []
        for mount in container.get("volumeMounts", []):
            volume = volumes.get(mount["name"])
            if volume is not None and "emptyDir" in volume:
                argv += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777"]
                continue
            host = os.path.join(self.dir, f"{short_name}-{mount['name']}")
            os.makedirs(host, exist_ok=True)
            if volume is not None and "secret" in volume:
                self.project_secret(volume["secret"], host, owner)
                argv += ["--volume", f"{host}:{mount['mountPath']}:ro"]
                continue
            os.chown(host, owner.get("runAsUser", 0), owner.get("fsGroup", 0))
            argv += ["--volume", f"{host}:{mount['mountPath']}"]
        return argv

    def project_secret(self, secret, host, owner):
        """The Secret's items (all its keys without items) into `host`, as the kubelet would."""
        source = self.secrets[secret["secretName"]]
        items = secret.get("items") or [{"key": k, "path": k} for k in os.listdir(source)]
        for item in items:
            target = os.path.join(host, item["path"])
            shutil.copyfile(os.path.join(source, item["key"]), target)
            os.chown(target, owner.get("runAsUser", 0), owner.get("fsGroup", 0))
            os.chmod(target, 0o400)

    # --- what the test does to them ---
    def exec(self, short_name, *argv, check=True):
        return self.run("exec", f"{self.prefix}-{short_name}", *argv, check=check)

    def disconnect(self, short_name):
        self.run("network", "disconnect", self.network, f"{self.prefix}-{short_name}")

    def reconnect(self, short_name):
        self.run("network", "connect", "--ip", self.ips[short_name], self.network,
                 f"{self.prefix}-{short_name}")

    def stop(self, short_name, grace_s):
        """podman stop (SIGTERM, SIGKILL after grace_s); returns (exit code, seconds taken)."""
        start = time.monotonic()
        self.run("stop", "--time", str(grace_s), f"{self.prefix}-{short_name}",
                 timeout=grace_s + 60)
        elapsed = time.monotonic() - start
        return self.exit_code(short_name), elapsed

    def exit_code(self, short_name):
        out = self.run("inspect", "--format", "{{.State.ExitCode}}",
                       f"{self.prefix}-{short_name}").stdout
        return int(out.strip())

    def running(self, short_name):
        out = self.run("inspect", "--format", "{{.State.Running}}",
                       f"{self.prefix}-{short_name}").stdout
        return out.strip() == "true"

    def wait(self, short_name, timeout_s):
        """Exit code once the container exits (AssertionError after timeout_s)."""
        try:
            out = self.run("wait", f"{self.prefix}-{short_name}", timeout=timeout_s).stdout
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{short_name} still running after {timeout_s}s")
        return int(out.strip().splitlines()[-1])

    def logs(self, short_name):
        result = self.run("logs", f"{self.prefix}-{short_name}", check=False)
        return result.stdout + result.stderr
