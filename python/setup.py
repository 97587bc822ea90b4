"""Builds the extension module overhead._overhead with the project's own CMake build, then packs
it with the pure-Python part. The CMake build folder is $OVERHEAD_BUILD_DIR, else build/ of the
clone (the one `make build` uses): after `make build` only the module's few files compile. A
missing build folder is configured as the Makefile configures it."""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("OVERHEAD_BUILD_DIR", ROOT / "build")).resolve()
        if not (build / "CMakeCache.txt").exists():
            configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                         "-DOVERHEAD_WERROR=ON", f"-DPython_EXECUTABLE={sys.executable}"]
            if shutil.which("ccache"):
                configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.check_call(configure)
        jobs = os.environ.get("JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build), "--target", "overhead_python", "-j", jobs])
        name = "_overhead" + sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "overhead" / name
        if not built.exists():
            found = sorted(p.name for p in (build / "python" / "overhead").glob("_overhead*"))
            sys.exit(f"overhead: {build} built {found or 'no module'}, not {name} for {sys.executable}: "
                     "configure that build folder for this Python (-DPython_EXECUTABLE) or set OVERHEAD_BUILD_DIR")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("overhead._overhead", sources=[])], cmdclass={"build_ext": CMakeBuild})
