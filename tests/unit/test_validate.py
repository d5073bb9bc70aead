"""gpulesson._validate: the argument rules every calculator shares.

Bad input is refused with a message naming the argument, the value and what is allowed;
``bool`` is never a number; NaN and infinities are refused; counts must be integers; an
unknown name (preset, GPU, precision ...) is both a ``KeyError`` and a ``ValueError`` and
lists the known names, and names are looked up ignoring case, spaces and dashes. The rules
are checked first through the calculators that use them, then on the helpers themselves.
Each module's own checks (which values divide which, which ranges) are in its own file.
"""

from __future__ import annotations

import math
import re
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpulesson import _validate as v
from gpulesson import gemm, hardware, memory, roofline
from gpulesson.transformer import TransformerConfig, preset

from .calculator_modules import calculator_modules

# ---------------------------------------------------------------------------------------
# The rules, through the calculators


BAD_COUNTS = [0, -1, True, 2.5, "3", None, math.nan]


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_gemm_sizes_must_be_positive_integers(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="m must be a positive integer"):
        gemm.flops(bad, 2, 3)  # type: ignore[arg-type]


def test_message_names_argument_and_value() -> None:
    with pytest.raises(ValueError, match=r"^layers must be a positive integer, got 0$"):
        TransformerConfig(hidden=64, layers=0, heads=4, vocab=100)


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf, True, "1e12"])
def test_rates_must_be_finite_positive(bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="peak_flops"):
        roofline.ridge_point(bad, 1e12)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="bandwidth"):
        roofline.time(1.0, 1.0, 1e12, bad)  # type: ignore[arg-type]


def test_float_count_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="heads must be a positive integer, got 32.0"):
        TransformerConfig(hidden=4096, layers=32, heads=32.0, vocab=32000)  # type: ignore


