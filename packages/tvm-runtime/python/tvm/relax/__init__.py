"""``tvm.relax.VirtualMachine`` for deploy scripts written against apache-tvm 0.27.

tvm-runtime has no Relax compiler; this package only re-exports the runtime's VM.
"""

from ..runtime.vm import VirtualMachine

__all__ = ["VirtualMachine"]
