"""The type check of a run: predicates that mix kinds of values (semantics §4), with the table's kinds.

:func:`check_types` applies :mod:`jitcep.pattern.kinds` (the one checker
validate, codegen and the reference evaluator also call) to the kinds of the
table's columns, before any work; it raises AttributeTypeError naming the
predicate.  The builder runs it (``check=True``) and the engines run it on
hand-built tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MissingColumnError
from ..pattern import kinds
from .._memo import PerObjectAndKey
from .attributes import _as_patterns, attributes_read

_PASSED = PerObjectAndKey()  # per pattern: the kinds of its attributes it passed the check with -> True

if TYPE_CHECKING:  # annotations only: the table module imports this one
    from .table import EventTable


def attribute_kind(attr: str, table: "EventTable") -> str | None:
    """The kind (:mod:`jitcep.pattern.kinds`) of attribute ``attr`` in ``table``; None: none (§4).

    ``ts`` is a number in time-column units; a missing column has no kind
    here (MissingColumnError is raised where it is read).
    """
    try:
        col = table.column(attr)
    except MissingColumnError:
        return None
    if col.valid is not None and not col.valid.any():
        return None  # no value at all (a Null-dtype column): like NULL, it has no kind (semantics §4)
    return col.temporal or col.kind  # the column kinds are the checker's kind names


def check_types(patterns, table: "EventTable") -> None:
    """Raise AttributeTypeError where a predicate mixes kinds of values (semantics §4).

    The rules are :mod:`jitcep.pattern.kinds`' (the one checker every engine
    shares), given the kinds of the table's columns; the message names the
    predicate (a top-level conjunct of WHERE, or the RETURN item).  A pattern checked against a table
    is not checked again against it (a run checks as it builds the table, and the engine before its
    work): the table keeps the patterns it passed, by identity.
    """
    done = table.__dict__.get("_types_checked", ())
    for pattern in _as_patterns(patterns):
        if any(p is pattern for p in done):
            continue
        # the check is a function of the pattern and the kinds of the attributes it reads (``ts`` is
        # always a number): a pattern passes once per kinds, not once per table
        read = tuple(attribute_kind(a, table) for a in attributes_read(pattern))
        if _PASSED.get(pattern, read) is None:
            kinds.check_pattern(pattern, lambda var, attr: attribute_kind(attr, table))
            _PASSED.put(pattern, read, True)
        done = (*done, pattern)
        object.__setattr__(table, "_types_checked", done)
