#include "nvrtc/nvrtc_compiler.h"

#include <tvm_runtime/backend/cache/disk_cache.h>
#include <tvm_runtime/backend/error.h>
#include <tvm_runtime/c_api.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "nvrtc/nvrtc_library.h"
#include "nvrtc/nvrtc_shims.h"

namespace tvm_runtime {
namespace cuda {

namespace {

// Part of every cache key: bump when anything here changes what a given input compiles to.
constexpr const char* kCacheKind = "cuda-nvrtc/2";
// NVRTC logs can hold thousands of lines; keep exception messages readable.
constexpr size_t kMaxLog = 16384;
constexpr const char* kSourceName = "tvm_kernels.cu";

bool EnvIs(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

std::vector<std::string> SplitWhitespace(const char* text) {
  std::vector<std::string> out;
  std::istringstream in(text != nullptr ? text : "");
  std::string word;
  while (in >> word) out.push_back(word);
  return out;
}

// ------------------------------------------------------------------------ source inspection

/* Header names of every #include line (both branches of any #if: over-approximating only
 * costs a header search). */
std::vector<std::string> Includes(const std::string& source) {
  std::vector<std::string> out;
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] != '#') continue;
    p = line.find_first_not_of(" \t", p + 1);
    if (p == std::string::npos || line.compare(p, 7, "include") != 0) continue;
    size_t open = line.find_first_of("<\"", p + 7);
    if (open == std::string::npos) continue;
    size_t close = line.find(line[open] == '<' ? '>' : '"', open + 1);
    if (close != std::string::npos) out.push_back(line.substr(open + 1, close - open - 1));
  }
  return out;
}

bool IsShimmed(const std::string& header) {
  return header == kShimCstdintName || header == kShimTypeTraitsName;
}

// Headers of apache-tvm's non-NVRTC (#else) branch, which NVRTC never reads.
bool IsHostOnly(const std::string& header) {
  return header == "cstdint" || header == "type_traits" || header == "cuda.h";
}

struct SourceTraits {
  bool uses_shimmed = false;    // includes a header the shims stand in for
  bool other_cuda_std = false;  // includes a cuda/std header the shims do not provide
  bool needs_toolkit = false;   // includes a CUDA toolkit header (cuda_fp16.h, mma.h, ...)
  bool needs_prelude = false;   // uses INFINITY / NAN, or CUtensorMap (TMA kernels)
};

bool UsesToken(const std::string& source, const char* token) {
  size_t n = std::strlen(token);
  for (size_t p = source.find(token); p != std::string::npos; p = source.find(token, p + 1)) {
    auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    bool left = p == 0 || !ident(source[p - 1]);
    bool right = p + n >= source.size() || !ident(source[p + n]);
    if (left && right) return true;
  }
  return false;
}

SourceTraits Inspect(const std::string& source) {
  SourceTraits t;
  for (const std::string& h : Includes(source)) {
    if (IsShimmed(h)) {
      t.uses_shimmed = true;
    } else if (h.compare(0, 9, "cuda/std/") == 0) {
      t.other_cuda_std = true;
    } else if (!IsHostOnly(h)) {
      t.needs_toolkit = true;
    }
  }
  t.needs_prelude =
      UsesToken(source, "INFINITY") || UsesToken(source, "NAN") || UsesToken(source, "CUtensorMap");
  return t;
}

/* `#include <cuda.h>` is the host driver header, which NVRTC cannot (and need not) read; older
 * TVM output includes it unconditionally.  Blanked, not removed, so log line numbers match. */
std::string PrepareSource(const std::string& source) {
  std::string out = source;
  for (size_t p = out.find("<cuda.h>"); p != std::string::npos; p = out.find("<cuda.h>", p + 1)) {
    size_t line_start = out.rfind('\n', p);
    line_start = line_start == std::string::npos ? 0 : line_start + 1;
    size_t hash = out.find_first_not_of(" \t", line_start);
    if (hash != std::string::npos && out[hash] == '#') {
      size_t line_end = out.find('\n', p);
      if (line_end == std::string::npos) line_end = out.size();
      out.replace(line_start, line_end - line_start, "// (#include <cuda.h> removed for NVRTC)");
      p = line_start;
    }
  }
  return out;
}

// ------------------------------------------------------------------------ target and options

/* The targets to try, in order (a later one only when NVRTC rejects the option naming the
 * earlier): the exact architecture as a cubin, or PTX for an older one. */
std::vector<std::string> ChooseTargets(const NvrtcLibrary& lib, const CudaArch& want,
                                       bool* is_ptx) {
  const int sm = want.sm;
  int best = -1;
  for (int arch : lib.archs) {
    if (arch == sm) {
      *is_ptx = false;
      std::vector<std::string> out = {want.Name()};
      if (want.variant != 0 && !want.exact) out.push_back("sm_" + std::to_string(sm));
      return out;
    }
    if (arch < sm) best = arch;
  }
  if (want.variant != 0 && want.exact) {
    // An arch-specific or family target asked for by name has no portable PTX stand-in.
    backend::ThrowError("RuntimeError", lib.Describe() + " cannot compile for " + want.Name() +
                                            ": it does not support sm_" + std::to_string(sm));
  }
  if (best < 0) {
    std::string oldest = lib.archs.empty() ? "?" : std::to_string(lib.archs.front());
    std::string fix = lib.major >= 13
                          ? " Install the CUDA 12 NVRTC, which still targets it: pip install "
                            "\"tvm-runtime-cuda[nvrtc-cu12]\" (and uninstall nvidia-cuda-nvrtc)."
                          : "";
    backend::ThrowError("RuntimeError", lib.Describe() + " cannot compile for sm_" +
                                            std::to_string(sm) + ": its oldest target is sm_" +
                                            oldest + "." + fix);
  }
  // A GPU newer than this NVRTC: PTX for the newest older target, JIT-compiled by the driver
  // (plain compute_XY: arch-specific PTX would run on that one architecture only).
  *is_ptx = true;
  return {"compute_" + std::to_string(best)};
}

std::vector<std::string> Options(const NvrtcLibrary& lib, const std::string& target, bool is_ptx,
                                 bool prelude) {
  std::vector<std::string> opts = {"--gpu-architecture=" + target, "-default-device"};
  // As apache-tvm 0.27's own NVRTC path, so numerics and register use match what it produces.
  if (lib.major >= 12) opts.push_back("--device-int128");
  for (const char* macro : {"__CUDA_NO_HALF_OPERATORS__", "__CUDA_NO_HALF_CONVERSIONS__",
                            "__CUDA_NO_HALF2_OPERATORS__", "__CUDA_NO_BFLOAT16_CONVERSIONS__"}) {
    opts.push_back(std::string("-U") + macro);
  }
  if (!EnvIs("TVM_CUDA_NVRTC_FAST_MATH", "0")) opts.push_back("--use_fast_math");
  if (lib.major >= 13 && !is_ptx) opts.push_back("--ptxas-options=--register-usage-level=10");
  if (prelude) opts.push_back(std::string("--pre-include=") + kPreludeName);
  for (std::string& extra : SplitWhitespace(std::getenv("TVM_CUDA_NVRTC_EXTRA_OPTS"))) {
    opts.push_back(std::move(extra));
  }
  return opts;
}

// ------------------------------------------------------------------------ headers

/* Where NVRTC >= 13.3's own CUDA + CCCL headers are unpacked ("" when it has none).  Only the
 * path: unpacking waits until a compile needs them (UnpackBundledHeaders). */
std::string BundledHeadersDir(const NvrtcLibrary& lib) {
  if (!lib.has_bundled_headers()) return "";
  return CudaCacheRoot() + "/headers/nvrtc-" + lib.version();
}

/* Unpacks the bundled headers once per directory (NVRTC's call is process-safe and a no-op when
 * they are already there); false with the reason in `note` on failure. */
bool UnpackBundledHeaders(const NvrtcLibrary& lib, const std::string& dir, std::string* note) {
  static std::mutex mu;
  static std::map<std::string, bool> done;
  std::lock_guard<std::mutex> lock(mu);
  auto it = done.find(dir);
  if (it != done.end()) return it->second;
  std::string error;
  const char* log = nullptr;
  bool ok = backend::MakeDirectories(dir, &error) &&
            lib.api->InstallBundledHeaders(dir.c_str(), 0, &log) == NVRTC_SUCCESS;
  if (!ok) {
    *note = "could not unpack NVRTC's bundled headers into " + dir + ": " +
            (error.empty() ? (log != nullptr ? log : "unknown error") : error);
  }
  done[dir] = ok;
  return ok;
}

struct HeaderSet {
  std::string label;
  bool shims = false;
  bool prelude = false;
  bool bundled = false;  // dirs are NVRTC's bundled headers, unpacked on first use
  std::vector<std::string> dirs{};
};

/* Dirs for CUDA toolkit headers (cuda_fp16.h, ...): the bundled ones match NVRTC exactly, so
 * they win over separately installed header wheels. */
void AddToolkitDirs(const NvrtcLibrary& lib, HeaderSet* set) {
  std::string bundled = BundledHeadersDir(lib);
  set->bundled = !bundled.empty();
  set->dirs = set->bundled ? std::vector<std::string>{bundled} : lib.include_dirs;
}

void AddFullDirs(const NvrtcLibrary& lib, HeaderSet* set) {
  std::string bundled = BundledHeadersDir(lib);
  set->bundled = !bundled.empty();
  if (set->bundled) {
    set->dirs = {bundled, bundled + "/cccl"};
    return;
  }
  set->dirs = lib.cccl_dirs;
  set->dirs.insert(set->dirs.end(), lib.include_dirs.begin(), lib.include_dirs.end());
}

/* What to try, fastest first: the shims (plus toolkit headers only if needed), then the real
 * CCCL headers when the shims do not suffice. */
std::vector<HeaderSet> HeaderPlan(const NvrtcLibrary& lib, const SourceTraits& t) {
  std::vector<HeaderSet> plan;
  if (t.uses_shimmed && !t.other_cuda_std) {
    HeaderSet fast{"shims", true, t.needs_prelude};
    if (t.needs_toolkit) AddToolkitDirs(lib, &fast);
    plan.push_back(fast);
  }
  HeaderSet last{"plain", false, t.needs_prelude};
  if (t.uses_shimmed || t.other_cuda_std) {
    last.label = "cccl";
    AddFullDirs(lib, &last);
  } else if (t.needs_toolkit) {
    AddToolkitDirs(lib, &last);
  }
  plan.push_back(last);
  return plan;
}

// ------------------------------------------------------------------------ NVRTC calls

struct NvrtcResult {
  int rc = NVRTC_SUCCESS;
  std::string log;
  std::string image;
};

NvrtcResult RunNvrtc(const NvrtcLibrary& lib, const std::string& source, bool is_ptx,
                     std::vector<std::string> options, const HeaderSet& headers) {
  const NvrtcApi& nv = *lib.api;
  std::vector<const char*> header_text, header_names;
  if (headers.shims) {
    header_text = {kShimCstdint, kShimTypeTraits};
    header_names = {kShimCstdintName, kShimTypeTraitsName};
  }
  if (headers.prelude) {
    header_text.push_back(kPrelude);
    header_names.push_back(kPreludeName);
  }
  for (const std::string& dir : headers.dirs) options.push_back("-I" + dir);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());

