"""Rewrite a GGUF's Q4_0/Q4_1 tensors as Q8_0 (wllama's WASM build has SIMD kernels for Q8_0).

Usage: python scripts/gguf_q8.py IN.gguf OUT.gguf  (needs PyPI `gguf` on sys.path)
Metadata is copied as is except general.file_type; other tensors are copied unchanged.
"""

from __future__ import annotations

import sys
from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGMLQuantizationType as Q

REQUANT = {Q.Q4_0, Q.Q4_1}


def requantize(src: Path, dst: Path) -> None:
    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(dst, arch=arch, endianess=reader.endianess)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        if field.name == gguf.Keys.General.FILE_TYPE:
            writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
            continue
        val_type = field.types[0]
        sub_type = field.types[-1] if val_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), val_type, sub_type=sub_type)
    datas = []
    for t in reader.tensors:
        if t.tensor_type in REQUANT:
            floats = gguf.quants.dequantize(t.data, t.tensor_type)
            data = gguf.quants.quantize(floats.astype(np.float32), Q.Q8_0)
            qtype = Q.Q8_0
        else:
            data, qtype = t.data, t.tensor_type
        datas.append(data)
        writer.add_tensor_info(t.name, data.shape, data.dtype, data.nbytes, qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for data in datas:
        writer.write_tensor_data(data)
    writer.close()


if __name__ == "__main__":
    requantize(Path(sys.argv[1]), Path(sys.argv[2]))
