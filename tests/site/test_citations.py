"""The citations extension (``scripts/gl_citations.py``) on a bibliography of its own: no
book build. That the built pages cite no two sources alike is
``test_site_truth.test_no_two_sources_are_cited_alike``."""

from __future__ import annotations

from pybtex.database import Entry, Person

from .building import script_module

EXT = script_module("gl_citations")


def _entry(author: str, year: str, title: str) -> Entry:
    return Entry("misc", fields={"year": year, "title": title},
                 persons={"author": [Person(author)]})


def test_sources_sharing_authors_and_year_take_letters_in_the_references_order() -> None:
    entries = {
        "datasheet": _entry("{NVIDIA}", "2025", "{NVIDIA} {Blackwell} datasheet"),
        "tuning": _entry("{NVIDIA}", "2025", "Tuning guide for {Blackwell}"),
        "summary": _entry("{NVIDIA}", "2025", "a performance summary"),
        "older": _entry("{NVIDIA}", "2024", "{NVIDIA} {H200} datasheet"),
        "paper": _entry("Dao, Tri", "2025", "A paper"),
    }
    years = EXT.disambiguate(entries)
    # the References' order (pybtex's "plain" sorting): the titles as written, so capitals
    # before small letters and a brace after both
    assert years == {"tuning": "2025a", "summary": "2025b", "datasheet": "2025c",
                     "older": "2024", "paper": "2025"}
    # a build that reuses the parsed bibliography sees its own letters: the same years again
    for key, year in years.items():
        entries[key].fields["year"] = year
    assert EXT.disambiguate(entries) == years


def test_three_or_more_authors_group_by_the_first_and_order_by_them_all() -> None:
    def team(*names: str) -> Entry:
        return Entry("misc", fields={"year": "2024", "title": names[-1]},
                     persons={"author": [Person(n) for n in names]})

    entries = {"one": team("Dubey, A.", "Jauhri, A.", "Pandey, A."),
               "two": team("Dubey, A.", "Roy, B.", "Smith, C."),
               "pair": team("Dubey, A.", "Jauhri, A.")}
    assert EXT.disambiguate(entries) == {"one": "2024a", "two": "2024b", "pair": "2024"}
