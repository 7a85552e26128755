"""Where a tensor's data lies, seen from inside the process that holds it: Python source that a
test pastes in front of a child's code (the child must read its own /proc/self/smaps).

``mappings()`` lists this process's mappings (address range, mapped file or "" / "[heap]", inode,
anonymous kB: pages this process wrote or copied, i.e. its private memory); ``where(ptr)`` is the
one holding address ``ptr``.
"""

SOURCE = """
def mappings():
    out, current = [], None
    for line in open("/proc/self/smaps"):
        f = line.split()
        if "-" in f[0] and len(f) >= 5 and ":" in f[3]:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            current = {"lo": lo, "hi": hi, "file": " ".join(f[5:]), "inode": int(f[4])}
            out.append(current)
        elif f[0] == "Anonymous:" and current is not None:
            current["anonymous_kb"] = int(f[1])
    return out

def where(ptr, maps=None):
    for m in maps or mappings():
        if m["lo"] <= ptr < m["hi"]:
            return {k: m[k] for k in ("file", "inode", "anonymous_kb")}
"""
