"""Programs the tests run in a fresh interpreter, as ``python -m children.<name>`` with tests/ on
the path (conftest.run_module): a vendor library is opened once per process, so each case that
points a backend at another driver (a fake, a missing one) needs its own process.  Each prints
its result as JSON on a ``RESULT:`` line (conftest.child_result)."""
