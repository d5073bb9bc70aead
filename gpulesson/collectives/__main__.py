"""``python -m gpulesson.collectives``: the MPI worker, run by every rank under
``mpiexec``/``mpirun`` (see :mod:`gpulesson.collectives.mpi`)."""

from gpulesson.collectives.mpi import _worker

_worker()
