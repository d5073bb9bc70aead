"""A planted-bug corpus for the kernel checker: buggy kernels, each with the kind of finding
that must come first in its report (:mod:`.buggy`), and correct kernels that must pass with
no finding (:mod:`.correct`). Run by tests/unit/test_kernelcheck_corpus.py."""
