"""Compile real torchvision models with apache-tvm 0.27 for the load-path benchmark.

    python benchmarks/make_torchvision_models.py --out DIR [--models mobilenet_v3_small resnet10]
        [--opencl-models resnet10 resnet18] [--opencl-size 224]

Run with a python that has apache-tvm 0.27, torch and torchvision (the `bench` session makes one).
Each model gets random weights (fixed seed), is exported with torch.export, imported by apache-tvm's
own Relax frontend with its weights embedded in the artifact (what a deploy script ships), compiled
for `llvm` and written as DIR/<model>.so, with DIR/<model>.npz holding an input and the output that
apache-tvm's runtime computes for it (the benchmark checks both runtimes against it before timing).
Existing files are kept: generating takes minutes, the benchmark seconds.

``--opencl-models`` also writes DIR/opencl/<model>.so (+ .npz) for the profile benchmark's OpenCL
rows: the same model and seed through apache-tvm's default Relax pipeline for
``Target("opencl", host="llvm")`` (the dlight GPU default schedules), at an input of
``--opencl-size`` pixels square (PoCL runs these kernels on the CPU cores, so a smaller input keeps
the benchmark short). Its reference output is apache-tvm's CPU runtime on the same model compiled
for ``llvm`` at that size (apache-tvm's wheel has no OpenCL runtime), a copy that is not kept. The
subdirectory keeps DIR/*.so the CPU builds the load benchmark globs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torchvision
from torchvision.models.resnet import BasicBlock, ResNet

import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program


def _resnet10() -> torch.nn.Module:
    # The smallest member of the ResNet family: one basic block per stage (4.9M parameters).
    return ResNet(BasicBlock, [1, 1, 1, 1])


MODELS = {
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(weights=None),
    "resnet10": _resnet10,
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "resnet50": lambda: torchvision.models.resnet50(weights=None),
    "vit_b_16": lambda: torchvision.models.vit_b_16(weights=None),
}


def _import(name: str, size: int) -> tuple[torch.nn.Module, torch.Tensor, tvm.IRModule]:
    """The model with its seeded random weights, its seeded input, and the Relax module."""
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, size, size), dtype=np.float32))
    with torch.no_grad():
        exported = torch.export.export(model, (x,))
        mod = from_exported_program(exported, keep_params_as_input=False)
    return model, x, mod


def _run_on_cpu(so: Path, x: torch.Tensor) -> np.ndarray:
    """apache-tvm's runtime on an exported CPU build: the reference output."""
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(so)), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x.numpy()))
    y = y[0] if isinstance(y, (list, tuple)) or type(y).__name__ == "Array" else y
    return y.numpy()


# The OpenCL builds the profile benchmark runs on PoCL, and their input size.
OPENCL_MODELS = ("resnet10", "resnet18")
OPENCL_SIZE = 224


def compile_model(name: str, out: Path) -> dict:
    model, x, mod = _import(name, 224)
    exe = tvm.compile(mod, target="llvm")
    so = out / f"{name}.so"
    exe.export_library(str(so))
    np.savez(out / f"{name}.npz", x=x.numpy(), y=_run_on_cpu(so, x))
    params = sum(p.numel() for p in model.parameters())
    return {"model": name, "parameters": int(params), "so_bytes": so.stat().st_size}


def compile_opencl_model(name: str, out: Path, size: int) -> dict:
    """DIR/opencl/<name>.so: the default GPU pipeline (dlight schedules) for OpenCL + llvm host."""
    _, x, mod = _import(name, size)
    target = tvm.target.Target("opencl", host="llvm")
    exe = tvm.compile(mod, target=target, relax_pipeline=relax.get_default_pipeline(target))
    so = out / f"{name}.so"
    exe.export_library(str(so))
    ref = out / f"_{name}_cpu_ref.so"
    tvm.compile(mod, target="llvm").export_library(str(ref))
    try:
        y = _run_on_cpu(ref, x)
    finally:
        ref.unlink()
    np.savez(out / f"{name}.npz", x=x.numpy(), y=y)
    return {"model": name, "target": "opencl", "size": size, "so_bytes": so.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--opencl-models", nargs="*", default=list(OPENCL_MODELS), choices=list(MODELS))
    parser.add_argument("--opencl-size", type=int, default=OPENCL_SIZE, help="input pixels square")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.models:
        if (args.out / f"{name}.so").exists() and (args.out / f"{name}.npz").exists():
            continue
        info = compile_model(name, args.out)
        print(json.dumps(info), flush=True)
    cl_out = args.out / "opencl"
    for name in args.opencl_models:
        cl_out.mkdir(exist_ok=True)
        if (cl_out / f"{name}.so").exists() and (cl_out / f"{name}.npz").exists():
            continue
        print(json.dumps(compile_opencl_model(name, cl_out, args.opencl_size)), flush=True)


if __name__ == "__main__":
    main()
