"""Child of core_bench's import benchmark: the cost of one statement in a fresh interpreter.

    python benchmarks/_import_child.py "import tvm"

Only builtins that every interpreter has already loaded at start-up (sys, time) are imported
before the measured statement, and /proc is read with builtins only, so neither the measured
import nor the resident memory after it includes a helper module.  Prints a Python dict literal.
"""

import sys
import time

code = compile(sys.argv[1], "<measured>", "exec")
_t0 = time.perf_counter()
exec(code, {})
_t1 = time.perf_counter()
_st = {}
with open("/proc/self/status") as _f:
    for _line in _f:
        if _line.startswith(("VmRSS:", "VmHWM:")):
            _k, _v = _line.split(":", 1)
            _st[_k] = int(_v.split()[0])
print(repr({"import_s": _t1 - _t0, "rss_kb": _st["VmRSS"], "hwm_kb": _st["VmHWM"]}))
