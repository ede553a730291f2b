"""The trainer image is a base a trainer can be built on: as the chart runs it (its Job's user,
read-only root, dropped capabilities; /tmp a tmpfs), examples/cpp_trainer configures against the installed CMake package
(find_package(stoker)), builds and runs, and Debian's python3 imports the module `stoker` with
torch. Skips (77) where podman cannot run; fails when the image is missing.
"""

import os
import subprocess
import sys

import deploy_tools as dt
from cluster_test import require_podman
from podman_cluster import podman_env, security_flags

SCRIPT = """set -e
cmake -S /src -B /tmp/build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build /tmp/build >/dev/null
/tmp/build/stoker_cpp_trainer --help | head -1
python3 -c 'import stoker, torch; print("python:", stoker.Loader.__name__, "torch", torch.__version__)'
"""


def main():
    podman = require_podman()
    objects = dt.rendered_objects([], ["trainer.enabled=true"])
    pod_spec = dt.find(objects, "Job", "-trainer")["spec"]["template"]["spec"]
    container = pod_spec["containers"][0]
    image = container["image"]
    if subprocess.run([podman, "image", "exists", image], env=podman_env()).returncode != 0:
        raise AssertionError(f"image {image} is missing: run scripts/images.sh")
    example = os.path.join(dt.SOURCE_DIR, "examples", "cpp_trainer")
    result = subprocess.run(
        [podman, "run", "--rm", "--init", *security_flags(pod_spec, container),
         "--tmpfs", "/tmp:rw,mode=1777", "--volume", f"{example}:/src:ro",
         "--entrypoint", "/bin/sh", image, "-c", SCRIPT],
        capture_output=True, text=True, timeout=300, env=podman_env())
    print(result.stdout + result.stderr[-3000:])
    if result.returncode != 0:
        raise AssertionError(f"building on {image} failed ({result.returncode})")
    if "usage: stoker_cpp_trainer" not in result.stdout or "python: Loader" not in result.stdout:
        raise AssertionError("unexpected output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
