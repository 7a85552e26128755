// Self-test of cxxabi_shim.cc, linked exactly like our DSOs (ci/build_wheels.py builds it as a
// shared library for the build machine's architecture and calls the entry point with ctypes).
// Returns 0 when libc++ works on libstdc++'s ABI runtime, else the number of the failed check.
#include <cstddef>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace {

struct Base {
  virtual ~Base() = default;
};
struct Other : Base {};

char* volatile g_sink = nullptr;

// Records std::uncaught_exceptions() while a destructor runs during unwinding.
struct UnwindProbe {
  int* seen;
  ~UnwindProbe() { *seen = std::uncaught_exceptions(); }
};

int CheckExceptionPtr() {
  std::exception_ptr held;
  try {
    throw std::runtime_error("held");
  } catch (...) {
    held = std::current_exception();  // __cxa_current_primary_exception
  }
  std::exception_ptr copy = held;  // __cxa_increment_exception_refcount
  held = nullptr;                  // __cxa_decrement_exception_refcount
  try {
    std::rethrow_exception(copy);  // __cxa_rethrow_primary_exception
  } catch (const std::runtime_error& err) {
    return std::string(err.what()) == "held" ? 0 : 1;
  }
  return 2;
}

int CheckUncaughtExceptions() {
  int seen = -1;
  try {
    UnwindProbe probe{&seen};
    throw 7;
  } catch (int) {
  }
  return seen == 1 && std::uncaught_exceptions() == 0 ? 0 : 3;
}

int CheckStandardExceptions() {
  try {
    // volatile: the optimizer may not drop an allocation whose size or result it cannot see.
    volatile std::size_t size = static_cast<std::size_t>(-1) / 4;
    std::vector<char> huge;
    huge.reserve(size);  // std::bad_alloc, thrown by libstdc++'s operator new
    g_sink = huge.data();
    return 4;
  } catch (const std::bad_alloc&) {
  }
  try {
    Base base;
    Base& ref = base;
    (void)dynamic_cast<Other&>(ref);  // std::bad_cast
    return 5;
  } catch (const std::bad_cast&) {
  }
  try {
    std::string text("abc");
    (void)text.at(10);  // std::out_of_range, a libstdc++ class built by libc++
    return 6;
  } catch (const std::out_of_range& err) {
    return std::string(err.what()).empty() ? 7 : 0;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int TVMRuntimeCheckCxxabiShim() {
  if (int failed = CheckExceptionPtr()) return failed;
  if (int failed = CheckUncaughtExceptions()) return failed;
  return CheckStandardExceptions();
}
