/*
 * ffi.Module.load_from_bytes.const_loader: apache-tvm 0.27's constant loader, the module an
 * external codegen (BYOC) artifact puts between the Relax executable and its kernels:
 *
 *   relax.VMExecutable -> const_loader -> [_lib, dnnl_json, cublas_json, ...]
 *
 * It owns every constant the external modules need and hands each module its own, on first
 * use: the first lookup of a symbol that has a constant list calls `__init_<symbol>` of the
 * first import that answers it, with the list of tensors in the declared order.  Lookups are
 * then forwarded to the imports.  apache-tvm's Relax linker also emits one (with no symbols)
 * when `relax.build` gets `params`.
 *
 * Loaded from a library file (library_loader.cc), its constants are not copied: they alias the
 * file's mapping where 64-byte aligned, else come from the weight store, as the VM's constants do
 * (vm/constant_pool.h), so processes that load one BYOC model share its weights.
 *
 * Payload (0.27's writer, little-endian, tvm-0.27-abi.md 3.1 encodings):
 *   vec<str> names; u64 n (== names.size()); n x tensor record (5.6);
 *   vec<str> symbols; u64 m (== symbols.size()); m x vec<str> constant names
 */
#include "const_loader.h"

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>
#include <tvm_runtime/backend/blob_reader.h>
#include <tvm_runtime/backend/error.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core_init.h"
#include "tensor_record.h"
#include "vm/constant_pool.h"

namespace tvm_runtime {
namespace core {
namespace {

namespace ffi = ::tvm::ffi;

constexpr char kKind[] = "const_loader";

class ConstLoaderModule final : public ffi::ModuleObj {
 public:
  // Constants in file order (saving writes them back in that order).
  using Constants = std::vector<std::pair<std::string, ffi::Tensor>>;
  using Symbols = std::vector<std::pair<std::string, std::vector<std::string>>>;

  ConstLoaderModule(Constants constants, Symbols symbols)
      : constants_(std::move(constants)), symbols_(std::move(symbols)) {
    for (size_t i = 0; i < constants_.size(); ++i) index_[constants_[i].first] = i;
    for (const auto& entry : symbols_) pending_[entry.first] = true;
  }

  const char* kind() const final { return kKind; }
  int GetPropertyMask() const final { return ffi::Module::kBinarySerializable; }

  ffi::Optional<ffi::Function> GetFunction(const ffi::String& name) final {
    std::string symbol(name);
    InitializeOnce(symbol);
    if (symbol == "get_const_var_tensor") {
      ffi::Map<ffi::String, ffi::Any> all;
      for (const auto& c : constants_) all.Set(c.first, c.second);
      return ffi::Function::FromTyped([all]() { return all; });
    }
    for (const ffi::Any& import : imports_) {
      if (auto f = import.cast<ffi::Module>()->GetFunction(name)) return f;
    }
    return std::nullopt;
  }

  ffi::Bytes SaveToBytes() const final {
    std::string out;
    std::vector<std::string> names;
    for (const auto& c : constants_) names.push_back(c.first);
    PutStrings(&out, names);
    Put<uint64_t>(&out, constants_.size());
    for (const auto& c : constants_) WriteTensorRecord(&out, c.second);
    std::vector<std::string> symbols;
    for (const auto& s : symbols_) symbols.push_back(s.first);
    PutStrings(&out, symbols);
    Put<uint64_t>(&out, symbols_.size());
    for (const auto& s : symbols_) PutStrings(&out, s.second);
    return ffi::Bytes(out);
  }

 private:
  template <typename T>
  static void Put(std::string* out, T v) {
    out->append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  static void PutStrings(std::string* out, const std::vector<std::string>& list) {
    Put<uint64_t>(out, list.size());
    for (const std::string& s : list) {
      Put<uint64_t>(out, s.size());
      out->append(s);
    }
  }

  /* Hands `symbol`'s constants to the import that declares `__init_<symbol>`, once.  The VM
   * resolves its functions from several threads only in unusual setups, but a second caller
   * must not see the symbol before its module has its weights, so the check is locked.  A
   * failed initialization is retried at the next lookup, as apache-tvm does. */
  void InitializeOnce(const std::string& symbol) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(symbol);
    if (it == pending_.end() || !it->second) return;
    const std::string init_name = "__init_" + symbol;
    for (const ffi::Any& import : imports_) {
      auto init = import.cast<ffi::Module>()->GetFunction(init_name);
      if (!init.has_value()) continue;
      ffi::Array<ffi::Tensor> tensors;
      for (const auto& s : symbols_) {
        if (s.first != symbol) continue;
        for (const std::string& var : s.second)
          tensors.push_back(constants_[index_.at(var)].second);
      }
      ffi::Any rv = (*init)(tensors);
      // apache-tvm's JSON runtimes return nothing; other initializers return 0 on success.
      if (auto code = rv.try_cast<int64_t>(); code.has_value() && *code != 0) {
        backend::ThrowError("RuntimeError", "initializing external function '" + symbol +
                                                "' with its constants failed: " + init_name +
                                                " returned " + std::to_string(*code));
      }
      break;
    }
    it->second = false;
  }