def test_bool_flags_must_be_bool() -> None:
    with pytest.raises(TypeError, match="read_c must be True or False"):
        gemm.min_bytes(2, 2, 2, read_c=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tied_embeddings"):
        TransformerConfig(hidden=64, layers=1, heads=4, vocab=10, tied_embeddings="yes")


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(KeyError, match="llama-2-7b"):
        preset("llama-9")
    with pytest.raises(KeyError, match="H100 SXM"):
        hardware.gpu("Z9000")
    with pytest.raises(KeyError, match="bf16"):
        memory.precision_bytes("fp12")
    with pytest.raises(ValueError, match="bf16"):  # also a ValueError
        memory.precision_bytes("fp12")
    with pytest.raises(KeyError, match="adam"):
        memory.bytes_per_param("mixed", "lion")
    with pytest.raises(ValueError, match="'none', 'selective', 'full'"):
        memory.activation_bytes_per_layer(seq_len=8, batch=1, hidden=64, heads=4,
                                          recompute="some")
    with pytest.raises(KeyError, match="fp16"):
        hardware.gpu("V100").dense("bf16")


def test_lookup_ignores_case_and_spaces() -> None:
    assert hardware.gpu("h100 sxm") is hardware.gpu("H100-SXM") is hardware.gpu("H100SXM")
    assert preset("Llama-2-7B") is preset("llama 2 7b")
    assert memory.precision_bytes("BFloat16") == 2


# ---------------------------------------------------------------------------------------
# The helpers


def test_numpy_integers_are_counts_and_numpy_bools_are_not() -> None:
    """A count may come out of a NumPy computation; a NumPy bool is no more a number than
    ``True`` is."""
    layers = v.positive_int("layers", np.int64(32))
    assert layers == 32 and type(layers) is int
    with pytest.raises(TypeError, match="layers must be a positive integer, got"):
        v.positive_int("layers", np.bool_(True))
    with pytest.raises(TypeError, match="bandwidth must be a finite positive number, got"):
        v.positive_number("bandwidth", np.bool_(True))
    assert v.positive_number("bandwidth", np.float32(2.5)) == 2.5


def test_several_counts_are_checked_in_order_and_the_first_bad_one_is_named() -> None:
    """``positive_ints`` returns the counts in the order given and names the keyword that
    fails, through a calculator (Megatron's FLOPs per iteration) and on its own."""
    assert v.positive_ints(b=np.int64(3), s=7) == (3, 7)
    with pytest.raises(ValueError, match=r"seq_len must be a positive integer, got 0$"):
        v.positive_ints(batch=2, seq_len=0, hidden=-1)
    from gpulesson import flops
    with pytest.raises(TypeError, match=r"hidden must be a positive integer, got 4096.0"):
        flops.megatron_flops_per_iteration(batch=1, seq_len=2048, layers=2, hidden=4096.0,
                                           vocab=51200)  # type: ignore[arg-type]


def test_integers_stay_exact_integers() -> None:
    """2^60 + 1 bytes stays 1,152,921,504,606,846,977: a float would keep 53 bits."""
    exact = v.positive_number("bytes", 2**60 + 1)
    assert exact == 2**60 + 1 and type(exact) is int
    assert type(v.nonneg_number("bytes", 0)) is int
    with pytest.raises(ValueError, match="count must be a non-negative integer, got -1"):
        v.nonneg_int("count", -1)


def test_fraction_ends_are_in_or_out_as_asked() -> None:
    assert v.fraction("utilization", 0) == 0.0 and v.fraction("utilization", 1) == 1.0
    for kwargs, bad, interval in [({}, 1.5, "[0, 1]"), ({"allow_zero": False}, 0, "(0, 1]"),
                                  ({"allow_one": False}, 1, "[0, 1)")]:
        message = re.escape(f"utilization must be a number in {interval}, got")
        with pytest.raises(ValueError, match=message):
            v.fraction("utilization", bad, **kwargs)


def test_lookup_follows_aliases_and_refuses_non_strings() -> None:
    table = {"fp16": 2, "fp32": 4}
    assert v.lookup("precision", "FP-16", table) == ("fp16", 2)
    assert v.lookup("precision", "half", table, aliases={"half": "fp16"}) == ("fp16", 2)
    with pytest.raises(TypeError, match=r"precision must be a name \(str\), got 16 .*fp16, fp32"):
        v.lookup("precision", 16, table)
    with pytest.raises(v.UnknownNameError) as err:
        v.lookup("precision", "fp12", table)
    # printed as its message (a plain KeyError would print it in quotes)
    assert str(err.value) == "unknown precision 'fp12'; known precisions: fp16, fp32"


def test_choice_takes_exact_strings_only() -> None:
    """Unlike a lookup, a choice must be spelled exactly as one of the options."""
    modes = ["none", "selective", "full"]
    assert v.choice("recompute", "full", modes) == "full"
    with pytest.raises(v.UnknownNameError, match="recompute must be one of"):
        v.choice("recompute", "Full", modes)
    with pytest.raises(TypeError, match="recompute must be one of"):
        v.choice("recompute", None, modes)


def test_tensor_bytes_pads_packed_elements_exactly() -> None:
    """int4 packs two values in a byte: 3 values need 2 bytes, 2^60 + 1 values 2^59 + 1
    bytes (exactly: a float product would lose the last bit)."""
    assert v.tensor_bytes(3, 0.5) == 2
    assert v.tensor_bytes(2**60 + 1, 0.5) == 2**59 + 1
    assert v.tensor_bytes(2**60 + 1, 2) == 2**61 + 2


@given(elements=st.integers(0, 2**70),
       size=st.sampled_from([0.125, 0.5, 0.75, 1, 1.5, 2, 4]))
def test_tensor_bytes_is_the_exact_ceiling(elements: int, size: float) -> None:
    assert v.tensor_bytes(elements, size) == math.ceil(Fraction(elements) * Fraction(size))


# ---------------------------------------------------------------------------------------
# Integers beyond the float range, flags, and results that must stay finite

#: Every module whose public functions are calculators (each ends with ``guard_module``).
FORMULA_MODULES = calculator_modules()


def test_integers_beyond_float_range_are_refused_naming_the_argument() -> None:
    """2^1024 is the first integer a float cannot hold; ``float(10**400)`` raises
    ``OverflowError``, which every formula would then meet."""
    from gpulesson import flops

    with pytest.raises(ValueError, match=r"^n_params must be a finite positive number no "
                                         r"larger than 1\.798e\+308.*about 10\^400"):
        flops.training_flops(10**400, 1e12)
    with pytest.raises(ValueError, match="layers must be a positive integer no larger"):
        TransformerConfig(hidden=64, layers=2**1024, heads=4, vocab=10)
    with pytest.raises(ValueError, match="count must be a non-negative integer no larger"):
        v.nonneg_int("count", 2**1100)
    with pytest.raises(ValueError, match="cells must be a finite number >= 1"):
        v.number_at_least("cells", -(2**1024), 1)
    with pytest.raises(ValueError, match="within the float range"):
        v.positive_number("tokens", Fraction(10**400, 3))
    # the largest integer below the range passes, exactly
    assert v.positive_number("bytes", int(sys.float_info.max)) == int(sys.float_info.max)


def test_a_huge_integer_is_named_by_its_size_not_printed_in_full() -> None:
    """``str(10**5000)`` itself raises on Python 3.11+ (the 4,300-digit limit)."""
    with pytest.raises(ValueError) as err:
        v.positive_int("workers", 10**5000)
    assert "about 10^5000" in str(err.value) and len(str(err.value)) < 200


@pytest.mark.parametrize("bad", ["no", "yes", 1, 0, None, 1.0])
def test_flags_refuse_anything_but_true_or_false(bad: object) -> None:
    """``sparse="no"`` used to count as true: every parameter declared ``bool`` of a
    guarded function now refuses it with a ``TypeError`` naming the flag."""
    with pytest.raises(TypeError, match="sparse must be True or False"):
        hardware.flops_per_watt(hardware.gpu("H100 SXM"), "fp16", sparse=bad)
    with pytest.raises(TypeError, match="read_c must be True or False"):
        gemm.min_bytes(2, 2, 2, 2, bad)  # positional too


def test_an_optional_flag_takes_none() -> None:
    from gpulesson import units

    assert units.format_usd(2.5, cents=None) == units.format_usd(2.5)
    with pytest.raises(TypeError, match="cents must be True or False"):
        units.format_usd(2.5, cents="no")


def test_a_result_that_is_not_finite_is_refused_naming_the_inputs() -> None:
    from gpulesson import optimisations

    with pytest.raises(ValueError, match=r"mixed_precision_savings\(n_params=1\.7e\+308\) "
                                         r"has no finite result \(\.fp32_bytes would be inf"):
        optimisations.mixed_precision_savings(n_params=1.7e308)


def test_an_arithmetic_error_inside_becomes_a_value_error_naming_the_inputs() -> None:
    def ratio(a: float, b: float) -> float:
        return a / b

    with pytest.raises(ValueError, match=r"ratio\(a=1, b=0\) cannot be computed.*"
                                         r"ZeroDivisionError") as err:
        v.guarded(ratio)(1, 0)
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_guarding_keeps_the_signature_the_source_and_passes_finite_results() -> None:
    import inspect

    def halves(*, total: float, exact: bool = False) -> tuple[float, dict[str, float]]:
        return 2.0, {"half": total / 2}

    checked = v.guarded(halves)
    assert v.guarded(checked) is checked
    assert checked(total=3.0) == (2.0, {"half": 1.5})
    assert list(inspect.signature(checked).parameters) == ["total", "exact"]
    assert 'return 2.0, {"half": total / 2}' in inspect.getsource(checked)
    with pytest.raises(ValueError, match=r"\[1\]\['half'\] would be inf"):
        checked(total=math.inf)


def test_the_formula_modules_are_found():
    for name in ("gemm", "roofline", "transformer", "memory", "flops", "inference",
                 "distributed", "cost", "optimisations", "hardware", "precision", "planning",
                 "units"):
        assert f"gpulesson.{name}" in FORMULA_MODULES


@pytest.mark.parametrize("name", FORMULA_MODULES)
def test_every_public_function_of_a_formula_module_is_guarded(name: str) -> None:
    """Found by introspection: a function added to a module's ``__all__``, or a new module,
    is covered (a function a package re-exports is guarded where it is defined)."""
    import importlib

    module = importlib.import_module(name)
    functions = [n for n in getattr(module, "__all__", ()) if callable(getattr(module, n))
                 and not isinstance(getattr(module, n), type)]
    unguarded = [n for n in functions if not getattr(getattr(module, n), "__gl_guarded__",
                                                     False)]
    assert unguarded == [], (f"{name}: end the module that defines {unguarded} with "
                             "v.guard_module(globals())")


def test_a_message_naming_no_argument_is_led_by_the_call():
    """``hours must be finite`` from deep inside ``on_prem_tco`` names none of its inputs."""
    def outer(*, years: float) -> float:
        raise ValueError("hours must be a finite non-negative number, got inf")

    with pytest.raises(ValueError, match=r"^outer\(years=1e\+308\): hours must be"):
        v.guarded(outer)(years=1e308)
    with pytest.raises(ValueError, match=r"^hours must be"):
        v.guarded(v.learner_messages(outer))(years=1e308)
    with pytest.raises(KeyError, match=r"dtype='mixed'\): H100 SXM has no dense 'mixed'"):
        hardware.flops_per_watt(hardware.gpu("H100 SXM"), "mixed")


def test_a_wrong_type_or_an_unreadable_path_is_a_clean_refusal():
    """A calculator reads only its arguments: an AttributeError inside means an argument
    of the wrong type (``cfg=None``), an OSError a path that cannot be read."""
    def layers_of(cfg: object) -> int:
        return cfg.layers  # type: ignore[attr-defined]

    def read(path: str) -> str:
        with open(path, encoding="utf-8") as handle:
            return handle.read()

    with pytest.raises(TypeError, match=r"^layers_of\(cfg=None\): an argument is not of the "
                                        r"type"):
        v.guarded(layers_of)(None)
    with pytest.raises(ValueError, match=r"^read\(path='/no/such/config.json'\): cannot read "
                                         r"what was given \(FileNotFoundError"):
        v.guarded(read)("/no/such/config.json")


def test_no_finite_result_carries_the_function_its_arguments_and_where():
    """The guard's error is a ValueError that a front end can reword (the calculators'
    engine names the form's field instead of the call)."""
    @v.guarded
    def spread(a, b):
        return {"ratio": a / b * 1e300}

    with pytest.raises(v.NoFiniteResultError) as caught:
        spread(1e300, b=1e-300)
    assert isinstance(caught.value, ValueError)
    assert caught.value.function == "spread"
    assert caught.value.arguments == {"a": 1e300, "b": 1e-300}
    assert caught.value.where == "['ratio']"
