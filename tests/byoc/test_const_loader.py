"""The core's const_loader: apache-tvm 0.27's serialized form and its init protocol.

``const_loader_params_cpu.so`` is made entirely by apache-tvm 0.27 (its Relax linker emits a
const_loader when ``relax.build`` gets params) and was run by apache-tvm's VM when generated;
the other inputs are 0.27's format written by byoc_support.
"""

from __future__ import annotations

import json
import struct

import mapping_probe
import numpy as np
import pytest
from byoc_support import (
    BYOC,
    EXPECTED,
    const_loader_payload,
    json_payload,
    load_from_bytes,
    put_strs,
    tensor_record,
)

import tvm
from conftest import run_python


def test_compiler_made_const_loader_runs_the_model():
    mod = tvm.runtime.load_module(str(BYOC / "const_loader_params_cpu.so"))
    assert mod.kind == "relax.VMExecutable"
    (loader,) = mod.imports
    assert loader.kind == "const_loader"
    assert [m.kind for m in loader.imports] == ["library"]
    vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    out = vm["main"](tvm.runtime.tensor(EXPECTED["mlp_x"]), tvm.runtime.tensor(EXPECTED["mlp_w"]))
    np.testing.assert_allclose(out.numpy(), EXPECTED["mlp"], rtol=1e-6)
    # The params the linker stored, by name (0.27's get_const_var_tensor).
    params = loader["get_const_var_tensor"]()
    assert list(params.keys()) == ["w"]
    np.testing.assert_array_equal(params["w"].numpy(), EXPECTED["mlp_w"])


def test_dnnl_artifact_tree_has_the_const_loader_and_its_constants():
    # Loading needs the dnnl_json loader (tvm-runtime-dnnl), not oneDNN itself.
    mod = tvm.runtime.load_module(str(BYOC / "dnnl_cnn_cpu.so"))
    (loader,) = mod.imports
    assert loader.kind == "const_loader"
    # 0.27's exporter serializes the DSO part (_lib) after the other imports.
    assert [m.kind for m in loader.imports] == ["dnnl_json", "dnnl_json", "dnnl_json", "library"]
    params = loader["get_const_var_tensor"]()
    expected = {k.split(":", 1)[1]: EXPECTED[k] for k in EXPECTED.files if k.startswith("const:")}
    assert sorted(params.keys()) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(params[name].numpy(), value)


def test_payload_round_trip_and_lookup_forwarding():
    consts = {"a": np.arange(6, dtype="float32").reshape(2, 3), "b": np.ones(4, "int32")}
    loader = load_from_bytes(tvm, "const_loader", const_loader_payload(consts, {"sym": ["b", "a"]}))
    assert loader.kind == "const_loader"
    got = loader["get_const_var_tensor"]()
    for k, v in consts.items():
        np.testing.assert_array_equal(got[k].numpy(), v)
    # Nothing imported answers "sym": no init is run and the lookup finds nothing.
    assert not loader.implements_function("sym", query_imports=True)


def test_init_protocol_binds_constants_once_on_first_lookup():
    from byoc_support import Graph, onednn_or_skip

    import tvm.backend.dnnl  # noqa: F401  (the JSON runtime whose __init_ is exercised)

    onednn_or_skip(tvm)
    g = Graph()
    x = g.input("x", (2, 3))
    k = g.const("sym_dnnl_const_0", (2, 3))
    y = g.kernel("add", [x, k], (2, 3))
    shift = np.arange(6, dtype="float32").reshape(2, 3)
    dnnl = load_from_bytes(tvm, "dnnl_json", json_payload("sym", g.to_json([y]), g.consts))
    a = tvm.runtime.tensor(np.ones((2, 3), "float32"))
    out = tvm.runtime.empty((2, 3), "float32")
    # Called directly, the module has no weights yet: a clear error, not garbage.
    with pytest.raises(RuntimeError, match="before its constants were bound"):
        dnnl["sym"](a, out)
    loader = load_from_bytes(
        tvm, "const_loader", const_loader_payload({"sym_dnnl_const_0": shift}, {"sym": g.consts})
    )
    loader.import_module(dnnl)
    f = loader.get_function("sym")
    f(a, out)
    np.testing.assert_array_equal(out.numpy(), shift + 1)
    # Later lookups do not re-initialize (a second __init_ call is ignored by the module).
    loader.get_function("sym")(a, out)
    np.testing.assert_array_equal(out.numpy(), shift + 1)
    # The module itself now runs too: its constants are bound.
    dnnl["sym"](a, out)
    np.testing.assert_array_equal(out.numpy(), shift + 1)


