"""Generate the tensor (weight) cache fixture under ``tests/artifacts/tensor_cache``.

Run it, like ``generate.py`` beside it, with a Python that has ``apache-tvm==0.27.0.post1`` (and
``ml_dtypes``, which apache-tvm installs)::

    /tmp/venv-tvm027/bin/python tests/artifacts/generate_tensor_cache.py [--out DIR]

What it writes (deterministic: fixed seed, fixed record order):

* ``tensor-cache.json`` + ``params_shard_<i>.bin``: written by apache-tvm 0.27's own writer,
  ``tvm.contrib.tvmjs.dump_tensor_cache``, with a 2 KiB shard cap so the records spread over
  several shards (one record big enough to get a shard of its own). Records: the weights of
  ``relax/mlp`` in float32 (``mlp.*``) and narrowed to bfloat16 by the writer
  (``bf16enc.*``, format ``f32-to-bf16``), float16 (marked ``f32-to-bf16`` but stored raw, as
  the writer does for non-float32 records), bfloat16, float8_e4m3fn, float64, int8, uint32,
  int64, bool, a 0-d scalar, an empty tensor and ``param_0..2`` (for
  ``param_array_from_cache("param", -1)``); the writer also leaves ``tensor-cache-b16.json``.
* ``expected.npz`` + ``expected.json``: every record as apache-tvm 0.27's runtime
  (``vm.builtin.tensor_cache.load`` / ``get``) returns it on CPU (bfloat16/float8 stored as their
  raw bits), checked against numpy before writing (bfloat16 rounding: ml_dtypes, round to nearest
  even).
* ``tiny_llama/``: the weights of llmkv's decoder fixture (``llm/tiny_llama.npz``, ``param_<i>``)
  as MLC-LLM ships a model's weights: one float32 record per parameter, named as
  ``llm/tiny_llama.json``'s ``param_names``, in 64 KiB shards; the same bytes as the npz, so the
  tokens and logits recorded there hold for a model fed from this cache.
* ``mlp_from_cache.npz``: ``relax/mlp_cpu.so`` run by apache-tvm 0.27's VM with its weights taken
  from the cache: ``y`` (float32 weights, equal to ``relax/mlp.npz``'s numpy result within 1e-5)
  and ``y_bf16`` (the bfloat16-narrowed ``w1``/``w2``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

import tvm
from tvm import relax
from tvm.contrib import tvmjs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import save_npz  # noqa: E402  (same directory; byte-deterministic npz)

HERE = Path(__file__).resolve().parent
SHARD_CAP_BYTES = 2048
MLP_WEIGHTS = ("w1", "b1", "w2", "b2")


def source_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The arrays to store, in record order."""
    mlp = np.load(HERE / "relax" / "mlp.npz")
    params: dict[str, np.ndarray] = {f"mlp.{k}": mlp[k] for k in MLP_WEIGHTS}
    params.update({f"bf16enc.{k}": mlp[k] for k in MLP_WEIGHTS})
    params["half"] = rng.standard_normal((3, 5)).astype("float16")
    params["bf16"] = rng.standard_normal((4, 6)).astype(ml_dtypes.bfloat16)
    params["fp8"] = rng.uniform(-4, 4, (8,)).astype(ml_dtypes.float8_e4m3fn)
    params["float64"] = rng.standard_normal((2, 2))
    params["int8"] = rng.integers(-128, 128, (7,)).astype("int8")
    params["uint32"] = rng.integers(0, 2**32, (2, 3), dtype=np.uint64).astype("uint32")
    params["int64"] = rng.integers(-(2**40), 2**40, (3,)).astype("int64")
    params["bool"] = rng.integers(0, 2, (5,)).astype(bool)
    params["scalar"] = np.array(2.5, "float32")
    params["empty"] = np.zeros((0, 4), "float32")
    for i in range(3):
        params[f"param_{i}"] = rng.standard_normal((i + 1, 2)).astype("float32")
    params["big"] = rng.standard_normal((40, 40)).astype("float32")  # 6400 B: a shard of its own
    return params


def encode_formats(params: dict[str, np.ndarray]) -> dict[str, str]:
    fmt = {name: "raw" for name in params}
    for name in params:
        if name.startswith("bf16enc."):
            fmt[name] = "f32-to-bf16"
    fmt["half"] = "f32-to-bf16"  # not float32: the writer stores it raw anyway
    return fmt


def expected_value(name: str, value: np.ndarray, fmt: str) -> np.ndarray:
    """What a reader must return, computed with numpy/ml_dtypes (not with TVM)."""
    if fmt == "f32-to-bf16" and value.dtype == np.float32:
        return value.astype(ml_dtypes.bfloat16).astype("float32")
    return value


def as_bits(arr: np.ndarray) -> np.ndarray:
    """npz-safe form: bfloat16/float8 as their raw unsigned bits."""
    if arr.dtype == ml_dtypes.bfloat16:
        return arr.view("uint16")
    if arr.dtype == ml_dtypes.float8_e4m3fn:
        return arr.view("uint8")
    return arr


