"""Fuzz target (atheris, coverage-guided over Python): one RPC packet body as the server decodes
it (packages/tvm-runtime/python/tvm/rpc/_protocol.py, what _session.py and the listener read)
and as a client decodes a reply.

    python fuzz/fuzz_rpc_packet.py CORPUS_DIR [SEED_DIR] -max_total_time=60   # libFuzzer flags

An input must decode or raise ProtocolError (the session then ends with a message); any other
exception, a hang or a runaway allocation is a finding.  What decodes is encoded again and must
decode to the same values.  _protocol.py is pure Python and is loaded from its file, so the
target runs without the native runtime.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent
# Imported as a top-level module from its directory: the `tvm` package (and its native core) is
# not needed, and atheris instruments what is imported inside instrument_imports().
sys.path.insert(0, str(ROOT / "packages" / "tvm-runtime" / "python" / "tvm" / "rpc"))
with atheris.instrument_imports(include=["_protocol"]):
    import _protocol as protocol

Code = protocol.Code
ProtocolError = protocol.ProtocolError
Reader = protocol.Reader
Writer = protocol.Writer

# Codes whose body is one packed sequence (the syscalls, a reply, an exception).
_SEQUENCE_CODES = {int(c) for c in Code if c >= Code.GET_GLOBAL_FUNC} | {Code.RETURN, Code.EXCEPTION}


def decode(body: bytes) -> tuple[int, list]:
    """The fields of one packet body, read the way the server and the client read them."""
    reader = Reader(body)
    code = reader.i32()
    fields: list = []
    if code == Code.INIT_SERVER:
        fields.append(reader.raw(reader.u64() if reader.remaining() >= 8 else 0))
        fields.append(reader.packed_seq())
    elif code == Code.CALL_FUNC:
        fields.append(reader.u64())
        fields.append(reader.packed_seq())
    elif code == Code.COPY_TO_REMOTE:
        fields.append(reader.dltensor())
        nbytes = reader.u64()
        if nbytes > reader.remaining():
            raise ProtocolError(f"copy of {nbytes} bytes but only {reader.remaining()} follow")
        fields.append(bytes(reader.view(nbytes)))
    elif code == Code.COPY_FROM_REMOTE:
        fields.append(reader.dltensor())
        fields.append(reader.u64())
    elif code in _SEQUENCE_CODES:
        fields.append(reader.packed_seq())
    return code, fields


def encode(code: int, fields: list) -> bytes:
    """Inverse of ``decode`` for the codes it reads."""
    w = Writer(code)
    if code == Code.INIT_SERVER:
        w.u64(len(fields[0]))
        w.raw(fields[0])
        w.packed_seq(fields[1])
    elif code == Code.CALL_FUNC:
        w.u64(fields[0])
        w.packed_seq(fields[1])
    elif code == Code.COPY_TO_REMOTE:
        w.dltensor(fields[0])
        w.u64(len(fields[1]))
        w.raw(fields[1])
    elif code == Code.COPY_FROM_REMOTE:
        w.dltensor(fields[0])
        w.u64(fields[1])
    elif code in _SEQUENCE_CODES:
        w.packed_seq(fields[0])
    return b"".join(bytes(p) for p in w.parts)


def comparable(value):
    """A decoded value as plain data (DLTensorMeta has no __eq__; floats may be NaN)."""
    if isinstance(value, protocol.DLTensorMeta):
        return (
            "tensor",
            value.data,
            value.device_type,
            value.device_id,
            value.dtype,
            value.shape,
            value.byte_offset,
        )
    if isinstance(value, list):
        return [comparable(v) for v in value]
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, protocol.Handle):
        return ("handle", int(value), value.type_index)
    return (type(value).__name__, value)


def test_one_input(data: bytes) -> None:
    try:
        code, fields = decode(data)
    except ProtocolError:
        return
    if code not in _SEQUENCE_CODES and code not in (
        Code.INIT_SERVER,
        Code.CALL_FUNC,
        Code.COPY_TO_REMOTE,
        Code.COPY_FROM_REMOTE,
    ):
        return  # the session refuses unknown codes before reading further
    again = decode(encode(code, fields))
    if comparable(again[1]) != comparable(fields):
        raise AssertionError(f"round trip changed packet code {code}: {fields!r} -> {again[1]!r}")


def seeds() -> dict[str, bytes]:
    """Packets of every kind and every value type a client sends and a server answers."""
    from itertools import count

    tensor = protocol.DLTensorMeta(0x1000, 1, 0, (2, 32, 1), (4, 16), 64)
    values = [
        None,
        True,
        -7,
        2.5,
        "tvm.rpc.server.upload",
        b"\x00\x01binary",
        protocol.Opaque(0x2000),
        protocol.DataType((2, 16, 4)),
        protocol.Device((4, 1)),
        protocol.Handle(0x3000, protocol.TypeIndex.MODULE),
        protocol.Handle(0x3010, protocol.TypeIndex.FUNCTION),
        protocol.Handle(0x3020, protocol.RPC_OBJECT_REF_INDEX),
        tensor,
    ]
    packets = {
        "init": (Code.INIT_SERVER, [b"0.8.0", []]),
        "init_auth": (Code.INIT_SERVER, [b"0.8.0", ["tvm.rpc.auth", "secret"]]),
        "call_all_types": (Code.CALL_FUNC, [0x1010, values]),
        "copy_to": (Code.COPY_TO_REMOTE, [tensor, bytes(range(64))]),
        "copy_from": (Code.COPY_FROM_REMOTE, [tensor, 256]),
        "get_global": (Code.GET_GLOBAL_FUNC, [["runtime.RPCTimeEvaluator"]]),
        "return": (Code.RETURN, [[int(protocol.TypeIndex.TENSOR), tensor, protocol.Opaque(0x40)]]),
        "exception": (Code.EXCEPTION, [["RPCError: something went wrong"]]),
    }
    out = {name: encode(code, fields) for name, (code, fields) in packets.items()}
    for i, value in zip(count(), values):
        out[f"value_{i}"] = encode(Code.CALL_FUNC, [0x1010, [value]])
    # objects travel with their type index twice (STR and BYTES as objects)
    w = Writer(Code.CALL_FUNC)
    w.u64(1)
    w.i32(2)
    for index in (protocol.TypeIndex.STR, protocol.TypeIndex.BYTES):
        w.i32(index)
        w.u32(index)
        w.u64(3)
        w.raw(b"abc")
    out["objects"] = b"".join(bytes(p) for p in w.parts)
    return out


def write_seeds(directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    found = seeds()
    for name, body in found.items():
        (directory / f"{name}.bin").write_bytes(body)
    return len(found)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-seeds":
        print(write_seeds(Path(sys.argv[2])))
        sys.exit(0)
    for body in seeds().values():  # the seeds themselves must hold
        test_one_input(body)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
