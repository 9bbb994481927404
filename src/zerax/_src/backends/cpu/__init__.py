"""The CPU target of the kernel IR: the LLVM emitter (`emit`), its math library
(`mathlib`), the engine and the calls into machine code (`engine`), the thread pool
of parallel loops (`threads`), the sealed disk cache (`diskcache`, `compile`) and the
executables (`executable`)."""
