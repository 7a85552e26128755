/*
 * Bytes from an artifact in error messages.  Python decodes every error message as strict UTF-8,
 * so one stray byte of a corrupted payload quoted in a message (a kernel name, a launch tag, a
 * compiler's source excerpt) would turn the real error into a UnicodeDecodeError.  Messages
 * therefore quote payload bytes through Printable(), and ThrowError() passes every message
 * through ValidUtf8() as a last line of defence.
 */
#ifndef TVM_RUNTIME_BACKEND_MESSAGE_TEXT_H_
#define TVM_RUNTIME_BACKEND_MESSAGE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tvm_runtime {
namespace backend {

/* Length of the well-formed UTF-8 sequence at `s[0..n)` (1-4), or 0 when it is not one: what
 * Python's strict decoder accepts (no overlong forms, no surrogates, nothing above U+10FFFF). */
inline size_t Utf8SequenceLength(const unsigned char* s, size_t n) {
  if (n == 0) return 0;
  unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if ((s[i] & 0xC0) != 0x80) return 0;
  }
  return len;
}

/* Offset of the first byte of `text` that is not well-formed UTF-8, or npos when there is none. */
inline size_t FindInvalidUtf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    size_t len = Utf8SequenceLength(s + i, text.size() - i);
    if (len == 0) return i;
    i += len;
  }
  return std::string::npos;
}

namespace message_text_detail {
inline void AppendHexByte(std::string* out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out->append("\\x");
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}
}  // namespace message_text_detail

/* `message` with every byte that is not well-formed UTF-8 written as \xNN; text that already
 * is (nearly every message) comes back unchanged. */
inline std::string ValidUtf8(const std::string& message) {
  size_t bad = FindInvalidUtf8(message);
  if (bad == std::string::npos) return message;
  std::string out = message.substr(0, bad);
  const auto* s = reinterpret_cast<const unsigned char*>(message.data());
  for (size_t i = bad; i < message.size();) {
    size_t len = Utf8SequenceLength(s + i, message.size() - i);
    if (len == 0) {
      message_text_detail::AppendHexByte(&out, s[i]);
      i += 1;
    } else {
      out.append(message, i, len);
      i += len;
    }
  }
  return out;
}

/* Bytes taken from an input (a name, a tag), fit to be quoted in a message: control characters,
 * backslashes and bytes that are not UTF-8 are escaped (\xNN, \\), and anything past
 * `max_bytes` is cut and counted, so a corrupted 1 MB "name" stays a one-line message. */
inline std::string Printable(const std::string& bytes, size_t max_bytes = 160) {
  std::string out;
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  while (i < bytes.size() && i < max_bytes) {
    size_t len = Utf8SequenceLength(s + i, bytes.size() - i);
    if (len == 1 && s[i] == '\\') {
      out.append("\\\\");
    } else if (len == 0 || (len == 1 && (s[i] < 0x20 || s[i] == 0x7F))) {
      message_text_detail::AppendHexByte(&out, s[i]);
      len = 1;
    } else {
      out.append(bytes, i, len);
    }
    i += len;
  }
  if (i < bytes.size()) {
    out += "... (" + std::to_string(bytes.size() - i) + " more bytes)";
  }
  return out;
}

}  // namespace backend
}  // namespace tvm_runtime

#endif  // TVM_RUNTIME_BACKEND_MESSAGE_TEXT_H_
