"""The stand-in's memory pools: the bytes its arrays hold, each rounded up to 512 bytes."""

from __future__ import annotations

from cupy import _Memory


class OutOfMemoryError(MemoryError):
    """As CuPy's: an allocation does not fit in what is left of the device's memory."""

    def __init__(self, size, used, total):
        super().__init__(
            f"Out of memory allocating {size:,} bytes (allocated so far: {used:,} bytes, "
            f"device memory {total:,} bytes)")


class MemoryPool:
    """``cupy.get_default_memory_pool()``: bytes in use and held."""

    def used_bytes(self):
        return _Memory.used

    def total_bytes(self):
        return max(_Memory.used, _Memory.peak)

    def free_bytes(self):
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream=None):
        _Memory.peak = _Memory.used

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0

    def n_free_blocks(self):
        return 0


class PinnedMemoryPool:
    def free_all_blocks(self):
        pass

    def n_free_blocks(self):
        return 0


_POOL = MemoryPool()
_PINNED_POOL = PinnedMemoryPool()
