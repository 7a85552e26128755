"""The support builtins around the LLM ones: the ``call_py_func`` registry, ``debug_print``, the
full list of ``vm.builtin.*`` names next to apache-tvm 0.27's, and the error for a runtime builtin
that tvm-runtime does not provide (it must not tell the user to re-export the artifact)."""

from __future__ import annotations

import pytest
import tvm_ffi
from backend_testing.payloads import packed_str
from vm_support import patched_copy

import tvm
from conftest import ARTIFACTS, run_python
from tvm.runtime.vm import VirtualMachine

MLP = ARTIFACTS / "relax" / "mlp_cpu.so"

# What apache-tvm 0.27 registers outside the paged KV cache, KV state and RNN state.
LM_SUPPORT_NAMES = (
    "sample_top_p_from_logits sample_top_p_from_prob multinomial_from_uniform "
    "apply_softmax_with_temperature apply_repetition_penalty apply_presence_and_frequency_penalty "
    "tensor_cache.load tensor_cache.get tensor_cache.update tensor_cache.remove tensor_cache.clear "
    "param_array_from_cache param_array_from_cache_by_name param_array_from_cache_by_name_unpacked "
    "param_module_from_cache param_module_from_cache_by_name "
    "register_py_func get_py_func call_py_func clear_py_func_registry debug_print"
).split()


def test_lm_support_builtins_are_registered():
    names = set(tvm_ffi.registry.list_global_func_names())
    missing = [n for n in LM_SUPPORT_NAMES if "vm.builtin." + n not in names]
    assert not missing


def test_py_func_registry():
    g = lambda name: tvm.get_global_func("vm.builtin." + name)  # noqa: E731
    g("register_py_func")("scale", lambda _unused, k: k * 2)
    assert g("call_py_func")(("scale", (None, 21))) == 42
    assert g("get_py_func")("scale")(None, 5) == 10
    with pytest.raises(TypeError, match=r"expects one argument, the tuple \(name, args\)"):
        g("call_py_func")("scale", 1)
    g("clear_py_func_registry")()
    with pytest.raises(KeyError, match="'scale' is not registered"):
        g("call_py_func")(("scale", (None, 1)))


def test_debug_print_prints_like_apache_tvm():
    proc = run_python(
        """
        import numpy as np, tvm, tvm.runtime.vm
        f = tvm.get_global_func("vm.builtin.invoke_debug_func")
        f(None, "vm.builtin.debug_print", "model.py:3", tvm.runtime.tensor(np.arange(3, dtype="int32")))
        """
    )
    assert "model.py:3: shape = (3,), dtype = int32, data =\n" in proc.stdout


@pytest.mark.parametrize(
    "name, replacement, advice",
    [
        (
            b"vm.builtin.alloc_tensor",
            b"vm.builtin.alloc_tensoX",
            "not part of the artifact, and this version of tvm-runtime does not provide it",
        ),
        # A runtime function tvm-runtime deliberately leaves out: the advice says why.
        (b"vm.builtin.alloc_tensor", b"runtime.get_cuda_stream", "apache-tvm's CUDA runtime internals"),
    ],
)
def test_unprovided_runtime_builtin_says_so(tmp_path, name, replacement, advice):
    assert len(replacement) == len(name)
    bad = patched_copy(MLP, tmp_path / "mlp.so", packed_str(name), packed_str(replacement))
    with pytest.raises(RuntimeError) as info:
        VirtualMachine(tvm.runtime.load_module(str(bad)), tvm.cpu())
    msg = str(info.value)
    assert f"Cannot find function '{replacement.decode()}'" in msg
    assert advice in msg and "re-export it" not in msg
