"""Sphinx extension: no two sources share a citation.

The book cites by author and year ("Dubey and others, 2024"). Many of its sources are
published by one organisation in one year: ten of them would each read "NVIDIA, 2025", and
a reader could not tell from the text which of them a sentence leans on. As author-year
styles do, this extension gives each source of such a group a letter after its year,
"2025a", "2025b", ..., in the order the References list them (pybtex's sorting of the
"plain" style: the whole author list, the year, then the title as written), so that a
citation in the text and its entry under References read the same and no other entry
reads like them. A source alone with its authors and year keeps a bare year.

The letters are added to the parsed bibliography (``sphinxcontrib.bibtex`` parses
``book/references.bib`` when the builder starts); the ``.bib`` file keeps plain years. When
the letters move (a source added to a group), every page is read and written again.

Loaded by ``_config.yml`` (``sphinx: local_extensions``).
"""

from __future__ import annotations

import functools
import string
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pybtex.plugin import find_plugin
from sphinx.application import Sphinx

#: Where a year's letter would go: after its digits.
LETTERS = string.ascii_lowercase


def _names(entry: Any) -> tuple[str, ...]:
    """The names a citation shows before its year: the authors' (else the editors') last
    names, the first and "et al." for three or more; the title where there are none."""
    for role in ("author", "editor"):
        persons = entry.persons.get(role)
        if persons:
            last = tuple(" ".join(p.last_names) or str(p) for p in persons)
            return last if len(last) <= 2 else (last[0], "et al.")
    return (entry.fields.get("title", ""),)


@functools.cache
def _sorting() -> Any:
    """The sorting style of the bibliography (sphinxcontrib.bibtex's "plain": pybtex's
    author, year, title)."""
    return find_plugin("pybtex.style.sorting", "author_year_title")()


def _listed(entry: Any) -> tuple[str, str]:
    """Where ``entry`` stands among the sources of its authors and year in the References:
    its whole author list, then its title (the year is the group's)."""
    authors, _, title = _sorting().sorting_key(entry)
    return authors, title


def base_year(year: str) -> str:
    """``year`` without a letter this extension added (a build that reuses the parsed
    bibliography sees its own letters again)."""
    return year.rstrip(LETTERS) if year[:1].isdigit() else year


def disambiguate(entries: Mapping[str, Any]) -> dict[str, str]:
    """The year each entry of ``entries`` (key -> pybtex entry) is cited with: its own where
    no other entry has the same names and year, else with a letter by title order."""
    groups: dict[tuple[tuple[str, ...], str], list[str]] = defaultdict(list)
    for key, entry in entries.items():
        year = base_year(entry.fields.get("year", ""))
        groups[(_names(entry), year)].append(key)
    years = {}
    for (_, year), keys in groups.items():
        if len(keys) == 1 or not year:
            years.update((key, year) for key in keys)
            continue
        if len(keys) > len(LETTERS):
            raise ValueError(f"{len(keys)} sources share names and year {year}: "
                             f"at most {len(LETTERS)} can take a letter ({keys[:3]} ...)")
        ordered = sorted(keys, key=lambda k: (*_listed(entries[k]), k))
        years.update((key, f"{year}{LETTERS[i]}") for i, key in enumerate(ordered))
    return years


def _on_builder_inited(app: Sphinx) -> None:
    entries = app.env.get_domain("cite").bibdata.data.entries
    years = disambiguate(entries)
    for key, year in years.items():
        if year:
            entries[key].fields["year"] = year
    # a source added to a group moves the letters of the others: every page that cites
    # one of them must be written again, not only the pages whose own files changed
    app.env.gl_citation_years_moved = getattr(app.env, "gl_citation_years", None) != years
    app.env.gl_citation_years = years


def _on_env_get_outdated(app: Sphinx, env: Any, added: set[str], changed: set[str],
                         removed: set[str]) -> list[str]:
    return sorted(env.found_docs) if getattr(env, "gl_citation_years_moved", False) else []


def setup(app: Sphinx) -> dict[str, Any]:
    # after sphinxcontrib.bibtex has parsed the .bib files (its handler, priority 500)
    app.connect("builder-inited", _on_builder_inited, priority=600)
    app.connect("env-get-outdated", _on_env_get_outdated)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
