"""Bad input gives clear Python exceptions: truncated or corrupted executables, another VM
format version, missing kernels, wrong arguments, devices without a backend."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from backend_testing.payloads import packed_str
from vm_support import (
    MAGIC_V1,
    MAGIC_V2,
    VM_ARTIFACTS,
    executable_payload,
    patched_copy,
)

import tvm
from conftest import ARTIFACTS, run_python
from tvm.runtime.vm import VirtualMachine

MLP = ARTIFACTS / "relax" / "mlp_cpu.so"
VERSION = packed_str(b"0.14")


def load_bytes(blob: bytes):
    return tvm.get_global_func("ffi.Module.load_from_bytes.relax.VMExecutable")(blob)


@pytest.fixture(scope="module")
def payload() -> bytes:
    return executable_payload(MLP)


def mlp_inputs(batch: int = 4, dtype: str = "float32") -> list:
    rng = np.random.default_rng(0)
    shapes = [(batch, 16), (16, 32), (32,), (32, 8), (8,)]
    return [tvm.runtime.tensor(rng.standard_normal(s).astype(dtype)) for s in shapes]


def test_payload_round_trip_loads(payload):
    mod = load_bytes(payload)
    assert mod.kind == "relax.VMExecutable"
    assert "Globals (#11)" in mod["stats"]()
    assert mod["has_function"]("main")


@pytest.mark.parametrize("keep", [0, 5, 8, 15, 60, 0.5, -1])
def test_truncated_executable_names_the_byte_offset(payload, keep):
    n = int(len(payload) * keep) if isinstance(keep, float) else keep % len(payload)
    with pytest.raises(ValueError, match=r"Corrupted relax\.VMExecutable module blob .* at byte \d+ of \d+"):
        load_bytes(payload[:n])


def test_trailing_bytes_are_rejected(payload):
    with pytest.raises(ValueError, match="trailing bytes"):
        load_bytes(payload + b"\0" * 8)


def test_bad_magic(payload):
    with pytest.raises(ValueError, match="bad magic 0x123"):
        load_bytes(struct.pack("<Q", 0x123) + payload[8:])


def test_wrong_version_in_blob(payload):
    blob = payload.replace(VERSION, packed_str(b"0.13"), 1)
    with pytest.raises(ValueError) as info:
        load_bytes(blob)
    msg = str(info.value)
    assert "built by a TVM whose VM format is 0.13" in msg
    assert "tvm-runtime supports 0.14, the format of apache-tvm 0.25, 0.26 and 0.27" in msg


def test_wrong_version_in_exported_library(tmp_path):
    bad = patched_copy(MLP, tmp_path / "mlp_v013.so", VERSION, packed_str(b"0.99"))
    with pytest.raises(ValueError, match=r"VM format is 0\.99; tvm-runtime supports 0\.14"):
        tvm.runtime.load_module(str(bad))


def test_version_one_format_without_memory_scopes(payload):
    # V1 = V2 without the memory-scope section (a u64 count right after the function table).
    pos = 8 + 8 + 4  # magic, version string
    (nfunc,) = struct.unpack_from("<Q", payload, pos)
    pos += 8
    for _ in range(nfunc):
        pos += 4
        (n,) = struct.unpack_from("<Q", payload, pos)
        pos += 8 + n + 4 * 8
        (nparams,) = struct.unpack_from("<Q", payload, pos)
        pos += 8
        for _ in range(nparams):
            (n,) = struct.unpack_from("<Q", payload, pos)
            pos += 8 + n
    assert struct.unpack_from("<Q", payload, pos)[0] == 0  # no scopes in this model
    v1 = struct.pack("<Q", MAGIC_V1) + payload[8:pos] + payload[pos + 8 :]
    assert struct.unpack_from("<Q", payload)[0] == MAGIC_V2
    mod = load_bytes(v1)
    assert "main" in mod["stats"]()
    # Loaded on its own, the executable has no kernel library: a clear error names the kernel.
    with pytest.raises(RuntimeError, match=r"Cannot find function 'matmul'.*imports: none"):
        VirtualMachine(mod, tvm.cpu())


def test_corrupted_register_count_is_caught_at_load(payload):
    header = packed_str(b"main") + struct.pack("<qqqq", 0, 31, 5, 13)
    assert header in payload
    bad = payload.replace(header, packed_str(b"main") + struct.pack("<qqqq", 0, 31, 5, 6), 1)
    with pytest.raises(ValueError, match=r"instruction #\d+ \(in function 'main'\) .*register \d+ of 6"):
        load_bytes(bad)


def test_corrupted_function_range_is_caught_at_load(payload):
    header = packed_str(b"main") + struct.pack("<qqqq", 0, 31, 5, 13)
    bad = payload.replace(header, packed_str(b"main") + struct.pack("<qqqq", 0, 99, 5, 13), 1)
    with pytest.raises(ValueError, match=r"function 'main' spans instructions \[0, 99\) of 31"):
        load_bytes(bad)


def test_missing_kernel_in_exported_library(tmp_path):
    bad = patched_copy(MLP, tmp_path / "mlp_nokernel.so", packed_str(b"matmul1"), packed_str(b"matmulX"))
    mod = tvm.runtime.load_module(str(bad))
    with pytest.raises(RuntimeError) as info:
        VirtualMachine(mod, tvm.cpu())
    msg = str(info.value)
    assert "Cannot find function 'matmulX'" in msg
    assert "kernel library (imports: library" in msg
    assert "global function registry" in msg


def test_missing_global_function_kernel():
    proc = run_python(
        f"""
        import tvm
        from tvm.runtime.vm import VirtualMachine
        mod = tvm.runtime.load_module({str(VM_ARTIFACTS / "misc_cpu.so")!r})
        try:
            VirtualMachine(mod, tvm.cpu())
        except RuntimeError as err:
            print("ERR", err)
        """
    )
    assert "ERR Cannot find function 'testing.vm.scale2'" in proc.stdout


def test_input_checks_raise_like_apache_tvm():
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    with pytest.raises(RuntimeError, match=r"param=x.*match_cast error: shape\[0\] is 3, expected 4"):
        vm["main"](*mlp_inputs(batch=3))
    with pytest.raises(ValueError, match="expect a Tensor with dtype float32 but got float64"):
        vm["main"](*mlp_inputs(dtype="float64"))
    with pytest.raises(TypeError, match=r"'main' expects 5 arguments \(x, w1, b1, w2, b2\), but 2"):
        vm["main"](*mlp_inputs()[:2])
    with pytest.raises(TypeError, match="expect a Tensor but got"):
        vm["main"](1, *mlp_inputs()[1:])
    # The VM is still usable after errors.
    assert vm["main"](*mlp_inputs()).shape == (4, 8)


def test_unknown_function_names():
    vm = VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.cpu())
    with pytest.raises(AttributeError):
        vm["nope"]
    with pytest.raises(ValueError, match="Unknown function: nope"):
        vm.invoke_stateful("nope")
    with pytest.raises(ValueError, match="use `set_input` first"):
        vm.invoke_stateful("main")
    with pytest.raises(ValueError, match="use `invoke_stateful`"):
        vm.get_outputs("main")


def test_device_without_backend_names_the_wheel():
    # The OpenCL wheel is installed but left out here (TVM_BACKENDS), so the error names it.
    out = run_python(
        f"import tvm\nfrom tvm.runtime.vm import VirtualMachine\n"
        f"try:\n    VirtualMachine(tvm.runtime.load_module({str(MLP)!r}), tvm.opencl(0))\n"
        f"except RuntimeError as err:\n    print('ERROR', err)\n",
        env={"TVM_BACKENDS": "none"},
    ).stdout
    assert "ERROR" in out and "pip install tvm-runtime-opencl" in out, out


def test_device_no_wheel_serves_says_so():
    # No wheel of the release train serves Hexagon: the error must not invent one to install.
    with pytest.raises(RuntimeError, match="No tvm-runtime backend exists for this device type yet"):
        VirtualMachine(tvm.runtime.load_module(str(MLP)), tvm.hexagon(0))


def test_bad_vm_arguments():
    mod = tvm.runtime.load_module(str(MLP))
    with pytest.raises(ValueError, match="unknown allocator 'arena'"):
        VirtualMachine(mod, tvm.cpu(), memory_cfg="arena")
    with pytest.raises(TypeError, match="Device"):
        VirtualMachine(mod, "cpu")
    kernel = tvm.runtime.load_module(str(ARTIFACTS / "cpu" / "add.so"))
    with pytest.raises(ValueError, match="not a Relax VM executable"):
        VirtualMachine(kernel, tvm.cpu())
    raw = mod["vm_load_executable"]()
    with pytest.raises(RuntimeError, match="not initialized"):
        raw["main"](*mlp_inputs())
    with pytest.raises(ValueError, match="unknown VM allocator type 7"):
        raw["vm_initialization"](1, 0, 7)
    with pytest.raises(ValueError, match="triplets"):
        raw["vm_initialization"](1, 0)


def test_load_from_file(tmp_path, payload):
    path = tmp_path / "mlp.vmexec"
    path.write_bytes(payload)
    load = tvm.get_global_func("ffi.Module.load_from_file.relax.VMExecutable")
    assert load(str(path)).kind == "relax.VMExecutable"
    with pytest.raises(RuntimeError, match="cannot open Relax VM executable file"):
        load(str(tmp_path / "missing.vmexec"))


def test_relax_artifact_without_its_backend_names_the_wheel():
    proc = run_python(
        f"""
        import tvm
        from tvm.runtime.vm import VirtualMachine
        # The library loads (its OpenCL kernels stand by); running the model needs the backend.
        mod = tvm.runtime.load_module({str(ARTIFACTS / "relax" / "mlp_opencl.so")!r})
        print("LOADED")
        try:
            VirtualMachine(mod, tvm.opencl(0))
        except RuntimeError as err:
            print("ERR", err)
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert "LOADED" in proc.stdout, proc.stdout + proc.stderr
    assert "ERR" in proc.stdout and "pip install tvm-runtime-opencl" in proc.stdout, proc.stdout


