"""The course's lessons, in order: the one list every other part reads.

The calculator registry files its entries under these slugs, the exercise catalogue loads
one bank per slug, the tests check ``_toc.yml`` against it, and the pages link lessons by
number through it. A lesson is added by one command, ``make lesson SLUG=<slug>
TITLE="<title>"`` (``scripts/new_lesson.py``): it appends the entry here and writes the
lesson's notebook, exercise notebook, exercise bank, calculator module and content test
from the skeleton lesson, with its lines in ``_toc.yml`` and the book's lists of lessons
(``docs/recipes.md``).

Standard library only (this module runs in the browser too).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LESSONS", "SLUGS", "LessonInfo", "lesson", "number", "title"]


@dataclass(frozen=True)
class LessonInfo:
    """One lesson: its place in the course, its file slug and its title."""

    number: int
    slug: str
    title: str

    @property
    def notebook(self) -> str:
        """The lesson notebook, relative to the repository root."""
        return f"notebooks/{self.slug}.ipynb"

    @property
    def exercises(self) -> str:
        """The lesson's exercise notebook, relative to the repository root."""
        return f"exercises/{self.slug}.ipynb"


#: Every lesson, in course order (lesson ``n`` is ``LESSONS[n - 1]``).
LESSONS: tuple[LessonInfo, ...] = tuple(
    LessonInfo(i, slug, title) for i, (slug, title) in enumerate((
        ("parallelism_at_the_core", "Parallelism at the Core"),
        ("roofline_and_tensor_cores", "Rooflines and Tensor Cores"),
        ("inside_the_gpu", "Inside the GPU: threads, warps, tiles and waves"),
        ("memory_what_fits", "Memory: What Fits"),
        ("flops_and_scaling", "FLOPs, MFU and Scaling Laws"),
        ("inference_and_kv_cache", "Inference: Prefill, Decode and the KV Cache"),
        ("distributed_math", "Distributed Math"),
        ("cost_economics", "The Cost of a Model"),
        ("optimisations", "Optimisations that Change the Math"),
        ("planning_dashboard", "Plan It: the GPU Planning Dashboard"),
    ), start=1)
)

#: The slugs alone, in course order.
SLUGS: tuple[str, ...] = tuple(info.slug for info in LESSONS)

_BY_SLUG = {info.slug: info for info in LESSONS}


def lesson(slug: str) -> LessonInfo:
    """The lesson with this slug; ``KeyError`` listing the slugs when there is none."""
    try:
        return _BY_SLUG[slug]
    except (KeyError, TypeError):
        raise KeyError(f"no lesson {slug!r}; the lessons are: {', '.join(SLUGS)}") from None


def number(slug: str) -> int:
    """The lesson's number in the course (1 for the first)."""
    return lesson(slug).number


def title(slug: str) -> str:
    """The lesson's title, as its page heading spells it."""
    return lesson(slug).title
