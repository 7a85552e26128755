"""Corrupted WebGPU payloads end in Python exceptions whose messages read, never in an abort.

wgpu-native reads shader text, labels and entry points as Rust strings: a byte that is not UTF-8
made it panic inside its shader lexer, and a panic there aborts the process (5 of 100 mutants of
a real fixture, fuzz/payload_mutants.py).  Other mutants raised UnicodeDecodeError in Python
instead of the error, because messages quoted raw payload bytes.  Every case runs in one child
interpreter, so an abort fails the test (naming the case) instead of ending pytest.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path

import pytest
from webgpu_support import LOADER, kernels_of, webgpu_device, write_payload

import tvm
from conftest import ARTIFACTS, REPO, run_python

# Payloads the mutant probe found (fuzz/payload_mutants.py --save), kept as they were:
# <fixture>__<seed>_<index>.bin, spliced back into tests/artifacts/webgpu/<fixture>.so to replay.
FOUND = ARTIFACTS / "fuzz" / "webgpu"


@pytest.fixture(scope="module")
def dev():
    return webgpu_device(tvm)


CHILD = """
import json, sys
import numpy as np
import tvm, tvm_ffi

dev = tvm.webgpu(0)
assert dev.exist
load = tvm_ffi.get_global_func({loader!r})
for name, path in json.loads(sys.argv[1]).items():
    print("START", name, flush=True)
    try:
        mod = load(open(path, "rb").read())
        f = mod["add_kernel"]
        a = [tvm.runtime.tensor(np.ones(1024, "float32"), dev) for _ in range(3)]
        f(*a, 16, 64)
        dev.sync()
        outcome = {{"outcome": "ran"}}
    except Exception as err:
        outcome = {{"outcome": type(err).__name__, "message": str(err)}}
    print("RESULT", json.dumps({{"case": name, **outcome}}), flush=True)
"""


def run_cases(tmp_path, payloads: dict[str, bytes]) -> dict[str, dict]:
    paths = {}
    for name, payload in payloads.items():
        paths[name] = str(tmp_path / f"{name}.bin")
        (tmp_path / f"{name}.bin").write_bytes(payload)
    code = textwrap.dedent(CHILD.format(loader=LOADER))
    proc = run_python(f"import sys; sys.argv[1:] = [{json.dumps(paths)!r}]\n" + code, check=False)
    started = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("START")]
    if proc.returncode != 0:
        pytest.fail(
            f"the child died ({proc.returncode}) on case {started[-1] if started else '?'}:\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    results = [json.loads(ln[len("RESULT ") :]) for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    return {r.pop("case"): r for r in results}


def add_kernel():
    (k,) = kernels_of("add")
    return k


def test_crafted_corruptions_are_readable_errors(tmp_path, dev):
    k = add_kernel()
    wgsl = k.wgsl.encode()
    cases = {
        # a byte that is not UTF-8 in the shader text: the abort of the issue
        "wgsl_not_utf8": dataclasses.replace(k, wgsl=wgsl.replace(b"C_ptr[", b"C_p\xffr[", 1)),
        "wgsl_truncated_utf8": dataclasses.replace(k, wgsl=wgsl + b"// \xe2\x82"),
        "wgsl_surrogate": dataclasses.replace(k, wgsl=wgsl + b"// \xed\xa0\x80"),
        # a NUL and control bytes are UTF-8: the compiler's own message must come back readable
        "wgsl_nul_byte": dataclasses.replace(k, wgsl=wgsl.replace(b"C_ptr[", b"C_p\x00r[", 1)),
        "launch_tag_not_utf8": dataclasses.replace(
            k, tags=[b"blockIdx.\xff" if t == "blockIdx.x" else t for t in k.tags]
        ),
        "launch_tag_flipped_letter": dataclasses.replace(
            k, tags=["threadIdy.x" if t == "threadIdx.x" else t for t in k.tags]
        ),
        "write_tag_not_utf8": dataclasses.replace(
            k,
            tags=[b"paramWriteAccess:[0,\xfe,1]" if t.startswith("paramWriteAccess") else t for t in k.tags],
        ),
    }
    payloads = {name: write_payload([kernel]) for name, kernel in cases.items()}
    # the kernel's name (label and entry point to wgpu) not UTF-8: the payload is refused at load
    payloads["kernel_name_not_utf8"] = write_payload([dataclasses.replace(k, name=b"add_\xc0kernel")])
    results = run_cases(tmp_path, payloads)
    assert set(results) == set(payloads), results
    for name, r in results.items():
        assert r["outcome"] in ("ValueError", "TypeError", "RuntimeError", "AttributeError"), (name, r)
    for name in ("wgsl_not_utf8", "wgsl_truncated_utf8", "wgsl_surrogate"):
        assert "the WGSL source of kernel 'add_kernel' is not valid UTF-8" in results[name]["message"], (
            results[name]
        )
    assert "byte 0xff at offset" in results["wgsl_not_utf8"]["message"]
    assert "cannot compile kernel 'add_kernel'" in results["wgsl_nul_byte"]["message"]
    msg = results["launch_tag_not_utf8"]["message"]
    assert "unknown launch tag 'blockIdx.\\xff'" in msg and "it is malformed" in msg, msg
    assert "needs a newer" not in msg
    msg = results["launch_tag_flipped_letter"]["message"]
    assert "'threadIdy.x'" in msg and "the artifact is corrupted, or was written by a TVM newer" in msg
    msg = results["write_tag_not_utf8"]["message"]
    assert "malformed launch tag 'paramWriteAccess:[0,\\xfe,1]'" in msg, msg
    msg = results["kernel_name_not_utf8"]["message"]
    assert "function-table entry 0 is not valid UTF-8 (byte 0xc0" in msg, msg


def test_oversized_wgsl_is_refused_at_load():
    import tvm_ffi

    k = add_kernel()
    huge = dataclasses.replace(k, wgsl=k.wgsl + "//" + "x" * (8 << 20))
    with pytest.raises(ValueError, match=r"WGSL source of kernel 'add_kernel' is \d+ bytes, over the limit"):
        tvm_ffi.get_global_func(LOADER)(write_payload([huge]))


def test_mutants_the_probe_found(tmp_path, dev):
    sys.path.insert(0, str(REPO / "fuzz"))
    import payload_mutants  # the probe's own runner: a child per batch, crashes and hangs counted

    cases = {Path(c["file"]).stem: c for c in payload_mutants.fixtures("webgpu")}
    found = sorted(FOUND.glob("*.bin"))
    assert found, f"no saved mutants in {FOUND}"
    mutants = [
        payload_mutants.splice(
            cases[p.stem.split("__")[0]], p.read_bytes(), "webgpu", tmp_path / f"{p.stem}.so"
        )
        for p in found
    ]
    results = payload_mutants.run_mutants("webgpu", mutants)
    for path, r in zip(found, results):
        assert r["outcome"] in ("ran", "error"), (path.name, r)
