#!/usr/bin/env python3
"""Embeds Pacer in an outside project (apps/embedding) the three ways a user would.

Usage: check_embedding.py SOURCE_DIR BUILD_DIR MPIRUN [--shared]

Installs the build into a prefix (cmake --install) and packages it (cpack: libpacer-dev's .deb,
unpacked with dpkg-deb -x), then builds apps/embedding's program against the prefix with
find_package, against the prefix with pkg-config's flags from its plain Makefile, and against the
unpacked package with find_package. Each build must take Pacer from where it was pointed. Each
program trains under mpirun with 1 scheduler, 2 servers and 3 workers, and its weights must match
the same training in one process (--reference) to float rounding.

With --shared, Pacer's library alone is built again as a shared library (BUILD_SHARED_LIBS=ON),
installed, and the outside project built against it with find_package and with pkg-config.
"""
import glob
import math
import os
import shutil
import subprocess
import sys

TOLERANCE = 1e-5  # relative distance; the servers sum the workers' gradients in arrival order
TRAINING = ["--iterations=100", "--batch=32"]


def run(command, **kwargs):
    print("+", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n{result.stdout[-3000:]}"
                 f"\n{result.stderr[-3000:]}")
    return result.stdout


def cache_value(build, name):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split("=", 1)[1].strip()
    sys.exit(f"{build}: no {name} in CMakeCache.txt")


def build_with_cmake(source, build, prefix, env):
    run(["cmake", "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    found = os.path.realpath(cache_value(build, "Pacer_DIR"))
    if not found.startswith(os.path.realpath(prefix) + os.sep):
        sys.exit(f"find_package took Pacer from {found}, not from {prefix}")
    run(["cmake", "--build", build], env=env)
    return os.path.join(build, "footwear")


def build_with_pkg_config(source, build, prefix, env):
    os.makedirs(build)
    env = dict(env, PKG_CONFIG_PATH=glob.glob(os.path.join(prefix, "lib*", "pkgconfig"))[0])
    flags = run(["pkg-config", "--cflags", "pacer"], env=env)
    if os.path.realpath(prefix) not in {os.path.realpath(f[2:]).rsplit("/include", 1)[0]
                                        for f in flags.split() if f.startswith("-I")}:
        sys.exit(f"pkg-config's flags do not point into {prefix}: {flags}")
    if "CCACHE_BASEDIR" in env:
        env["CXX"] = "ccache g++"
    run(["make", "-C", build, "-f", os.path.join(source, "Makefile")], env=env)
    return os.path.join(build, "footwear")


def read_weights(path):
    with open(path) as f:
        return [float.fromhex(line) for line in f]


def relative_distance(a, b):
    if len(a) != len(b):
        return math.inf
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b))) / math.sqrt(sum(x * x for x in b))


def static_builds(build, work, source, env):
    """The build's own install and package, and the three builds against them."""
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", build, "--prefix", prefix])
    run(["cpack", "-G", "DEB", "-B", os.path.join(work, "package")], cwd=build)
    debs = glob.glob(os.path.join(work, "package", "*.deb"))
    if len(debs) != 1:
        sys.exit(f"cpack made {debs}, not one .deb")
    fields = run(["dpkg-deb", "-f", debs[0], "Package", "Depends"])
    print(fields)
    if "Package: libpacer-dev" not in fields or "libucx-dev" not in fields:
        sys.exit(f"{debs[0]}: not libpacer-dev with its Depends:\n{fields}")
    unpacked = os.path.join(work, "deb")
    run(["dpkg-deb", "-x", debs[0], unpacked])
    return [
        ("find_package, installed prefix",
         build_with_cmake(source, os.path.join(work, "cmake"), prefix, env)),
        ("pkg-config, installed prefix",
         build_with_pkg_config(source, os.path.join(work, "make"), prefix, env)),
        ("find_package, unpacked .deb",
         build_with_cmake(source, os.path.join(work, "deb-build"), os.path.join(unpacked, "usr"),
                          env)),
    ]


def shared_builds(root, work, source, env):
    """Pacer's library alone built shared (BUILD_SHARED_LIBS=ON), installed, and the builds
    against it; the pkg-config build finds libpacer.so through LD_LIBRARY_PATH, as its user would."""
    build, prefix = os.path.join(work, "pacer-shared"), os.path.join(work, "prefix")
    run(["cmake", "-S", root, "-B", build, "-DBUILD_SHARED_LIBS=ON", "-DPACER_BUILD_APPS=OFF",
         "-DPACER_BUILD_TESTS=OFF"], env=env)
    run(["cmake", "--build", build, "-j", str(os.cpu_count())], env=env)
    run(["cmake", "--install", build, "--prefix", prefix])
    libraries = glob.glob(os.path.join(prefix, "lib*", "libpacer.so"))
    if not libraries:
        sys.exit(f"no libpacer.so installed under {prefix}")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (os.path.dirname(libraries[0]), env.get("LD_LIBRARY_PATH")) if p)
    return [
        ("find_package, shared library",
         build_with_cmake(source, os.path.join(work, "cmake"), prefix, env)),
        ("pkg-config, shared library",
         build_with_pkg_config(source, os.path.join(work, "make"), prefix, env)),
    ]


def main():
    root, build, mpirun = (os.path.abspath(a) for a in sys.argv[1:4])
    shared = sys.argv[4:] == ["--shared"]
    source = os.path.join(root, "apps", "embedding")
    work = os.path.join(build, "embedding-shared" if shared else "embedding")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    if shutil.which("ccache"):  # as Pacer's own build: paths relative to the checkout
        env.update(CMAKE_CXX_COMPILER_LAUNCHER="ccache", CCACHE_BASEDIR=root, CCACHE_NOHASHDIR="true")
    programs = shared_builds(root, work, source, env) if shared else \
        static_builds(build, work, source, env)

    reference = os.path.join(work, "reference.txt")
    print(run([programs[0][1], "--reference", "--workers=3", f"--out={reference}"] + TRAINING,
              env=env))
    expected = read_weights(reference)
    for name, program in programs:
        out = os.path.join(os.path.dirname(program), "weights.txt")
        forward = ["-x", "LD_LIBRARY_PATH"] if "LD_LIBRARY_PATH" in env else []
        output = run([mpirun, "--oversubscribe"] + forward + ["-np", "6", program, "--servers", "2",
                      f"--out={out}"] + TRAINING, env=env)
        print(output)
        if "3 workers" not in output:
            sys.exit(f"{name}: worker 0 did not report a 3-worker run:\n{output}")
        distance = relative_distance(read_weights(out), expected)
        print(f"{name}: relative distance to one process {distance:.3g}")
        if not distance <= TOLERANCE:
            sys.exit(f"{name}: weights differ from the one-process run by {distance:.3g} "
                     f"(tolerance {TOLERANCE})")
    print(f"the outside project built and trained against all {len(programs)}")

if __name__ == "__main__":
    main()