  NvrtcResult out;
  nvrtcProgram prog = nullptr;
  out.rc =
      nv.CreateProgram(&prog, source.c_str(), kSourceName, static_cast<int>(header_text.size()),
                       header_text.data(), header_names.data());
  if (out.rc != NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  out.rc = nv.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t size = 0;
  if (nv.GetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
    out.log.resize(size);
    if (nv.GetProgramLog(prog, &out.log[0]) != NVRTC_SUCCESS) out.log.clear();
    out.log.resize(std::strlen(out.log.c_str()));
  }
  if (out.rc == NVRTC_SUCCESS) {
    auto get_size = is_ptx ? nv.GetPTXSize : nv.GetCUBINSize;
    auto get = is_ptx ? nv.GetPTX : nv.GetCUBIN;
    out.rc = get_size(prog, &size);
    if (out.rc == NVRTC_SUCCESS) {
      out.image.resize(size);
      out.rc = get(prog, &out.image[0]);
    }
    // PTX comes NUL-terminated; keep the text only (std::string adds the terminator back).
    if (is_ptx) out.image.resize(std::strlen(out.image.c_str()));
  }
  nv.DestroyProgram(&prog);
  return out;
}

bool MissesHeader(const NvrtcResult& r) {
  return r.rc == NVRTC_ERROR_COMPILATION &&
         r.log.find("cannot open source file") != std::string::npos;
}

std::string Truncated(std::string log) {
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n... (log truncated)";
  return log;
}

[[noreturn]] void ThrowCompileError(const NvrtcLibrary& lib, const std::string& target,
                                    const NvrtcResult& r, const std::string& note) {
  const char* what = lib.api->GetErrorString(r.rc);
  std::string message = lib.Describe() + " failed to compile this artifact's CUDA source for " +
                        target + ": " + (what != nullptr ? what : "error " + std::to_string(r.rc));
  if (MissesHeader(r)) {
    message +=
        ". A CUDA header is missing: use nvidia-cuda-nvrtc >= 13.3 (it bundles the headers), or "
        "install the headers of the same CUDA release (nvidia-cuda-runtime and "
        "nvidia-cuda-cccl), or point " +
        std::string("TVM_CUDA_NVRTC_INCLUDE_DIRS") + " at them";
  }
  if (!note.empty()) message += ". Note: " + note;
  backend::ThrowError("RuntimeError", message + "\nNVRTC log:\n" + Truncated(r.log));
}

// ------------------------------------------------------------------------ cache

const char* CheckImage(const std::string& image, bool is_ptx) {
  if (is_ptx) return image.find(".version") != std::string::npos ? nullptr : "not PTX text";
  bool elf = image.size() > 4 && image.compare(0, 4,
                                               "\x7f"
                                               "ELF") == 0;
  return elf ? nullptr : "not a cubin (ELF) image";
}

backend::CacheKey KernelCacheKey(const NvrtcLibrary& lib, const std::string& source,
                                 const std::string& target, bool is_ptx,
                                 const std::vector<std::string>& options,
                                 const std::vector<HeaderSet>& plan) {
  backend::CacheKey key(kCacheKind);
  key.Add("runtime", TVMRuntimeVersion())
      .Add("shims", kShimVersion)
      .Add("nvrtc", lib.version())
      .Add("target", target)
      .Add("format", is_ptx ? "ptx" : "cubin");
  std::string joined;
  for (const std::string& o : options) joined += o + " ";
  key.Add("options", joined);
  for (const HeaderSet& h : plan) {
    std::string dirs;
    for (const std::string& d : h.dirs) dirs += d + ":";
    key.Add("headers", h.label + (h.shims ? "+shims" : "") + (h.prelude ? "+prelude" : "") +
                           (h.bundled ? "+bundled" : "") + " " + dirs);
  }
  // The artifact's own text, before PrepareSource: what the key is about.
  key.AddContent("source", source);
  return key;
}

}  // namespace

