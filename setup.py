"""Builds the package `stoker` with CMake (pyproject.toml names setuptools as the backend).

The extension `stoker._stoker` is the CMake target stoker_python, built in its own build
directory (STOKER_PYTHON_BUILD_DIR, default build-python/ in the checkout) with the tests,
benchmarks and examples off; only that target and what it links are compiled, so the worker and
coordinator stay out. The pure-Python files come from trainer_client/python/stoker. The version
is CMakeLists.txt's project(stoker VERSION ...), shared with the CMake package.
Parallelism: CMAKE_BUILD_PARALLEL_LEVEL (CMake reads it), else Ninja's default.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = "trainer_client/python/stoker"


def project_version():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt")) as f:
        match = re.search(r"^project\(stoker VERSION ([0-9.]+)", f.read(), re.MULTILINE)
    if not match:
        raise RuntimeError("CMakeLists.txt: no project(stoker VERSION ...)")
    return match.group(1)


class CMakeExtension(Extension):
    def __init__(self, name, target):
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("STOKER_PYTHON_BUILD_DIR",
                                   os.path.join(SOURCE_DIR, "build-python"))
        configure = ["cmake", "-S", SOURCE_DIR, "-B", build_dir, "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}",
                     "-DSTOKER_BUILD_PYTHON=ON", "-DSTOKER_BUILD_TESTS=OFF",
                     "-DSTOKER_BUILD_BENCH=OFF", "-DSTOKER_BUILD_EXAMPLES=OFF"]
        subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build_dir, "--target", ext.target], check=True)
        # Named for this interpreter (a build directory shared by two Pythons holds both).
        built = os.path.join(build_dir, "trainer_client", "python", "stoker",
                             "_stoker" + sysconfig.get_config_var("EXT_SUFFIX"))
        destination = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copyfile(built, destination)


class FreshBuildPy(build_py):
    """setuptools keeps build/lib between builds: a file deleted from the package (or left by a
    build of another branch) would otherwise ship. The package's copy starts empty each time."""

    def run(self):
        shutil.rmtree(os.path.join(self.build_lib, "stoker"), ignore_errors=True)
        super().run()


setup(
    version=project_version(),
    packages=["stoker"],
    package_dir={"stoker": PACKAGE_DIR},
    # Type stubs of the extension and the PEP 561 marker, where the package has them.
    package_data={"stoker": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("stoker._stoker", target="stoker_python")],
    cmdclass={"build_py": FreshBuildPy, "build_ext": CMakeBuild},
    # setuptools' own scratch files beside the CMake build, not in the CMake tree build/.
    options={"build": {"build_base": os.path.join("build-python", "setuptools")}},
    zip_safe=False,
)
