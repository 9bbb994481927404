"""The MPI backend: the transport of collectives over processes (mpi4py).

It compiles nothing: programs are compiled by the CPU backend, whose code calls the
collectives' implementations between its kernels, and those call this transport
(``core.process_groups`` maps the ids the collectives carry to its groups).

- ``world.py``: the job's processes (MPI's world through mpi4py, or one process);
- ``transport.py``: process meshes, their groups and communicators, and the
  collectives as MPI calls on contiguous buffers, each checked for agreement first;
- ``faults.py``: an uncaught exception in one process ends the job, reported once.
"""

from .faults import abort, install as install_fault_handler  # noqa: F401
from .transport import AxisGroup, Communicator, ProcessMesh  # noqa: F401
from .world import World, launched_size, mpi, start  # noqa: F401
