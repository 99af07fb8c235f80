"""Writes the reference fixtures for test/io with the upstream safetensors package (pip install
safetensors; no numpy or torch needed). Run once by hand; the outputs are committed, and
safetensors_reference_test.cpp spells out the same tensors, so the C++ reader is checked against
files the reference implementation wrote, and the C++ writer must reproduce compute.safetensors
byte for byte."""
import ctypes
import struct

from safetensors import TensorSpec, serialize_file

# The serializer takes raw pointers; keep every buffer alive until the files are written.
_buffers = []
_DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "I32": "int32",
                "I64": "int64", "U8": "uint8", "BOOL": "bool", "F64": "float64"}


def raw(fmt, values):
    return struct.pack("<" + fmt * len(values), *values)


def specs(tensors):
    result = {}
    for name, t in tensors.items():
        buf = ctypes.create_string_buffer(t["data"], max(1, len(t["data"])))
        _buffers.append(buf)
        result[name] = TensorSpec(dtype=_DTYPE_NAMES[t["dtype"]], shape=t["shape"], data_ptr=ctypes.addressof(buf),
                                  data_len=len(t["data"]))
    return result


compute = {
    "wte": {"dtype": "F32", "shape": [3, 2], "data": raw("f", [0.5, -1.25, 3.0, 1e-3, -0.0, 65504.0])},
    "h.0.ln.bias": {"dtype": "F16", "shape": [4], "data": raw("H", [0x3C00, 0xC000, 0x7BFF, 0x0001])},
    "scale": {"dtype": "BF16", "shape": [], "data": raw("H", [0x3FC0])},
    "empty": {"dtype": "F32", "shape": [0, 3], "data": b""},
    "pos": {"dtype": "I32", "shape": [2], "data": raw("i", [7, -9])},
    "a.odd": {"dtype": "BF16", "shape": [1, 3, 1], "data": raw("H", [0x4049, 0xC2F7, 0x0000])},
}
serialize_file(specs(compute), "compute.safetensors", metadata={"format": "pt"})

mixed = {
    "big": {"dtype": "I64", "shape": [2], "data": raw("q", [1 << 40, -3])},
    "bytes": {"dtype": "U8", "shape": [3], "data": bytes([0, 128, 255])},
    "mask": {"dtype": "BOOL", "shape": [2], "data": bytes([1, 0])},
    "double": {"dtype": "F64", "shape": [1], "data": raw("d", [3.25])},
    "w": {"dtype": "F32", "shape": [2], "data": raw("f", [1.0, -2.0])},
}
serialize_file(specs(mixed), "mixed.safetensors")
