"""VM builtins called directly through the global registry (names and signatures of
apache-tvm 0.27), including the ones the test models do not emit."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi
from vm_support import device_for

import tvm


def g(name: str):
    return tvm.get_global_func("vm.builtin." + name)


def test_registered_names():
    names = set(tvm_ffi.registry.list_global_func_names())
    for name in (
        "alloc_shape_heap match_shape make_shape match_prim_value make_prim_value check_tensor_info "
        "check_shape_info check_prim_value_info check_string_info check_tuple_info check_func_info "
        "alloc_storage alloc_tensor null_value copy reshape to_device ensure_zero_offset shape_of "
        "tensor_to_shape make_tuple tuple_getitem tuple_reset_item make_closure invoke_closure "
        "call_tir_dyn read_if_cond invoke_debug_func memory_manager.clear"
    ).split():
        assert "vm.builtin." + name in names, name


def test_shapes():
    x = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    assert tuple(g("shape_of")(x)) == (2, 3)
    assert tuple(g("tensor_to_shape")(tvm.runtime.tensor(np.array([4, 5], "int32")))) == (4, 5)
    assert tuple(g("tensor_to_shape")(tvm.runtime.tensor(np.array([6], "int64")))) == (6,)
    # make_shape(heap, n, (code, value)...): code 0 = immediate, 1 = heap slot
    heap = tvm.runtime.tensor(np.array([7, 9], "int64"))
    assert tuple(g("make_shape")(heap, 3, 0, 2, 1, 1, 1, 0)) == (2, 9, 7)
    assert tuple(g("make_shape")(None, 1, 0, 5)) == (5,)
    with pytest.raises(IndexError, match="shape heap slot 5"):
        g("make_shape")(heap, 1, 1, 5)
    # match_shape(value, heap, n, (code, value)..., err_ctx)
    heap = tvm.runtime.tensor(np.zeros(2, "int64"))
    g("match_shape")(x, heap, 2, 1, 0, 1, 1, "ctx")  # store both dims
    assert list(heap.numpy()) == [2, 3]
    g("match_shape")(tvm_ffi.Shape([2, 3]), heap, 2, 3, 0, 0, 3, "ctx")  # load / immediate
    with pytest.raises(RuntimeError, match=r"ctx match_cast error: shape\[1\] is 3, expected 4"):
        g("match_shape")(x, heap, 2, 2, 0, 0, 4, "ctx")
    with pytest.raises(RuntimeError, match="shape size mismatch"):
        g("match_shape")(x, heap, 1, 2, 0, "ctx")
    g("match_prim_value")(3, heap, 3, 1, "ctx")
    with pytest.raises(RuntimeError, match="match_cast error"):
        g("match_prim_value")(4, heap, 0, 5, "ctx")
    assert g("make_prim_value")(heap, 1, 0) == 2 and g("make_prim_value")(None, 0, 11) == 11


def test_checks():
    x = tvm.runtime.tensor(np.zeros((2, 3), "float32"))
    g("check_tensor_info")(x, 2, tvm_ffi.dtype("float32"), "c")
    g("check_tensor_info")(x, -1, "c")
    with pytest.raises(ValueError, match="ndim 3 but got ndim 2"):
        g("check_tensor_info")(x, 3, "c")
    g("check_shape_info")(tvm_ffi.Shape([1, 2]), 2, "c")
    with pytest.raises(TypeError, match="expect a Shape"):
        g("check_shape_info")(x, 2, "c")
    with pytest.raises(ValueError, match="ndim 1"):
        g("check_shape_info")(tvm_ffi.Shape([1, 2]), 1, "c")
    g("check_prim_value_info")(5, tvm_ffi.dtype("int64"), "c")
    g("check_prim_value_info")(2.5, tvm_ffi.dtype("float32"), "c")
    with pytest.raises(TypeError):
        g("check_prim_value_info")(x, tvm_ffi.dtype("int64"), "c")
    g("check_string_info")("abc", "c")
    with pytest.raises(TypeError, match="expect a string"):
        g("check_string_info")(1, "c")
    t = g("make_tuple")(x, 1)
    g("check_tuple_info")(t, 2, "c")
    with pytest.raises(ValueError, match="with 3 elements"):
        g("check_tuple_info")(t, 3, "c")
    g("check_func_info")(g("copy"), "c")
    with pytest.raises(TypeError, match="expect a Function"):
        g("check_func_info")(x, "c")


def test_tuples_and_values():
    x = tvm.runtime.tensor(np.arange(3, dtype="float32"))
    t = g("make_tuple")(x, "s", 4)
    assert len(t) == 3 and g("tuple_getitem")(t, 1) == "s"
    with pytest.raises(IndexError):
        g("tuple_getitem")(t, 3)
    g("tuple_reset_item")(t, 0)
    assert t[0] is None
    assert g("copy")(x).same_as(x)
    assert g("null_value")() is None
    assert g("read_if_cond")(True) is True
    assert g("read_if_cond")(tvm.runtime.tensor(np.array(0, "int32"))) is False
    assert g("read_if_cond")(tvm.runtime.tensor(np.array([True]))) is True


def test_reshape_is_a_view_and_checks_sizes():
    x = tvm.runtime.tensor(np.arange(6, dtype="float32"))
    y = g("reshape")(x, tvm_ffi.Shape([2, 3]))
    assert tuple(y.shape) == (2, 3)
    np.testing.assert_array_equal(y.numpy(), np.arange(6).reshape(2, 3))
    assert tvm.get_global_func("runtime.TVMTensorIsStorageShared")(x, y)
    del x
    np.testing.assert_array_equal(y.numpy().ravel(), np.arange(6))  # keeps the source alive
    with pytest.raises(ValueError, match="cannot view 6 elements as 8"):
        g("reshape")(y, tvm_ffi.Shape([8]))


@pytest.mark.parametrize("target", ["cpu", "opencl"])
def test_to_device_and_ensure_zero_offset(target):
    dev = device_for(tvm, target)
    src = tvm.runtime.tensor(np.arange(5, dtype="float32"))
    out = g("to_device")(src, dev.dlpack_device_type(), dev.index)
    assert out.device.dlpack_device_type() == dev.dlpack_device_type()
    np.testing.assert_array_equal(out.numpy(), np.arange(5))
    back = g("to_device")(out, 1, 0, "global")
    np.testing.assert_array_equal(back.numpy(), np.arange(5))
    assert g("ensure_zero_offset")(out).same_as(out)
    with pytest.raises(ValueError, match="memory scope 'global.texture'"):
        g("to_device")(src, dev.dlpack_device_type(), dev.index, "global.texture")


def test_call_tir_dyn_and_debug_func():
    seen = []
    f = tvm_ffi.convert(lambda *args: seen.append(tuple(args)))
    g("call_tir_dyn")(f, "a", tvm_ffi.Shape([3, 4]))
    assert seen == [("a", 3, 4)]
    lines = []
    tvm.register_global_func("testing.vm.debug", lambda line, x: lines.append((line, x)), override=True)
    try:
        assert g("invoke_debug_func")(None, "testing.vm.debug", "line 7", 5) is None
    finally:
        tvm_ffi.registry.remove_global_func("testing.vm.debug")
    assert lines == [("line 7", 5)]
    with pytest.raises(ValueError, match="is not found"):
        g("invoke_debug_func")(None, "testing.vm.nope", "line", 1)


def test_context_builtins_reject_a_non_vm_context():
    with pytest.raises(TypeError, match="Relax VM context"):
        g("alloc_storage")(None, tvm_ffi.Shape([4]), 0, tvm_ffi.dtype("uint8"), "global")
    with pytest.raises(TypeError, match="Relax VM context"):
        g("alloc_shape_heap")(None, 3)
    with pytest.raises(TypeError, match="expected a Storage"):
        g("alloc_tensor")(1, 0, tvm_ffi.Shape([1]), tvm_ffi.dtype("float32"))
