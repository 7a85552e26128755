"""What the backend tests (tests/<backend>/, tests/conformance/) have in common, one module a job:

* devices: a device, or a skip saying why it is missing (a failure where CI requires it);
* elf: a small ELF reader for artifacts and wheels' libraries;
* payloads: the ``__tvm_ffi__library_bin`` module tree of an exported library and the
  function-table payloads (apache-tvm 0.27's ``cuda``, ``opencl``, ... module formats);
* runners: checks every backend runs on its own copy of the shared artifact cases;
* no_driver: fresh interpreters whose vendor library is hidden or replaced by ``env``;
* workspace: the device workspace pool on a fake driver.

What every backend wheel must be is tests/conformance; the fake vendor libraries and their logs
are tests/fakes.  Imported like ``conftest``: pytest puts
tests/ (the directory of the root conftest.py) on sys.path whatever the working directory, and
subprocess scripts add it explicitly.
"""
