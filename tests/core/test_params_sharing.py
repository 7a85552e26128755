"""``load_param_dict_from_file`` maps the params file instead of copying it (issue 37): tensors
64-byte aligned in the file alias its copy-on-write mapping, misaligned ones come from the weight
store's realigned image ($TVM_WEIGHT_CACHE_DIR), so processes that load one params file share its
pages.  Fixture: a params file written by our save_param_dict of float32 tensors sized so that
some land aligned and some not, checked in fresh interpreters (/proc/self/smaps: mapping_probe).
"""

from __future__ import annotations

import json

import mapping_probe
import numpy as np

import tvm
from conftest import run_python

CHILD = """
import json, numpy as np, tvm
path, npz = {path!r}, {npz!r}
want = np.load(npz)
params = tvm.runtime.load_param_dict_from_file(path)
report = {{}}
for name, t in params.items():
    found = where(t.data_ptr())
    report[name] = {{"file": found["file"], "inode": found["inode"],
                    "anonymous_kb": found["anonymous_kb"], "aligned": t.data_ptr() % 64 == 0,
                    "ok": bool(np.array_equal(t.numpy(), want[name]))}}
name = sorted(params)[0]
params[name].copyfrom(np.zeros(want[name].shape, want[name].dtype))
again = tvm.runtime.load_param_dict_from_file(path)
report["_write_stays_private"] = bool(np.array_equal(again[name].numpy(), want[name]))
print(json.dumps(report))
"""


def test_params_file_tensors_map_the_file_or_the_store(tmp_path):
    rng = np.random.default_rng(3)
    # 4 KB tensors (a page each, so a mapping's anonymous kB tells a copy); the names' lengths put
    # the first record's data at an unaligned offset, later ones follow it.
    arrays = {f"w{i}": rng.standard_normal(1024 + 3 * i).astype("float32") for i in range(4)}
    path, npz = tmp_path / "params.bin", tmp_path / "params.npz"
    path.write_bytes(tvm.runtime.save_param_dict({k: tvm.runtime.tensor(v) for k, v in arrays.items()}))
    np.savez(npz, **arrays)
    before = path.read_bytes()
    store = tmp_path / "weights"
    env = {"TVM_WEIGHT_CACHE_DIR": str(store), "TVM_WEIGHT_CACHE_MIN_SIZE": "0"}
    code = mapping_probe.SOURCE + CHILD.format(path=str(path), npz=str(npz))
    for _ in range(2):  # the first process writes the store's entry, the second maps it
        report = json.loads(run_python(code, env=env).stdout.strip().splitlines()[-1])
        assert report.pop("_write_stays_private"), report
        (entry,) = store.glob("*.entry")
        files = {r["file"] for r in report.values()}
        assert files <= {str(path), str(entry)} and str(entry) in files, report
        for name, r in report.items():
            assert r["ok"] and r["aligned"], (name, r)
            if r["file"] == str(entry):
                assert r["anonymous_kb"] == 0, (name, r)
    assert path.read_bytes() == before  # copy-on-write: the write never reached the file
