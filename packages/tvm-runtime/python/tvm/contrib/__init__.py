"""``tvm.contrib``: the runtime-side helpers of apache-tvm 0.27's ``tvm.contrib`` (``tvmjs``'s
tensor-cache loader).  The compiled contrib functions artifacts call (``tvm.contrib.sort.*``,
``tvm.contrib.random.*``) are global functions of the ``tvm-runtime-extra`` wheel."""
