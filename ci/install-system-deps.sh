#!/usr/bin/env bash
# Debian packages the tests and the demo need: the OpenCL ICD loader with PoCL (a CPU OpenCL
# driver) and clinfo for diagnostics; more packages may be named as arguments.  Idempotent and quiet when everything is present.
set -euo pipefail

# Vulkan: the loader and Mesa's lavapipe (a CPU Vulkan driver).
# Test-only extras: validation layers (validation-clean runs), the Vulkan headers (a struct-layout
# check of our own declarations), binutils (readelf for DT_NEEDED checks) and doctest (the C++
# unit tests of tests/cpp).
# oneDNN 2.x: libdnnl-dev's headers build tvm-runtime-dnnl (types only), and its libdnnl2 is
# what that wheel opens at first use to run dnnl_json modules.
# HIP's headers (libamdhip64-dev, ~19 MB with its dependencies): the declaration check of
# src/backends/rocm/hip_api.h (tests/rocm/test_hip_api_decls.py); nothing links them.
PACKAGES=(ocl-icd-libopencl1 pocl-opencl-icd clinfo libvulkan1 mesa-vulkan-drivers
  vulkan-validationlayers libvulkan-dev binutils doctest-dev libdnnl-dev libamdhip64-dev)
# More for one session (e.g. qemu-user-static for `nox -s aarch64`), given as arguments.
PACKAGES+=("$@")

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]} (run this script as root, or apt-get install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed: ${missing[*]}"
