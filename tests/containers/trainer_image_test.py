"""The trainer image is runtime + torch + the package `stoker` from its wheel, nothing to build
with: as the chart runs it (its Job's user, read-only root, dropped capabilities; /tmp a tmpfs),
`python3` (the image's venv, first on PATH) imports `stoker` with Debian's torch, the extension's
libraries come from the wheel's stoker.libs/, and no compiler or -dev package is installed (a C++
trainer is built against the CMake package elsewhere: client_package_test). Skips (77) where
podman cannot run; fails when the image is missing.
"""

import subprocess
import sys

import deploy_tools as dt
from cluster_test import require_podman
from podman_cluster import podman_env, security_flags

SCRIPT = r"""set -e
dev=$(dpkg -l | awk '$1 == "ii" && $2 ~ /-dev(:|$)/ {print $2}')
[ -z "$dev" ] || { echo "FAIL: -dev packages installed: $dev"; exit 1; }
for compiler in cc c++ gcc g++ clang cmake; do
  ! command -v "$compiler" || { echo "FAIL: $compiler is installed"; exit 1; }
done
python3 -c '
import os, stoker, torch
libs = open("/proc/self/maps").read()
assert "/stoker.libs/" in libs, "the extension did not load the wheel libraries"
print("python:", stoker.Loader.__name__, "torch", torch.__version__,
      "from", os.path.dirname(stoker.__file__))'
"""


def main():
    podman = require_podman()
    objects = dt.rendered_objects([], ["trainer.enabled=true"])
    pod_spec = dt.find(objects, "Job", "-trainer")["spec"]["template"]["spec"]
    container = pod_spec["containers"][0]
    image = container["image"]
    if subprocess.run([podman, "image", "exists", image], env=podman_env()).returncode != 0:
        raise AssertionError(f"image {image} is missing: run scripts/images.sh")
    result = subprocess.run(
        [podman, "run", "--rm", "--init", *security_flags(pod_spec, container),
         "--tmpfs", "/tmp:rw,mode=1777", "--entrypoint", "/bin/sh", image, "-c", SCRIPT],
        capture_output=True, text=True, timeout=300, env=podman_env())
    print(result.stdout + result.stderr[-3000:])
    if result.returncode != 0:
        raise AssertionError(f"the trainer image {image} failed the checks ({result.returncode})")
    if "python: Loader" not in result.stdout or "/opt/stoker/" not in result.stdout:
        raise AssertionError("unexpected output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
