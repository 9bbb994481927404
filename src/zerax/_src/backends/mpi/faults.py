"""What happens to the job when one of its processes fails.

MPI itself does not end a job when one process raises: Python prints the traceback,
and at exit waits in ``MPI_Finalize`` for processes that are themselves waiting for it
in a collective, forever.  `install` (run by ``zerax.distributed.initialize`` on a job
of several processes) replaces ``sys.excepthook``: an uncaught exception prints its
traceback, once, headed by the process that raised it, and then ends the whole job
with ``MPI_Abort`` (the launcher stops every process and exits with an error).

Printed once: the first process of a machine to fail writes the traceback (it takes a
marker file named by the job's random id, an empty file left in the temporary
directory); a process of that machine failing at the same moment writes one line
naming its own exception.  An error every process raises alike
(`CollectiveMismatchError`: all of them see the mismatch) is written by process 0 only.
Processes that do not write wait a few seconds for the writer's abort before aborting
themselves, so that the writer is not stopped mid-traceback.

A process killed by a signal cannot run any of this: the launcher sees it die and ends
the others (MPICH's hydra within a second, printing ``BAD TERMINATION ... KILLED BY
SIGNAL``; Open MPI's mpirun likewise).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback

from .world import World, mpi

# How long a process that leaves the report to another waits for it to end the job.
WRITER_WAIT_S = 5.0
# How long a process waits between writing and aborting: on MPI_Abort the launcher ends
# every process and may drop what it has not yet read from their pipes (MPICH's hydra
# lost a whole report that way on a busy machine), so the writer gives it time to read.
DRAIN_S = 0.5

_installed: list = []


def _marker(world: World) -> str:
    return os.path.join(tempfile.gettempdir(), f"zerax-fault-{world.token}")


def _take_marker(world: World) -> bool:
    """Whether this process is the first of its machine to report a failure."""
    try:
        fd = os.open(_marker(world), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    except OSError:   # no writable temporary directory: report anyway
        return True
    os.close(fd)
    return True


def _write(text: str) -> None:
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - a closed stdout must not hide the report
        pass
    sys.stderr.write(text)
    sys.stderr.flush()


def abort(world: World, code: int = 1) -> None:
    """End every process of the job now (MPI_Abort); never returns."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    time.sleep(DRAIN_S)
    mpi().COMM_WORLD.Abort(code)
    os._exit(code)   # (Abort does not return; if the library let it, leave anyway)


def report(world: World, etype, value, tb) -> None:
    """Write the failure of this process (or leave it to the one that writes it), then
    end the job."""
    if issubclass(etype, KeyboardInterrupt):   # every process got the Ctrl-C
        abort(world, 130)
    who = f"process {world.rank} of {world.size}"
    if getattr(value, "same_on_every_process", False):
        writer = world.rank == 0
    else:
        writer = _take_marker(world)
    if writer:
        _write(f"zerax.distributed: {who} raised an exception; ending the job "
               "(MPI_Abort):\n" + "".join(traceback.format_exception(etype, value, tb)))
    else:
        if not getattr(value, "same_on_every_process", False):
            _write(f"zerax.distributed: {who} also raised "
                   f"{etype.__name__}: {value}\n")
        time.sleep(WRITER_WAIT_S)   # the writer's abort ends this process first
    abort(world, 1)


def install(world: World) -> None:
    """Report uncaught exceptions as above and end the job (idempotent)."""
    if _installed or world.size == 1:
        return
    previous = sys.excepthook

    def hook(etype, value, tb):
        try:
            report(world, etype, value, tb)
        finally:   # (report ends the process; this is only if MPI could not)
            previous(etype, value, tb)

    sys.excepthook = hook
    _installed.append(hook)
