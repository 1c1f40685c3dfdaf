"""Rewrite a GGUF's Q4_0/Q4_1 tensors as Q8_0 (wllama's WASM build has SIMD kernels for Q8_0),
optionally split into parts that llama.cpp loads as one model.

Usage: python scripts/gguf_q8.py IN.gguf OUT.gguf [--split-max-size 45M]
(needs PyPI `gguf` on sys.path)

Metadata is copied as is except general.file_type; other tensors are copied unchanged. With
``--split-max-size`` the output is ``OUT-00001-of-0000N.gguf``, ... in llama.cpp's split format
(what its ``llama-gguf-split --split`` writes: every part a GGUF with the ``split.no``,
``split.count`` and ``split.tensors.count`` keys, the model's metadata in the first), each
holding whole tensors of at most that many bytes. A model that fits in one part is written
unsplit. A Q8_0 input is only split.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGMLQuantizationType as Q

REQUANT = {Q.Q4_0, Q.Q4_1}
UNITS = {"K": 1000, "M": 1000**2, "G": 1000**3}


def parse_size(text: str) -> int:
    """``45M`` -> 45,000,000 bytes (llama-gguf-split's units: K, M, G are powers of 1000)."""
    unit = text[-1:].upper()
    if unit in UNITS:
        return int(text[:-1]) * UNITS[unit]
    return int(text)


def requantize(src: Path, dst: Path, split_max_size: int = 0) -> list[Path]:
    """Write ``src`` as Q8_0 to ``dst`` (or its parts); returns the files written, in order."""
    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(dst, arch=arch, endianess=reader.endianess,
                             split_max_size=split_max_size)
    writer.data_alignment = reader.alignment
    for field in reader.fields.values():
        if (field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF.")
                or field.name.startswith("split.")):
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
    files = writer.format_shard_names(dst)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for data in datas:
        writer.write_tensor_data(data)
    writer.close()
    return files


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--split-max-size", type=parse_size, default=0,
                        help="most tensor bytes per part, e.g. 45M (default: one file)")
    args = parser.parse_args()
    for path in requantize(args.src, args.dst, args.split_max_size):
        print(path)
