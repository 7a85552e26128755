"""The hand-declared Vulkan subset (src/backends/vulkan/vk_api.h) against the real Khronos header.

The backend declares the ~50 structs and ~60 entry points it uses instead of depending on a
Vulkan SDK; a wrong field order or enumerator value there would corrupt memory silently.  This
test parses vk_api.h, emits a C++ file that includes it next to /usr/include/vulkan/vulkan_core.h
(Debian: libvulkan-dev) and static_asserts every struct size and field offset, every enumerator
value and the arity, parameter sizes and return type size of every PFN_ type.  Skipped when the
Khronos header or a C++ compiler is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

VK_API = REPO / "src" / "backends" / "vulkan" / "vk_api.h"
KHRONOS = Path("/usr/include/vulkan/vulkan_core.h")
NS = "tvm_runtime::vulkan"

pytestmark = [
    pytest.mark.skipif(
        not KHRONOS.exists(), reason="Khronos headers not installed (apt-get install libvulkan-dev)"
    ),
    pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"),
]


def _declarations(text: str):
    text = re.sub(r"//[^\n]*", "", text)
    structs = {}
    for name, body in re.findall(r"\nstruct (Vk\w+) \{(.*?)\n\};", text, re.S):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.search(r"(\w+)(\[\w+\])?$", decl)
            assert m, decl
            fields.append(m.group(1))
        structs[name] = fields
    enumerators = re.findall(r"^\s+(VK_[A-Z0-9_]+) = ", text, re.M)
    pfns = re.findall(r"using (PFN_vk\w+) =", text)
    return structs, enumerators, pfns


CHECKER_PRELUDE = """
#include <vulkan/vulkan_core.h>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include "vk_api.h"

template <typename T>
constexpr std::size_t kind_of() {
  return std::is_pointer<T>::value ? 1000 : (std::is_enum<T>::value ? 2000 : 3000) + sizeof(T);
}
template <typename F> struct Sig;
template <typename R, typename... A> struct Sig<R (*)(A...)> {
  static constexpr std::size_t arity = sizeof...(A);
  static constexpr std::size_t ret = std::is_void<R>::value ? 0 : sizeof(R);
  static constexpr std::size_t hash() {
    std::size_t h = 17;
    for (std::size_t k : {kind_of<A>()..., std::size_t(0)}) h = h * 131 + k;
    return h;
  }
};
template <typename A, typename B> constexpr bool same_sig() {
  return Sig<A>::arity == Sig<B>::arity && Sig<A>::ret == Sig<B>::ret && Sig<A>::hash() == Sig<B>::hash();
}
"""


def test_declarations_match_khronos_header(tmp_path):
    structs, enumerators, pfns = _declarations(VK_API.read_text())
    assert len(structs) > 40 and len(enumerators) > 80 and len(pfns) > 50
    lines = [CHECKER_PRELUDE]
    for name, fields in structs.items():
        lines.append(f'static_assert(sizeof({NS}::{name}) == sizeof(::{name}), "size of {name}");')
        lines.append(f'static_assert(alignof({NS}::{name}) == alignof(::{name}), "alignment of {name}");')
        for f in fields:
            lines.append(
                f"static_assert(offsetof({NS}::{name}, {f}) == offsetof(::{name}, {f}), "
                f'"offset of {name}::{f}");'
            )
    for e in enumerators:
        lines.append(f'static_assert((long long){NS}::{e} == (long long)::{e}, "value of {e}");')
    for p in pfns:
        lines.append(f'static_assert(same_sig<{NS}::{p}, ::{p}>(), "signature of {p}");')
    source = tmp_path / "check.cc"
    source.write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-I", str(VK_API.parent), str(source)],
        capture_output=True,
        text=True,
    )
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert proc.returncode == 0, "\n".join(errors[:40]) or proc.stderr[-4000:]
