"""gpulesson.exercises.wording: the spelling the banks share."""

from __future__ import annotations

import pytest

from gpulesson.exercises import wording


@pytest.mark.parametrize(("text", "trimmed"), [("24.0 GB", "24 GB"), ("50.00 GB/s", "50 GB/s"),
                                               ("3.35 TB/s", "3.35 TB/s"), ("1.50 ms", "1.5 ms")])
def test_trim_zeros(text: str, trimmed: str) -> None:
    assert wording.trim_zeros(text) == trimmed


def test_sizes_rates_and_flop_counts_without_trailing_zeros() -> None:
    """The H100 SXM's 3.35 TB/s of HBM3 (NVIDIA H100 datasheet) and a 1 GiB all-reduce
    bucket as nccl-tests prints it."""
    assert wording.size(24e9) == "24 GB" and wording.size(13.04e9, 2) == "13.04 GB"
    assert wording.size(2**30, 0, binary=True) == "1 GiB"
    assert wording.bandwidth(3.35e12) == "3.35 TB/s" and wording.bandwidth(50e9, 1) == "50 GB/s"
    assert wording.flop_count(2e12) == "2 TFLOP" and wording.flop_count(1.1e9) == "1.1 GFLOP"


def test_number_styles() -> None:
    assert wording.scientific(8.4e22) == "8.40e22" and wording.scientific(3.14e23, 2) == "3.1e23"
    assert wording.percent(0.4) == "40%" and wording.percent(0.34567) == "34.6%"
    assert wording.rounded_percent(0.05) == "5%" and wording.rounded_percent(0.384) == "38%"
    assert wording.rounded_percent(0.1234, 1) == "12.3%" and wording.rounded_percent(1.5) == "150%"
    assert wording.tflop_rate(989.4e12) == "989.4 TFLOP/s"
    assert wording.tflop_rate(312e12, 4) == "312 TFLOP/s"
    assert wording.token_rate(1234.56) == "1,235 tokens/s"
    assert wording.model_label("llama-2-7b") != "llama-2-7b"
    assert wording.model_label("not-a-model") == "not-a-model"


@pytest.mark.parametrize(("n", "text"), [(4096, "4,096"), (2400.0, "2,400"),
                                         (68_678.4, "68,678"), (7, "7"),
                                         (8_030_261_248, "8,030,261,248"),
                                         (2**60 + 1, "1,152,921,504,606,846,977")])
def test_counts_in_full(n: float, text: str) -> None:
    assert wording.count(n) == text


def test_count_refuses_what_is_not_a_number() -> None:
    for bad in ("4096", True, None):
        with pytest.raises(TypeError, match="n must be a number"):
            wording.count(bad)  # type: ignore[arg-type]


def test_counts_with_their_noun() -> None:
    assert wording.plural(1, "sequence") == "1 sequence"
    assert wording.plural(8, "sequence") == "8 sequences"
    assert wording.plural(1024, "token") == "1,024 tokens"
    assert wording.plural(2, "query", "queries") == "2 queries"


def test_counts_in_billions_and_trillions() -> None:
    """Llama 2 7B: 6,738,415,616 parameters, trained on 2T tokens (Touvron et al. 2023);
    Chinchilla: 70B parameters on 1.4T tokens (Hoffmann et al. 2022)."""
    assert wording.billions(6_738_415_616) == "6.74B"
    assert wording.billions(6_738_415_616, 4, long=True) == "6.738 billion"
    assert wording.trillions(2e12) == "2T" and wording.trillions(1.4e12) == "1.4T"
    assert wording.trillions(2e12, long=True) == "2 trillion"


def test_unit_words_are_read_only() -> None:
    with pytest.raises(TypeError):
        wording.TIMES["fold"] = 1  # type: ignore[index]
    assert wording.PER_BYTE["FLOP/byte"] == 1


def test_precision_labels_name_every_precision_the_calculators_take() -> None:
    """Every storage precision of gpulesson.memory and every plain float format of
    gpulesson.precision has a label, the upper-case key as datasheets print it."""
    from gpulesson import memory, precision

    keys = set(memory.PRECISION_BYTES) | {k for k in precision.FORMATS if "_" not in k}
    assert keys <= set(wording.PRECISION_LABELS)
    assert {wording.precision_label(k) for k in keys} == {k.upper() for k in keys}
    assert wording.precision_label("bf16") == "BF16"
    with pytest.raises(KeyError):
        wording.precision_label("fp7")
    with pytest.raises(TypeError):
        wording.PRECISION_LABELS["fp7"] = "FP7"  # type: ignore[index]
