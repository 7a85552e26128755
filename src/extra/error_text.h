/*
 * Error messages of the contrib functions mix text and numbers as an std::ostream prints them
 * (a double in its shortest form, "0.5" rather than std::to_string's "0.500000"); the finished
 * text goes to backend::ThrowError, the one way core, backends and contrib functions throw.
 */
#ifndef TVM_RUNTIME_EXTRA_ERROR_TEXT_H_
#define TVM_RUNTIME_EXTRA_ERROR_TEXT_H_

#include <sstream>
#include <string>

namespace tvm_runtime {
namespace extra {

template <typename... Parts>
std::string ErrorText(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace extra
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_EXTRA_ERROR_TEXT_H_
