"""The prepared GPU check: one command on a lent GPU machine, everything it needs carried along.

    python3 ci/gpu_check/run.py --carry .gpu-carry --out "$OUT"          # on the GPU machine
    python3 ci/gpu_check/run.py --carry .gpu-carry --out results/gpu-check --fake   # here

The GPU machine has no network and only the repository's files plus one carried folder (made by
ci/gpu_check/prepare.py; `nox -s gpu-check` runs both here). In about 8 minutes this:

1. finds what the machine has: GPU, driver, Python, numpy, pytest, CuPy, NVIDIA pip libraries,
   OpenCL/Vulkan loaders and ICDs, a C compiler;
2. installs the carried wheels with ``pip --target`` (no index) and unpacks the carried Debian
   loaders (``dpkg -x``), pointing OpenCL and Vulkan at NVIDIA's driver;
3. prints ``python -m tvm.backend`` (the backend table);
4. runs every CUDA test of the suite (driver, NVRTC, kernel and model fixtures, CUDA graphs, TMA,
   cuBLASLt/cuDNN/NCCL where the machine has them; the fake-driver tests too), then the CUDA
   benchmark against apache-tvm 0.27's runtime (carried, runtime-only) and CuPy, then the OpenCL,
   Vulkan and WebGPU tests on NVIDIA's drivers;
5. writes ``summary.md`` (one page), ``results.json``, the pytest logs and the benchmark JSON
   under ``--out``, whatever happened: each phase has its own time limit and a failure in one is
   recorded, never fatal.

``--fake`` runs the same steps here against the fake CUDA driver (tests/fakes/fake_cuda.c): the
GPU-only tests skip, the benchmark measures the host path into the fake (apache-tvm and CuPy are
not run on it) and the loaders unpack into a scratch root, so the script itself is proven before a
GPU is spent on it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from phases import CUDA_TESTS, OTHER_GPU_TESTS, PHASE_SECONDS  # noqa: E402
from summary import write_summary  # noqa: E402

NVIDIA_VULKAN_ICD = "/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json"
NVIDIA_EGL_VENDOR = "/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json"
NVIDIA_OPENCL = "libnvidia-opencl.so.1"


class Check:
    """The state of one run: where things go, the environment the phases share, the results."""

    def __init__(self, carry: Path, out: Path, fake: bool) -> None:
        self.carry, self.out, self.fake = carry, out, fake
        self.scratch = Path(tempfile.mkdtemp(prefix="tvm-gpu-check-"))
        self.site = self.scratch / "site"
        self.python = sys.executable
        self.jobs = min(12, os.cpu_count() or 1)
        self.seconds = dict(PHASE_SECONDS)
        self.apache_site = self.scratch / "apache-site"
        self.env = dict(os.environ)
        self.results: dict = {"mode": "fake driver" if fake else "GPU", "phases": {}}
        self.log = open(out / "log.txt", "w", buffering=1)  # noqa: SIM115 - closed in main

    def say(self, text: str) -> None:
        line = f"[gpu-check {time.strftime('%H:%M:%S')}] {text}"
        print(line, flush=True)
        self.log.write(line + "\n")

    def run(self, cmd: list[str], timeout: float, env: dict | None = None, log: Path | None = None) -> dict:
        """A child process with a time limit; its output goes to ``log`` (or the main log)."""
        t0 = time.monotonic()
        sink = open(log, "w") if log else self.log  # noqa: SIM115
        try:
            proc = subprocess.run(
                cmd,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env or self.env,
                cwd=str(REPO),
                timeout=timeout,
                text=True,
            )
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except OSError as err:
            rc = f"could not start: {err}"
        finally:
            if log:
                sink.close()
        return {"rc": rc, "seconds": round(time.monotonic() - t0, 1)}


# ------------------------------------------------------------------------------ 1. the machine


def _capture(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def probe(check: Check) -> None:
    from importlib.metadata import distributions

    gpus = _capture(
        ["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total", "--format=csv,noheader"]
    )
    dists = {d.metadata["Name"]: d.version for d in distributions() if d.metadata["Name"]}
    wanted = ("numpy", "pytest", "pytest-timeout", "cupy", "torch", "cuda-bindings", "cuda-pathfinder")
    ldconfig = _capture(["ldconfig", "-p"])
    check.results["machine"] = {
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "gpus": gpus.splitlines() if gpus else [],
        "packages": {k: v for k, v in sorted(dists.items()) if k.lower().startswith(wanted)},
        "nvidia_pip": {k: v for k, v in sorted(dists.items()) if k.lower().startswith("nvidia-")},
        "libcuda": "libcuda.so.1" in ldconfig,
        "libOpenCL": "libOpenCL.so.1" in ldconfig,
        "libvulkan": "libvulkan.so.1" in ldconfig,
        "nvidia_opencl": NVIDIA_OPENCL in ldconfig,
        "opencl_icds": sorted(os.listdir("/etc/OpenCL/vendors"))
        if os.path.isdir("/etc/OpenCL/vendors")
        else [],
        "nvidia_vulkan_icd": os.path.exists(NVIDIA_VULKAN_ICD),
        "cc": shutil.which("cc") or shutil.which("gcc") or "",
        "nvcc": shutil.which("nvcc") or "",
    }
    check.say(f"machine: {json.dumps(check.results['machine'])}")


# ----------------------------------------------------------------------------- 2. installation


def install(check: Check) -> None:
    wheels = check.carry / "wheels"
    names = ["tvm-runtime", "tvm-runtime-cuda", "tvm-runtime-opencl", "tvm-runtime-vulkan"]
    names += ["tvm-runtime-webgpu", "tvm-runtime-extra", "apache-tvm-ffi", "wgpu"]
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
    pip += ["--disable-pip-version-check", "--find-links", str(wheels)]
    # `pip --target` + PYTHONPATH, as the first GPU run did: cuda-pathfinder then still finds the
    # machine's NVIDIA pip libraries in its site-packages (it searches those, not sys.path).
    r = check.run([*pip, "--target", str(check.site), *names], timeout=120)
    # apache-tvm runtime-only: its own tvm-ffi (same version), ml_dtypes, typing_extensions, tvm.
    apache = check.carry / "apache"
    r2 = check.run(
        [
            *pip,
            "--find-links",
            str(apache),
            "--target",
            str(check.apache_site),
            "apache-tvm-ffi",
            "ml_dtypes",
            "typing_extensions",
        ],
        timeout=120,
    )
    tarball = apache / "apache-tvm-runtime-only.tar.gz"
    if tarball.exists():
        with tarfile.open(tarball) as tar:
            tar.extractall(check.apache_site, filter="data")
    check.results["phases"]["install"] = {**r, "apache_rc": r2["rc"]}
    check.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(check.site), os.environ.get("PYTHONPATH")]))
    check.say(f"installed the carried wheels into {check.site}: {r}; apache-tvm runtime-only: {r2}")


def system_loaders(check: Check) -> None:
    """The OpenCL ICD loader and the Vulkan loader with glvnd, unpacked from the carried .debs.

    On the GPU machine into ``/`` (as root; then ldconfig), with an ICD file naming NVIDIA's OpenCL
    library; with --fake into a scratch root, only to prove the packages unpack."""
    root = check.scratch / "debroot" if check.fake else Path("/")
    root.mkdir(exist_ok=True)
    unpacked = []
    for deb in sorted((check.carry / "debs").glob("*.deb")):
        if check.run(["dpkg", "-x", str(deb), str(root)], timeout=60)["rc"] == 0:
            unpacked.append(deb.name.split("_")[0])
    notes = {"unpacked": unpacked, "root": str(root)}
    if not check.fake:
        check.run(["ldconfig"], timeout=60)
        vendors = Path("/etc/OpenCL/vendors")
        if "libnvidia-opencl" in _capture(["ldconfig", "-p"]) and not list(vendors.glob("*.icd")):
            vendors.mkdir(parents=True, exist_ok=True)
            (vendors / "nvidia.icd").write_text(NVIDIA_OPENCL + "\n")
            notes["opencl_icd"] = "wrote /etc/OpenCL/vendors/nvidia.icd"
        if os.path.exists(NVIDIA_VULKAN_ICD):
            check.env.setdefault("VK_DRIVER_FILES", NVIDIA_VULKAN_ICD)
            if os.path.exists(NVIDIA_EGL_VENDOR):
                check.env.setdefault("__EGL_VENDOR_LIBRARY_FILENAMES", NVIDIA_EGL_VENDOR)
            notes["vulkan"] = "VK_DRIVER_FILES -> NVIDIA's ICD"
    check.results["phases"]["loaders"] = notes
    check.say(f"system loaders: {notes}")


def fake_driver(check: Check) -> None:
    """--fake: the CUDA fake driver for the benchmark (the tests build their own)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    lib = check.scratch / "libcuda_fake.so"
    src = REPO / "tests" / "fakes" / "fake_cuda.c"
    subprocess.run([cc or "cc", "-shared", "-fPIC", "-O1", "-o", str(lib), str(src)], check=True)
    check.bench_env = {"TVM_CUDA_DRIVER_LIBRARY": str(lib)}


