"""The registry's GPU menus, the dated prices a GPU brings, and the warnings a form shows
when a typed peak is a spec sheet's sparse or FP16-accumulate figure.

Figures: NVIDIA's H100 datasheet (1,979 TFLOPS BF16 "with sparsity"; 989.4 dense in the
H100 whitepaper), the Ada whitepaper (RTX 4090: 330.3 TFLOPS FP16 with FP16 accumulate,
165.2 with FP32), AWS's price list (p5.48xlarge $55.04 for 8 H100s, 2026-09-19) and
Oracle's OCI price list (B300 $15.00 per GPU-hour, 2026-09-19).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from gpulesson import calculators as C
from gpulesson import execution, hardware, prices
from gpulesson.calculators import shared

#: The execution-model calculators need an SM count: they list only the GPUs that have one.
WITH_SMS = [c.name for c in C.CALCULATORS.values()
            if "gpu" in {i.name for i in c.inputs}
            and ("sms" in {i.name for i in c.inputs} or c.input("gpu").kind == "choice")]
WITH_GPU = [c.name for c in C.CALCULATORS.values()
            if "gpu" in {i.name for i in c.inputs} and c.name not in WITH_SMS]
WITH_PEAK = [c.name for c in C.CALCULATORS.values()
             if {"gpu", "dtype", "peak_flops"} <= {i.name for i in c.inputs}]


@pytest.mark.parametrize("name", WITH_GPU)
def test_every_gpu_menu_lists_the_2026_gpus(name: str) -> None:
    """Every GPU of gpulesson.hardware, the 2024-26 parts included, in every GPU menu, and
    its help names the teaching baseline and the newest GPUs in the table."""
    menu = [c.value for c in C.get(name).input("gpu").choices]
    assert menu == [*hardware.GPUS, C.CUSTOM]
    for gpu in ("B300", "GB200 NVL72", "GB300 NVL72", "MI325X", "MI355X", "RTX 5090",
                "H100 NVL", "H200 NVL"):
        assert gpu in menu
    help_text = C.get(name).input("gpu").help
    assert "The H100 SXM is the course's teaching baseline" in help_text
    assert "the newest GPUs in the table are B300, GB300 NVL72, MI355X (as of 2026-12)" \
        in help_text


@pytest.mark.parametrize("name", WITH_SMS)
def test_execution_menus_list_the_gpus_with_an_sm_count(name: str) -> None:
    menu = [c.value for c in C.get(name).input("gpu").choices if c.value != C.CUSTOM]
    assert menu == list(execution.GPU_EXECUTION)


@pytest.mark.parametrize("name", WITH_SMS)
def test_execution_menus_help_names_what_it_covers_not_gpus_it_lacks(name: str) -> None:
    """Review r22 F10: the help under the occupancy and GEMM-waves menus said "the newest
    GPUs in the table are B300, GB300 NVL72, MI355X", none of which the menus offer (the
    course has no sourced SM count or per-SM limits for them). The help lists the menu's
    GPUs and says why the table's others are not in it."""
    spec = C.get(name).input("gpu")
    menu = [c.value for c in spec.choices if c.value != C.CUSTOM]
    assert "B300" not in menu and "the newest GPUs in the table are" not in spec.help
    assert f"The menu holds the GPUs whose SM count and per-SM limits have a source here: " \
        f"{', '.join(menu)}." in spec.help
    for gpu in ("B300", "GB300 NVL72", "MI355X"):
        assert gpu in spec.help.split("also holds", 1)[1]


def test_wide_menus_fill_the_new_gpus_figures() -> None:
    """The roofline calculator on a B300 takes the HGX B300's dense BF16 rate (36 PFLOPS
    sparse per 8 GPUs, 2.25 dense per GPU) and 62 TB/s per 8 GPUs; the GB300's dense FP4
    is 1,080 PFLOPS per 72 GPUs."""
    shown = C.resolve("gemm", gpu="B300", dtype="bf16")
    assert shown["peak_flops"] == 2250 and shown["bandwidth"] == 7.75
    assert C.resolve("inference", gpu="MI355X")["bandwidth"] == 8
    with pytest.raises(ValueError, match="^gpu: MI355X has no dense tf32 figure"):
        C.compute("gemm", gpu="MI355X", dtype="tf32")  # AMD: TF32 by software emulation


@pytest.mark.parametrize("name", WITH_PEAK)
def test_a_sparse_peak_typed_as_dense_is_named_not_refused(name: str) -> None:
    """The seed's "H100 SXM FP16 1,979 TFLOPS": the form still computes, and says it is the
    2:4-sparse figure, the dense one being 989.4 TFLOP/s (H100 datasheet and whitepaper)."""
    result = C.evaluate(name, {"gpu": "H100 SXM", "dtype": "bf16", "peak_flops": 1979})
    assert result["ok"]
    [warning] = result["warnings"]
    assert warning["input"] == "peak_flops"
    assert warning["message"].startswith("1,979 TFLOP/s is the H100 SXM's 2:4-sparse BF16")
    assert "989.4 TFLOP/s" in warning["message"]
    assert "warnings" not in C.evaluate(name, {"gpu": "H100 SXM"})  # the datasheet's dense


