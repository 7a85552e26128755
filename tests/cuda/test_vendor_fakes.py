"""The fake cuBLASLt and cuDNN (tests/fakes/fake_{cublaslt,cudnn}.c) really check
what tests/byoc relies on them to check: called directly, a wrong layout, a destroyed or foreign
descriptor, a missing workspace or an algorithm that the heuristic never offered is rejected
and logged, and a valid call computes the right numbers."""

from __future__ import annotations

import ctypes

import fakes
import numpy as np
import pytest

P = ctypes.c_void_p
INVALID, CUDNN_BAD_PARAM = 7, 2000


class HeuristicResult(ctypes.Structure):
    _fields_ = [
        ("algo", ctypes.c_uint64 * 8),
        ("workspace", ctypes.c_size_t),
        ("state", ctypes.c_int),
        ("waves", ctypes.c_float),
        ("reserved", ctypes.c_int * 4),
    ]


@pytest.fixture(scope="module")
def lt():
    lib = fakes.FakeCublasLt(fakes.build("cublaslt"))
    lib.cublasLtMatrixLayoutCreate.argtypes = [
        ctypes.POINTER(P),
        ctypes.c_int,
        ctypes.c_uint64,
        ctypes.c_uint64,
        ctypes.c_int64,
    ]
    lib.cublasLtMatmul.argtypes = [P] * 13 + [P, ctypes.c_size_t, P]
    return lib


def new(fn, *args) -> P:
    out = P()
    assert fn(ctypes.byref(out), *args) == 0
    return out


def setup_gemm(lt, a_rows, a_cols, transa=0):
    """A float32 D[2x3] = op(A) . B[4x3] set-up; returns handle, desc, layouts, preference."""
    h, d = new(lt.cublasLtCreate), new(lt.cublasLtMatmulDescCreate, 68, 0)
    op = ctypes.c_int(transa)
    assert lt.cublasLtMatmulDescSetAttribute(d, 3, ctypes.byref(op), 4) == 0
    a = new(lt.cublasLtMatrixLayoutCreate, 0, a_rows, a_cols, a_rows)
    b = new(lt.cublasLtMatrixLayoutCreate, 0, 4, 3, 4)
    c = new(lt.cublasLtMatrixLayoutCreate, 0, 2, 3, 2)
    pref = new(lt.cublasLtMatmulPreferenceCreate)
    ws = ctypes.c_size_t(32 << 20)
    assert lt.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(ws), 8) == 0
    return h, d, a, b, c, pref


def heuristic(lt, h, d, a, b, c, pref):
    result, n = HeuristicResult(), ctypes.c_int()
    rc = lt.cublasLtMatmulAlgoGetHeuristic(h, d, a, b, c, c, pref, 1, ctypes.byref(result), ctypes.byref(n))
    return rc, result, n.value


def test_fake_cublaslt_computes_a_valid_gemm(lt):
    h, d, a, b, c, pref = setup_gemm(lt, 2, 4)
    rc, algo, n = heuristic(lt, h, d, a, b, c, pref)
    assert (rc, n) == (0, 1)
    a_mat = np.arange(8, dtype="float32").reshape(4, 2)  # column-major 2x4
    b_mat = np.arange(12, dtype="float32").reshape(3, 4)  # column-major 4x3
    d_mat = np.zeros((3, 2), "float32")
    ws = ctypes.create_string_buffer(1 << 20)
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    ptr = lambda x: x.ctypes.data_as(P)  # noqa: E731
    args = [
        h,
        d,
        ctypes.byref(one),
        ptr(a_mat),
        a,
        ptr(b_mat),
        b,
        ctypes.byref(zero),
        ptr(d_mat),
        c,
        ptr(d_mat),
        c,
        ctypes.byref(algo.algo),
        ctypes.cast(ws, P),
        1 << 20,
        None,
    ]
    assert lt.cublasLtMatmul(*args) == 0
    np.testing.assert_array_equal(d_mat.T, a_mat.T @ b_mat.T)
    # The same call with a workspace smaller than the algorithm's, or another descriptor's algorithm.
    args[14] = 1024
    assert lt.cublasLtMatmul(*args) == INVALID
    other = new(lt.cublasLtMatmulDescCreate, 68, 0)
    args[1], args[14] = other, 1 << 20
    assert lt.cublasLtMatmul(*args) == INVALID
    text = lt.log()
    assert "the workspace is smaller than the algorithm's" in text
    assert "the algorithm is not from the heuristic for desc" in text


