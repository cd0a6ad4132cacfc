"""Builds calbench._core with CMake for `pip install ./python` (python/pyproject.toml).

Written as a setuptools build_ext rather than with scikit-build-core because Debian 12 does not
package scikit-build-core, and the install must work offline from Debian's packages alone.

The extension is the CMake target calbench_core (CMakeLists.txt). When this checkout's release
build (build/release, made by scripts/setup.sh) was configured for an interpreter with the same
extension suffix (ABI) as the one installing, that build is reused: only calbench_core is
brought up to date, in seconds. Otherwise a fresh Release build of the library and the module
alone (no tests, no command line) is configured under setuptools' build directory for this
interpreter (CALBENCH_PYTHON3 = sys.executable); it compiles the whole library (minutes, faster
with ccache). CALBENCH_CMAKE_ARGS adds options to that configure step; CALBENCH_SOURCE_DIR names
the repository when python/ was copied elsewhere.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository (CMakeLists.txt, lib/, python/): python/'s parent, or CALBENCH_SOURCE_DIR when
# a copy of python/ is installed (tests/cli/python_venv.sh, which keeps pip's build/ out of the
# source tree).
SOURCE = os.environ.get("CALBENCH_SOURCE_DIR") or os.path.dirname(HERE)


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(calbench VERSION ([0-9.]+)", f.read())
    if not match:
        raise RuntimeError(f"no project(calbench VERSION ...) in {SOURCE}/CMakeLists.txt")
    return match.group(1)


def cache_value(cache, key):
    with open(cache, encoding="utf-8") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split("=", 1)[1].strip()
    return None


def ext_suffix(python):
    out = subprocess.run([python, "-c", "import sysconfig; "
                          "print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                         capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = self.reuse_release_build(suffix) or self.fresh_build(suffix)
        shutil.copyfile(built, target)

    def reuse_release_build(self, suffix):
        build = os.path.join(SOURCE, "build", "release")
        cache = os.path.join(build, "CMakeCache.txt")
        if not os.path.exists(cache):
            return None
        python = cache_value(cache, "CALBENCH_PYTHON3")
        module_dir = cache_value(cache, "CALBENCH_PYTHON_MODULE_DIR")
        if not python or not module_dir or ext_suffix(python) != suffix:
            return None
        print(f"calbench: reusing {build} (calbench_core only)", flush=True)
        subprocess.run(["cmake", "--build", build, "--target", "calbench_core"], check=True)
        return os.path.join(module_dir, "_core" + suffix)

    def fresh_build(self, suffix):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        module_dir = os.path.join(build, "module")
        print(f"calbench: building calbench_core in {build} for {sys.executable}", flush=True)
        configure = ["cmake", "-S", SOURCE, "-B", build, "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG",
                     "-DCALBENCH_BUILD_TESTS=OFF", f"-DCALBENCH_PYTHON3={sys.executable}",
                     f"-DCALBENCH_PYTHON_MODULE_DIR={module_dir}"]
        configure += shlex.split(os.environ.get("CALBENCH_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", build, "--target", "calbench_core"], check=True)
        return os.path.join(module_dir, "_core" + suffix)


setup(
    version=project_version(),
    ext_modules=[Extension("calbench._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
)
