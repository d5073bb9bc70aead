"""Sphinx extension: the ``machine-status`` directive of the status page (``book/status.md``).

It writes, at build time, which machine built the book and executed its notebooks: the
device the lessons ran on (from :func:`gpulesson.device.get_device`, the same call every
lesson makes, in the same environment as the notebook kernel), the CPU, the operating
system, and the versions of Python and of the libraries that produced the outputs. The
page is re-read on every build, so the date is always the build's date.

Loaded by ``_config.yml`` (``sphinx: local_extensions: gl_status: scripts/``).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from importlib import metadata
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

#: Distributions whose versions the page reports (missing ones are reported as such).
PACKAGES = (
    "numpy",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "matplotlib",
    "ipywidgets",
    "ipykernel",
    "jupyter-book",
    "myst-nb",
    "sphinx",
    "gpulesson",
)


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _os_name() -> str:
    pretty = None
    try:
        with open("/etc/os-release", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("PRETTY_NAME="):
                    pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()}"
    return f"{pretty} ({kernel})" if pretty else kernel


def _cuda_versions(xp: Any) -> str | None:
    """CUDA runtime and driver versions when ``xp`` is cupy, else ``None``."""
    runtime = getattr(getattr(xp, "cuda", None), "runtime", None)
    if runtime is None:
        return None

    def fmt(v: int) -> str:
        return f"{v // 1000}.{(v % 1000) // 10}"

    return f"runtime {fmt(runtime.runtimeGetVersion())}, driver {fmt(runtime.driverGetVersion())}"


def machine_rows() -> list[tuple[str, str]]:
    """The (label, value) rows of the status table, measured now in this process.

    Raises whatever :func:`gpulesson.device.get_device` raises (for example
    ``GPULESSON_DEVICE=gpu`` on a machine without a usable GPU): the notebooks would
    fail the same way, so the build should too.
    """
    from gpulesson.device import get_device
    from gpulesson.units import format_bytes

    device = get_device()
    rows = [
        ("Built", _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")),
        ("Device the lessons ran on", f"{device.kind.upper()}: {device.name}"),
        ("Why this device", device.why),
        ("Array library", device.library),
    ]
    if device.memory_bytes:
        label = "GPU memory" if device.is_gpu else "Memory (RAM)"
        rows.append(
            (
                label,
                f"{format_bytes(device.memory_bytes)} "
                f"({format_bytes(device.memory_bytes, binary=True)})",
            )
        )
    cuda = _cuda_versions(device.xp) if device.is_gpu else None
    if cuda:
        rows.append(("CUDA", cuda))
    rows += [
        ("GPULESSON_DEVICE", os.environ.get("GPULESSON_DEVICE") or "not set (auto)"),
        ("Operating system", _os_name()),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
    ]
    for dist in PACKAGES:
        version = _version(dist)
        if version is not None or not dist.startswith("cupy"):
            rows.append((dist, version or "not installed"))
    if not any(_version(d) for d in PACKAGES if d.startswith("cupy")):
        rows.append(("cupy", "not installed (CPU-only environment)"))
    return rows


def _table(rows: list[tuple[str, str]]) -> nodes.table:
    table = nodes.table(classes=["gl-status-table"])
    group = nodes.tgroup(cols=2)
    table += group
    group += nodes.colspec(colwidth=30)
    group += nodes.colspec(colwidth=70)
    head = nodes.thead()
    group += head
    header = nodes.row()
    for title in ("What", "Value"):
        header += nodes.entry("", nodes.paragraph(text=title))
    head += header
    body = nodes.tbody()
    group += body
    for label, value in rows:
        row = nodes.row()
        row += nodes.entry("", nodes.paragraph(text=label))
        row += nodes.entry("", nodes.paragraph(text=value))
        body += row
    return table


class MachineStatus(SphinxDirective):
    """Render the table of :func:`machine_rows`; the page is rebuilt every time."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        self.env.note_reread()  # always rebuilt, so the date and versions are current
        return [_table(machine_rows())]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("machine-status", MachineStatus)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