# -------------------------------------------------------------------------------- 3.-4. phases


def backend_table(check: Check) -> None:
    r = check.run([check.python, "-m", "tvm.backend"], timeout=120, log=check.out / "backends.txt")
    check.results["phases"]["backends"] = r
    check.say(f"python -m tvm.backend: {r}")


def _pytest(check: Check, name: str, paths: list[str], require_cuda: bool) -> None:
    present = [p for p in paths if (REPO / p.split("::")[0]).exists()]
    # The junit file stays in the scratch folder: the device tool returns at most 8 files.
    xml = check.scratch / f"pytest-{name}.xml"
    cmd = [check.python, "-m", "pytest", *present, "-v", "-rfEs", "-p", "no:cacheprovider"]
    cmd += ["--junitxml", str(xml), "--ignore-glob", "*packaging*"]
    # pytest-xdist where the machine has it: the CUDA tests compile with NVRTC in many fresh
    # processes, ~2.5 s a test on one core (the first prepared run ran out of time serially).
    if check.jobs > 1 and importlib.util.find_spec("xdist") is not None:
        cmd += ["-n", str(check.jobs)]
    if importlib.util.find_spec("pytest_timeout") is not None:
        cmd += ["--timeout", "120"]  # the plugin loads itself through its entry point
    env = dict(check.env)
    env.update({"TVM_REPO_ROOT": str(REPO), "PYTHONUNBUFFERED": "1"})
    if require_cuda and not check.fake:
        env["TVM_TEST_REQUIRE_CUDA"] = "1"  # a GPU that silently went missing fails, never skips
    r = check.run(cmd, timeout=check.seconds[name], env=env, log=check.out / f"pytest-{name}.log")
    r.update(parse_pytest(xml, check.out / f"pytest-{name}.log"))
    if "note" in r and r["rc"] != "timeout":  # no report, and not for lack of time
        head = (check.out / f"pytest-{name}.log").read_text(errors="replace").strip().splitlines()
        r["note"] = f"pytest ended with rc {r['rc']} before writing a report: " + " / ".join(head[-3:])
    check.results["phases"][f"pytest-{name}"] = r
    check.say(f"pytest {name}: {json.dumps({k: v for k, v in r.items() if k != 'failures'})}")


