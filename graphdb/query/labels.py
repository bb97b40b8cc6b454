"""Label expressions of patterns: ``(a:Person|City)``, ``[k:knows]``, ``(b:!Post)``, ``(x:%)``.

SQL/PGQ's (and GQL's) label expressions: ``|`` (or), ``&`` (and), ``!`` (not), ``%`` (any
label), parentheses. Every vertex and edge of a property graph comes from one element table,
which has one or more labels (``Student LABEL Person LABEL Learner``), so an expression stands
for a set of element tables: those whose labels it matches (``Person & Learner`` needs both).
"""

from __future__ import annotations

import re

from ..errors import BinderError, NotSupportedError
from .tables import suggest

__all__ = ["label_set", "row_label_choice"]

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\"[^\"]+\"|[|&!%()])")


def label_set(text: str, elements: list[tuple[str, tuple[str, ...]]], what: str
              ) -> tuple[str, ...]:
    """The element tables of ``elements`` ((name, labels) each, in that order) whose labels the
    expression ``text`` matches; ``what`` says whose labels they are, for errors ("vertex
    labels of graph 'social'")."""
    labels = list(dict.fromkeys(label for _, names in elements for label in names))
    every = {name for name, _ in elements}
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            if text[at:].strip():
                raise BinderError(f"cannot read the label expression '{text}' at '{text[at:]}'")
            break
        tokens.append(match.group(1))
        at = match.end()
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        token = peek()
        if token is None:
            raise BinderError(f"the label expression '{text}' ends too early")
        position += 1
        return token

    def union() -> set[str]:
        found = intersection()
        while peek() == "|":
            take()
            found |= intersection()
        return found

    def intersection() -> set[str]:
        found = factor()
        while peek() == "&":
            take()
            found &= factor()
        return found

    def factor() -> set[str]:
        token = take()
        if token == "!":
            return every - factor()
        if token == "%":
            return set(every)
        if token == "(":
            found = union()
            if take() != ")":
                raise BinderError(f"the label expression '{text}' has an unclosed '('")
            return found
        if token in ("|", "&", ")"):
            raise BinderError(f"the label expression '{text}' has '{token}' where a label "
                              "should be")
        name = token.strip('"')
        matched = {element for element, names in elements
                   if name.lower() in (n.lower() for n in names)}
        if not matched:
            raise BinderError(f"no label '{name}' among the {what}" + suggest(name, labels,
                                                                                 "labels"))
        return matched

    found = union()
    if peek() is not None:
        raise BinderError(f"the label expression '{text}' goes on after its end: '{peek()}'")
    return tuple(name for name, _ in elements if name in found)


def row_label_choice(text: str, elements: list[tuple[str, tuple[str, ...], tuple[str, ...]]]
                     ) -> list[tuple[str, int | None]] | None:
    """The rows a label expression naming a row label matches: DuckPGQ's ``LABEL Organisation
    IN kind (Company, University)`` gives label i to the rows whose ``kind`` has bit i set.
    ``elements`` are (name, labels, row labels) each; the result is (element, bit) pairs, bit
    None for every row of the element, or None when the expression names no row label. A
    label, or labels joined by ``|``, may name row labels."""
    names = [t.strip().strip('"') for t in text.split("|")]
    rowwise = {r.lower() for _, _, rows in elements for r in rows}
    if not any(_TOKEN.fullmatch(n) and n.lower() in rowwise for n in names):
        if not any(word.lower() in rowwise for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*",
                                                                  text)):
            return None
    if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names):
        raise NotSupportedError(f"the label expression '{text}' names a label that rows get "
                                "from a column's value (LABEL ... IN column (...)); only such "
                                "labels joined by '|' are supported")
    found: list[tuple[str, int | None]] = []
    for name in names:
        low = name.lower()
        for element, labels, rows in elements:
            if low in (label.lower() for label in labels):
                found.append((element, None))
            elif low in (r.lower() for r in rows):
                found.append((element, 1 << [r.lower() for r in rows].index(low)))
    return found
