"""What the patterns read: attribute names, the equivalence key, the pseudo-attributes ``ts`` and ``type``.

An event table keeps only the attributes the patterns read (WHERE, RETURN,
equivalence tests), the ones asked for, and the partition key
(:func:`_attributes`); :func:`check_type_column` refuses typed patterns
without a type column.
"""

from __future__ import annotations

from typing import Iterable

from .._memo import PerObject
from ..errors import MissingTypeColumnError
from ..pattern import expr as E
from ..pattern.ast import Pattern, event_vars

# Pseudo-attributes every event has: its timestamp, and its type name when no column is called "type".
_TS_ATTR = "ts"
_TYPE_ATTR = "type"


def _as_patterns(patterns) -> tuple[Pattern, ...]:
    if patterns is None:
        return ()
    if isinstance(patterns, Pattern):
        return (patterns,)
    out = tuple(patterns)
    for p in out:
        if not isinstance(p, Pattern):
            raise TypeError(f"expected Pattern objects, got {type(p).__name__}")
    return out


def _pattern_exprs(pattern: Pattern) -> Iterable[E.Expr]:
    if pattern.where is not None:
        yield pattern.where
    for item in pattern.returns:
        yield item.expr


def attributes_read(patterns) -> tuple[str, ...]:
    """Attribute names the patterns read in WHERE and RETURN, in first-use order.

    ``a.ts`` is the timestamp and ``*`` (a whole variable in RETURN) adds
    nothing, so neither is listed.  ``type`` is listed; the caller decides
    whether it is a column or the type pseudo-attribute.
    """
    pats = _as_patterns(patterns)
    if len(pats) == 1:
        return _read_by(pats[0])
    return tuple(dict.fromkeys(a for pattern in pats for a in _read_by(pattern)))


def _attributes_of(pattern: Pattern) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for root in _pattern_exprs(pattern):
        for node in E.walk(root):
            if isinstance(node, (E.Attr, E.Agg, E.Equiv)) and node.attr not in (None, _TS_ATTR, "*"):
                seen.setdefault(node.attr)
    return tuple(seen)


_read_by = PerObject(_attributes_of)  # asked three times a run (reading, the table): each walk went over the WHERE


def equivalence_key(patterns) -> tuple[str, ...] | None:
    """The equivalence key every pattern shares: attributes of valueless ``[attr]`` tests.

    With several patterns the key is the attributes common to all of them (in
    the first pattern's order): partitioning by a subset of a pattern's key
    never separates two events that pattern could join (SASE section 4.2.1 PAIS,
    ZStream section 5.2.2).  None when some pattern has no such test.
    """
    keys = []
    for pattern in _as_patterns(patterns):
        attrs = _keyed_by(pattern)
        if not attrs:
            return None
        keys.append(attrs)
    if not keys:
        return None
    common = [a for a in keys[0] if all(a in k for k in keys[1:])]
    return tuple(common) or None


def _key_of(pattern: Pattern) -> list[str]:
    return list(dict.fromkeys(c.attr for c in E.conjuncts(pattern.where) if isinstance(c, E.Equiv) and c.value is None))


_keyed_by = PerObject(_key_of)  # asked twice a run (reading, the table), each a walk of the WHERE (read only)


def _partition_key(pats, partition_by) -> tuple[str, ...] | None:
    if isinstance(partition_by, str):
        partition_by = (partition_by,)
    return tuple(partition_by) if partition_by is not None else equivalence_key(pats)


def _attributes(pats, available, key, columns) -> list[str]:
    """The attribute columns an event table keeps: read by the patterns, asked for, the partition key."""
    present = set(available)
    attrs = list(dict.fromkeys([*attributes_read(pats), *columns, *(key or ())]))
    # ``type`` is a pseudo-attribute (the event's type name) unless the input has such a column.
    return [a for a in attrs if a != _TS_ATTR and not (a == _TYPE_ATTR and a not in present)]


def check_type_column(patterns) -> None:
    """Raise MissingTypeColumnError when a pattern names event types: the caller gave no type column.

    Without one every event has the null type, which only untyped variables
    (``* v``) accept (semantics §3), so a typed variable could never match:
    almost surely a forgotten ``type=`` argument, and an error says so.
    """
    types = list(dict.fromkeys(t for p in _as_patterns(patterns) for v in event_vars(p.body)
                               for t in (v.types or ())))
    if types:
        shown = ", ".join(map(repr, types[:10])) + (" ..." if len(types) > 10 else "")
        raise MissingTypeColumnError(
            f"the pattern names event types ({shown}) but no type column was given; pass the column "
            f"holding each event's type: run(..., type=\"kind\") in Python, --type kind on the command "
            f"line (without a type column only untyped variables, * v, can match)")
