"""`pip install` of the checkout into a fresh venv, then a job through the installed package.

    /usr/bin/python3 tests/python/venv_install_test.py BUILD_DIR

Creates `python3 -m venv --system-site-packages` (Debian's NumPy, no package index needed),
runs `pip install --no-build-isolation --no-index` on the source tree (pyproject.toml; the CMake
build in build-python/, incremental after the first run), then, with PYTHONPATH unset and from a
directory outside the source tree, runs wheel_job.py: a 2-epoch job against a local coordinator
and worker (BUILD_DIR's binaries), every sample exactly once, read with np.from_dlpack. Checks the
package came from the venv, not the checkout or the build tree, and holds the source package's
files, no more.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD_DIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wheel_job.py")


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{argv[:3]} exited {result.returncode}:\n"
                             f"{result.stdout[-4000:]}{result.stderr[-4000:]}")
    return result.stdout


def check_installed_files(location):
    """The installed package holds exactly the source package's files (a file left over from an
    earlier build must not ship) and the extension."""
    source = os.path.join(SOURCE_DIR, "trainer_client", "python", "stoker")
    expected = {name for name in os.listdir(source) if not name.startswith("__pycache__")}
    installed = {name for name in os.listdir(location) if name != "__pycache__"}
    extensions = {name for name in installed if name.startswith("_stoker.")
                  and name.endswith(".so")}
    if len(extensions) != 1 or installed - extensions != expected:
        raise AssertionError(f"installed {sorted(installed)}, expected {sorted(expected)} "
                             "and one _stoker*.so")


def check_version(python, env):
    """The installed distribution's version is CMakeLists.txt's project(stoker VERSION ...)."""
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        cmake_version = re.search(r"^project\(stoker VERSION ([0-9.]+)", f.read(), re.M).group(1)
    installed = run([python, "-c", "import importlib.metadata as m; print(m.version('stoker'))"],
                    env=env, cwd="/").strip()
    if installed != cmake_version:
        raise AssertionError(f"installed version {installed}, CMake project {cmake_version}")


def main():
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    work = tempfile.mkdtemp(prefix="stoker-venv-")
    try:
        venv = os.path.join(work, "venv")
        run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], env=env)
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
             "--disable-pip-version-check", SOURCE_DIR], env=env, timeout=1500)
        check_version(python, env)
        run_dir = os.path.join(work, "run")
        os.mkdir(run_dir)
        shutil.copy(JOB, run_dir)
        output = run([python, "wheel_job.py", BUILD_DIR], env=env, cwd=run_dir, timeout=120)
        print(output)
        location = output.strip().splitlines()[-1].removeprefix("stoker: ")
        if not location.startswith(os.path.realpath(venv) + os.sep):
            raise AssertionError(f"stoker was imported from {location}, not the venv")
        check_installed_files(location)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
