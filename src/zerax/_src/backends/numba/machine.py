"""The LLVM target machine that zerax's own machine code is built for: the CPU and
features Numba targets, so that code from `direct` and the native cache matches what
Numba would have produced on this host."""

from __future__ import annotations

_host_cpu: list = []


def host_cpu() -> tuple[str, str]:
    """(CPU name, feature string) that Numba targets; asked of LLVM once per process."""
    if not _host_cpu:
        import llvmlite.binding as ll
        from numba.core import config
        from numba.core.codegen import get_host_cpu_features
        _host_cpu.append((config.CPU_NAME or ll.get_host_cpu_name(),
                          config.CPU_FEATURES if config.CPU_FEATURES is not None
                          else get_host_cpu_features()))
    return _host_cpu[0]


def target_machine(opt=2):
    """A target machine configured as Numba's JIT codegen configures its own."""
    import llvmlite.binding as ll
    from numba.core.codegen import initialize_llvm
    initialize_llvm()
    target = ll.Target.from_triple(ll.get_process_triple())
    cpu, features = host_cpu()
    reloc = "static" if target.name.startswith("x86") else "default"
    return target.create_target_machine(cpu=cpu,
                                        features=features, reloc=reloc, opt=opt,
                                        codemodel="jitdefault", jit=True)