def test_editing_the_peak_keeps_the_warning_for_a_custom_gpu() -> None:
    """Typing 1,979 over the H100's figure turns the GPU custom (apply_changes); the
    warning then names every GPU whose sparse BF16 figure that is (H100 SXM, H200)."""
    shown = C.resolve("gemm")
    shown["peak_flops"] = 1979
    answer = C.apply_changes("gemm", shown, ["peak_flops"])
    assert answer["updates"] == {"gpu": C.CUSTOM}
    message = answer["result"]["warnings"][0]["message"]
    assert "H100 SXM's 2:4-sparse BF16" in message and "belongs to the H200" in message
    shown["peak_flops"] = 2250  # the B200's and B300's dense BF16: a peak, no warning
    assert "warnings" not in C.apply_changes("gemm", shown, ["peak_flops"])["result"]


def test_an_fp16_accumulate_rate_is_named() -> None:
    """Ada whitepaper, RTX 4090: 330.3 TFLOPS with FP16 accumulate is not the 165.2 that
    training (FP32 accumulate) gets."""
    result = C.evaluate("training_flops", {"gpu": "RTX 4090", "dtype": "fp16",
                                           "peak_flops": 330.3})
    message = result["warnings"][0]["message"]
    assert "FP16 accumulation" in message and "165.2 TFLOP/s" in message


def test_the_widget_shows_the_warning_in_its_alert_line() -> None:
    """The static rendering puts a warning where an error would go (role="alert")."""
    from gpulesson.widgets import static_html

    def alert(html: str) -> str:
        return html.split('role="alert"', 1)[1].split("</p>", 1)[0]

    html = static_html("gemm", {"gpu": "H100 SXM", "dtype": "bf16", "peak_flops": 1979})
    assert "2:4-sparse BF16 figure" in alert(html)
    assert alert(static_html("gemm")).endswith(">")  # empty for the datasheet's figure


# --- prices that follow the GPU --------------------------------------------------------


@contextlib.contextmanager
def _rent_calculator() -> Iterator[str]:
    """A calculator declared with a priced GPU preset, for the length of a ``with``."""
    calc = C.Calculator(
        name="_rent", title="Rent", description="GPU-hours at the GPU's price.",
        lesson="cost_economics",
        inputs=(*shared.gpu_inputs("H100 SXM", memory=True, price=True),
                C.Number("hours", "GPU-hours", default=1000, range=(0, 1e9)),
                shared.gpu_hour_price("")),
        outputs=(C.Output("cost", "Cost", "usd"),),
        function=lambda **kw: {"cost": kw["hours"] * kw["usd_per_gpu_hour"]},
    )
    C.CALCULATORS._add(calc)
    try:
        yield calc.name
    finally:
        C.CALCULATORS._remove(calc.name)


def test_a_priced_gpu_preset_brings_its_dated_default_quote() -> None:
    """AWS p5.48xlarge after the June 2025 cut: $55.04 / 8 = $6.88 per H100-hour
    (2026-09-19); OCI lists the B300 at $15.00. The price follows the GPU chosen."""
    with _rent_calculator() as name:
        assert C.resolve(name)["usd_per_gpu_hour"] == 6.88
        assert C.compute(name)["cost"] == pytest.approx(6880)
        assert C.resolve(name, gpu="B300")["usd_per_gpu_hour"] == 15
        answer = C.apply_changes(name, {**C.resolve(name), "gpu": "B300"}, ["gpu"])
        assert answer["updates"]["usd_per_gpu_hour"] == 15
        assert prices.default_price("B300").provider == "Oracle OCI"


def test_a_typed_price_keeps_the_gpu_with_or_without_a_quote() -> None:
    """The price table quotes no V100: choosing it leaves the price as typed. A price typed
    over a GPU's quote keeps the GPU too: a quote is not a property of the GPU (it turned
    the H100 custom, and the planners then lost its links, 2026-12-07)."""
    with _rent_calculator() as name:
        shown = C.resolve(name, gpu="V100 SXM")
        assert shown["usd_per_gpu_hour"] == 6.88  # the input's declared default
        shown["usd_per_gpu_hour"] = 2.0
        answer = C.apply_changes(name, shown, ["usd_per_gpu_hour"])
        assert "gpu" not in answer["updates"] and answer["result"]["ok"]
        shown = C.resolve(name)
        shown["usd_per_gpu_hour"] = 2.0
        answer = C.apply_changes(name, shown, ["usd_per_gpu_hour"])
        assert answer["updates"] == {} and answer["result"]["values"]["cost"] == 2000
        shown["gpu_memory"] = 96  # a figure of the GPU itself still makes it custom
        assert C.apply_changes(name, shown, ["gpu_memory"])["updates"] == {"gpu": C.CUSTOM}


def test_price_help_quotes_the_2026_h100_price_from_the_table() -> None:
    """The price input defaults to the dated 2026 quote of the table and keeps the July 2023
    launch price as history."""
    price = shared.gpu_hour_price("")
    assert price.default == prices.default_price("H100 SXM").usd_per_gpu_hour == 6.88
    assert "$6.88 per GPU-hour, AWS p5.48xlarge" in price.help
    assert "read 2026-09-19 ($12.29 at its launch in July 2023)" in price.help