def parse_pytest(xml: Path, log: Path) -> dict:
    """Counts, failures (with their first message line) and skip reasons; from the junit file,
    or from the verbose log when the phase was stopped at its time limit."""
    out: dict = {"passed": 0, "failed": 0, "skipped": 0, "failures": [], "skips": {}}
    if xml.exists():
        for case in ET.parse(xml).getroot().iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            bad = case.find("failure") if case.find("failure") is not None else case.find("error")
            skip = case.find("skipped")
            if bad is not None:
                out["failed"] += 1
                out["failures"].append({"test": name, "message": (bad.get("message") or "")[:400]})
            elif skip is not None:
                out["skipped"] += 1
                reason = re.sub(r"\s+", " ", skip.get("message") or "")[:160]
                out["skips"][reason] = out["skips"].get(reason, 0) + 1
            else:
                out["passed"] += 1
        return out
    out["note"] = "stopped at its time limit: counted from the verbose log"
    text = log.read_text(errors="replace") if log.exists() else ""
    for m in re.finditer(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED)", text, re.M):
        key = {"PASSED": "passed", "FAILED": "failed", "ERROR": "failed", "SKIPPED": "skipped"}[m.group(2)]
        out[key] += 1
        if key == "failed":
            out["failures"].append({"test": m.group(1), "message": ""})
    return out