def test_fake_cublaslt_rejects_inconsistent_or_dead_objects(lt):
    h, d, a, b, c, pref = setup_gemm(lt, 3, 4)  # op(A) has 3 rows, D has 2
    assert heuristic(lt, h, d, a, b, c, pref)[0] == INVALID
    h, d, a, b, c, pref = setup_gemm(lt, 2, 4)
    assert lt.cublasLtMatrixLayoutDestroy(a) == 0
    assert heuristic(lt, h, d, a, b, c, pref)[0] == INVALID  # a destroyed layout
    assert heuristic(lt, h, pref, b, b, c, pref)[0] == INVALID  # a preference as the descriptor
    assert lt.cublasLtMatrixLayoutDestroy(a) == INVALID  # twice
    text = lt.log()
    assert "op(A) x op(B) does not have the shape of D" in text and "a layout is not live" in text


def _cudnn_convolution_handles():
    """The fake cuDNN with a fresh log, a handle and the four descriptors of one convolution."""
    lib = fakes.FakeCudnn(fakes.build("cudnn"))
    lib.clear_log()  # the fake is built once per run: one handle, one log, for this whole process
    h, x, w, y = (
        new(lib.cudnnCreate),
        new(lib.cudnnCreateTensorDescriptor),
        new(lib.cudnnCreateFilterDescriptor),
        new(lib.cudnnCreateTensorDescriptor),
    )
    return lib, h, x, w, y, new(lib.cudnnCreateConvolutionDescriptor)


def test_fake_cudnn_rejects_what_cudnn_would():
    lib, h, x, w, y, conv = _cudnn_convolution_handles()
    assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 1, 2, 5, 5) == 0
    assert lib.cudnnSetFilter4dDescriptor(w, 0, 0, 3, 2, 3, 3) == 0
    assert lib.cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, 1, 0) == 0
    assert lib.cudnnSetTensor4dDescriptor(y, 0, 0, 1, 3, 4, 4) == 0  # should be 3x3
    n = ctypes.c_int()
    perf = ctypes.create_string_buffer(48 * 4)
    assert (
        lib.cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 4, ctypes.byref(n), perf)
        == CUDNN_BAD_PARAM
    )
    assert lib.cudnnSetTensor4dDescriptor(y, 0, 0, 1, 3, 3, 3) == 0
    assert lib.cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 4, ctypes.byref(n), perf) == 0
    xs, wt, ys = (
        np.ones((1, 2, 5, 5), "float32"),
        np.ones((3, 2, 3, 3), "float32"),
        np.zeros((1, 3, 3, 3), "float32"),
    )
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    ws = ctypes.create_string_buffer(4096)
    run = lambda *a: lib.cudnnConvolutionForward(  # noqa: E731
        h,
        ctypes.byref(one),
        x,
        xs.ctypes.data_as(P),
        w,
        wt.ctypes.data_as(P),
        conv,
        *a,
        ctypes.byref(zero),
        y,
        ys.ctypes.data_as(P),
    )
    assert run(2, ws, 4096) == CUDNN_BAD_PARAM  # no stream set on the handle yet
    assert lib.cudnnSetStream(h, None) == 0
    assert run(2, ws, 16) == CUDNN_BAD_PARAM  # workspace too small
    assert run(7, ws, 4096) == CUDNN_BAD_PARAM  # an algorithm never offered
    assert run(2, ws, 4096) == 0
    np.testing.assert_array_equal(ys, np.full((1, 3, 3, 3), 18.0))
    text = lib.log()
    for why in ("wrong output size", "no stream was set", "workspace too small", "never offered"):
        assert why in text


