/*
 * Fuzz target: the `__tvm_ffi__library_bin` container of an exported library (module tree +
 * embedded payloads of every kind), loaded the way `tvm.runtime.load_module` loads a file.
 * The input is the container without its leading u64 size; it is written into the carrier
 * library (library_bin_carrier.c, TVMRT_FUZZ_CARRIER; the symbol's file offset in
 * TVMRT_FUZZ_CARRIER_OFFSET), which is then loaded and released.
 * The opencl, vulkan and cuda backends are registered, so their loaders run for embedded
 * payloads of their kinds; a `_lib` node is the carrier itself.  As in `load_module`, the file is
 * opened by the core's runtime.LoadLibraryModule, which checks the container before anything of
 * it is parsed or run.
 */
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_runtime.h"

namespace {

namespace ffi = ::tvm::ffi;

std::string carrier_path;
ffi::Function load_library;
unsigned char* carrier_bin = nullptr;
size_t carrier_capacity = 0;
int carrier_fd = -1;
off_t carrier_offset = 0;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tvmrt_fuzz::LoadRuntime({"opencl", "vulkan", "cuda"});
  const char* path = std::getenv("TVMRT_FUZZ_CARRIER");
  if (path == nullptr) tvmrt_fuzz::SetupFailed("set TVMRT_FUZZ_CARRIER to the carrier library");
  carrier_path = path;
  load_library = tvmrt_fuzz::Global("runtime.LoadLibraryModule");
  // Held open for the whole run: every load below reuses this mapping, so what we write into
  // the symbol is what the loader reads.
  void* handle = tvmrt_fuzz::OpenLibrary(carrier_path, RTLD_NOW | RTLD_LOCAL);
  carrier_bin = static_cast<unsigned char*>(dlsym(handle, "__tvm_ffi__library_bin"));
  auto* capacity = static_cast<const unsigned long*>(dlsym(handle, "tvmrt_fuzz_carrier_capacity"));
  if (carrier_bin == nullptr || capacity == nullptr) tvmrt_fuzz::SetupFailed("not a carrier");
  carrier_capacity = *capacity;
  const char* offset = std::getenv("TVMRT_FUZZ_CARRIER_OFFSET");
  carrier_fd = open(path, O_WRONLY | O_CLOEXEC);
  if (offset == nullptr || carrier_fd < 0) tvmrt_fuzz::SetupFailed("carrier file/offset");
  carrier_offset = static_cast<off_t>(std::stoll(offset));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size + sizeof(uint64_t) > carrier_capacity) return -1;  // not added to the corpus
  uint64_t nbytes = size;
  std::memcpy(carrier_bin, &nbytes, sizeof(nbytes));
  std::memcpy(carrier_bin + sizeof(nbytes), data, size);
  size_t total = sizeof(nbytes) + size;
  if (pwrite(carrier_fd, carrier_bin, total, carrier_offset) != static_cast<ssize_t>(total)) {
    tvmrt_fuzz::SetupFailed("cannot write the carrier file");
  }
  tvmrt_fuzz::ExpectHandled([&] {
    ffi::Module root = load_library(carrier_path).cast<ffi::Module>();
    root->GetFunction("__tvm_main__", /*query_imports=*/true);
  });
  return 0;
}
