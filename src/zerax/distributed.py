"""`zerax.distributed`: one program on several processes (SPMD) over MPI (re-exports).

Run ``mpiexec -n 4 python train.py`` (``pip install 'zerax[mpi]'`` brings mpi4py and
MPICH's ``mpiexec``; a cluster's own MPI works the same through mpi4py).  In the
program, `initialize` reads MPI's world, `spmd` runs a function whose collectives over
its axis name span the processes, `broadcast` and `process_allgather` move pytrees
between processes.  Without ``mpiexec`` the world is one process and the same program
runs as it is.
"""

from ._src.api.distributed import (barrier, broadcast, initialize, is_initialized,
                                   process_allgather, shutdown, spmd)

__all__ = ["barrier", "broadcast", "initialize", "is_initialized", "process_allgather",
           "shutdown", "spmd"]
