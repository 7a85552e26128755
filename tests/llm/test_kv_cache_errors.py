"""Wrong use of the KV cache builtins raises a Python exception that says what is wrong (never a
crash), and every KV-cache/KV-state name apache-tvm 0.27 registers exists."""

from __future__ import annotations

import numpy as np
import pytest
from llm_support import Engine, library_path, load_expected, weights_of

import tvm

META, EXPECTED = load_expected()
CONFIG = META["config"]
PROMPT = EXPECTED["prompt"].tolist()

# Every vm.builtin name of this family that apache-tvm 0.27.0.post1's libtvm_runtime.so
# registers (strings of the library, filtered on kv_state_/attention_kv_cache_/paged_/kv_cache_/
# rnn_state_).
APACHE_027_NAMES = (
    [
        "paged_attention_kv_cache_create",
        "kv_state_add_sequence",
        "kv_state_begin_forward",
        "kv_state_clear",
        "kv_state_end_forward",
        "kv_state_fork_sequence",
        "kv_state_popn",
        "kv_state_remove_sequence",
        "kv_cache_disagg_mark_send",
        "kv_cache_disagg_prepare_recv",
    ]
    + [
        f"attention_kv_cache_{n}"
        for n in (
            "append_mla_kv attention_with_fused_qkv attention_with_shared_kv "
            "commit_accepted_token_tree_nodes cross_attention debug_get_kv debug_get_kv_mla empty "
            "enable_sliding_window_for_seq export_page_group finish_import get_checkpoint_metadata "
            "get_layout_hash get_num_available_pages get_query_positions get_sequence_length "
            "get_total_sequence_length import_page_group merge_attn_output_inplace prepare_import "
            "self_attention "
            # the non-paged cache (apache-tvm's lm_support.cc)
            "append array_clear array_popn create update view window_override "
            "window_override_with_sinks"
        ).split()
    ]
    + ["rnn_state_create", "rnn_state_debug_get", "rnn_state_get", "rnn_state_set"]
)


@pytest.fixture
def eng(tmp_path):
    return Engine(tvm, library_path("cpu", tmp_path), tvm.cpu(), weights_of(EXPECTED), CONFIG)


def g(name):
    return tvm.get_global_func(f"vm.builtin.{name}")


def shape(*xs):
    return tvm.runtime.ShapeTuple(list(xs))


@pytest.mark.parametrize("name", APACHE_027_NAMES)
def test_every_apache_027_name_is_registered(name):
    assert tvm.get_global_func(f"vm.builtin.{name}", allow_missing=True) is not None


def test_unknown_sequence(eng):
    with pytest.raises(ValueError, match="no sequence 7"):
        g("kv_state_begin_forward")(eng.cache, shape(7), shape(3))
    with pytest.raises(ValueError, match="no sequence 7"):
        eng.popn(7, 1)
    with pytest.raises(ValueError, match="no sequence 7"):
        eng.fork_sequence(7, 8, -1)


def test_duplicate_and_out_of_range(eng):
    eng.add_sequence(0)
    with pytest.raises(ValueError, match="already exists"):
        eng.add_sequence(0)
    eng.prefill({0: PROMPT[:4]})
    with pytest.raises(ValueError, match="cannot pop 5 tokens"):
        eng.popn(0, 5)
    with pytest.raises(ValueError, match="fork position 9"):
        eng.fork_sequence(0, 1, 9)
    with pytest.raises(ValueError, match="appears twice"):
        g("kv_state_begin_forward")(eng.cache, shape(0, 0), shape(1, 1))
    with pytest.raises(ValueError, match="must be positive"):
        g("kv_state_begin_forward")(eng.cache, shape(0), shape(0))


