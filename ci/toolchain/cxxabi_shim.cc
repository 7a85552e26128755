// libc++ on top of libstdc++'s C++ ABI runtime, for the DSOs built by ci/toolchain/zig-*.cmake.
//
// Our DSOs take the C++ standard library from zig's static libc++ but throw, catch and unwind
// through the process's libstdc++.so.6 / libgcc_s.so.1, the runtime libtvm_ffi uses (see
// zig-common.cmake for why).  A few functions libc++ expects from its own ABI library
// (libc++abi) have no libstdc++ export of the same name; without these definitions the linker
// would pull libc++abi's exception code into the DSO and our throws would bypass libstdc++
// again.  Each one is implemented with what libstdc++ exports in the versions GCC 8 has
// (manylinux_2_28: up to CXXABI_1.3.11 / GLIBCXX_3.4.24 in auditwheel's policy, which
// ci/check_wheels.py enforces).
// Both runtimes represent an exception_ptr as a pointer to the thrown object, preceded by a
// reference-counted header that libstdc++ manages.  check_cxxabi_shim.cc exercises every
// function here (ci/build_wheels.py runs it before building).
#include <dlfcn.h>

#include <exception>
#include <new>
#include <typeinfo>

// The libc++ this shim was written and checked for: that of the ziglang pinned in
// ci/toolchain/pins.toml (zig 0.17.1, libc++ 22).  Another libc++ major may call other libc++abi
// functions (the link would then pull libc++abi's exception code back in, silently): before
// changing this number for a new zig, list what its libc++ needs from libc++abi (nm -u of
// libc++.a, the __cxa_* and std:: exception symbols) and cover each one here and in
// check_cxxabi_shim.cc.
#define TVMRT_CXXABI_SHIM_LIBCXX_MAJOR 22
#if !defined(_LIBCPP_VERSION) || _LIBCPP_VERSION / 10000 != TVMRT_CXXABI_SHIM_LIBCXX_MAJOR
#error "cxxabi_shim.cc was written for libc++ 22 (the ziglang of ci/toolchain/pins.toml); see above"
#endif

namespace tvmrt_cxxabi_shim {

// libstdc++'s std::__exception_ptr::exception_ptr: one pointer, non-trivial (returned and passed
// indirectly), reached only through the asm labels below.  Named (not anonymous) so that
// functions defined elsewhere may take it; -fvisibility=hidden keeps it inside each DSO.
struct GnuExceptionPtr {
  void* object;
  ~GnuExceptionPtr();
};

}  // namespace tvmrt_cxxabi_shim

using tvmrt_cxxabi_shim::GnuExceptionPtr;

// The libstdc++ exports, bound by their mangled names (their C++ names clash with libc++'s).
extern "C++" {
void GnuExceptionPtrConstruct(GnuExceptionPtr* self, void* object) noexcept
    __asm__("_ZNSt15__exception_ptr13exception_ptrC1EPv");
void GnuExceptionPtrDestroy(GnuExceptionPtr* self) noexcept
    __asm__("_ZNSt15__exception_ptr13exception_ptrD1Ev");
[[noreturn]] void GnuRethrowException(GnuExceptionPtr ptr) __asm__(
    "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE");
}

namespace {

// std::current_exception() and std::uncaught_exceptions() have the same mangled names in both
// libraries, and libc++'s (local to the DSO) would win a link-time binding, so libstdc++'s are
// reached through the dynamic symbol table and __cxa_get_globals.
using GnuCurrentExceptionFn = GnuExceptionPtr (*)() noexcept;

GnuCurrentExceptionFn GnuCurrentException() noexcept {
  static const auto fn =
      reinterpret_cast<GnuCurrentExceptionFn>(dlsym(RTLD_DEFAULT, "_ZSt17current_exceptionv"));
  return fn;
}

// The head of the per-thread exception globals, the same in every Itanium C++ ABI runtime.
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

}  // namespace

extern "C" EhGlobals* __cxa_get_globals() noexcept;

GnuExceptionPtr::~GnuExceptionPtr() { GnuExceptionPtrDestroy(this); }

extern "C" {

void __cxa_increment_exception_refcount(void* object) noexcept {
  if (object == nullptr) return;
  // The constructor takes a reference; the storage is never destroyed, so it is kept.
  alignas(GnuExceptionPtr) unsigned char storage[sizeof(GnuExceptionPtr)];
  GnuExceptionPtrConstruct(reinterpret_cast<GnuExceptionPtr*>(storage), object);
}

void __cxa_decrement_exception_refcount(void* object) noexcept {
  // Adopts one reference without taking another; the destructor gives it back.
  GnuExceptionPtr holder{object};
}

void* __cxa_current_primary_exception() noexcept {
  GnuCurrentExceptionFn current_exception = GnuCurrentException();
  if (current_exception == nullptr) std::terminate();  // libstdc++ is always loaded with us
  alignas(GnuExceptionPtr) unsigned char storage[sizeof(GnuExceptionPtr)];
  auto* current = new (storage) GnuExceptionPtr(current_exception());
  return current->object;  // never destroyed: the caller owns the reference
}

[[noreturn]] void __cxa_rethrow_primary_exception(void* object) {
  // The argument (built in place) owns the reference taken here and releases it when the
  // caller's frame unwinds; the rethrown exception holds its own.
  __cxa_increment_exception_refcount(object);
  GnuRethrowException(GnuExceptionPtr{object});
}

unsigned __cxa_uncaught_exceptions() noexcept { return __cxa_get_globals()->uncaught_exceptions; }

}  // extern "C"

// Out of line in libc++abi, inline in libstdc++'s headers: the vtables come from libstdc++.
namespace std {
bad_alloc::bad_alloc() noexcept {}
bad_array_new_length::bad_array_new_length() noexcept {}
bad_cast::bad_cast() noexcept {}
}  // namespace std
