"""The safetensors format with zerax's integrity CRCs: re-exports of
:mod:`zerax._src.base.safetensors`, shared by ``zerax.io`` (checkpoints) and
``zerax.export`` (the constants of exported programs)."""

from ._src.base.safetensors import (  # noqa: F401
    DTYPES, HEADER_CRC, MAX_HEADER, NAMES, TENSOR_CRC, byte_view, check_tensor, crc32, decode_block,
    dtype_name, encode_block, encode_header, parse_json, read_header, tensor_crcs,
)
