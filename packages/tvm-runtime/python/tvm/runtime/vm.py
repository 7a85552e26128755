"""The Relax virtual machine: run models exported by apache-tvm 0.27 (``relax.VMExecutable``).

Same API as apache-tvm 0.27's ``tvm.runtime.vm.VirtualMachine``::

    mod = tvm.runtime.load_module("model.so")
    vm = tvm.runtime.vm.VirtualMachine(mod, tvm.cpu())
    out = vm["main"](x, w)

The interpreter lives in libtvm_runtime (C++); this module only sets it up and converts inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from numbers import Integral, Number
from typing import Any, Callable, Union

import numpy as np
import tvm_ffi

from . import _tensor, profiling
from .device import RPC_SESS_MASK
from .module import BenchmarkResult, Module

__all__ = ["VMInstrumentReturnKind", "VirtualMachine"]

_CPU = 1  # DLPack device code


class VMInstrumentReturnKind(IntEnum):
    """What an instrument function returns before a call (see ``set_instrument``)."""

    NO_OP = 0
    SKIP_RUN = 1  # skip the call (only meaningful before it runs)


def _is_device(obj: Any) -> bool:
    return isinstance(obj, tvm_ffi.core.Device)


def _device_key(dev: Any) -> tuple[int, int]:
    return (dev.dlpack_device_type() % RPC_SESS_MASK, dev.index)


class VirtualMachine:
    """Relax VM runtime: runs the functions of an exported Relax model on a device.

    Parameters
    ----------
    rt_mod : tvm.runtime.Module
        The loaded artifact (``tvm.runtime.load_module("model.so")``).
    device : Device or list of Device
        Where to run.  The CPU is appended as the host device when the last one is not a CPU
        (shape computations run there).
    memory_cfg : str or dict of Device to str, optional
        Allocator per device: ``"naive"`` or ``"pooled"`` (default, reuses freed blocks).
    profile : bool
        Accepted for scripts written for older apache-tvm: every VM can be profiled with
        :meth:`profile`, and when it does not, profiling costs nothing.
    """

    NAIVE_ALLOCATOR = 1
    POOLED_ALLOCATOR = 2

    def __init__(
        self,
        rt_mod: Module,
        device: Union[Any, Sequence[Any]],
        memory_cfg: Union[str, dict[Any, str], None] = None,
        profile: bool = False,
    ) -> None:
        if not isinstance(rt_mod, tvm_ffi.Module):
            raise ValueError("Expect the rt_mod to be an runtime.Module (from tvm.runtime.load_module)")
        if rt_mod.kind != "relax.VMExecutable":
            raise ValueError(
                f"the module is a '{rt_mod.kind}' module, not a Relax VM executable "
                "('relax.VMExecutable'): call its functions directly with mod['name'](...)"
            )
        self.module = rt_mod["vm_load_executable"]()
        self._invoke_closure = self.module["invoke_closure"]
        self._save_function = self.module["save_function"]
        self._set_input = self.module["set_input"]
        self._invoke_stateful = self.module["invoke_stateful"]
        self._get_output = self.module["get_output"]
        self._get_output_arity = self.module["get_output_arity"]
        self._get_function_arity = self.module["get_function_arity"]
        self._get_function_param_name = self.module["get_function_param_name"]
        self._set_instrument = self.module["set_instrument"]
        self._profile = self.module["profile"]
        self._setup_device(device, memory_cfg)

    def _setup_device(self, dev: Any, memory_cfg: Union[str, dict[Any, str], None]) -> None:
        if isinstance(dev, (list, tuple)):
            devs = list(dev)
            if not devs or not all(_is_device(d) for d in devs):
                raise TypeError("dev is expected to be Device or List[Device]")
        elif _is_device(dev):
            devs = [dev]
        else:
            raise TypeError("dev is expected to be Device or List[Device]")
        # The last device is the host: shape functions and the shape heap live there.
        if devs[-1].dlpack_device_type() % RPC_SESS_MASK != _CPU:
            devs.append(_tensor.cpu(0))

        default_alloc = VirtualMachine.POOLED_ALLOCATOR
        per_device: dict[tuple[int, int], int] = {}
        if memory_cfg is None:
            pass
        elif isinstance(memory_cfg, str):
            default_alloc = self._alloc_type(memory_cfg)
        elif isinstance(memory_cfg, dict):
            for key, value in memory_cfg.items():
                if not _is_device(key):
                    raise TypeError(f"memory_cfg keys must be Devices, got {type(key).__name__}")
                per_device[_device_key(key)] = self._alloc_type(value)
        else:
            raise TypeError(
                f"memory_cfg is expected be string or dictionary, but received {type(memory_cfg)}"
            )

        init_args: list[int] = []
        for d in devs:
            key = _device_key(d)
            init_args += [key[0], key[1], per_device.get(key, default_alloc)]
        self.module["vm_initialization"](*init_args)

    @staticmethod
    def _alloc_type(name: Any) -> int:
        if isinstance(name, int) and name in (1, 2):
            return name
        if name == "naive":
            return VirtualMachine.NAIVE_ALLOCATOR
        if name == "pooled":
            return VirtualMachine.POOLED_ALLOCATOR
        raise ValueError(f"unknown allocator {name!r}: expected 'naive' or 'pooled'")

    def __getitem__(self, key: str) -> tvm_ffi.Function:
        return self.module[key]

    def invoke_closure(self, closure: Any, *args: Any) -> Any:
        """Call a VM closure (or a Function) with ``args``."""
        return self._invoke_closure(closure, *args)

    def save_function(
        self,
        func_name: str,
        saved_name: str,
        *args: Any,
        include_return: bool = True,
        **kwargs: Any,
    ) -> None:
        """Save ``func_name`` with its arguments bound under ``saved_name`` (e.g. for timing).

        ``vm[saved_name]()`` then runs it without converting arguments on every call.
        """
        cargs = self._convert_call_args(func_name, args, kwargs)
        self._save_function(func_name, saved_name, int(include_return), *cargs)

    def _convert(self, arg: Any, cargs: list[Any]) -> None:
        """Convert one Python argument the way apache-tvm's VM wrapper does."""
        if isinstance(arg, (tvm_ffi.Object, tvm_ffi.core.Tensor)):
            cargs.append(arg)
        elif isinstance(arg, np.ndarray):
            cargs.append(_tensor.tensor(arg, device=_tensor.cpu(0)))
        elif isinstance(arg, (tuple, list)):
            fields: list[Any] = []
            for field in arg:
                self._convert(field, fields)
            cargs.append(tuple(fields))
        elif isinstance(arg, (Number, bool, np.generic)):
            if isinstance(arg, np.float16):
                dtype = "float16"
            elif isinstance(arg, (Integral, bool, np.integer, np.bool_)):
                dtype = "int32"
            else:
                dtype = "float32"
            cargs.append(_tensor.tensor(np.array(arg, dtype=dtype), device=_tensor.cpu(0)))
        elif isinstance(arg, str):
            cargs.append(arg)
        else:
            raise TypeError(f"Unsupported type: {type(arg)}")

    def _convert_call_args(self, func_name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """Positional and named arguments of ``func_name``, converted as apache-tvm's wrapper does."""
        if kwargs:
            args = self._convert_func_named_args(func_name, args, **kwargs)
        cargs: list[Any] = []
        for arg in args:
            self._convert(arg, cargs)
        return cargs

    def _convert_func_named_args(self, func_name: str, args: Sequence[Any], **kwargs: Any) -> list[Any]:
        """Positional + named arguments -> the function's parameter order."""
        arity = self._get_function_arity(func_name)
        params = [self._get_function_param_name(func_name, i) for i in range(arity)]
        ordered: list[Any] = [None] * len(params)
        filled = [False] * len(params)
        for name, value in kwargs.items():
            if name in params:
                idx = params.index(name)
                ordered[idx] = value
                filled[idx] = True
            else:
                print(f'Warning: Keyword argument "{name}" is unused in {func_name}')
        if len(args) + sum(filled) != len(params):
            raise TypeError(
                f"{func_name} takes {len(params)} arguments ({', '.join(params)}), "
                f"got {len(args)} positional and {sum(filled)} named"
            )
        positional = iter(args)
        for i in range(len(params)):
            if not filled[i]:
                ordered[i] = next(positional)
        return ordered

    def set_input(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Set the inputs of ``func_name`` for ``invoke_stateful`` (copied to the device)."""
        cargs = self._convert_call_args(func_name, args, kwargs)
        self._set_input(func_name, *cargs)

    def invoke_stateful(self, func_name: str) -> None:
        """Run ``func_name`` on the inputs given to ``set_input``; read results with ``get_outputs``."""
        self._invoke_stateful(func_name)

    def get_outputs(self, func_name: str) -> Any:
        """The result of the last ``invoke_stateful(func_name)``; tuples become Python tuples."""

        def get(*idx: int) -> Any:
            arity = self._get_output_arity(func_name, *idx)
            if arity == -1:
                return self._get_output(func_name, *idx)
            return tuple(get(*idx, i) for i in range(arity))

        return get()

    def set_instrument(self, instrument: Callable[..., Any]) -> None:
        """Call ``instrument(func, func_symbol, before_run, ret_value, *args)`` around every
        VM call instruction; returning ``VMInstrumentReturnKind.SKIP_RUN`` before a call skips it.
        Pass ``None`` to remove it."""
        self._set_instrument(instrument)

    def profile(self, func_name: str, *args: Any, **kwargs: Any) -> profiling.Report:
        """Run ``func_name`` once on ``args``, timing every call it makes.

        Returns a :class:`tvm.runtime.profiling.Report`: per kernel calls, total and mean time and
        share of the run; the run split into kernel time, allocations, copies, other builtins and
        the interpreter; a table (``print(report)``), CSV, JSON and a Chrome trace. Calls on an
        accelerator are timed to completion, so the profiled run is slower than an unprofiled one.
        """
        cargs = self._convert_call_args(func_name, args, kwargs)
        return profiling.Report._from_vm(self._profile(func_name, *cargs))

    def time_evaluator(
        self,
        func_name: str,
        dev: Any,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        f_preproc: str = "",
    ) -> Callable[..., BenchmarkResult]:
        """A function that times ``func_name`` on ``dev`` and returns a BenchmarkResult.

        Works with VM functions (``vm.time_evaluator("main", dev)(*args)``), with the stateful
        API (``vm.time_evaluator("invoke_stateful", dev)("main")``) and with functions saved by
        ``save_function``.  One warm-up call, then ``repeat`` rounds of ``number`` calls.
        """
        return self.module.time_evaluator(
            func_name,
            dev,
            number=number,
            repeat=repeat,
            min_repeat_ms=min_repeat_ms,
            cooldown_interval_ms=cooldown_interval_ms,
            repeats_to_cooldown=repeats_to_cooldown,
            f_preproc=f_preproc,
        )


# override=True: reloading this module must not fail on its own earlier registration.
@tvm_ffi.register_global_func("vm.builtin.debug_print", override=True)
def _debug_print(line_info: str, array: Any) -> None:
    """Target of ``nn.op.print_`` (via ``vm.builtin.invoke_debug_func``), as apache-tvm 0.27 prints."""
    print(f"{line_info}: shape = {array.shape}, dtype = {array.dtype}, data =\n{array}")
