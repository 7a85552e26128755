"""dnnl_json on oneDNN (tvm-runtime-dnnl) against numpy, on the CPU.

``dnnl_cnn_cpu.so`` is an apache-tvm 0.27 Relax model (host code and const_loader by apache-tvm)
with three dnnl_json modules hand-assembled in 0.27's format (tests/artifacts/generate_byoc.py
says why and how); the single-operator cases are 0.27-format graphs written by byoc_support.
"""

from __future__ import annotations

import numpy as np
import pytest
from byoc_support import BYOC, EXPECTED, Graph, conv2d_nchw, gelu, onednn_or_skip, with_constants

import tvm
import tvm.backend.dnnl  # noqa: F401
from conftest import run_python

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _onednn():
    onednn_or_skip(tvm)


def q(*shape, scale=16):
    return (RNG.integers(-scale, scale, size=shape) / 64).astype("float32")


def test_dnnl_artifact_matches_numpy():
    mod = tvm.runtime.load_module(str(BYOC / "dnnl_cnn_cpu.so"))
    vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    x = tvm.runtime.tensor(EXPECTED["x"])
    for _ in range(2):  # the second run reuses the initialized engines
        out = vm["main"](x).numpy()
        np.testing.assert_allclose(out, EXPECTED["dnnl_cnn"], rtol=1e-5, atol=1e-6)


def run(symbol, graph, heads, consts, inputs, out_shape):
    mod = with_constants(tvm, symbol, graph, heads, consts)
    out = tvm.runtime.empty(out_shape, "float32")
    mod.get_function(symbol)(*[tvm.runtime.tensor(i) for i in inputs], out)
    return out.numpy()


CONV_CASES = {
    "plain": dict(stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1, name="dnnl.conv2d"),
    "bias-relu-pad": dict(
        stride=(1, 1), pad=(1, 1, 1, 1), dilation=(1, 1), groups=1, name="dnnl.conv2d_bias_relu"
    ),
    "stride-asym-pad": dict(
        stride=(2, 2), pad=(0, 1, 1, 0), dilation=(1, 1), groups=1, name="dnnl.conv2d_bias"
    ),
    "dilated": dict(stride=(1, 1), pad=(2, 2, 2, 2), dilation=(2, 2), groups=1, name="dnnl.conv2d_relu"),
    "grouped-tanh": dict(
        stride=(1, 1), pad=(1, 1, 1, 1), dilation=(1, 1), groups=2, name="dnnl.conv2d_bias_tanh"
    ),
    "sigmoid": dict(
        stride=(1, 1), pad=(0, 0, 0, 0), dilation=(1, 1), groups=1, name="dnnl.conv2d_bias_sigmoid"
    ),
}


@pytest.mark.parametrize("case", list(CONV_CASES.values()), ids=list(CONV_CASES))
def test_conv2d(case):
    x, w, b = q(1, 4, 7, 7, scale=64), q(6, 4 // case["groups"], 3, 3), q(6)
    ref = conv2d_nchw(x, w, case["stride"], case["pad"], case["dilation"], case["groups"])
    with_bias = "_bias" in case["name"]
    if with_bias:
        ref = ref + b.reshape(1, -1, 1, 1)
    if "_relu" in case["name"]:
        ref = np.maximum(ref, 0)
    if "_tanh" in case["name"]:
        ref = np.tanh(ref)
    if "_sigmoid" in case["name"]:
        ref = 1 / (1 + np.exp(-ref))
    g = Graph()
    xi = g.input("x", x.shape)
    wi = g.const("s_dnnl_const_0", w.shape)
    inputs = [xi, wi]
    consts = {"s_dnnl_const_0": w}
    if with_bias:
        inputs.append(g.const("s_dnnl_const_1", (1, 6, 1, 1)))
        consts["s_dnnl_const_1"] = b.reshape(1, 6, 1, 1)
    attrs = {
        "strides": list(case["stride"]),
        "padding": list(case["pad"]),
        "dilation": list(case["dilation"]),
        "groups": case["groups"],
        "data_layout": "NCHW",
        "kernel_layout": "OIHW",
        "out_layout": "NCHW",
        "out_dtype": "",
    }
    y = g.kernel(case["name"], inputs, ref.shape, attrs)
    got = run("s", g, [y], consts, [x], ref.shape)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name", ["nn.dense", "dnnl.dense_bias", "dnnl.dense_bias_relu", "dnnl.dense_bias_gelu"]
)
def test_dense(name):
    x, w, b = q(3, 10, scale=64), q(5, 10), q(5)
    ref = x.astype("float64") @ w.T
    g = Graph()
    inputs = [g.input("x", x.shape), g.const("d_c0", w.shape)]
    consts = {"d_c0": w}
    if "_bias" in name:
        inputs.append(g.const("d_c1", b.shape))
        consts["d_c1"] = b
        ref = ref + b
    if "_relu" in name:
        ref = np.maximum(ref, 0)
    if "_gelu" in name:
        ref = gelu(ref)
    y = g.kernel(name, inputs, ref.shape, {"units": 5})
    np.testing.assert_allclose(run("d", g, [y], consts, [x], ref.shape), ref, rtol=1e-5, atol=1e-6)


