"""The thread pool that runs compiled parallel loops: POSIX threads' mutexes and
condition variables, driven from LLVM code, on Python threads that never hold the GIL.

A parallel loop of a kernel (`emit.py`) calls ``zerax_parallel_for(body, env, start,
count, block)``: the iterations are cut into blocks of ``block``, and the calling
thread and the pool's workers claim blocks from a shared counter (one atomic add) until
none is left, so a thread that another process holds up does fewer blocks, not a fixed
share.  The workers are Python threads (``threading``) each running `worker` through
ctypes, which releases the GIL for the whole life of the worker; they wait on a
condition variable (after a short spell of ``sched_yield``, so back-to-back loops
do not pay a wake-up each) and never spin while idle.

Only POSIX's public interface is used (``pthread_mutex_*``, ``pthread_cond_*``,
``sched_yield``); their objects live in over-sized, aligned static storage and are
initialised by their own ``*_init`` calls, so no platform struct layout is assumed.

One loop runs on the pool at a time: a kernel called while another thread's loop
holds the pool runs its loop on its own thread.  After ``os.fork`` the child's pool
is empty and starts again on first use.  The number of threads is the
``num_threads`` setting (`set_threads`), read by each loop.
"""

from __future__ import annotations

import ctypes
import os
import threading
import warnings

from llvmlite import ir

from .... import errors

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_PTR = _I8.as_pointer()
_VOID = ir.VoidType()
# Bytes reserved for one pthread_mutex_t / pthread_cond_t (40 and 48 in glibc, 64 and 48
# on macOS): generous, so no platform's is larger.
_SYNC_BYTES = 256
# sched_yield rounds a waiting thread makes before it sleeps on the condition variable.
_YIELDS = 64
# The most threads the pool starts (more than any setting asks for is never used).
MAX_THREADS = 256

SYMBOL = "zerax_parallel_for"


