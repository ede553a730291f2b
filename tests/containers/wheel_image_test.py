"""The self-contained wheel (scripts/wheel.sh) installs and runs a job where no compiler and no
-dev package is: an image made from the runtime base (localhost/stoker-runtime) with only
python3, python3-numpy and python3-venv (for pip) added.

    /usr/bin/python3 tests/containers/wheel_image_test.py BUILD_DIR

In the container (no network, the images' unprivileged user, read-only root): asserts no -dev
package and no C/C++ compiler is installed, pip-installs the wheel into a venv without a package
index, checks the extension loads its libraries from the wheel's stoker.libs/ (only glibc and
the C++ runtime from the system), then runs tests/python/wheel_job.py against a coordinator and a
worker started in the container from BUILD_DIR's binaries: two epochs, every sample exactly once.
Skips (77) where podman cannot run; fails when the runtime image is missing.
"""

import os
import subprocess
import sys
import tempfile

import deploy_tools as dt
from cluster_test import require_podman
from podman_cluster import podman_env

BUILD_DIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
RUNTIME_IMAGE = "localhost/stoker-runtime:latest"
IMAGE = "localhost/stoker-wheel-test:latest"
CONTAINERFILE = f"""FROM {RUNTIME_IMAGE}
RUN apt-get update \\
 && apt-get install -y --no-install-recommends python3 python3-numpy python3-venv \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
"""
SCRIPT = r"""set -e
dev=$(dpkg -l | awk '$1 == "ii" && $2 ~ /-dev(:|$)/ {print $2}')
[ -z "$dev" ] || { echo "FAIL: -dev packages installed: $dev"; exit 1; }
for compiler in cc c++ gcc g++ clang; do
  ! command -v "$compiler" || { echo "FAIL: a compiler is installed: $compiler"; exit 1; }
done
python3 -m venv --system-site-packages /tmp/venv
/tmp/venv/bin/pip install --no-index --no-cache-dir --disable-pip-version-check --quiet /wheel/*.whl
from_system=$(ldd /tmp/venv/lib/python3*/site-packages/stoker/_stoker*.so | grep '=>' |
  grep -v -e '/stoker.libs/' -e '^\s*lib\(c\|m\|stdc++\|gcc_s\|resolv\)\.so')  || true
[ -z "$from_system" ] || { echo "FAIL: loaded from the system: $from_system"; exit 1; }
cd /tmp && /tmp/venv/bin/python /job/wheel_job.py /opt/stoker/bin
"""


def podman(binary, *args, **kwargs):
    return subprocess.run([binary, *args], capture_output=True, text=True, env=podman_env(),
                          **kwargs)


def main():
    binary = require_podman()
    if podman(binary, "image", "exists", RUNTIME_IMAGE).returncode != 0:
        raise AssertionError(f"image {RUNTIME_IMAGE} is missing: run scripts/images.sh")
    with tempfile.TemporaryDirectory(prefix="stoker-wheel-") as work:
        wheel_dir = os.path.join(work, "dist")
        built = subprocess.run([os.path.join(dt.SOURCE_DIR, "scripts", "wheel.sh"), wheel_dir],
                               capture_output=True, text=True, timeout=1500)
        if built.returncode != 0:
            raise AssertionError(f"scripts/wheel.sh failed:\n{built.stderr[-4000:]}")
        context = os.path.join(work, "context")
        os.mkdir(context)
        with open(os.path.join(context, "Containerfile"), "w") as f:
            f.write(CONTAINERFILE)
        image = podman(binary, "build", "--quiet", "--layers", "--tag", IMAGE, context,
                       timeout=900)
        if image.returncode != 0:
            raise AssertionError(f"building {IMAGE} failed:\n{image.stderr[-3000:]}")
        job = os.path.join(dt.SOURCE_DIR, "tests", "python", "wheel_job.py")
        mounts = [f"{wheel_dir}:/wheel:ro", f"{job}:/job/wheel_job.py:ro"]
        for subdir, name in (("coordinator", "stoker-coordinator"), ("worker", "stoker-worker")):
            mounts.append(f"{os.path.join(BUILD_DIR, subdir, name)}:/opt/stoker/bin/{name}:ro")
        result = podman(binary, "run", "--rm", "--init", "--network=none", "--read-only",
                        "--user=10001:10001", "--tmpfs=/tmp:rw,exec,mode=1777",
                        *[f"--volume={mount}" for mount in mounts],
                        "--entrypoint=/bin/sh", IMAGE, "-c", SCRIPT, timeout=300)
    print(result.stdout + result.stderr[-3000:])
    if result.returncode != 0 or "each exactly once" not in result.stdout:
        raise AssertionError(f"the job in {IMAGE} failed ({result.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