std::string CudaArch::Name() const {
  std::string name = "sm_" + std::to_string(sm);
  if (variant != 0) name += variant;
  return name;
}

CudaArch DeviceArch(int sm) {
  CudaArch arch;
  arch.sm = sm;
  arch.variant = sm >= 90 ? 'a' : 0;
  arch.exact = false;
  return arch;
}

CudaArch ParseCudaArch(const std::string& text) {
  CudaArch arch;
  const size_t first = 3;  // after "sm_"
  size_t last = first;
  while (last < text.size() && std::isdigit(static_cast<unsigned char>(text[last]))) ++last;
  bool ok = text.compare(0, first, "sm_") == 0 && last > first && last - first <= 4;
  if (ok) arch.sm = std::stoi(text.substr(first, last - first));
  std::string suffix = ok ? text.substr(last) : "";
  if (suffix == "a" || suffix == "f") {
    arch.variant = suffix[0];
  } else if (!suffix.empty()) {
    ok = false;
  }
  // Arch-specific targets exist from Hopper (sm_90a) on, family targets from Blackwell (sm_100f).
  if (arch.variant == 'a' && arch.sm < 90) ok = false;
  if (arch.variant == 'f' && arch.sm < 100) ok = false;
  if (!ok || arch.sm <= 0) {
    backend::ThrowError("ValueError",
                        "expected an architecture like 'sm_86', 'sm_90a' (arch-specific, 9.0 "
                        "and newer) or 'sm_100f' (family-specific, 10.0 and newer), got '" +
                            text + "'");
  }
  arch.exact = true;
  return arch;
}

