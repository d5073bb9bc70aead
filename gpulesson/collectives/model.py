"""What an all-reduce measurement is, which algorithm ran, and the models fitted to it.

* :class:`AllReduceMeasurement`: one message size of one run (one nccl-tests column).
* :data:`ALGORITHMS`: the all-reduce algorithms a run can pin, each with the bytes every
  rank sends (the factor ``f(n)`` of ``t = alpha + f(n) * S / beta``) and its number of
  steps. The bus bandwidth is always nccl-tests' ``algbw * 2(n-1)/n`` (a definition, so
  runs compare); the fitted ``beta`` uses the factor of the algorithm that ran.
* :func:`fit_alpha_beta`: one straight line ``t = alpha + f(n) S / beta`` through every size.
* :func:`fit_regimes`: the latency regime (small messages: ``t = alpha``) and one or two
  bandwidth regimes (large messages: ``t = c + f(n) S / beta``), fitted separately, with
  the fewest regimes that describe every size within its measured spread.
* :func:`best_of`: the fastest of several runs per size, and how far the runs spread.

Taught in: ``notebooks/distributed_math.ipynb`` (lesson 7, section 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

#: The collective measured here, named as in :mod:`gpulesson.distributed`.
COLLECTIVE = "all_reduce"
#: Element types the benchmark accepts, with nccl-tests' name for each.
DTYPES: dict[str, str] = {"float32": "float", "float64": "double"}


@dataclass(frozen=True)
class Algorithm:
    """An all-reduce algorithm: its cost model's byte factor and steps for ``n`` ranks.

    ``ompi`` is Open MPI's number for it in ``coll_tuned_allreduce_algorithm`` (``None``:
    Open MPI's own choice by message size, which this module does not pin or know).
    """

    name: str
    label: str
    ompi: int | None
    bytes_factor: Callable[[int], float]
    steps: Callable[[int], int]
    source: str


def _log2_ceil(n: int) -> int:
    return max(1, math.ceil(math.log2(n)))


#: The algorithms a run can pin (Open MPI's coll/tuned numbers, ``ompi_info --param coll
#: tuned --level 9``) and the default, Open MPI's own decision table.
ALGORITHMS: dict[str, Algorithm] = {
    "ring": Algorithm(
        "ring", "ring", 4, lambda n: 2 * (n - 1) / n, lambda n: 2 * (n - 1),
        "reduce-scatter then all-gather round a ring: 2(n-1) steps of S/n bytes "
        "(Patarasuk and Yuan 2009)"),
    "recursive_doubling": Algorithm(
        "recursive_doubling", "recursive doubling", 3, lambda n: _log2_ceil(n), _log2_ceil,
        "log2(n) steps, each exchanging the whole buffer with a partner (Thakur et al. 2005)"),
    "rabenseifner": Algorithm(
        "rabenseifner", "Rabenseifner (recursive halving, then doubling)", 6,
        lambda n: 2 * (n - 1) / n, lambda n: 2 * _log2_ceil(n),
        "reduce-scatter by recursive halving, all-gather by recursive doubling: the ring's "
        "bytes in 2 log2(n) steps (Thakur et al. 2005)"),
    "default": Algorithm(
        "default", "Open MPI's choice by size (not pinned)", None,
        lambda n: 2 * (n - 1) / n, lambda n: 2 * (n - 1),
        "whatever coll/tuned's fixed decision picks per size; fitted with the ring's factor"),
}


def check_algorithm(algorithm: object) -> Algorithm:
    """The :class:`Algorithm` named ``algorithm`` (ValueError naming the choices)."""
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    return ALGORITHMS[algorithm]


def algorithm_at(algorithm: str, count: int, n_ranks: int) -> str:
    """The algorithm that runs for ``count`` elements: Open MPI's ring and Rabenseifner
    fall back to recursive doubling when the buffer has fewer elements than ranks (ring)
    or than the largest power of two below the rank count (Rabenseifner)."""
    alg = check_algorithm(algorithm)
    if alg.name == "ring" and count < n_ranks:
        return "recursive doubling (the ring's fallback: fewer elements than ranks)"
    if alg.name == "rabenseifner" and count < 2 ** int(math.log2(n_ranks)):
        return "recursive doubling (Rabenseifner's fallback for tiny buffers)"
    return alg.label


@dataclass(frozen=True)
class AllReduceMeasurement:
    """One message size of a measured all-reduce (one column of an nccl-tests row).

    Attributes
    ----------
    n_ranks, size_bytes, count, dtype, in_place:
        Ranks, message size ``S`` per rank (bytes), elements, ``"float32"``/``"float64"``,
        ``MPI_IN_PLACE`` (one buffer) or separate send and receive buffers.
    iterations, repeats, warmup:
        Timed calls per block, timed blocks (the median block is reported), untimed calls.
    time_seconds:
        Average time of one all-reduce within a block, maximum over ranks, median over
        blocks (s).
    time_seconds_rank_mean:
        The same with the mean over ranks (nccl-tests' default averaging) (s).
    block_seconds:
        Every block's time per call, maximum over ranks (s).
    warmup_seconds:
        Average time per warm-up call, slowest rank (s).
    algorithm_bandwidth, bus_bandwidth:
        ``S / time`` and ``S / time * 2(n-1)/n`` (bytes/s), nccl-tests' definitions.
    wrong:
        Elements, over all ranks, whose checked result differed from the expected sum.
    result_head, result_sum:
        Rank 0's first checked elements and the float64 sum of its whole result.
    library:
        The collective library's version line.
    algorithm:
        The :data:`ALGORITHMS` key the run pinned (``"default"``: not pinned).
    algorithm_check:
        How the pin was confirmed: the library's own settings as read back inside the
        ranks (Open MPI's MPI_T control variables), or why it could not be.
    backend:
        ``"mpi"``, ``"gloo"`` or ``"nccl"``.
    hosts:
        Machines the ranks ran on.
    """

    n_ranks: int
    size_bytes: int
    count: int
    dtype: str
    in_place: bool
    iterations: int
    repeats: int
    warmup: int
    time_seconds: float
    time_seconds_rank_mean: float
    block_seconds: tuple[float, ...]
    warmup_seconds: float
    algorithm_bandwidth: float
    bus_bandwidth: float
    wrong: int
    result_head: tuple[float, ...]
    result_sum: float
    library: str
    algorithm: str = "default"
    algorithm_check: str = ""
    backend: str = "mpi"
    hosts: int = 1

    @property
    def algorithm_ran(self) -> str:
        """The algorithm that ran at this size (see :func:`algorithm_at`)."""
        return algorithm_at(self.algorithm, self.count, self.n_ranks)

    @property
    def block_spread(self) -> float:
        """Interquartile range of the blocks over their median (0.05: the middle half of
        the blocks within 5 %)."""
        q1, q3 = np.percentile(self.block_seconds, [25, 75])
        return float((q3 - q1) / self.time_seconds) if self.time_seconds > 0 else 0.0


# --------------------------------------------------------------------------- best of N


def best_of(runs: Sequence[Sequence[AllReduceMeasurement]]
            ) -> tuple[list[AllReduceMeasurement], list[float]]:
    """Per size, the fastest of several runs (other programs only ever slow a run down)
    and its spread: the larger of the runs' range (slowest over fastest, minus one: 0.2
    means the slowest run took 20 % longer) and the fastest run's own
    :attr:`~AllReduceMeasurement.block_spread`."""
    runs = [list(r) for r in runs]
    if not runs or not runs[0]:
        raise ValueError("runs must hold at least one run with at least one size")
    if len({tuple(m.size_bytes for m in r) for r in runs}) != 1:
        raise ValueError("runs must all measure the same sizes in the same order")
    best, spread = [], []
    for same in zip(*runs, strict=True):
        times = [m.time_seconds for m in same]
        best.append(min(same, key=lambda m: m.time_seconds))
        fastest = min(same, key=lambda m: m.time_seconds)
        across = max(times) / min(times) - 1 if len(same) > 1 else 0.0
        spread.append(max(across, fastest.block_spread))
    return best, spread


# --------------------------------------------------------------------------- one line


@dataclass(frozen=True)
class AlphaBetaFit:
    """Latency and bandwidth of ``t(S) = alpha + f(n) * S / beta`` fitted to measurements.

    ``f(n)`` is the byte factor of ``algorithm`` (the ring's ``2(n-1)/n``, as
    :func:`gpulesson.distributed.collective_time`), so ``beta`` compares with the link.
    ``r2`` is the coefficient of determination of ``log10(t)``: every size weighs the same.
    """

    alpha_seconds: float
    beta_bytes_per_second: float
    r2: float
    n_ranks: int = 0
    n_points: int = 0
    algorithm: str = "ring"

    def predict(self, size_bytes: float, n_ranks: int | None = None) -> float:
        """Predicted time (s) of an all-reduce of ``size_bytes``."""
        n = self.n_ranks if n_ranks is None else n_ranks
        factor = ALGORITHMS[self.algorithm].bytes_factor(n)
        return self.alpha_seconds + factor * size_bytes / self.beta_bytes_per_second


def _points(measurements: Sequence[AllReduceMeasurement]) -> tuple[int, str, np.ndarray,
                                                                  np.ndarray]:
    items = list(measurements)
    if len(items) < 2:
        raise ValueError(f"measurements must hold at least 2 points, got {len(items)}")
    ranks = {m.n_ranks for m in items}
    if len(ranks) != 1:
        raise ValueError(f"measurements must all have the same n_ranks, got {sorted(ranks)}; "
                         "fit each rank count separately")
    algorithms = {m.algorithm for m in items}
    if len(algorithms) != 1:
        raise ValueError(f"measurements must all come from one algorithm, got "
                         f"{sorted(algorithms)}")
    sizes = np.array([float(m.size_bytes) for m in items])
    times = np.array([float(m.time_seconds) for m in items])
    if np.unique(sizes).size < 2:
        raise ValueError("measurements must cover at least 2 different size_bytes")
    if not np.all(np.isfinite(times)) or np.any(times <= 0):
        raise ValueError(f"every time_seconds must be finite and > 0, got {times.tolist()}")
    return ranks.pop(), algorithms.pop(), sizes, times


def _line(x: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    """Least squares of ``t = c + x * k`` in relative terms (weights 1/t), ``c >= 0``."""
    w = 1.0 / t
    design = np.column_stack([np.ones_like(x), x]) * w[:, None]
    (c, k), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    if c < 0:
        c, k = 0.0, float(np.sum(w * w * x * t) / np.sum(w * w * x * x))
    return float(c), float(k)


def _r2(times: np.ndarray, predicted: np.ndarray) -> float:
    log_t, log_p = np.log10(times), np.log10(predicted)
    ss_tot = float(np.sum((log_t - log_t.mean()) ** 2))
    ss_res = float(np.sum((log_t - log_p) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res == 0 else 0.0)


def fit_alpha_beta(measurements: Sequence[AllReduceMeasurement]) -> AlphaBetaFit:
    """Fit ``t = alpha + f(n) * S / beta`` through every size by least squares.

    With ``x = f(n) * S`` the model is a straight line ``t = alpha + x / beta``. Sizes span
    decades, so the residuals are relative (weights ``1/t``): an unweighted fit would let
    the largest message decide everything. A negative ``alpha`` is refitted as 0.

    Parameters
    ----------
    measurements : sequence of AllReduceMeasurement
        At least two sizes, one rank count and one algorithm (fit each on its own: the
        start-up cost grows with the number of ranks).
    """
    n_ranks, algorithm, sizes, times = _points(measurements)
    x = ALGORITHMS[algorithm].bytes_factor(n_ranks) * sizes
    alpha, inv_beta = _line(x, times)
    if inv_beta <= 0:
        raise ValueError("the measured times do not grow with size, so no bandwidth can be "
                         "fitted; measure larger sizes")
    fit = AlphaBetaFit(alpha, 1.0 / inv_beta, 0.0, n_ranks, len(sizes), algorithm)
    r2 = _r2(times, np.array([fit.predict(s) for s in sizes]))
    return replace(fit, r2=r2)


def predict_times(fit: AlphaBetaFit, sizes_bytes: Iterable[float]) -> list[float]:
    """The fitted model's time (s) for each size."""
    return [fit.predict(s) for s in sizes_bytes]


# --------------------------------------------------------------------------- regimes


@dataclass(frozen=True)
class Regime:
    """One regime of :func:`fit_regimes`: the sizes it covers and its line.

    ``kind`` is ``"latency"`` for the smallest sizes: ``t = alpha``, the fixed cost, with
    the byte term lost in it (``beta`` is ``None``); or ``"bandwidth"`` for larger ones: a
    line ``t = alpha + f(n) S / beta`` through its own sizes, ``alpha`` its intercept."""

    kind: str
    first_bytes: int
    last_bytes: int
    alpha_seconds: float
    beta_bytes_per_second: float | None

    def predict(self, size_bytes: float, factor: float) -> float:
        if self.beta_bytes_per_second is None:
            return self.alpha_seconds
        return self.alpha_seconds + factor * size_bytes / self.beta_bytes_per_second


@dataclass(frozen=True)
class RegimeFit:
    """The regimes of a run, and how well they describe each size.

    Attributes
    ----------
    regimes : tuple of Regime
        Latency first, then one or two bandwidth regimes, in order of size.
    sizes, times, spreads : tuple of float
        The fitted sizes (bytes), measured times (s) and each size's spread (relative).
    tolerance : float
        Smallest tolerance used per size: a size fits when ``|measured/model - 1|`` is at
        most ``max(spread, tolerance)``.
    n_ranks, algorithm:
        What was fitted.
    """

    regimes: tuple[Regime, ...]
    sizes: tuple[float, ...]
    times: tuple[float, ...]
    spreads: tuple[float, ...]
    tolerance: float
    n_ranks: int
    algorithm: str

    @property
    def alpha_seconds(self) -> float:
        """The latency regime's alpha: the fixed cost of one all-reduce (s)."""
        return self.regimes[0].alpha_seconds

    @property
    def beta_bytes_per_second(self) -> float:
        """The first bandwidth regime's beta (bytes/s)."""
        return float(self.regimes[1].beta_bytes_per_second)

    def regime_of(self, size_bytes: float) -> Regime:
        for regime in self.regimes:
            if regime.first_bytes <= size_bytes <= regime.last_bytes:
                return regime
        return self.regimes[-1] if size_bytes > self.regimes[-1].last_bytes else self.regimes[0]

    def predict(self, size_bytes: float) -> float:
        """The time (s) the size's own regime predicts."""
        factor = ALGORITHMS[self.algorithm].bytes_factor(self.n_ranks)
        return self.regime_of(size_bytes).predict(size_bytes, factor)

    @property
    def ratios(self) -> tuple[float, ...]:
        """Measured over modelled time, per size."""
        return tuple(t / self.predict(s) for s, t in zip(self.sizes, self.times, strict=True))

    @property
    def within_spread(self) -> tuple[bool, ...]:
        """Per size: does the model lie within the size's measured spread?"""
        return tuple(abs(r - 1) <= max(sp, self.tolerance)
                     for r, sp in zip(self.ratios, self.spreads, strict=True))

    @property
    def latency_within_spread(self) -> tuple[bool, ...]:
        """:attr:`within_spread` for the latency regime's sizes only. Mostly ``False`` means
        the time already grows with the size there: this run's alpha lies below its
        smallest message, and the fitted alpha is only a bound (at most the fastest time)."""
        latency = self.regimes[0]
        return tuple(ok for s, ok in zip(self.sizes, self.within_spread, strict=True)
                     if latency.first_bytes <= s <= latency.last_bytes)

    @property
    def latency_is_flat(self) -> bool:
        """Whether a constant fits the latency regime: within the spread at most of its
        sizes (:attr:`latency_within_spread`). If not, the fitted alpha is only a bound."""
        within = self.latency_within_spread
        return sum(within) > len(within) / 2


def _segment_error(kind: str, x: np.ndarray, t: np.ndarray, floor: float = math.inf
                   ) -> tuple[float, float, float | None]:
    """(sum of squared log errors, alpha, beta) of one regime: a constant for the latency
    regime, a line for a bandwidth regime (``beta`` is ``None`` where its times do not
    grow).

    The latency regime's constant is the best one in relative terms (the geometric mean of
    its times) that is at most ``floor``, the fastest time measured at any size: a fixed
    cost is part of every time, so it cannot exceed any of them. (The squared log error is
    convex in ``log(alpha)``, so the constrained best is the smaller of the two.) Without
    the bound, times that already grow with the size would give an ``alpha`` above the
    smallest message's own time."""
    if kind == "bandwidth":
        c, k = _line(x, t)
        if k > 0:
            return float(np.sum(np.log(t / (c + x * k)) ** 2)), c, 1.0 / k
        return math.inf, c, None
    alpha = min(float(np.exp(np.mean(np.log(t)))), floor)
    return float(np.sum(np.log(t / alpha) ** 2)), alpha, None


#: The fewest sizes a regime is fitted to (two would always fit a line exactly).
_MIN_POINTS = 3


def fit_regimes(measurements: Sequence[AllReduceMeasurement],
                spreads: Sequence[float] | None = None, *, tolerance: float = 0.05,
                max_bandwidth_regimes: int = 2) -> RegimeFit:
    """Fit the latency and the bandwidth regimes separately.

    The sizes, in order, are cut into a latency regime (``t = alpha``) and one or two
    bandwidth regimes (each its own line ``t = alpha + f(n) S / beta``), each at least
    three sizes, fitted by relative least squares at the cuts that minimise the squared
    relative error. The
    run's alpha is the latency regime's, its beta the (first) bandwidth regime's. One
    bandwidth regime is tried first; a second (for example the messages whose buffers no
    longer fit in the caches) is added only if some size lies outside its spread with one
    and more sizes lie within it with two.

    Parameters
    ----------
    measurements:
        One rank count, one algorithm, at least six sizes in increasing order.
    spreads:
        Each size's measured spread (relative, from :func:`best_of`); default the blocks'
        spread of each measurement.
    tolerance:
        The smallest tolerance per size (a spread of 0 would leave no room for rounding).
    max_bandwidth_regimes:
        1 or 2.
    """
    n_ranks, algorithm, sizes, times = _points(measurements)
    if len(sizes) < 2 * _MIN_POINTS:
        raise ValueError(f"measurements must hold at least {2 * _MIN_POINTS} sizes for two "
                         f"regimes, got {len(sizes)}")
    if np.any(np.diff(sizes) <= 0):
        raise ValueError("measurements must be in order of increasing size_bytes")
    if max_bandwidth_regimes not in (1, 2):
        raise ValueError(f"max_bandwidth_regimes must be 1 or 2, got {max_bandwidth_regimes!r}")
    if spreads is None:
        spreads = [m.block_spread for m in measurements]
    spreads = [float(s) for s in spreads]
    if len(spreads) != len(sizes) or any(not math.isfinite(s) or s < 0 for s in spreads):
        raise ValueError(f"spreads must hold one finite value >= 0 per size, got {spreads}")
    x = ALGORITHMS[algorithm].bytes_factor(n_ranks) * sizes
    n = len(sizes)
    fastest = float(np.min(times))

    def build(cuts: tuple[int, ...]) -> tuple[float, tuple[Regime, ...]]:
        bounds = (0, *cuts, n)
        total, regimes = 0.0, []
        for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
            kind = "latency" if i == 0 else "bandwidth"
            err, alpha, beta = _segment_error(kind, x[a:b], times[a:b], fastest)
            if kind == "bandwidth" and beta is None:
                return math.inf, ()
            total += err
            regimes.append(Regime(kind, int(sizes[a]), int(sizes[b - 1]), alpha, beta))
        return total, tuple(regimes)

    def best(n_cuts: int) -> RegimeFit | None:
        candidates = []
        m = _MIN_POINTS
        if n_cuts == 1:
            candidates = [(k,) for k in range(m, n - m + 1)]
        else:
            candidates = [(k, j) for k in range(m, n - 2 * m + 1)
                          for j in range(k + m, n - m + 1)]
        scored = [build(c) for c in candidates]
        scored = [s for s in scored if s[1]]
        if not scored:
            return None
        _, regimes = min(scored, key=lambda s: s[0])
        return RegimeFit(regimes, tuple(sizes), tuple(times), tuple(spreads), tolerance,
                         n_ranks, algorithm)

    fit = best(1)
    if fit is None:
        raise ValueError("the measured times do not grow with size at the large end, so no "
                         "bandwidth can be fitted; measure larger sizes")
    if max_bandwidth_regimes == 2 and not all(fit.within_spread) and n >= 3 * _MIN_POINTS:
        second = best(2)
        if second is not None and sum(second.within_spread) > sum(fit.within_spread):
            fit = second
    return fit


# --------------------------------------------------------------------------- validation

#: Largest message accepted, per rank and buffer (each rank holds two such buffers).
MAX_SIZE_BYTES = 2**30


def check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value}")
    return value


def check_seconds(name: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(f"{name} must be a number of seconds, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        allowed = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number of seconds {allowed}, got {value}")
    return value


def check_dtype(dtype: object) -> str:
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    return str(dtype)


def check_sizes(sizes_bytes: Iterable[int], itemsize: int) -> list[int]:
    if isinstance(sizes_bytes, (str, bytes)) or not isinstance(sizes_bytes, Iterable):
        raise TypeError(f"sizes_bytes must be a sequence of integers, got {sizes_bytes!r}")
    sizes = [
        check_int(f"sizes_bytes[{i}]", s, itemsize, MAX_SIZE_BYTES)
        for i, s in enumerate(sizes_bytes)
    ]
    if not sizes:
        raise ValueError("sizes_bytes must hold at least one size, got an empty sequence")
    for i, size in enumerate(sizes):
        if size % itemsize:
            raise ValueError(
                f"sizes_bytes[{i}] must be a multiple of the element size {itemsize} B, got {size}"
            )
    return sizes

