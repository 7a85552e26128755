"""Every module kind a backend declares refuses garbage with a clear error, never a crash: random
byte strings given to its loader (ffi.Module.load_from_bytes.<kind>, what tvm-ffi's library
loader calls for each payload of an artifact)."""

from __future__ import annotations

from backend_testing.payloads import assert_garbage_payloads_rejected
from declared import Backend, each_module_kind

import tvm


@each_module_kind()
def test_garbage_payloads_are_clear_errors(backend: Backend, kind: str):
    loader = tvm.get_global_func(f"ffi.Module.load_from_bytes.{kind}")
    assert_garbage_payloads_rejected(loader)
