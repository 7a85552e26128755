"""The SDK's JSON runtime base (tvm_runtime/backend/byoc/json_graph.h, json_runtime_module.h) on bad
input, through the dnnl_json loader that uses it: every malformed payload, graph or call is a
clear Python exception naming what is wrong, never a crash.  None of this needs oneDNN: graphs
are checked when the module is loaded, calls before the engine runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from byoc_support import Graph, json_payload, load_from_bytes, put_str

import tvm
import tvm.backend.dnnl  # noqa: F401


def good_graph() -> tuple[dict, list[str]]:
    g = Graph()
    x = g.input("x", (2, 3))
    k = g.const("c0", (2, 3))
    y = g.kernel("add", [x, k], (2, 3))
    return g.to_json([y]), g.consts


def load(graph, consts=None, symbol="sym"):
    if consts is None:
        consts = good_graph()[1]
    return load_from_bytes(tvm, "dnnl_json", json_payload(symbol, graph, consts))


def test_good_module_answers_0_27_functions():
    graph, consts = good_graph()
    mod = load(graph)
    assert mod.kind == "dnnl_json"
    assert mod["get_symbol"]() == "sym"
    assert list(mod["get_const_vars"]()) == consts
    assert mod.implements_function("__init_sym") and mod.implements_function("sym")
    assert not mod.implements_function("other")
    assert json.loads(mod.inspect_source()) == graph


def mutated(change):
    graph, _ = good_graph()
    change(graph)
    return graph


BAD_GRAPHS = {
    "not-json": ("{nodes: [", "not valid JSON"),
    "not-object": ("[1, 2]", "the graph is not a JSON object"),
    "unknown-top-key": (mutated(lambda g: g.update(extra=1)), "unknown top-level key 'extra'"),
    "no-row-ptr": (mutated(lambda g: g.pop("node_row_ptr")), "are required"),
    "row-ptr-length": (mutated(lambda g: g["node_row_ptr"].pop()), "one entry per node plus one"),
    "row-ptr-outputs": (
        mutated(lambda g: g.update(node_row_ptr=[0, 1, 3, 4])),
        "does not match the number of outputs",
    ),
    "input-out-of-range": (
        mutated(lambda g: g["nodes"][2].update(inputs=[[0, 0, 0], [7, 0, 0]])),
        "does not exist before it",
    ),
    "input-forward": (
        mutated(lambda g: g["nodes"][2].update(inputs=[[0, 0], [2, 0]])),
        "does not exist before it",
    ),
    "input-index": (
        mutated(lambda g: g["nodes"][2].update(inputs=[[0, 5], [1, 0]])),
        "does not exist before it",
    ),
    "entry-shape": (
        mutated(lambda g: g["nodes"][2].update(inputs=[[0], [1, 0]])),
        "must be \\[node, index\\]",
    ),
    "negative-entry": (mutated(lambda g: g["nodes"][2].update(inputs=[[-1, 0], [1, 0]])), "out of range"),
    "bool-entry": (mutated(lambda g: g["nodes"][2].update(inputs=[[True, 0], [1, 0]])), "is not an integer"),
    "unknown-op": (mutated(lambda g: g["nodes"][0].update(op="tuple")), "has op 'tuple'"),
    "unknown-node-key": (mutated(lambda g: g["nodes"][0].update(color=1)), "unknown key 'color'"),
    "bad-dtype": (
        mutated(lambda g: g["nodes"][1]["attrs"].update(dtype=["floaty"])),
        "unknown dtype 'floaty'",
    ),
    "no-shape": (
        mutated(lambda g: g["nodes"][2]["attrs"].pop("shape")),
        "needs one shape and one dtype per output",
    ),
    "negative-dim": (mutated(lambda g: g["nodes"][0]["attrs"].update(shape=[[2, -3]])), "negative dimension"),
    "no-heads": (mutated(lambda g: g.update(heads=[])), "no outputs"),
    "head-range": (mutated(lambda g: g.update(heads=[[9, 0, 0]])), "heads entry refers to an output"),
    "arg-node-kernel": (
        mutated(lambda g: g.update(arg_nodes=[0, 1, 2])),
        "arg_nodes must list input and const",
    ),
    "kernel-no-inputs": (mutated(lambda g: g["nodes"][2].pop("inputs")), "has no inputs"),
    "const-names": (
        mutated(lambda g: g["nodes"][1].update(name="other")),
        "do not match the module's constant names",
    ),
}


@pytest.mark.parametrize("graph,message", list(BAD_GRAPHS.values()), ids=list(BAD_GRAPHS))
def test_bad_graph_is_a_value_error(graph, message):
    with pytest.raises(ValueError, match=message):
        load(graph)


def test_truncated_payload_is_a_value_error():
    graph, consts = good_graph()
    payload = json_payload("sym", graph, consts)
    for cut in (0, 5, 20, len(payload) - 1):
        with pytest.raises(ValueError, match="Corrupted 'dnnl_json' module blob"):
            load_from_bytes(tvm, "dnnl_json", payload[:cut])
    with pytest.raises(ValueError, match="trailing bytes"):
        load_from_bytes(tvm, "dnnl_json", payload + b"x")
    with pytest.raises(ValueError, match="Corrupted"):
        load_from_bytes(tvm, "dnnl_json", put_str("sym") + b"\xff" * 8)


def test_mistyped_attribute_is_a_value_error_at_init():
    from byoc_support import onednn_or_skip

    onednn_or_skip(tvm)
    g = Graph()
    x = g.input("x", (1, 1, 4, 4))
    w = g.const("w", (1, 1, 3, 3))
    y = g.kernel("dnnl.conv2d", [x, w], (1, 1, 2, 2), {"strides": "wide"})
    mod = load(g.to_json([y]), g.consts)
    with pytest.raises(ValueError, match="attribute 'strides' of node 2 .* must be an array of integers"):
        mod["__init_sym"]([tvm.runtime.tensor(np.ones((1, 1, 3, 3), "float32"))])


def test_bad_init_and_call_arguments():
    graph, consts = good_graph()
    mod = load(graph)
    init = mod["__init_sym"]
    with pytest.raises(ValueError, match="got 0 constants, dnnl_json module 'sym' needs 1"):
        init([])
    with pytest.raises(ValueError, match="constant 'c0' of dnnl_json module 'sym' has shape \\(3, 2\\)"):
        init([tvm.runtime.tensor(np.ones((3, 2), "float32"))])
    with pytest.raises(ValueError, match="has dtype int32, the graph says float32"):
        init([tvm.runtime.tensor(np.ones((2, 3), "int32"))])


def test_bad_call_arguments():
    from byoc_support import onednn_or_skip

    onednn_or_skip(tvm)
    graph, consts = good_graph()
    mod = load(graph)
    mod["__init_sym"]([tvm.runtime.tensor(np.ones((2, 3), "float32"))])
    f = mod["sym"]
    a = tvm.runtime.tensor(np.ones((2, 3), "float32"))
    out = tvm.runtime.empty((2, 3), "float32")
    with pytest.raises(TypeError, match="takes 1 inputs and 1 outputs, got 1 arguments"):
        f(a)
    with pytest.raises(TypeError, match="argument 1 \\(output\\) of dnnl_json module 'sym' is not a tensor"):
        f(a, 3)
    with pytest.raises(ValueError, match="argument 0 \\(input\\) .* has shape \\(3, 2\\)"):
        f(tvm.runtime.tensor(np.ones((3, 2), "float32")), out)
    with pytest.raises(ValueError, match="argument 1 \\(output\\) .* has dtype float64"):
        f(a, tvm.runtime.empty((2, 3), "float64"))
    f(a, out)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 2, "float32"))


def test_unsupported_operator_fails_at_init_naming_the_node():
    from byoc_support import onednn_or_skip

    onednn_or_skip(tvm)
    g = Graph()
    x = g.input("x", (2, 2))
    y = g.kernel("nn.softmax", [x], (2, 2))
    mod = load(g.to_json([y]), [])
    with pytest.raises(RuntimeError, match="cannot run node 1 \\('nn.softmax'\\).*not supported yet"):
        mod["__init_sym"]([])
    g = Graph()
    x = g.input("x", (2, 2), "int32")
    y = g.kernel("nn.relu", [x], (2, 2), dtype="int32")
    with pytest.raises(RuntimeError, match="only float32"):
        load(g.to_json([y]), [])["__init_sym"]([])


def test_implausible_intermediate_size_is_refused():
    from byoc_support import onednn_or_skip

    onednn_or_skip(tvm)
    g = Graph()
    x = g.input("x", (2,))
    y = g.kernel("nn.relu", [x], (1 << 40, 1 << 30))
    z = g.kernel("tanh", [y], (2,))
    with pytest.raises(RuntimeError, match="implausibly large"):
        load(g.to_json([z]), [])["__init_sym"]([])
