"""The book's MyST markup as plain Markdown, for notebooks read outside the book.

An exercise notebook is written for Jupyter Book: a target label above its title
(``(memory_what_fits_exercises)=``), roles such as ``{ref}`optimisations``` or
``{cite:p}`key```, and links to the lesson notebooks beside it
(``[Memory: What Fits](../notebooks/memory_what_fits.ipynb)``). Plain Jupyter shows the
first two as raw text, and a student edition handed out as a folder of its own has no
``../notebooks/`` for the links to reach. :func:`plain_markdown` turns each into text a
reader can use: labels go, a role becomes its text (a lesson's label becomes "lesson N of
the course"), and a link to another file of the course becomes its text (a lesson's
title, emphasised and followed by its number). Links with a scheme (``https:``), links
to an anchor of the same notebook, images and fenced code blocks stay as they are.

Standard library only (and :mod:`gpulesson.course` for the lesson numbers).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from gpulesson import course

__all__ = ["plain_markdown"]

#: A MyST target label on a line of its own: ``(name)=``.
_LABEL = re.compile(r"^[ \t]*\([\w.:-]+\)=[ \t]*(?:\n|$)", re.M)
#: A MyST role: ``{name}`body```.
_ROLE = re.compile(r"\{(?P<name>[A-Za-z][\w:+-]*)\}`(?P<body>[^`]+)`")
#: Explicit text of a cross-reference role: ``text <target>``.
_TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: An inline link, not an image: ``[text](target)``.
_LINK = re.compile(r"(?<!!)\[(?P<text>[^\[\]]+)\]\((?P<target>[^()\s]+)\)")
#: A fenced code block, kept as written.
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
#: Roles whose body cites bibliography keys.
_CITES = {"cite", "cite:p", "cite:ps", "cite:t", "cite:ts", "cite:alp", "cite:author",
          "cite:year", "cite:yearpar", "cite:label", "cite:empty"}


def _humane(target: str) -> str:
    """What a bare label or document name reads as: a lesson's number, else its words."""
    name = PurePosixPath(target.split("#", 1)[0]).stem or target
    if name in course.SLUGS:
        return f"lesson {course.number(name)} of the course"
    return re.sub(r"[_-]+", " ", name).strip() or target


def _role(match: re.Match[str]) -> str:
    name, body = match["name"], match["body"].strip()
    if name in _CITES:
        keys = ", ".join(k.strip() for k in body.split(",") if k.strip())
        return f"({keys})" if name in ("cite:p", "cite:ps", "cite:yearpar") else keys
    if name == "math":
        return f"${body}$"
    titled = _TITLED.match(body)
    if titled and titled["text"]:
        return titled["text"]
    if name in ("ref", "doc", "numref", "any", "download"):
        return _humane(titled["target"] if titled else body)
    return body  # term, abbr, sub, sup, kbd, ...: the words themselves


def _link(match: re.Match[str]) -> str:
    text, target = match["text"], match["target"]
    if target.startswith("#") or re.match(r"[A-Za-z][\w+.-]*:", target):
        return match[0]  # an anchor in this notebook, or an address with a scheme
    path = PurePosixPath(target.split("#", 1)[0])
    if path.stem in course.SLUGS and path.suffix in (".ipynb", ".md", ""):
        shown = text if text.startswith(("*", "_")) else f"*{text}*"
        return f"{shown} ({_humane(path.stem)})"
    return text


def _plain(text: str) -> str:
    text = _LABEL.sub("", text)
    text = _ROLE.sub(_role, text)
    return _LINK.sub(_link, text)


def plain_markdown(text: str) -> str:
    """``text`` (a Markdown cell of the book) without MyST labels and roles, and without
    links to files of the course; fenced code blocks unchanged."""
    out, at = [], 0
    for fence in _FENCE.finditer(text):
        out += [_plain(text[at:fence.start()]), fence[0]]
        at = fence.end()
    out.append(_plain(text[at:]))
    return "".join(out)