std::string CudaCacheRoot() { return KernelCache().policy().root; }

backend::PersistentCache KernelCache() {
  static backend::CacheStats stats;
  return backend::PersistentCache(
      backend::CachePolicy::FromEnvironment(kCacheEnvPrefix, "tvm-runtime/cuda", "kernels"),
      &stats);
}

CompiledSource CompileCudaSource(const std::string& raw_source, const CudaArch& arch,
                                 int driver_major, bool use_cache) {
  const NvrtcLibrary& lib = GetNvrtc(driver_major);
  CompiledSource out;
  out.compiler = lib.Describe();
  std::vector<std::string> targets = ChooseTargets(lib, arch, &out.is_ptx);
  std::string source = PrepareSource(raw_source);
  SourceTraits traits = Inspect(source);
  std::vector<HeaderSet> plan = HeaderPlan(lib, traits);

  backend::PersistentCache cache = KernelCache();
  use_cache = use_cache && cache.enabled();
  if (use_cache) {
    // Keyed by the exact target: an sm_90a cubin is never served for sm_90 or the reverse.
    out.cache_dir = cache.policy().dir;
    const bool is_ptx = out.is_ptx;
    for (const std::string& target : targets) {
      std::vector<std::string> options = Options(lib, target, is_ptx, traits.needs_prelude);
      auto key = std::make_shared<backend::CacheKey>(
          KernelCacheKey(lib, raw_source, target, is_ptx, options, plan));
      if (cache.Load(*key, &out.image,
                     [is_ptx](const std::string& image) { return CheckImage(image, is_ptx); })) {
        out.target = target;
        out.options = std::move(options);
        out.cache_key = key;
        out.cache_entry = key->FileName();
        out.from_cache = true;
        return out;
      }
    }
  }

  NvrtcResult result;
  std::string note;
  for (const std::string& target : targets) {
    out.target = target;
    out.options = Options(lib, target, out.is_ptx, traits.needs_prelude);
    NvrtcResult own_error;  // the first compile error that is not a header NVRTC cannot open
    for (const HeaderSet& headers : plan) {
      if (headers.bundled) UnpackBundledHeaders(lib, headers.dirs.front(), &note);
      result = RunNvrtc(lib, source, out.is_ptx, out.options, headers);
      if (result.rc == NVRTC_ERROR_COMPILATION && own_error.rc == NVRTC_SUCCESS &&
          !MissesHeader(result)) {
        own_error = result;
      }
      // Only a compile error can be fixed by other headers; anything else is final.
      if (result.rc != NVRTC_ERROR_COMPILATION) break;
    }
    // The retry with the real headers could not even read them (an NVRTC < 13.3 without the
    // CCCL wheel): the source's own error, from the attempt before, is what the user must see
    // (seen on the H200 run with NVRTC 13.0: a typo reported as a missing header).
    if (MissesHeader(result) && own_error.rc != NVRTC_SUCCESS) {
      result = std::move(own_error);
      note += std::string(note.empty() ? "" : "; ") +
              "a retry with the CUDA headers instead of tvm-runtime's stand-ins could not read "
              "them (NVRTC >= 13.3 bundles them)";
    }
    // Only an NVRTC that does not know this target's name tries the next one.
    if (result.rc != NVRTC_ERROR_INVALID_OPTION) break;
  }
  if (result.rc != NVRTC_SUCCESS) ThrowCompileError(lib, out.target, result, note);
  if (use_cache) {
    out.cache_key = std::make_shared<backend::CacheKey>(
        KernelCacheKey(lib, raw_source, out.target, out.is_ptx, out.options, plan));
  }
  out.image = std::move(result.image);
  if (use_cache && cache.Store(*out.cache_key, out.image)) {
    out.cache_entry = out.cache_key->FileName();
  }
  return out;
}

void EvictCompiledSource(const CompiledSource& compiled, const std::string& why) {
  if (compiled.from_cache && compiled.cache_key) KernelCache().Rejected(*compiled.cache_key, why);
}

}  // namespace cuda
}  // namespace tvm_runtime
