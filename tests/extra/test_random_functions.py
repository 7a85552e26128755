"""tvm.contrib.random.*: 0.27's conventions; the seeded forms reproduce 0.27's numbers exactly
(tests/artifacts/contrib/random_seeded.npz was written by apache-tvm 0.27)."""

from __future__ import annotations

import numpy as np
import pytest
from backend_testing.devices import device_or_skip
from extra_support import CONTRIB, MANIFEST

import tvm


def fn(name: str):
    return tvm.get_global_func(f"tvm.contrib.random.{name}")


def empty(shape, dtype: str, dev=None):
    return tvm.runtime.empty(tuple(shape), dtype, dev or tvm.cpu(0))


@pytest.mark.parametrize("call", MANIFEST["random"]["calls"], ids=lambda c: c["key"])
def test_seeded_calls_give_apache_tvm_numbers(call):
    expected = np.load(CONTRIB / MANIFEST["random"]["npz"])[call["key"]]
    for _ in range(2):  # stateless: the same seeds give the same numbers every time
        out = empty(call["shape"], call["dtype"])
        tvm.get_global_func(call["function"])(*call["args"], out)
        np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_randint_stays_in_range_and_covers_it(dtype):
    out = empty((20000,), dtype)
    fn("randint")(-5, 7, out)
    got = out.numpy()
    low = 0 if dtype.startswith("u") else -5
    assert got.min() == low and got.max() == 6
    assert len(np.unique(got)) == 7 - low


def test_randint_clips_the_range_to_the_dtype():
    out = empty((5000,), "uint8")
    fn("randint")(-1000, 1000, out)  # [0, 256) once clipped to uint8
    got = out.numpy()
    assert got.min() == 0 and got.max() == 255


def test_unseeded_uniform_and_normal_statistics():
    u = empty((200000,), "float32")
    fn("uniform")(-2.0, 3.0, u)
    x = u.numpy()
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.02 and abs(x.std() - 5 / np.sqrt(12)) < 0.02
    n = empty((200000,), "float32")
    fn("normal")(1.5, 0.25, n)
    y = n.numpy()
    assert abs(y.mean() - 1.5) < 0.005 and abs(y.std() - 0.25) < 0.005
    fn("uniform")(-2.0, 3.0, u)
    assert not np.array_equal(u.numpy(), x)  # the thread's engine moves on


def test_float64_outputs_are_filled_too():
    out = empty((1000,), "float64")
    fn("uniform")(7, 9, 0.0, 1.0, out)
    f32 = empty((1000,), "float32")
    fn("uniform")(7, 9, 0.0, 1.0, f32)
    np.testing.assert_array_equal(out.numpy(), f32.numpy().astype("float64"))


@pytest.mark.parametrize("func", ["random_fill", "random_fill_for_measure"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fill_floats_in_one_to_ten(func, dtype):
    out = empty((300000,), dtype)
    fn(func)(out)
    x = out.numpy().astype("float64")
    assert x.min() >= 1.0 and x.max() <= 10.0
    assert abs(x.mean() - 5.5) < 0.05
    assert len(np.unique(x)) > 100


@pytest.mark.parametrize("func", ["random_fill", "random_fill_for_measure"])
def test_fill_int8_with_small_integers(func):
    out = empty((10000,), "uint8")
    fn(func)(out)
    assert set(np.unique(out.numpy())) == set(range(1, 10))


def test_fill_for_measure_is_not_constant_across_chunks():
    out = empty((1 << 18,), "float32")  # four 64Ki-element chunks filled by different engines
    fn("random_fill_for_measure")(out)
    chunks = out.numpy().reshape(4, -1)
    assert not any(np.array_equal(chunks[0], c) for c in chunks[1:])


def test_random_fill_on_a_device_tensor():
    dev = device_or_skip(tvm, tvm.opencl(0), 4, "OpenCL")
    out = empty((4096,), "float32", dev)
    fn("random_fill")(out)
    x = out.numpy()
    assert x.min() >= 1.0 and x.max() <= 10.0 and len(np.unique(x)) > 100
    fn("random_fill_for_measure")(out)
    assert out.numpy().min() >= 1.0


def test_errors_say_what_is_wrong():
    out = empty((4,), "float32")
    with pytest.raises(ValueError, match=r"high \(1\) must be bigger than low \(2\)"):
        fn("randint")(2, 1, empty((4,), "int32"))
    with pytest.raises(ValueError, match="randint fills integer tensors"):
        fn("randint")(0, 3, out)
    with pytest.raises(ValueError, match="must be bigger than low"):
        fn("uniform")(1.0, 1.0, out)
    with pytest.raises(ValueError, match=r"scale \(-1\) must be positive"):
        fn("normal")(0.0, -1.0, out)
    with pytest.raises(ValueError, match="fills float32"):
        fn("normal")(0.0, 1.0, empty((4,), "int32"))
    with pytest.raises(TypeError, match="takes .*, got 4 arguments"):
        fn("uniform")(1, 0.0, 1.0, out)
    with pytest.raises(ValueError, match="cannot fill dtype float32x4"):
        fn("random_fill")(empty((4,), "float32x4"))


def test_fill_bool_with_zeros_and_ones():
    out = empty((1000,), "bool")
    fn("random_fill")(out)
    assert set(out.numpy().view("uint8").tolist()) == {0, 1}