  Constants constants_;
  Symbols symbols_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<std::string, bool> pending_;  // symbol -> not yet initialized
  std::mutex mutex_;
};

/* A constant as the payload holds it: its record's header and where its data bytes lie. */
struct StoredConstant {
  std::string name;
  TensorRecordHeader header;
  const char* data;
};

/* Validates the payload and returns its constants (data left where it lies) and symbols. */
std::vector<StoredConstant> ParseConstLoader(const char* data, size_t size,
                                             ConstLoaderModule::Symbols* by_symbol) {
  backend::BlobReader r(data, size, std::string("'") + kKind + "'");
  std::vector<std::string> names = r.ReadStringVector();
  uint64_t count = r.Read<uint64_t>();
  if (count != names.size()) {
    r.Fail(std::to_string(names.size()) + " constant names but " + std::to_string(count) +
           " tensors");
  }
  std::vector<StoredConstant> constants;
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    r.SetItem("constant '" + names[i] + "'");
    if (!seen.emplace(names[i], i).second) r.Fail("the name is used twice");
    TensorRecordHeader header = ReadTensorRecordHeader(&r);
    constants.push_back({names[i], header, data + r.position()});
    r.Skip(static_cast<size_t>(header.nbytes));
  }
  r.SetItem("");
  std::vector<std::string> symbols = r.ReadStringVector();
  uint64_t lists = r.Read<uint64_t>();
  if (lists != symbols.size()) {
    r.Fail(std::to_string(symbols.size()) + " symbols but " + std::to_string(lists) +
           " constant lists");
  }
  std::unordered_map<std::string, bool> seen_symbol;
  for (const std::string& symbol : symbols) {
    r.SetItem("constant list of '" + symbol + "'");
    if (!seen_symbol.emplace(symbol, true).second) r.Fail("the symbol is listed twice");
    std::vector<std::string> vars = r.ReadStringVector();
    for (const std::string& var : vars) {
      if (seen.count(var) == 0) r.Fail("it names constant '" + var + "', which is not stored");
    }
    by_symbol->emplace_back(symbol, std::move(vars));
  }
  r.SetItem("");
  r.ExpectEnd();
  return constants;
}

/* Handed over as bytes (tvm-ffi's loader, a payload built in memory): each constant is copied
 * out of them, since nothing keeps them. */
ffi::Module LoadConstLoader(const ffi::Bytes& bytes) {
  ConstLoaderModule::Symbols by_symbol;
  ConstLoaderModule::Constants constants;
  for (const StoredConstant& c : ParseConstLoader(bytes.data(), bytes.size(), &by_symbol)) {
    const TensorRecordHeader& h = c.header;
    ffi::Tensor t =
        AllocTensor(ffi::ShapeView(h.shape.data(), h.shape.size()), h.dtype, DLDevice{kDLCPU, 0});
    if (h.nbytes != 0) std::memcpy(t.GetDLTensorPtr()->data, c.data, h.nbytes);
    constants.emplace_back(c.name, std::move(t));
  }
  return ffi::Module(
      ffi::make_object<ConstLoaderModule>(std::move(constants), std::move(by_symbol)));
}

}  // namespace

ffi::Module LoadConstLoaderShared(std::shared_ptr<const vm::Payload> payload) {
  ConstLoaderModule::Symbols by_symbol;
  std::vector<StoredConstant> stored =
      ParseConstLoader(payload->data(), payload->size(), &by_symbol);
  // The VM's constant pool decides, per constant, between aliasing the library (aligned), the
  // weight store's image (misaligned) and a private copy (no store); its tensors hold what they
  // point into, so the pool itself need not outlive this call.
  vm::ConstantPool pool(payload);
  for (const StoredConstant& c : stored) {
    pool.AddTensor(c.header.dtype, c.header.shape, c.data, c.header.nbytes);
  }
  ConstLoaderModule::Constants constants;
  for (size_t i = 0; i < stored.size(); ++i) constants.emplace_back(stored[i].name, pool.Host(i));
  return ffi::Module(
      ffi::make_object<ConstLoaderModule>(std::move(constants), std::move(by_symbol)));
}

void RegisterConstLoader() {
  ffi::reflection::GlobalDef().def("ffi.Module.load_from_bytes.const_loader", LoadConstLoader);
}

}  // namespace core
}  // namespace tvm_runtime
