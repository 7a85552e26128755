"""An apache-tvm style plugin whose entry point raises, as a plugin with a broken driver would."""


def _autoload():
    raise RuntimeError("tvm_bad: simulated plugin initialisation failure")