def test_batch_and_chunk_limits(eng):
    for i in range(CONFIG["max_batch_size"] + 1):
        eng.add_sequence(i)
    ids = list(range(CONFIG["max_batch_size"] + 1))
    with pytest.raises(ValueError, match="batch of 5 sequences"):
        g("kv_state_begin_forward")(eng.cache, shape(*ids), shape(*[1] * len(ids)))
    with pytest.raises(ValueError, match="prefill_chunk_size"):
        g("kv_state_begin_forward")(eng.cache, shape(0), shape(CONFIG["prefill_chunk_size"] + 1))


def test_cache_full_is_an_error_not_a_crash(eng):
    eng.add_sequence(0)
    chunk = CONFIG["prefill_chunk_size"]
    with pytest.raises(RuntimeError, match="KV cache is full"):
        for _ in range(CONFIG["max_total_seq_len"] // chunk + 2):
            eng.prefill({0: [1] * chunk})
    # The failed forward changed nothing: the sequence keeps what it had.
    assert eng.cache_call("get_sequence_length", 0) % chunk == 0


def test_attention_outside_a_forward(eng):
    qkv = tvm.runtime.empty((1, 8, 16), "float32")
    out = tvm.runtime.empty((1, 4, 16), "float32")
    with pytest.raises(RuntimeError, match="kv_state_begin_forward"):
        g("attention_kv_cache_attention_with_fused_qkv")(eng.cache, 0, 0.25, qkv, out)


def test_wrong_shapes_and_layers(eng):
    eng.add_sequence(0)
    g("kv_state_begin_forward")(eng.cache, shape(0), shape(2))
    qkv = tvm.runtime.empty((2, 8, 16), "float32")
    with pytest.raises(ValueError, match="layer 5 is not held"):
        g("attention_kv_cache_attention_with_fused_qkv")(
            eng.cache, 5, 0.25, qkv, tvm.runtime.empty((2, 4, 16), "float32")
        )
    with pytest.raises(ValueError, match=r"output has shape \(3, 4, 16\)"):
        g("attention_kv_cache_attention_with_fused_qkv")(
            eng.cache, 0, 0.25, qkv, tvm.runtime.empty((3, 4, 16), "float32")
        )
    with pytest.raises(TypeError, match="float16"):
        g("attention_kv_cache_attention_with_fused_qkv")(
            eng.cache,
            0,
            0.25,
            tvm.runtime.tensor(np.zeros((2, 8, 16), "float16")),
            tvm.runtime.empty((2, 4, 16), "float32"),
        )


def test_token_trees_and_unsupported_features(eng):
    eng.add_sequence(0)
    # A chain is an ordinary forward...
    g("kv_state_begin_forward")(eng.cache, shape(0), shape(3), shape(-1, 0, 1))
    # ...a branching draft tree is refused by name.
    with pytest.raises(NotImplementedError, match="token-tree attention"):
        g("kv_state_begin_forward")(eng.cache, shape(0), shape(3), shape(-1, 0, 0))
    with pytest.raises(NotImplementedError, match="disaggregation"):
        g("kv_cache_disagg_prepare_recv")(eng.cache, 0, 4)
    with pytest.raises(NotImplementedError, match="MLA"):
        g("attention_kv_cache_append_mla_kv")(eng.cache, 0, tvm.runtime.empty((1, 8), "float32"))


def test_create_with_wrong_arguments():
    create = g("paged_attention_kv_cache_create")
    with pytest.raises(TypeError, match="28 arguments"):
        create(shape(4, 256, 64, 16, 0))


def test_fork_pair_writing_one_shared_page_needs_one_copy(eng):
    # 242 tokens fill 16 of the 17 pages (the last one partly); after a fork both sequences write
    # into that shared page: one copies it (the last free page), the other writes in place.
    eng.add_sequence(0)
    for n in (64, 64, 64, 50):
        eng.prefill({0: [1] * n})
    assert eng.cache_call("get_num_available_pages") == 1
    eng.fork_sequence(0, 1, -1)
    eng.decode({0: 2, 1: 3})
    assert eng.cache_call("get_num_available_pages") == 0
    with pytest.raises(RuntimeError, match="KV cache is full"):
        eng.prefill({0: [1] * 14})
