"""The tensor (weight) cache: ``vm.builtin.tensor_cache.*`` and ``param_*_from_cache*`` reading
the sharded cache apache-tvm 0.27's writer (``tvm.contrib.tvmjs.dump_tensor_cache``) produced
(``tests/artifacts/generate_tensor_cache.py``), on the CPU and on OpenCL, checked against what
apache-tvm 0.27's runtime read from the same files; a Relax model runs with weights from the
cache; damaged caches fail with errors that say what is wrong."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from vm_support import device_for

import tvm
from conftest import ARTIFACTS

CACHE = ARTIFACTS / "tensor_cache"
EXPECTED = json.loads((CACHE / "expected.json").read_text())
EXPECTED_DATA = np.load(CACHE / "expected.npz")
MLP_NAMES = [f"mlp.{k}" for k in ("w1", "b1", "w2", "b2")]
RAW_BITS = {"bfloat16": "uint16", "float8_e4m3fn": "uint8"}


def g(name: str):
    return tvm.get_global_func("vm.builtin." + name)


@pytest.fixture(autouse=True)
def empty_cache():
    g("tensor_cache.clear")()
    yield
    g("tensor_cache.clear")()


def load(path: Path | str, dev) -> None:
    g("tensor_cache.load")(str(path), dev.dlpack_device_type(), dev.index)


def bits(t) -> np.ndarray:
    """A cached tensor's contents; bfloat16/float8 as raw bits (numpy has no such dtypes)."""
    dtype = str(t.dtype)
    if dtype in RAW_BITS:
        return t.copyto(tvm.cpu())._create_view(t.shape, RAW_BITS[dtype]).numpy()
    return t.numpy()


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_every_record_reads_as_apache_tvm_reads_it(target):
    dev = device_for(tvm, target)
    load(CACHE, dev)
    for name, want in EXPECTED.items():
        t = g("tensor_cache.get")(name)
        assert t is not None, name
        assert (str(t.dtype), list(t.shape), t.device) == (want["dtype"], want["shape"], dev), name
        np.testing.assert_array_equal(bits(t), EXPECTED_DATA[want["key"]], err_msg=name)
    # the fixture covers what the format holds: several shards, narrowed and raw records
    index = json.loads((CACHE / "tensor-cache.json").read_text())
    assert len(index["records"]) >= 3
    assert {"float32", "float16", "bfloat16", "float8_e4m3fn", "bool"} <= {
        w["dtype"] for w in EXPECTED.values()
    }


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_relax_model_runs_with_weights_from_the_cache(target):
    dev = device_for(tvm, target)
    load(CACHE, dev)
    ref = np.load(CACHE / "mlp_from_cache.npz")
    vm = tvm.runtime.vm.VirtualMachine(
        tvm.runtime.load_module(str(ARTIFACTS / "relax" / f"mlp_{target}.so")), dev
    )
    x = tvm.runtime.tensor(ref["x"], dev)
    y = vm["main"](x, *g("param_array_from_cache_by_name")(MLP_NAMES)).numpy()
    np.testing.assert_allclose(y, np.load(ARTIFACTS / "relax" / "mlp.npz")["y"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y, ref["y"], rtol=1e-5, atol=1e-6)
    # w1/w2 narrowed to bfloat16 by the writer: apache-tvm 0.27's VM gave y_bf16 on the CPU
    narrowed = g("param_array_from_cache_by_name_unpacked")("bf16enc.w1", "mlp.b1", "bf16enc.w2", "mlp.b2")
    np.testing.assert_allclose(vm["main"](x, *narrowed).numpy(), ref["y_bf16"], rtol=1e-5, atol=1e-6)


def test_param_arrays_and_modules():
    load(CACHE, tvm.cpu())
    arrays = g("param_array_from_cache")("param", -1)
    assert len(arrays) == 3
    for i, t in enumerate(arrays):
        np.testing.assert_array_equal(t.numpy(), EXPECTED_DATA[EXPECTED[f"param_{i}"]["key"]])
    assert len(g("param_array_from_cache")("param", 2)) == 2
    with pytest.raises(ValueError, match="cannot find parameter 'param_3' in the tensor cache"):
        g("param_array_from_cache")("param", 4)
    with pytest.raises(ValueError, match="cannot find parameter 'nope'"):
        g("param_array_from_cache_by_name")(["mlp.w1", "nope"])
    with pytest.raises(TypeError, match="argument 1 must be a parameter name"):
        g("param_array_from_cache_by_name_unpacked")("mlp.w1", 3)
    for mod in (
        g("param_module_from_cache")("param", 3),
        g("param_module_from_cache_by_name")(["param_0", "param_1", "param_2"]),
    ):
        assert mod.kind == "param_module"
        got = mod["get_params"]()
        assert [t.shape for t in got] == [(1, 2), (2, 2), (3, 2)]
    # the arrays share the cached tensors (no copy)
    by_name = g("param_array_from_cache_by_name")(["mlp.w1"])[0]
    assert by_name.same_as(g("tensor_cache.get")("mlp.w1"))


def test_get_update_remove_clear():
    get, update = g("tensor_cache.get"), g("tensor_cache.update")
    assert get("w") is None
    a = tvm.runtime.tensor(np.arange(6, dtype="float32").reshape(2, 3))
    update("w", a)
    assert get("w").same_as(a)
    with pytest.raises(ValueError, match="'w' is already in the tensor cache; pass override=True"):
        update("w", a)
    b = tvm.runtime.tensor(np.ones(4, "int32"))
    update("w", b, True)
    np.testing.assert_array_equal(get("w").numpy(), np.ones(4, "int32"))
    with pytest.raises(TypeError, match="value must be a Tensor"):
        update("x", 3)
    g("tensor_cache.remove")("w")
    g("tensor_cache.remove")("w")  # removing a missing name is fine, as in 0.27
    assert get("w") is None
    load(CACHE, tvm.cpu())
    assert get("mlp.w1") is not None
    g("tensor_cache.clear")()
    assert get("mlp.w1") is None


def test_loading_again_replaces_and_b16_index_loads_bfloat16():
    load(CACHE, tvm.cpu())
    first = g("tensor_cache.get")("mlp.w1")
    load(CACHE, tvm.cpu())
    assert not g("tensor_cache.get")("mlp.w1").same_as(first)
    # The writer's second index lists the narrowed records as bfloat16 (raw) instead.
    load(CACHE / "tensor-cache-b16.json", tvm.cpu())
    t = g("tensor_cache.get")("bf16enc.w1")
    assert str(t.dtype) == "bfloat16"
    widened = EXPECTED_DATA[EXPECTED["bf16enc.w1"]["key"]]
    np.testing.assert_array_equal(bits(t), (widened.view("uint32") >> 16).astype("uint16"))


# ---------------------------------------------------------------- damaged caches


@pytest.fixture
def cache_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "cache"
    shutil.copytree(CACHE, dst)
    return dst


def edit_index(cache: Path, edit) -> None:
    path = cache / "tensor-cache.json"
    index = json.loads(path.read_text())
    edit(index)
    path.write_text(json.dumps(index))


def test_missing_or_truncated_shard(cache_copy: Path):
    (cache_copy / "params_shard_2.bin").unlink()
    with pytest.raises(
        ValueError, match=r"params_shard_2.bin' \(missing or unreadable\).*download or convert it again"
    ):
        load(cache_copy, tvm.cpu())
    # nothing of a failed load stays in the cache, not even the shards read before the bad one
    assert g("tensor_cache.get")("mlp.w1") is None
    shutil.copy(CACHE / "params_shard_2.bin", cache_copy / "params_shard_2.bin")
    data = (cache_copy / "params_shard_1.bin").read_bytes()
    (cache_copy / "params_shard_1.bin").write_bytes(data[:-10])
    with pytest.raises(
        ValueError,
        match=f"params_shard_1.bin' has {len(data) - 10} bytes, tensor-cache.json says {len(data)}",
    ):
        load(cache_copy, tvm.cpu())


def test_missing_directory_and_bad_json(cache_copy: Path, tmp_path: Path):
    with pytest.raises(ValueError, match="cannot open the tensor cache index .*tensor-cache.json"):
        load(tmp_path / "nowhere", tvm.cpu())
    (cache_copy / "tensor-cache.json").write_text('{"records": [')
    with pytest.raises(ValueError, match="is not valid JSON"):
        load(cache_copy, tvm.cpu())


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda ix: ix["records"][0]["records"][0].update(byteOffset=4000),
            "lie outside the shard of 2048 bytes",
        ),
        (lambda ix: ix["records"][1]["records"][0].update(dtype="float13"), 'unknown dtype "float13"'),
        (
            lambda ix: ix["records"][1]["records"][0].update(shape=[5, 5]),
            "nbytes is 1024 but float32 of this shape stored as bfloat16 takes 50",
        ),
        (
            lambda ix: ix["records"][1]["records"][0].update(format="q4f16"),
            'record format "q4f16" is not supported',
        ),
        (lambda ix: ix["records"][1].update(format="zip"), 'shard format "zip" is not supported'),
        (
            lambda ix: ix["records"][1].update(dataPath="../../etc/passwd"),
            "dataPath must be a file name inside",
        ),
        (lambda ix: ix["records"][2]["records"][0].pop("nbytes"), 'missing field "nbytes"'),
        (lambda ix: ix.update(records=5), 'field "records" is not a list'),
        # found while writing fuzz/fuzz_tensor_cache.cc: the overflow guard added 1 to the
        # dimension (signed overflow for 2^63-1), and the byte size (2^62 x 8) could wrap to 0
        (
            lambda ix: ix["records"][0]["records"][0].update(shape=[2**63 - 1, 2]),
            "element count does not fit in 64 bits",
        ),
        (
            lambda ix: ix["records"][0]["records"][0].update(shape=[2**62], dtype="float64", nbytes=0),
            "its size in bytes does not fit in 64 bits",
        ),
    ],
)
def test_corrupt_index_entries(cache_copy: Path, edit, message):
    edit_index(cache_copy, edit)
    with pytest.raises(ValueError, match=message):
        load(cache_copy, tvm.cpu())


def test_tiny_llama_cache_holds_the_decoder_weights():
    """The decoder fixture's weights as MLC-LLM ships them (tests/llm feeds the model from here)."""
    llm = ARTIFACTS / "llm"
    names = json.loads((llm / "tiny_llama.json").read_text())["param_names"]
    weights = np.load(llm / "tiny_llama.npz")
    load(CACHE / "tiny_llama", tvm.cpu())
    params = g("param_array_from_cache_by_name")(names)
    assert len(params) == len(names)
    for i, t in enumerate(params):
        # if this fails, llm/tiny_llama.npz changed: rerun tests/artifacts/generate_tensor_cache.py
        np.testing.assert_array_equal(t.numpy(), weights[f"param_{i}"], err_msg=names[i])
