"""``zerax.export``: a versioned, portable format for programs, and ONNX export.

``exported`` (the API: export, Exported, deserialize), ``program`` (programs <-> JSON),
``symbolic`` (one program for every size), ``trees`` (argument structures <-> JSON),
``blob`` (the bytes); ``onnx_export`` and ``onnx_rules`` (programs -> ONNX models).
The format is documented in ``docs/export-format.md``.
"""