def _module() -> ir.Module:
    """The pool's LLVM module: its state (globals) and functions."""
    m = ir.Module(name="zerax_threads")
    fnptr = ir.FunctionType(_VOID, [_PTR, _I64, _I64]).as_pointer()

    def glob(name, ty, init=None):
        g = ir.GlobalVariable(m, ty, name)
        g.initializer = init if init is not None else ir.Constant(ty, None)
        g.align = 64
        return g

    sync = ir.ArrayType(_I8, _SYNC_BYTES)
    lock_, wake, done_lock, done = (glob(f"zerax_pool.{n}", sync)
                                    for n in ("lock", "wake", "done_lock", "done"))
    gen = glob("zerax_pool.generation", _I64)        # bumped for every job
    stopping = glob("zerax_pool.stop", _I64)
    busy = glob("zerax_pool.busy", _I64)            # 1 while a loop owns the pool
    threads = glob("zerax_pool.threads", _I64, ir.Constant(_I64, 1))   # the setting
    workers = glob("zerax_pool.workers", _I64)      # started workers
    job_fn = glob("zerax_pool.fn", fnptr)
    job_env = glob("zerax_pool.env", _PTR)
    job_start, job_count, job_block, job_blocks, job_next, job_pending = (
        glob(f"zerax_pool.{n}", _I64) for n in ("start", "count", "block", "blocks",
                                                   "next", "pending"))

    def ext(name, ret, args):
        return ir.Function(m, ir.FunctionType(ret, args), name)
    p_lock = ext("pthread_mutex_lock", _I32, [_PTR])
    p_unlock = ext("pthread_mutex_unlock", _I32, [_PTR])
    p_minit = ext("pthread_mutex_init", _I32, [_PTR, _PTR])
    p_cinit = ext("pthread_cond_init", _I32, [_PTR, _PTR])
    p_wait = ext("pthread_cond_wait", _I32, [_PTR, _PTR])
    p_signal = ext("pthread_cond_signal", _I32, [_PTR])
    p_broadcast = ext("pthread_cond_broadcast", _I32, [_PTR])
    p_yield = ext("sched_yield", _I32, [])

    def ptr(b, g):
        return b.bitcast(g, _PTR)

    def atomic_load(b, g):
        v = b.load_atomic(g, "acquire", 8)
        return v

    # void zerax_pool_init(void): the mutexes and condition variables
    init = ir.Function(m, ir.FunctionType(_VOID, []), "zerax_pool_init")
    b = ir.IRBuilder(init.append_basic_block())
    null = ir.Constant(_PTR, None)
    for g in (lock_, done_lock):
        b.call(p_minit, [ptr(b, g), null])
    for g in (wake, done):
        b.call(p_cinit, [ptr(b, g), null])
    b.store(ir.Constant(_I64, 0), busy)
    b.store(ir.Constant(_I64, 0), stopping)
    b.ret_void()

    # void zerax_pool_run_blocks(void): claim blocks of the current job until none is left
    run = ir.Function(m, ir.FunctionType(_VOID, []), "zerax_pool.run_blocks")
    run.linkage = "internal"
    b = ir.IRBuilder(run.append_basic_block("entry"))
    head, body, out = (run.append_basic_block(n) for n in ("claim", "block", "out"))
    fn, env = b.load(job_fn), b.load(job_env)
    start, count, block, blocks = (b.load(g) for g in (job_start, job_count, job_block,
                                                        job_blocks))
    b.branch(head)
    b.position_at_end(head)
    k = b.atomic_rmw("add", job_next, ir.Constant(_I64, 1), "monotonic")
    b.cbranch(b.icmp_signed("<", k, blocks), body, out)
    b.position_at_end(body)
    lo = b.mul(k, block)
    hi = b.add(lo, block)
    hi = b.select(b.icmp_signed("<", hi, count), hi, count)
    b.call(fn, [env, b.add(start, lo), b.add(start, hi)])
    b.branch(head)
    b.position_at_end(out)
    b.ret_void()

    # void zerax_pool_worker(i64 id): a worker's life (called on a Python thread)
    worker = ir.Function(m, ir.FunctionType(_VOID, [_I64]), "zerax_pool_worker")
    wid = worker.args[0]
    b = ir.IRBuilder(worker.append_basic_block("entry"))
    seen = b.alloca(_I64)
    spins = b.alloca(_I64)
    # Registered under the lock a job starts under: a job counts this worker exactly
    # when the worker has seen the generation before it.
    b.call(p_lock, [ptr(b, lock_)])
    b.atomic_rmw("add", workers, ir.Constant(_I64, 1), "acq_rel")
    b.store(atomic_load(b, gen), seen)
    b.call(p_unlock, [ptr(b, lock_)])
    wait, spin, sleep, sleep_check, sleep_wait, woken, check, work, finish, last, leave = (
        worker.append_basic_block(n) for n in (
            "wait", "spin", "sleep", "sleep.check", "sleep.wait", "woken", "check", "work",
            "finish", "last", "leave"))
    b.branch(wait)
    b.position_at_end(wait)
    b.store(ir.Constant(_I64, 0), spins)
    b.branch(spin)
    # spin: a new generation? else yield a few times, then sleep
    b.position_at_end(spin)
    g = atomic_load(b, gen)
    changed = b.icmp_unsigned("!=", g, b.load(seen))
    spin_more = worker.append_basic_block("spin.more")
    b.cbranch(changed, woken, spin_more)
    b.position_at_end(spin_more)
    n = b.load(spins)
    b.store(b.add(n, ir.Constant(_I64, 1)), spins)
    yield_ = worker.append_basic_block("spin.yield")
    b.cbranch(b.icmp_signed("<", n, ir.Constant(_I64, _YIELDS)), yield_, sleep)
    b.position_at_end(yield_)
    b.call(p_yield, [])
    b.branch(spin)
    b.position_at_end(sleep)
    b.call(p_lock, [ptr(b, lock_)])
    b.branch(sleep_check)
    b.position_at_end(sleep_check)
    g2 = atomic_load(b, gen)
    b.cbranch(b.icmp_unsigned("!=", g2, b.load(seen)), sleep_wait, worker.append_basic_block(
        "sleep.block"))
    b.position_at_end(worker.blocks[-1])
    b.call(p_wait, [ptr(b, wake), ptr(b, lock_)])
    b.branch(sleep_check)
    b.position_at_end(sleep_wait)
    b.call(p_unlock, [ptr(b, lock_)])
    b.branch(woken)
    # woken: a new job (or the stop)
    b.position_at_end(woken)
    b.store(atomic_load(b, gen), seen)
    b.cbranch(b.icmp_unsigned("!=", atomic_load(b, stopping), ir.Constant(_I64, 0)),
              leave, check)
    b.position_at_end(check)
    # Every started worker answers every job (the job's ``pending`` counts them all, so
    # the next job cannot start before each has finished with this one); those beyond
    # the setting claim no block.
    limit = b.sub(b.load(threads), ir.Constant(_I64, 1))
    b.cbranch(b.icmp_signed("<", wid, limit), work, finish)
    b.position_at_end(work)
    b.call(run, [])
    b.branch(finish)
    b.position_at_end(finish)
    b.call(p_lock, [ptr(b, done_lock)])
    left = b.sub(b.atomic_rmw("sub", job_pending, ir.Constant(_I64, 1), "acq_rel"),
                 ir.Constant(_I64, 1))
    unlock_done = worker.append_basic_block("finish.unlock")
    b.cbranch(b.icmp_signed("==", left, ir.Constant(_I64, 0)), last, unlock_done)
    b.position_at_end(last)
    b.call(p_signal, [ptr(b, done)])
    b.branch(unlock_done)
    b.position_at_end(unlock_done)
    b.call(p_unlock, [ptr(b, done_lock)])
    b.branch(wait)
    b.position_at_end(leave)
    b.ret_void()

    # void zerax_parallel_for(fn, env, start, count, block)
    pfor = ir.Function(m, ir.FunctionType(_VOID, [_PTR, _PTR, _I64, _I64, _I64]), SYMBOL)
    fn_arg, env_arg, start_arg, count_arg, block_arg = pfor.args
    b = ir.IRBuilder(pfor.append_basic_block("entry"))
    serial, try_pool, pooled, wait_done, wait_loop, wait_sleep, finished = (
        pfor.append_basic_block(n) for n in ("serial", "try", "pooled", "wait", "wait.loop",
                                             "wait.sleep", "finished"))
    nonempty = pfor.append_basic_block("nonempty")
    b.cbranch(b.icmp_signed(">", count_arg, ir.Constant(_I64, 0)), nonempty, finished)
    b.position_at_end(nonempty)
    fnv = b.bitcast(fn_arg, fnptr)
    blocks = b.sdiv(b.sub(b.add(count_arg, block_arg), ir.Constant(_I64, 1)), block_arg)
    helpers = b.sub(b.load(threads), ir.Constant(_I64, 1))
    started = atomic_load(b, workers)
    helpers = b.select(b.icmp_signed("<", started, helpers), started, helpers)
    more_blocks = b.sub(blocks, ir.Constant(_I64, 1))
    helpers = b.select(b.icmp_signed("<", more_blocks, helpers), more_blocks, helpers)
    b.cbranch(b.icmp_signed(">", helpers, ir.Constant(_I64, 0)), try_pool, serial)
    b.position_at_end(try_pool)
    owned = b.cmpxchg(busy, ir.Constant(_I64, 0), ir.Constant(_I64, 1), "acquire",
                      "monotonic")
    b.cbranch(b.extract_value(owned, 1), pooled, serial)
    b.position_at_end(serial)
    b.call(fnv, [env_arg, start_arg, b.add(start_arg, count_arg)])
    b.branch(finished)
    b.position_at_end(pooled)
    for g, v in ((job_fn, fnv), (job_env, env_arg), (job_start, start_arg),
                 (job_count, count_arg), (job_block, block_arg), (job_blocks, blocks)):
        b.store(v, g)
    b.store_atomic(ir.Constant(_I64, 0), job_next, "release", 8)
    b.call(p_lock, [ptr(b, lock_)])
    b.store_atomic(atomic_load(b, workers), job_pending, "release", 8)
    b.atomic_rmw("add", gen, ir.Constant(_I64, 1), "acq_rel")
    b.call(p_broadcast, [ptr(b, wake)])
    b.call(p_unlock, [ptr(b, lock_)])
    b.call(run, [])
    b.branch(wait_done)
    b.position_at_end(wait_done)
    b.call(p_lock, [ptr(b, done_lock)])
    b.branch(wait_loop)
    b.position_at_end(wait_loop)
    pending = atomic_load(b, job_pending)
    release = pfor.append_basic_block("release")
    b.cbranch(b.icmp_signed(">", pending, ir.Constant(_I64, 0)), wait_sleep, release)
    b.position_at_end(wait_sleep)
    b.call(p_wait, [ptr(b, done), ptr(b, done_lock)])
    b.branch(wait_loop)
    b.position_at_end(release)
    b.call(p_unlock, [ptr(b, done_lock)])
    b.store_atomic(ir.Constant(_I64, 0), busy, "release", 8)
    b.branch(finished)
    b.position_at_end(finished)
    b.ret_void()

    # void zerax_pool_stop(void): wake every worker to leave
    stop = ir.Function(m, ir.FunctionType(_VOID, []), "zerax_pool_stop")
    b = ir.IRBuilder(stop.append_basic_block())
    b.store_atomic(ir.Constant(_I64, 1), stopping, "release", 8)
    b.call(p_lock, [ptr(b, lock_)])
    b.atomic_rmw("add", gen, ir.Constant(_I64, 1), "acq_rel")
    b.call(p_broadcast, [ptr(b, wake)])
    b.call(p_unlock, [ptr(b, lock_)])
    b.ret_void()
    return m


