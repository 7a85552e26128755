#include "opencl_source.h"

#include <vector>

namespace tvm_runtime {
namespace opencl {

namespace {

constexpr const char kMarker[] = "// Function: ";
constexpr size_t kMarkerLen = sizeof(kMarker) - 1;

// Offsets of markers that start a line.
std::vector<size_t> FindMarkers(const std::string& code) {
  std::vector<size_t> at;
  for (size_t pos = code.find(kMarker); pos != std::string::npos;
       pos = code.find(kMarker, pos + kMarkerLen)) {
    if (pos == 0 || code[pos - 1] == '\n') at.push_back(pos);
  }
  return at;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool IsBlank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

std::map<std::string, std::string> SplitKernelSources(const std::string& code) {
  std::map<std::string, std::string> pieces;
  std::vector<size_t> at = FindMarkers(code);
  if (at.empty()) {
    pieces[""] = code;
    return pieces;
  }
  std::string preamble = code.substr(0, at[0]);
  if (IsBlank(preamble)) preamble.clear();
  for (size_t i = 0; i < at.size(); ++i) {
    size_t end = i + 1 < at.size() ? at[i + 1] : code.size();
    size_t eol = code.find('\n', at[i]);
    if (eol == std::string::npos || eol > end) eol = end;
    std::string name = Trim(code.substr(at[i] + kMarkerLen, eol - at[i] - kMarkerLen));
    pieces[name] = preamble + code.substr(at[i], end - at[i]);
  }
  return pieces;
}

}  // namespace opencl
}  // namespace tvm_runtime
