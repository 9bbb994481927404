"""The processes of the program: MPI's world, read through mpi4py.

`start` runs once per process (`zerax.distributed.initialize`).  Under ``mpiexec`` (or
a cluster's launcher) the world is MPI's ``COMM_WORLD``: this module keeps a duplicate
of it, so zerax's messages never meet the user's own MPI traffic.  Without a launcher,
or without mpi4py, the world is this one process and nothing of MPI is loaded.

mpi4py is imported only here, and only when the program runs on several processes
(or asks for MPI): a missing mpi4py under a launcher is an error naming the extra
``zerax[mpi]``.
"""

from __future__ import annotations

import os
import secrets

import numpy as np

from .... import errors

# The environment variables by which launchers tell a process the size of its job:
# MPICH's and Intel MPI's (hydra), Open MPI's, PMIx's, MVAPICH's, Slurm's srun.
_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MV2_COMM_WORLD_SIZE",
                   "SLURM_NTASKS")


def mpi():
    """mpi4py's ``MPI`` module (MPI is initialised at its first import)."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise errors.MissingDependencyError(
            "zerax.distributed needs mpi4py and an MPI library to run on several "
            "processes: pip install 'zerax[mpi]' (mpi4py with the mpich wheel, which "
            "brings mpiexec), or mpi4py built against your cluster's MPI "
            f"({e}).") from None
    return MPI


def launched_size() -> int | None:
    """The number of processes a launcher says this job has (None: no launcher)."""
    for name in _SIZE_VARIABLES:
        value = os.environ.get(name)
        if value and value.strip().isdigit():
            return int(value)
    return None


class World:
    """This job's processes: ``size``, this process's ``rank``, the processes on this
    machine (``local_size``), and ``comm`` (zerax's duplicate of MPI's world; None for
    a world of one process without MPI).  ``token`` is a random id shared by every
    process of the job (names of its fault markers)."""

    def __init__(self, comm, size: int, rank: int, local_size: int, token: str):
        self.comm, self.size, self.rank = comm, size, rank
        self.local_size, self.token = local_size, token

    def __repr__(self):
        return f"World(process {self.rank} of {self.size})"


def _local_size(MPI, comm) -> int:
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size()
    finally:
        node.Free()


def start(use_mpi: bool | None = None) -> World:
    """The world of this process: MPI's when a launcher started the job (or
    ``use_mpi``), else a world of one process."""
    size = launched_size()
    if use_mpi is None:
        use_mpi = size is not None
    if not use_mpi:
        return World(None, 1, 0, 1, secrets.token_hex(8))
    MPI = mpi()
    comm = MPI.COMM_WORLD.Dup()
    token = np.frombuffer(secrets.token_bytes(8), np.uint8).copy()
    comm.Bcast(token, root=0)    # (raw bytes: nothing is pickled between processes)
    return World(comm, comm.Get_size(), comm.Get_rank(), _local_size(MPI, comm),
                 token.tobytes().hex())