ELTWISE = {
    "nn.relu": (lambda v: np.maximum(v, 0), {}),
    "nn.leaky_relu": (lambda v: np.where(v > 0, v, 0.1 * v), {"alpha": 0.1}),
    "tanh": (np.tanh, {}),
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), {}),
    "abs": (np.abs, {}),
    "exp": (np.exp, {}),
    "clip": (lambda v: np.clip(v, -0.25, 0.5), {"a_min": -0.25, "a_max": 0.5}),
    "gelu_erf": (gelu, {}),
}


@pytest.mark.parametrize("name", list(ELTWISE))
def test_eltwise(name):
    fn, attrs = ELTWISE[name]
    x = q(2, 3, 4, scale=64)
    g = Graph()
    y = g.kernel(name, [g.input("x", x.shape)], x.shape, attrs)
    np.testing.assert_allclose(
        run("e", g, [y], {}, [x], x.shape), fn(x.astype("float64")), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize(
    "op,lhs,rhs",
    [
        ("add", (2, 3, 4), (2, 3, 4)),
        ("add", (2, 3, 4), (4,)),
        ("multiply", (1, 3, 1), (2, 3, 4)),  # the first operand is the broadcast one
        ("multiply", (2, 3, 4), (2, 1, 4)),
    ],
)
def test_binary(op, lhs, rhs):
    a, b = q(*lhs, scale=64), q(*rhs, scale=64)
    ref = (a + b) if op == "add" else (a.astype("float64") * b)
    g = Graph()
    y = g.kernel(op, [g.input("a", lhs), g.input("b", rhs)], ref.shape)
    np.testing.assert_allclose(run("b", g, [y], {}, [a, b], ref.shape), ref, rtol=1e-6)


def test_chain_with_intermediates_and_two_outputs():
    x, k = q(4, 8, scale=64), q(4, 8)
    g = Graph()
    xi = g.input("x", x.shape)
    s = g.kernel("add", [xi, g.const("c_c0", k.shape)], x.shape)
    r = g.kernel("nn.relu", [s], x.shape)
    t = g.kernel("tanh", [r], x.shape)
    mod = with_constants(tvm, "c", g, [r, t], {"c_c0": k})
    o1, o2 = tvm.runtime.empty(x.shape, "float32"), tvm.runtime.empty(x.shape, "float32")
    mod.get_function("c")(tvm.runtime.tensor(x), o1, o2)
    relu = np.maximum(x + k, 0)
    np.testing.assert_allclose(o1.numpy(), relu, rtol=1e-6)
    np.testing.assert_allclose(o2.numpy(), np.tanh(relu), rtol=1e-5)


def test_missing_onednn_names_the_package():
    # The VM resolves its functions when it is created, which is when the const_loader
    # initializes the dnnl_json modules and oneDNN is first needed.
    code = f"""
        import numpy as np, tvm
        try:
            mod = tvm.runtime.load_module({str(BYOC / "dnnl_cnn_cpu.so")!r})
            vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
        except RuntimeError as err:
            print("ERR", err)
        print("status", tvm.backend.dnnl.library_status()[:40])
    """
    proc = run_python(code, env={"TVM_DNNL_LIBRARY": "/nonexistent/libdnnl.so.2"})
    assert "ERR oneDNN is not available" in proc.stdout, proc.stdout
    assert "apt-get install libdnnl2" in proc.stdout
    assert "status oneDNN is not available" in proc.stdout


def test_missing_wheel_names_it():
    code = f"""
        import tvm
        try:
            tvm.runtime.load_module({str(BYOC / "dnnl_cnn_cpu.so")!r})
        except RuntimeError as err:
            print("ERR", err)
    """
    proc = run_python(code, env={"TVM_BACKENDS": "extra"})
    assert "ERR Cannot load the 'dnnl_json' module" in proc.stdout, proc.stdout + proc.stderr
    assert "pip install tvm-runtime-dnnl" in proc.stdout