def _corrupt_cases():
    good = const_loader_payload({"a": np.ones(2, "float32")}, {"s": ["a"]})
    names = put_strs(["a"])
    record = tensor_record(np.ones(2, "float32"))
    yield "truncated", good[:-3], "Corrupted 'const_loader' module blob"
    yield "trailing", good + b"\0", "unexpected trailing bytes"
    yield "count", names + struct.pack("<Q", 2) + record, "1 constant names but 2 tensors"
    dup = put_strs(["a", "a"]) + struct.pack("<Q", 2) + record + record + put_strs([]) + struct.pack("<Q", 0)
    yield "duplicate", dup, "used twice"
    missing = (
        names + struct.pack("<Q", 1) + record + put_strs(["s"]) + struct.pack("<Q", 1) + put_strs(["zz"])
    )
    yield "unknown-const", missing, "names constant 'zz', which is not stored"
    lists = names + struct.pack("<Q", 1) + record + put_strs(["s"]) + struct.pack("<Q", 2) + put_strs(["a"])
    yield "lists", lists, "1 symbols but 2 constant lists"
    bad_magic = names + struct.pack("<Q", 1) + b"\x00" * 8 + record[8:]
    yield "magic", bad_magic, "bad tensor magic"
    yield "huge", struct.pack("<Q", 1 << 60), "Corrupted"


@pytest.mark.parametrize(
    "payload,message", [(p, m) for _, p, m in _corrupt_cases()], ids=[c for c, _, _ in _corrupt_cases()]
)
def test_corrupted_payload_is_a_value_error(payload, message):
    with pytest.raises(ValueError, match=message):
        load_from_bytes(tvm, "const_loader", payload)


# Loads an artifact and reports where each const_loader constant's data lies (/proc/self/smaps:
# the mapped file and that mapping's anonymous kB) and whether it equals the expected value.
WHERE_CHILD = """
import json, numpy as np, tvm
path, prefix = {path!r}, {prefix!r}
EXPECTED = np.load({npz!r})
mod = tvm.runtime.load_module(path)
params = mod.imports[0]["get_const_var_tensor"]()
maps = mappings()
report = {{}}
for name, t in params.items():
    ptr = t.data_ptr()
    found = where(ptr, maps)
    want = EXPECTED[prefix + name]
    report[name] = {{"file": found["file"], "anonymous_kb": found["anonymous_kb"],
                    "aligned": ptr % 64 == 0, "ok": bool(np.array_equal(t.numpy(), want))}}
print(json.dumps(report))
"""


@pytest.mark.parametrize(
    "artifact, prefix",
    [("const_loader_params_cpu.so", "mlp_"), ("dnnl_cnn_cpu.so", "const:")],
    ids=["params", "dnnl"],
)
def test_constants_of_a_library_are_shared_not_copied(tmp_path, artifact, prefix):
    """Each process maps a BYOC model's weights: aligned ones alias the library file, misaligned
    ones the weight store's entry; none is a private copy (issue 37)."""
    store = tmp_path / "weights"
    env = {"TVM_WEIGHT_CACHE_DIR": str(store), "TVM_WEIGHT_CACHE_MIN_SIZE": "0"}
    code = mapping_probe.SOURCE + WHERE_CHILD.format(
        path=str(BYOC / artifact), prefix=prefix, npz=str(BYOC / "expected.npz")
    )
    for _ in range(2):  # the first process writes the store's entry, the second maps it
        report = json.loads(run_python(code, env=env).stdout.strip().splitlines()[-1])
        entries = {str(p) for p in store.glob("*.entry")}
        assert report
        for name, r in report.items():
            assert r["ok"] and r["aligned"], (name, r)
            assert r["file"] in {str(BYOC / artifact), *entries}, (name, r)
            assert r["anonymous_kb"] == 0, (name, r)