def test_mutated_executables_fail_cleanly(payload):
    """Random byte damage: loading raises (never crashes); what loads still lists itself."""
    rng = np.random.default_rng(1234)
    outcomes = {"loaded": 0, "rejected": 0}
    for _ in range(300):
        blob = bytearray(payload)
        for _ in range(int(rng.integers(1, 4))):
            blob[int(rng.integers(len(blob)))] = int(rng.integers(256))
        try:
            mod = load_bytes(bytes(blob))
            assert isinstance(mod["stats"](), str) and isinstance(mod["as_text"](), str)
            outcomes["loaded"] += 1
        except (ValueError, RuntimeError, TypeError):
            outcomes["rejected"] += 1
    assert outcomes["rejected"] > 100


def test_mutated_bytecode_runs_or_raises_in_a_child(tmp_path):
    """Damaged code in a real .so: the VM rejects it or runs it into a Python exception."""
    proc = run_python(
        f"""
        import random, sys, numpy as np, tvm
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        sys.path.insert(0, {str(ARTIFACTS.parent)!r})
        from vm_support import executable_span
        from tvm.runtime.vm import VirtualMachine
        rng = random.Random(7)
        src = {str(ARTIFACTS / "relax" / "mlp_dyn_cpu.so")!r}
        d = np.load({str(ARTIFACTS / "relax" / "mlp_dyn.npz")!r})
        args = [tvm.runtime.tensor(d[k]) for k in ("x_n3", "w1", "b1", "w2", "b2")]
        base = open(src, "rb").read()
        start, length = executable_span(base)
        kinds = set()
        for i in range(40):
            data = bytearray(base)
            for _ in range(rng.randint(1, 3)):
                pos = start + length - 1 - rng.randrange(1500)
                data[pos] ^= 1 << rng.randrange(8)
            path = {str(tmp_path)!r} + f"/mut_{{i}}.so"
            open(path, "wb").write(data)
            try:
                VirtualMachine(tvm.runtime.load_module(path), tvm.cpu())["main"](*args)
                kinds.add("ran")
            except (ValueError, RuntimeError, TypeError, IndexError) as err:
                kinds.add(type(err).__name__)
        print("DONE", sorted(kinds))
        """
    )
    assert "DONE" in proc.stdout
