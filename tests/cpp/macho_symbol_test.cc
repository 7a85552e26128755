/* The Mach-O library-bin reader (src/core/macho_symbol.h, through mapped_file.h's
 * FindDynamicSymbol) on a real macOS arm64 artifact: tests/artifacts/macos/opencl_add.dylib, which
 * apache-tvm 0.27 compiled for arm64-apple-macos (make_macos_artifacts.py). */
#include "macho_symbol.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "library_bin.h"
#include "mapped_file.h"

namespace {

const std::string kArtifact = std::string(TVMRT_TEST_ARTIFACTS) + "/macos/opencl_add.dylib";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool Contains(const char* data, uint64_t size, const char* needle) {
  return std::string(data, size).find(needle) != std::string::npos;
}

}  // namespace

using tvm_runtime::core::FindDynamicSymbol;
using tvm_runtime::core::kLibraryBinSymbol;
using tvm_runtime::core::MappedFile;
namespace macho = tvm_runtime::core::macho;

TEST_CASE("the library-bin symbol of apache-tvm's macOS arm64 artifact is found and well formed") {
  MappedFile file(kArtifact, MappedFile::Mode::kReadOnly);
  REQUIRE(file.ok());
  REQUIRE(macho::IsMachO64(file.data(), file.size()));
  tvm_runtime::core::SymbolBytes bin = FindDynamicSymbol(file, kLibraryBinSymbol);
  REQUIRE(bin.data != nullptr);
  REQUIRE(bin.size > sizeof(uint64_t));
  // The container: a 64-bit byte count, then that many bytes, which hold the OpenCL module with
  // its kernel source and function name.
  uint64_t nbytes = 0;
  std::memcpy(&nbytes, bin.data, sizeof(nbytes));
  CHECK(nbytes > 0);
  CHECK(nbytes <= bin.size - sizeof(uint64_t));
  const char* payload = bin.data + sizeof(uint64_t);
  CHECK(Contains(payload, nbytes, "__kernel"));
  CHECK(Contains(payload, nbytes, "opencl_add_kernel"));
  CHECK(Contains(payload, nbytes, "opencl"));
}

TEST_CASE("the Mach-O reader finds only external defined symbols and refuses damaged files") {
  const std::string bytes = ReadAll(kArtifact);
  REQUIRE(bytes.size() > 4096);
  // A function symbol of the artifact is found too; a name it lacks is not.
  CHECK(macho::FindSymbol(bytes.data(), bytes.size(), "__tvm_ffi_opencl_add").data != nullptr);
  CHECK(macho::FindSymbol(bytes.data(), bytes.size(), "__tvm_ffi__library_binx").data == nullptr);
  CHECK(macho::FindSymbol(bytes.data(), bytes.size(), "TVMFFIErrorSetRaisedFromCStrParts").data ==
        nullptr);  // undefined: imported from the process, not in the file
  // Cut anywhere, the reader returns nothing or bytes inside the file, never reads past it.
  for (size_t cut :
       {size_t{0}, size_t{16}, size_t{32}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    macho::SymbolSpan span = macho::FindSymbol(bytes.data(), cut, "__tvm_ffi__library_bin");
    if (span.data != nullptr) {
      CHECK(span.data >= bytes.data());
      CHECK(span.data + span.size <= bytes.data() + cut);
    }
  }
  // A load command claiming to run past the file is refused outright.
  std::string broken = bytes;
  uint32_t huge = 0xfffffff0u;
  std::memcpy(&broken[32 + 4], &huge, sizeof(huge));  // cmdsize of the first load command
  CHECK(macho::FindSymbol(broken.data(), broken.size(), "__tvm_ffi__library_bin").data == nullptr);
  // Not Mach-O at all.
  CHECK_FALSE(
      macho::IsMachO64("\x7f"
                       "ELF\x02\x01\x01",
                       7));
}