def cuda_benchmark(check: Check) -> None:
    out = check.out / "bench-cuda.json"
    cmd = [check.python, str(REPO / "benchmarks" / "cuda_bench.py"), "--json", str(out), "--quick"]
    env = dict(check.env)
    if check.fake:
        cmd += ["--fake-driver", check.bench_env["TVM_CUDA_DRIVER_LIBRARY"]]
    else:
        # apache-tvm's workers get a PYTHONPATH of its install alone: with ours visible it would
        # autoload our backends, whose entry points share its `tvm.backends` group.
        cmd += ["--apache-python", sys.executable, "--apache-pythonpath", str(check.apache_site)]
    r = check.run(cmd, timeout=check.seconds["bench"], env=env, log=check.out / "bench-cuda.log")
    if out.exists():
        r["report"] = json.loads(out.read_text())
    check.results["phases"]["bench-cuda"] = r
    check.say(f"cuda benchmark: rc={r['rc']} in {r['seconds']} s")


# ------------------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--carry", type=Path, default=REPO / ".gpu-carry")
    parser.add_argument(
        "--out", type=Path, default=Path(os.environ.get("OUT") or REPO / "results" / "gpu-check")
    )
    parser.add_argument("--fake", action="store_true", help="run against the fake CUDA driver, here")
    parser.add_argument("--skip", default="", help="comma-separated phases to leave out (cuda,bench,other)")
    parser.add_argument("--seconds", default="", help="phase time limits, e.g. cuda=170,bench=90")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if not (args.carry / "manifest.json").exists():
        raise SystemExit(
            f"{args.carry} is not a carry folder: run ci/gpu_check/prepare.py (nox -s gpu-check)"
        )

    t0 = time.monotonic()
    check = Check(args.carry, args.out, args.fake)
    skip = set(filter(None, args.skip.split(",")))
    for item in filter(None, args.seconds.split(",")):
        phase, _, value = item.partition("=")
        check.seconds[phase] = float(value)
    try:
        probe(check)
        install(check)
        system_loaders(check)
        if args.fake:
            fake_driver(check)
        backend_table(check)
        if "cuda" not in skip:
            _pytest(check, "cuda", CUDA_TESTS, require_cuda=True)
        if "bench" not in skip:
            cuda_benchmark(check)
        if "other" not in skip:
            _pytest(check, "other", OTHER_GPU_TESTS, require_cuda=False)
    except Exception as err:  # noqa: BLE001 - the summary is written whatever broke
        check.results["error"] = f"{type(err).__name__}: {err}"
        check.say(f"stopped: {check.results['error']}")
    finally:
        check.results["seconds"] = round(time.monotonic() - t0, 1)
        (args.out / "results.json").write_text(json.dumps(check.results, indent=2) + "\n")
        write_summary(check.results, args.out / "summary.md", check.out / "backends.txt")
        check.say(f"done in {check.results['seconds']} s: {args.out / 'summary.md'}")
        check.log.close()
        shutil.rmtree(check.scratch, ignore_errors=True)
    print((args.out / "summary.md").read_text())
    return 0 if "error" not in check.results else 1


if __name__ == "__main__":
    sys.exit(main())