def test_fake_cudnn_math_types_and_tf32():
    """The fake cuDNN's math types as cuDNN 9 has them: a bad value is rejected; the heuristic
    answers per descriptor math type (a TF32 kernel ranked first under tensor-op math, FMA only
    under FMA math), and a float32 convolution run with tensor-op math computes on TF32-rounded
    operands (1 + 2^-12 rounds to 1), with FMA math exactly."""
    lib, h, x, w, y, conv = _cudnn_convolution_handles()
    assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 1, 1, 1, 1) == 0
    assert lib.cudnnSetFilter4dDescriptor(w, 0, 0, 1, 1, 1, 1) == 0
    assert lib.cudnnSetConvolution2dDescriptor(conv, 0, 0, 1, 1, 1, 1, 1, 0) == 0
    assert lib.cudnnSetTensor4dDescriptor(y, 0, 0, 1, 1, 1, 1) == 0
    assert lib.cudnnSetStream(h, None) == 0
    assert lib.cudnnSetConvolutionMathType(conv, 4) == CUDNN_BAD_PARAM  # no such math type

    class Perf(ctypes.Structure):
        _fields_ = [
            ("algo", ctypes.c_int),
            ("status", ctypes.c_int),
            ("time", ctypes.c_float),
            ("memory", ctypes.c_size_t),
            ("determinism", ctypes.c_int),
            ("mathType", ctypes.c_int),
            ("reserved", ctypes.c_int * 3),
        ]

    def offers(math):
        assert lib.cudnnSetConvolutionMathType(conv, math) == 0
        perf, n = (Perf * 8)(), ctypes.c_int()
        assert lib.cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 8, ctypes.byref(n), perf) == 0
        return [(p.algo, p.mathType) for p in perf[: n.value] if p.status == 0]

    assert offers(1) == [(2, 1), (1, 3)]  # TENSOR_OP: TF32 GEMM first, then an FMA kernel
    assert offers(0) == [(2, 1), (1, 3)]  # DEFAULT allows TF32 on Ampere+ too
    assert offers(3) == [(2, 3)]  # FMA: FMA kernels only

    xs, wt, ys = np.array([1 + 2.0**-12], "float32"), np.ones(1, "float32"), np.zeros(1, "float32")
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    ws = ctypes.create_string_buffer(4096)

    def run(math):
        assert lib.cudnnSetConvolutionMathType(conv, math) == 0
        args = (h, ctypes.byref(one), x, xs.ctypes.data_as(P), w, wt.ctypes.data_as(P), conv, 2, ws, 4096)
        assert lib.cudnnConvolutionForward(*args, ctypes.byref(zero), y, ys.ctypes.data_as(P)) == 0
        return float(ys[0])

    assert run(1) == 1.0  # TF32: the operand lost its 12th bit
    assert run(3) == np.float32(1 + 2.0**-12)  # FMA: plain fp32
    runs = [ln for ln in lib.log().splitlines() if ln.startswith("cudnnConvolutionForward")]
    assert ["tf32=1" in runs[0], "tf32=0" in runs[1]] == [True, True], runs


def test_fake_cublaslt_fast_tf32_takes_float32_only_and_rounds(lt):
    h, d, a, b, c, pref = setup_gemm(lt, 2, 4)
    assert lt.cublasLtMatmulDescCreate(ctypes.byref(P()), 77, 10) == INVALID  # FAST_TF32 scales in fp32
    tf32 = new(lt.cublasLtMatmulDescCreate, 77, 0)
    half_a = new(lt.cublasLtMatrixLayoutCreate, 2, 2, 4, 2)
    half_b = new(lt.cublasLtMatrixLayoutCreate, 2, 4, 3, 4)
    assert heuristic(lt, h, tf32, half_a, half_b, c, pref)[0] == INVALID
    assert "the FAST_TF32 compute type takes float32 A/B" in lt.log()
    rc, algo, n = heuristic(lt, h, tf32, a, b, c, pref)
    assert rc == 0 and n == 1
    av = np.full((4, 2), 1 + 2.0**-12, "float32")  # column-major 2x4, every element 1 + 2^-12
    bv, dv = np.ones((3, 4), "float32"), np.zeros((3, 2), "float32")
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    ws = ctypes.create_string_buffer(32 << 20)
    args = [h, tf32, ctypes.byref(one), av.ctypes.data_as(P), a, bv.ctypes.data_as(P), b]
    args += [ctypes.byref(zero), dv.ctypes.data_as(P), c, dv.ctypes.data_as(P), c, ctypes.byref(algo.algo)]
    assert lt.cublasLtMatmul(*args, ctypes.cast(ws, P), 32 << 20, None) == 0
    np.testing.assert_array_equal(dv, np.full((3, 2), 4.0))  # TF32 operands: 4 x 1, not 4 x (1 + 2^-12)
    assert "tf32=1" in lt.log().splitlines()[-1]
