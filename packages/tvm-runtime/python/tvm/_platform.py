"""What differs between the systems the wheels run on (Linux, macOS): the shared library suffix.

The core is ``tvm/lib/libtvm_runtime<DSO_SUFFIX>``, each backend's DSO
``tvm/backend/<name>/libtvm_runtime_<name><DSO_SUFFIX>``, as the CMake build names them there.
"""

from __future__ import annotations

import sys

DSO_SUFFIX = ".dylib" if sys.platform == "darwin" else ".so"
