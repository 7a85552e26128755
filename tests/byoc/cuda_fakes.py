"""Running external-codegen modules of the CUDA side (cublas_json, cudnn_json) on the fakes:
the fake CUDA driver (tests/fakes/fake_cuda.c, device memory is host memory) with a
fake cuBLASLt or cuDNN (tests/fakes/fake_{cublaslt,cudnn}.c) that checks every call,
logs it and computes the result on the CPU.  Each run is a fresh interpreter: the driver and the
vendor libraries are opened once per process."""

from __future__ import annotations

import json
import textwrap

from byoc_support import fixture_set
from fakes import build, parse_log

from conftest import REPO, run_python

PRELUDE = f"""
import sys
sys.path[:0] = [{str(REPO / "tests" / "byoc")!r}, {str(REPO / "tests")!r}]
from children.on_fake_cuda_vendor import *
"""


def run_artifact(
    fakes: dict[str, str], vendor: str, artifact: str, prefix: str, fixtures: str = "byoc", **env: str
) -> dict:
    """Runs every function of a fixture artifact (in tests/artifacts/<fixtures>) twice on its
    inputs from that directory's expected.npz (those named ``<prefix>:<function>:<input>``);
    returns the outputs, the vendor log of each function, the vendor's live objects at the end
    and its status."""
    directory, manifest, _ = fixture_set(fixtures)
    functions = manifest["artifacts"][artifact]["functions"]
    status = {"cublaslt": "cublaslt_status", "cudnn": "cudnn_status"}[vendor]
    body = f"""
    mod = tvm.runtime.load_module({str(directory / artifact)!r})
    vm = tvm.runtime.vm.VirtualMachine(mod, dev)
    expected = np.load({str(directory / "expected.npz")!r})
    outs, logs = {{}}, {{}}
    for func in {functions!r}:
        args = []
        for key in expected.files:
            if key.startswith(f"{prefix}:{{func}}:"):
                a = expected[key]
                args.append(raw_on_device(a, "float8_e4m3fn") if func == "dequantize" else on_device(a))
        before = len(log())
        for _ in range(2):  # the second call reuses the thread's handle and workspace
            out = vm[func](*args)
        outs[func] = out.numpy().astype("float64").tolist()
        logs[func] = log()[before:]
    result(outs=outs, logs=logs, live=live(), status=hook.{status}())
    """
    return run_fake(fakes, vendor, body, **env)


def build_fakes() -> dict[str, str]:
    """The fake driver and fake vendor libraries, compiled (skip without a C compiler)."""
    return {"driver": str(build("cuda")), "cublaslt": str(build("cublaslt")), "cudnn": str(build("cudnn"))}


def run_fake(fakes: dict[str, str], vendor: str, body: str, check: bool = True, **env: str) -> dict:
    """Runs `body` after PRELUDE with the fake driver and the fake `vendor` library; returns what
    it passed to result(), or {"error": stderr} when it failed and check is False."""
    env_var, prefix = {
        "cublaslt": ("TVM_CUBLASLT_LIBRARY", "fake_cublaslt"),
        "cudnn": ("TVM_CUDNN_LIBRARY", "fake_cudnn"),
    }[vendor]
    full_env = {
        "TVM_CUDA_DRIVER_LIBRARY": fakes["driver"],
        env_var: fakes[vendor],
        "FAKE_VENDOR_LIBRARY": fakes[vendor],
        "FAKE_VENDOR_PREFIX": prefix,
        **env,
    }
    proc = run_python(PRELUDE + textwrap.dedent(body), env=full_env, check=check)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT:")]
    if not lines:
        assert not check, proc.stdout + proc.stderr
        return {"error": proc.stderr}
    return json.loads(lines[-1][len("RESULT:") :])


def calls(log: str, kind: str) -> list[dict[str, str]]:
    return parse_log(log, kind)
