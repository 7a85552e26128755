"""tvm.contrib.sort.* called directly: 0.27's calling conventions and stable results for every
key dtype, index dtype, axis and direction, checked bit for bit against numpy; bad arguments
raise errors that say what is wrong."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from extra_support import (
    ARGSORT,
    ARGSORT_NMS,
    SORT,
    TOPK,
    sorted_along,
    stable_order,
    topk_reference,
    with_ties,
)

import tvm

KEY_DTYPES = [
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
INDEX_DTYPES = ["int32", "int64", "float32", "float64"]


def fn(name: str):
    return tvm.get_global_func(name)


def tensor(x: np.ndarray):
    return tvm.runtime.tensor(x, tvm.cpu(0))


def empty(shape, dtype: str):
    return tvm.runtime.empty(tuple(shape), dtype, tvm.cpu(0))


def assert_bits_equal(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal including the sign of zeros (which tells whether equal keys kept their order)."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    width = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(width), expected.view(width))


@pytest.mark.parametrize("dtype", KEY_DTYPES)
@pytest.mark.parametrize("ascending", [True, False], ids=["asc", "desc"])
@pytest.mark.parametrize("length", [7, 300, 5000], ids=["short", "radix", "long"])
def test_sort_and_argsort_last_axis(dtype, ascending, length):
    rng = np.random.default_rng(length)
    x = with_ties(rng, (3, length), dtype, levels=20)
    out = empty(x.shape, dtype)
    fn(SORT)(tensor(x), out, -1, ascending)
    assert_bits_equal(out.numpy(), sorted_along(x, -1, not ascending))
    idx = empty(x.shape, "int64")
    fn(ARGSORT)(tensor(x), idx, 1, ascending)
    np.testing.assert_array_equal(idx.numpy(), stable_order(x, -1, not ascending))


@pytest.mark.parametrize("axis", [0, 1, 2, -3])
@pytest.mark.parametrize("ascending", [True, False], ids=["asc", "desc"])
def test_any_axis(axis, ascending):
    x = with_ties(np.random.default_rng(axis + 10), (5, 6, 7), "float32")
    out = empty(x.shape, "float32")
    fn(SORT)(tensor(x), out, axis, ascending)
    assert_bits_equal(out.numpy(), sorted_along(x, axis, not ascending))
    idx = empty(x.shape, "int32")
    fn(ARGSORT)(tensor(x), idx, axis, ascending)
    np.testing.assert_array_equal(idx.numpy(), stable_order(x, axis, not ascending).astype("int32"))


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_argsort_index_dtypes(index_dtype):
    x = with_ties(np.random.default_rng(3), (4, 500), "int32")
    idx = empty(x.shape, index_dtype)
    fn(ARGSORT)(tensor(x), idx, -1, False)
    np.testing.assert_array_equal(idx.numpy(), stable_order(x, -1, True).astype(index_dtype))


def test_signed_zeros_and_infinities_keep_their_order():
    x = np.array([0.0, -0.0, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0] * 40, dtype="float32")
    out = empty(x.shape, "float32")
    for ascending in (True, False):
        fn(SORT)(tensor(x), out, 0, ascending)
        assert_bits_equal(out.numpy(), sorted_along(x, 0, not ascending))


def test_many_rows_run_in_parallel_and_match():
    # 2000 rows x 64: large enough to go through the core's thread pool.
    x = with_ties(np.random.default_rng(5), (2000, 64), "float32")
    idx = empty(x.shape, "int32")
    fn(ARGSORT)(tensor(x), idx, -1, True)
    np.testing.assert_array_equal(idx.numpy(), stable_order(x, -1, False))


def test_concurrent_calls_from_python_threads():
    xs = [with_ties(np.random.default_rng(s), (256, 300), "float64") for s in range(4)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                out = empty(xs[i].shape, "float64")
                fn(SORT)(tensor(xs[i]), out, -1, i % 2 == 0)
                assert_bits_equal(out.numpy(), sorted_along(xs[i], -1, i % 2 == 1))
        except BaseException as err:  # noqa: BLE001 - re-raised in the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "int8"])
@pytest.mark.parametrize("largest", [True, False], ids=["largest", "smallest"])
# k up to 32 keeps an ordered prefix (row_sorter.h InsertionSelect), 33 selects with nth_element.
@pytest.mark.parametrize(
    "k", [1, 5, 32, 33, 0, -1], ids=["k1", "k5", "k32_prefix", "k33_select", "k0_all", "kneg_all"]
)
def test_topk_both(dtype, largest, k):
    x = with_ties(np.random.default_rng(k + 7), (6, 40), dtype)
    values_ref, indices_ref = topk_reference(x, k, -1, largest)
    values = empty(values_ref.shape, dtype)
    indices = empty(indices_ref.shape, "int64")
    fn(TOPK)(tensor(x), values, indices, k, -1, "both", not largest)
    assert_bits_equal(values.numpy(), values_ref)
    np.testing.assert_array_equal(indices.numpy(), indices_ref)


@pytest.mark.parametrize("axis", [0, 1])
def test_topk_values_only_and_indices_only(axis):
    x = with_ties(np.random.default_rng(axis), (30, 50), "float32")
    values_ref, indices_ref = topk_reference(x, 4, axis, largest=True)
    values = empty(values_ref.shape, "float32")
    fn(TOPK)(tensor(x), values, 4, axis, "values", False)
    assert_bits_equal(values.numpy(), values_ref)
    for index_dtype in INDEX_DTYPES:
        indices = empty(indices_ref.shape, index_dtype)
        fn(TOPK)(tensor(x), indices, 4, axis, "indices", False)
        np.testing.assert_array_equal(indices.numpy(), indices_ref.astype(index_dtype))


def test_topk_large_k_selects_the_same_as_a_full_sort():
    x = with_ties(np.random.default_rng(9), (3, 3000), "float32", levels=200)
    values_ref, indices_ref = topk_reference(x, 2000, -1, largest=False)
    values = empty(values_ref.shape, "float32")
    indices = empty(indices_ref.shape, "int32")
    fn(TOPK)(tensor(x), values, indices, 2000, -1, "both", True)
    assert_bits_equal(values.numpy(), values_ref)
    np.testing.assert_array_equal(indices.numpy(), indices_ref)


@pytest.mark.parametrize("ascending", [True, False], ids=["asc", "desc"])
def test_argsort_nms_orders_only_the_first_sort_num(ascending):
    rng = np.random.default_rng(4)
    x = with_ties(rng, (3, 20, 2), "float32")  # sort axis 1; one count per (row, column)
    counts = rng.integers(0, 21, size=(3, 2)).astype("int32")
    out = empty(x.shape, "int32")
    fn(ARGSORT_NMS)(tensor(x), tensor(counts), out, 1, ascending)
    expected = np.broadcast_to(np.arange(20, dtype="int32")[None, :, None], x.shape).copy()
    for i in range(3):
        for j in range(2):
            c = counts[i, j]
            expected[i, :c, j] = stable_order(x[i, :c, j], 0, not ascending)
    np.testing.assert_array_equal(out.numpy(), expected)


# ----------------------------------------------------------------------------------- errors


def test_axis_out_of_range_is_a_value_error():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(ValueError, match="axis 2 is out of range for a tensor of rank 2"):
        fn(SORT)(tensor(x), empty(x.shape, "float32"), 2, True)


def test_output_dtype_and_shape_mismatches_are_named():
    x = np.zeros((2, 3), "float32")
    with pytest.raises(ValueError, match="output dtype float64 differs from input dtype float32"):
        fn(SORT)(tensor(x), empty(x.shape, "float64"), -1, True)
    with pytest.raises(ValueError, match=r"output has shape \(2, 4\) but must be \(2, 3\)"):
        fn(ARGSORT)(tensor(x), empty((2, 4), "int32"), -1, True)
    with pytest.raises(ValueError, match="indices must be int32, int64, float32 or float64"):
        fn(ARGSORT)(tensor(x), empty(x.shape, "int8"), -1, True)
    with pytest.raises(ValueError, match=r"indices has shape \(2, 3\) but must be \(2, 2\)"):
        fn(TOPK)(tensor(x), empty((2, 3), "int32"), 2, -1, "indices", True)


def test_unsupported_key_dtype_is_a_value_error():
    x = np.zeros((4,), "bool")
    with pytest.raises(ValueError, match="cannot sort elements of dtype bool"):
        fn(ARGSORT)(tensor(x), empty((4,), "int32"), 0, True)


def test_wrong_arity_and_ret_type():
    x = np.zeros((4,), "float32")
    with pytest.raises(TypeError, match=r"takes 4 arguments \(input, output, axis, is_ascend\), got 3"):
        fn(SORT)(tensor(x), empty((4,), "float32"), 0)
    with pytest.raises(ValueError, match='ret_type .* must be "both", "values" or "indices"'):
        fn(TOPK)(tensor(x), empty((2,), "float32"), 2, 0, "value", True)
    with pytest.raises(TypeError, match='ret_type "both" takes 7 arguments, got 6'):
        fn(TOPK)(tensor(x), empty((2,), "float32"), 2, 0, "both", True)
    with pytest.raises(TypeError, match="must be a tensor"):
        fn(SORT)(x.tolist(), empty((4,), "float32"), 0, True)


def test_argsort_nms_rejects_bad_counts():
    x = np.zeros((2, 5), "float32")
    counts = tensor(np.array([3, 6], "int32"))
    with pytest.raises(ValueError, match=r"sort_num\[1\] = 6 is outside \[0, 5\]"):
        fn(ARGSORT_NMS)(tensor(x), counts, empty(x.shape, "int32"), 1, True)
    with pytest.raises(ValueError, match="one count per row"):
        fn(ARGSORT_NMS)(tensor(x), tensor(np.array([1], "int32")), empty(x.shape, "int32"), 1, True)


def test_device_tensors_are_rejected_with_a_hint():
    dev = tvm.opencl(0)
    if not dev.exist:
        pytest.skip("needs a second device type to hold a non-host tensor (no OpenCL device here)")
    x = tvm.runtime.tensor(np.zeros((8,), "float32"), dev)
    with pytest.raises(ValueError, match=r"input must be in CPU memory .* Copy it to tvm.cpu\(\) first"):
        fn(SORT)(x, empty((8,), "float32"), 0, True)