class _Pool:
    def __init__(self):
        self.lock = threading.Lock()
        self.loaded = False        # the module is in the engine
        self.threads: list = []
        self.addresses: dict = {}
        self.wanted = None         # the setting (None until read: `default_threads`)


_pool = _Pool()


def _global(name):
    return ctypes.c_int64.from_address(_pool.addresses[name])


def ensure_loaded(engine_add_module, address_of):
    """Add the pool's code to the engine (once per process); ``engine_add_module``
    compiles an llvmlite module into the engine, ``address_of`` finds a symbol."""
    if _pool.loaded:
        return
    with _pool.lock:
        if _pool.loaded:
            return
        engine_add_module(_module())
        for name in ("zerax_pool_init", "zerax_pool_worker", "zerax_pool_stop",
                     "zerax_pool.threads", "zerax_pool.workers"):
            _pool.addresses[name] = address_of(name)
        ctypes.CFUNCTYPE(None)(_pool.addresses["zerax_pool_init"])()
        _pool.loaded = True
        _apply(setting())


def check(n, where: str) -> int:
    """``n`` as a thread count: a positive whole number (a digit string is accepted,
    for ``ZERAX_NUM_THREADS``), at most `MAX_THREADS` (capped with a warning)."""
    if isinstance(n, bool) or not isinstance(n, int) and not (
            isinstance(n, str) and n.strip().isdigit()):
        raise errors.ZeraxValueError(
            f"{where} must be a positive whole number of threads, got {n!r}.")
    n = int(n)
    if n < 1:
        raise errors.ZeraxValueError(
            f"{where} must be at least 1 (one thread: no parallel loops), got {n}.")
    if n > MAX_THREADS:
        warnings.warn(f"zerax: {where}={n} is more than the {MAX_THREADS} threads the "
                      f"pool of parallel loops can run; using {MAX_THREADS}.",
                      RuntimeWarning, stacklevel=4)
        n = MAX_THREADS
    return n