def dtype_name(arr: np.ndarray) -> str:
    return {
        np.dtype(ml_dtypes.bfloat16): "bfloat16",
        np.dtype(ml_dtypes.float8_e4m3fn): "float8_e4m3fn",
    }.get(arr.dtype, str(arr.dtype))


def load_with_apache_tvm(
    cache_dir: Path, names: list[str], prefix: str | None = "param"
) -> dict[str, np.ndarray]:
    load = tvm.get_global_func("vm.builtin.tensor_cache.load")
    get = tvm.get_global_func("vm.builtin.tensor_cache.get")
    tvm.get_global_func("vm.builtin.tensor_cache.clear")()
    load(str(cache_dir), 1, 0)
    out = {}
    for name in names:
        t = get(name)
        assert t is not None, name
        out[name] = t.numpy()
    if prefix is not None:
        arr = tvm.get_global_func("vm.builtin.param_array_from_cache")(prefix, -1)
        assert len(arr) == 3, len(arr)
    return out


def run_mlp_from_cache() -> dict[str, np.ndarray]:
    dev = tvm.cpu()
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(HERE / "relax" / "mlp_cpu.so")), dev)
    x = tvm.runtime.tensor(np.load(HERE / "relax" / "mlp.npz")["x"], dev)
    by_name = tvm.get_global_func("vm.builtin.param_array_from_cache_by_name")
    y = vm["main"](x, *by_name([f"mlp.{k}" for k in MLP_WEIGHTS])).numpy()
    narrowed = ["bf16enc.w1", "mlp.b1", "bf16enc.w2", "mlp.b2"]
    y_bf16 = vm["main"](x, *by_name(narrowed)).numpy()
    return {"x": x.numpy(), "y": y, "y_bf16": y_bf16}


def write_tiny_llama_cache(out: Path) -> None:
    """The decoder's weights (if its fixture exists) as a tensor cache, read back by 0.27."""
    llm = HERE / "llm"
    if not (llm / "tiny_llama.json").exists():
        print("llm/tiny_llama.json not found: no tiny_llama cache")
        return
    names = json.loads((llm / "tiny_llama.json").read_text())["param_names"]
    data = np.load(llm / "tiny_llama.npz")
    params = {name: data[f"param_{i}"] for i, name in enumerate(names)}
    tvmjs.dump_tensor_cache(params, str(out), encode_format="raw", shard_cap_mb=1 / 16, show_progress=False)
    loaded = load_with_apache_tvm(out, names, prefix=None)
    for name, value in params.items():
        assert np.array_equal(loaded[name], value), name
    (out / "tensor-cache-b16.json").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "tensor_cache")
    args = parser.parse_args(argv)
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)

    params = source_params(np.random.default_rng(20261125))
    formats = encode_formats(params)
    tvmjs.dump_tensor_cache(
        params,
        str(out),
        encode_format=formats,
        meta_data={"generator": "tests/artifacts/generate_tensor_cache.py"},
        shard_cap_mb=SHARD_CAP_BYTES / (1 << 20),
        show_progress=False,
    )
    index = json.loads((out / "tensor-cache.json").read_text())
    assert len(index["records"]) >= 3, "expected several shards"

    loaded = load_with_apache_tvm(out, list(params))
    expected_json = {}
    arrays = {}
    for i, (name, value) in enumerate(params.items()):
        want = expected_value(name, value, formats[name])
        got = loaded[name]
        if dtype_name(want) in ("bfloat16", "float8_e4m3fn"):
            got = got.view(want.dtype) if got.dtype != want.dtype else got
        assert got.shape == want.shape and dtype_name(got) == dtype_name(want), name
        assert np.array_equal(as_bits(got), as_bits(want)), f"apache-tvm 0.27 read {name} differently"
        key = f"r{i}"
        arrays[key] = as_bits(got)
        expected_json[name] = {"key": key, "dtype": dtype_name(want), "shape": list(want.shape)}
    save_npz(out / "expected.npz", arrays)
    (out / "expected.json").write_text(json.dumps(expected_json, indent=1, sort_keys=True) + "\n")

    mlp = run_mlp_from_cache()
    ref = np.load(HERE / "relax" / "mlp.npz")["y"]
    np.testing.assert_allclose(mlp["y"], ref, rtol=1e-5, atol=1e-5)
    assert not np.allclose(mlp["y_bf16"], ref, rtol=0, atol=1e-7), "bf16 weights changed nothing"
    save_npz(out / "mlp_from_cache.npz", mlp)
    write_tiny_llama_cache(out / "tiny_llama")
    tvm.get_global_func("vm.builtin.tensor_cache.clear")()
    print(f"wrote {out}: {len(params)} records in {len(index['records'])} shards")
    return 0


if __name__ == "__main__":
    sys.exit(main())
