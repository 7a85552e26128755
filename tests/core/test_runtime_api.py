"""The apache-tvm 0.27 runtime Python API, on the CPU device."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tvm


def test_device_constructors_and_attributes():
    assert tvm.device("cpu", 0) == tvm.cpu(0)
    assert isinstance(tvm.cpu(0), tvm.runtime.Device)
    assert tvm.device("opencl:1") == tvm.opencl(1)
    assert (tvm.cuda(2).dlpack_device_type(), tvm.cuda(2).index) == (2, 2)
    assert (
        tvm.vulkan().dlpack_device_type(),
        tvm.metal().dlpack_device_type(),
        tvm.rocm().dlpack_device_type(),
    ) == (7, 8, 10)
    assert tvm.cpu(0).exist is True
    assert tvm.cpu(0).total_global_memory > 0
    assert tvm.cpu(0).available_global_memory > 0
    assert tvm.cpu(0).warp_size is None  # not meaningful for CPU: None, like apache-tvm


def test_device_of_unserved_type_does_not_exist():
    # Metal/ROCm have no backend wheel here: exist is False, never an error.
    assert tvm.metal(0).exist is False
    assert tvm.rocm(0).exist is False


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "float16", "int8", "int32", "int64", "uint8", "bool"]
)
def test_tensor_roundtrip(dtype):
    rng = np.random.default_rng(0)
    arr = (rng.standard_normal((3, 5)) * 10).astype(dtype)
    t = tvm.runtime.tensor(arr)
    assert isinstance(t, tvm.runtime.Tensor)
    assert tuple(t.shape) == (3, 5)
    assert str(t.dtype) == dtype
    np.testing.assert_array_equal(t.numpy(), arr)
    assert t.data_ptr() % 64 == 0, "kernels assume 64-byte aligned data"


def test_empty_copyfrom_copyto_setitem():
    arr = np.arange(12, dtype="float32").reshape(3, 4)
    t = tvm.runtime.empty((3, 4), "float32", tvm.cpu(0))
    t.copyfrom(arr)
    np.testing.assert_array_equal(t.numpy(), arr)
    u = t.copyto(tvm.cpu(0))
    np.testing.assert_array_equal(u.numpy(), arr)
    w = tvm.runtime.empty((3, 4), "float32")
    t.copyto(w)
    np.testing.assert_array_equal(w.numpy(), arr)
    w[:] = np.ones((3, 4), "float32")
    np.testing.assert_array_equal(w.numpy(), 1)
    t.copyfrom(w)
    np.testing.assert_array_equal(t.numpy(), 1)
    # Lists and non-contiguous arrays are converted.
    t.copyfrom(arr.T.copy().T)
    t.copyfrom([[1, 2, 3, 4]] * 3)
    assert t.numpy()[2, 3] == 4


def test_copyfrom_shape_mismatch_raises():
    t = tvm.runtime.empty((2, 2), "float32")
    with pytest.raises(ValueError, match="shape"):
        t.copyfrom(np.zeros((3,), "float32"))


def test_views_share_storage():
    t = tvm.runtime.tensor(np.arange(16, dtype="int32"))
    v = t._create_view((2, 4), "int32", relative_byte_offset=16)
    np.testing.assert_array_equal(v.numpy(), np.arange(4, 12).reshape(2, 4))
    with pytest.raises(ValueError, match="does not fit"):
        t._create_view((20,), "int32")


def test_from_dlpack_zero_copy():
    # from_dlpack requires 64-byte aligned data (kernels assume it): carve an aligned window.
    raw = np.zeros(64 + 16, dtype="float32")
    start = (-raw.ctypes.data % 64) // 4
    arr = raw[start : start + 64]
    assert arr.ctypes.data % 64 == 0
    t = tvm.runtime.from_dlpack(arr)
    arr[0] = 42
    assert t.numpy()[0] == 42


def test_params_roundtrip(tmp_path):
    params = {"w": np.arange(6, dtype="float32").reshape(2, 3), "b": np.array([1, 2], dtype="int64")}
    blob = tvm.runtime.save_param_dict(params)
    loaded = tvm.runtime.load_param_dict(blob)
    assert set(loaded) == {"w", "b"}
    for k, v in params.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v)
    path = tmp_path / "p.bin"
    tvm.runtime.save_param_dict_to_file(params, str(path))
    assert path.read_bytes() == blob
    np.testing.assert_array_equal(tvm.runtime.load_param_dict_from_file(path)["w"].numpy(), params["w"])
    with pytest.raises(ValueError, match="params"):
        tvm.runtime.load_param_dict(blob[:-5])


def test_corrupted_params_say_what_is_wrong_with_which_tensor(tmp_path):
    # A damaged save_param_dict blob is a params blob, not an exported library: the message
    # names the input, the tensor record and what is wrong, and says how to get a good one.
    params = {"w": np.arange(6, dtype="float32"), "b": np.array([1, 2], dtype="int64")}
    blob = bytearray(tvm.runtime.save_param_dict(params))
    truncated = bytes(blob[:-5])
    with pytest.raises(ValueError) as err:
        tvm.runtime.load_param_dict(truncated)
    msg = str(err.value)
    assert msg.startswith("Corrupted params blob (tensor '"), msg
    assert "(2 of 2)" in msg and "save the parameters again" in msg, msg
    assert "re-export" not in msg and "module" not in msg
    path = tmp_path / "broken.params"
    path.write_bytes(truncated)
    with pytest.raises(ValueError, match=rf"Corrupted params file '{path}' \(tensor '"):
        tvm.runtime.load_param_dict_from_file(path)
    with pytest.raises(ValueError, match=r"Corrupted params blob \(not a TVM params blob \(bad magic\)"):
        tvm.runtime.load_param_dict(b"\0" * 64)


def test_global_functions_and_enabled():
    assert tvm.get_global_func("runtime.GetDeviceAttr") is not None
    assert tvm.runtime.enabled("llvm") and tvm.runtime.enabled("cpu")
    assert not tvm.runtime.enabled("hexagon")  # no tvm-runtime wheel serves it
    assert tvm.runtime.num_threads() >= 1

    @tvm.register_global_func("testing.add_one", override=True)
    def add_one(x):
        return x + 1

    assert tvm.get_global_func("testing.add_one")(41) == 42


def test_streams_on_cpu():
    """The CPU has no streams: as apache-tvm 0.27 does, create_raw_stream hands out the null
    stream (0), and setting, syncing, chaining and freeing it are accepted; work issued while it
    is current is done when the call returns."""
    dev = tvm.cpu(0)
    stream = dev.create_raw_stream()
    assert stream == 0  # apache-tvm 0.27's CPU device API returns no stream
    dev.set_raw_stream(stream)
    try:
        assert tvm_ffi.get_raw_stream(dev) == stream
        x = tvm.runtime.tensor(np.arange(8, dtype="float32"), dev)
        y = tvm.runtime.empty((8,), "float32", dev)
        x.copyto(y)
        dev.sync(stream)
        tvm.get_global_func("runtime.Device_StreamSyncFromTo")(dev, stream, stream)
        dev.sync()
        np.testing.assert_array_equal(y.numpy(), np.arange(8, dtype="float32"))
    finally:
        dev.set_raw_stream(0)
    dev.free_raw_stream(stream)


def test_load_module_missing_file():
    with pytest.raises(FileNotFoundError):
        tvm.runtime.load_module("/nonexistent/model.so")


# The device constructors apache-tvm 0.27 offers both as tvm.<name> and tvm.runtime.<name>.
DEVICE_CONSTRUCTORS = ("device", "cpu", "cuda", "opencl", "vulkan", "metal", "rocm")


def test_runtime_namespace_matches_apache_tvm_027():
    for name in (
        *DEVICE_CONSTRUCTORS,
        "Device",
        "Tensor",
        "Module",
        "tensor",
        "empty",
        "load_module",
        "from_dlpack",
        "vpi",
        "ext_dev",
        "enabled",
        "num_threads",
        "system_lib",
        "save_param_dict",
        "load_param_dict",
        "ShapeTuple",
        "DataType",
        "Object",
        "convert",
    ):
        assert hasattr(tvm.runtime, name), name
    for name in (*DEVICE_CONSTRUCTORS, "get_global_func", "register_global_func"):
        assert hasattr(tvm, name), name
    assert tvm.runtime.ShapeTuple is tvm_ffi.Shape


def test_params_written_by_apache_tvm_027_load():
    # apache027_params.bin: apache-tvm 0.27.0.post1's save_param_dict of apache027_params.npz:
    #   rng = np.random.default_rng(7); weight f32 (4,3), bias arange(5) i64, half f16 (6,)
    from conftest import ARTIFACTS

    blob = (ARTIFACTS / "params" / "apache027_params.bin").read_bytes()
    expected = np.load(ARTIFACTS / "params" / "apache027_params.npz")
    loaded = tvm.runtime.load_param_dict(blob)
    assert set(loaded) == set(expected.files)
    for name in expected.files:
        assert str(loaded[name].dtype) == str(expected[name].dtype)
        np.testing.assert_array_equal(loaded[name].numpy(), expected[name])
    # Our writer produces the same bytes for the same dict (same format, same order).
    assert tvm.runtime.save_param_dict({k: loaded[k] for k in ("weight", "bias", "half")}) == blob


def test_load_module_relative_path(tmp_path, monkeypatch):
    import shutil

    from conftest import ARTIFACTS

    shutil.copy(ARTIFACTS / "cpu" / "add.so", tmp_path / "add.so")
    monkeypatch.chdir(tmp_path)
    mod = tvm.runtime.load_module("add.so")  # a bare name must not go through the library path
    a = tvm.runtime.tensor(np.ones(1024, "float32"))
    c = tvm.runtime.empty((1024,), "float32")
    mod["add"](a, a, c)
    np.testing.assert_array_equal(c.numpy(), 2)


def test_load_params_missing_file():
    with pytest.raises(FileNotFoundError):
        tvm.runtime.load_param_dict_from_file("/nonexistent/params.bin")