def default_threads() -> int:
    """``ZERAX_NUM_THREADS`` when set (a bad value is an error), else the cores this
    process may run on."""
    env = os.environ.get("ZERAX_NUM_THREADS", "").strip()
    if env:
        return check(env, "ZERAX_NUM_THREADS")
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def setting() -> int:
    """The number of threads compiled programs use (the ``num_threads`` setting)."""
    if _pool.wanted is None:
        _pool.wanted = min(default_threads(), MAX_THREADS)
    return _pool.wanted


def set_threads(n) -> int:
    """Use ``n`` threads (the caller's included) for the parallel loops from now on,
    starting workers as needed (``zerax.config.update("num_threads", n)``)."""
    _pool.wanted = check(n, "num_threads")
    if _pool.loaded:
        with _pool.lock:
            _apply(_pool.wanted)
    return _pool.wanted


def _apply(n):
    _global("zerax_pool.threads").value = n
    worker = ctypes.CFUNCTYPE(None, ctypes.c_int64)(_pool.addresses["zerax_pool_worker"])
    while len(_pool.threads) < n - 1:
        k = len(_pool.threads)
        t = threading.Thread(target=worker, args=(k,), name=f"zerax-pool-{k}", daemon=True)
        t.start()
        _pool.threads.append(t)


def _after_fork_in_child():
    """The child of a fork has the parent's pool state but none of its threads."""
    if _pool.loaded:
        _pool.threads = []
        _global("zerax_pool.workers").value = 0
        ctypes.CFUNCTYPE(None)(_pool.addresses["zerax_pool_init"])()
        _apply(setting())
    _pool.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
