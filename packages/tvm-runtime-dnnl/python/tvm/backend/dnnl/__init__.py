"""tvm-runtime-dnnl: the oneDNN runtime of apache-tvm 0.27 external-codegen (BYOC) artifacts.

Registers the loader of ``dnnl_json`` modules, the subgraphs apache-tvm's DNNL codegen hands
to oneDNN (conv2d/dense composites with bias and activations, eltwise and binary operators).
They run on the CPU device of the core; their weights come from the artifact's
``const_loader`` on first use.  oneDNN 2.x (``libdnnl.so.2``) is opened when the first such
module is initialized, never at ``import tvm``: install it from the distribution
(Debian/Ubuntu: ``apt-get install libdnnl2``) or set ``TVM_DNNL_LIBRARY``.
"""

from __future__ import annotations

try:
    from tvm.backend import hook_api
except ImportError as err:  # only this wheel's portion of the `tvm` namespace is installed
    raise ImportError(f"{__name__} needs the tvm-runtime core wheel: pip install -U tvm-runtime") from err


def library_status() -> str:
    """ "" when oneDNN can be opened, else what is missing and the package that provides it."""
    import tvm_ffi

    return str(tvm_ffi.get_global_func("tvm_runtime.dnnl.library_status")())


def _diagnostics() -> dict:
    status = library_status()
    facts = {"onednn": "available" if not status else status}
    if not status:
        import tvm_ffi

        facts["library"] = str(tvm_ffi.get_global_func("tvm_runtime.dnnl.library_path")())
    return facts


# Serves no device type: dnnl_json modules run on the core's CPU device.  A missing oneDNN is
# reported when a module needs it (and by library_status / `python -m tvm.backend --json`).
BACKEND = hook_api.declare_backend("dnnl", diagnostics=_diagnostics)
register_backend, driver_status = BACKEND.register_backend, BACKEND.driver_status

MODULE_KINDS = ("dnnl_json",)

__all__ = ["BACKEND", "MODULE_KINDS", "driver_status", "library_status", "register_backend"]
