"""Run jitcep queries on Spark DataFrames: ``spark_adapter.detect(sdf, query, ...)``.

The adapter translates, it does not re-implement semantics (DESIGN.md
section 4): every Spark task runs the same event-table builder, engine and
output builder as :meth:`jitcep.Query.run` on its rows.  See docs/spark.md.

This module stays free of heavy imports: Spark's Python workers import it
before :mod:`spark_adapter._entry` sets their thread counts and caches.
"""

from __future__ import annotations

__all__ = ["detect", "SplitWarning"]


class SplitWarning(UserWarning):
    """The query runs in fewer Spark tasks than the data allows, because splitting would change results."""


def detect(sdf, query, **kwargs):
    """Every match of ``query`` in the Spark DataFrame ``sdf``; see :func:`spark_adapter.driver.detect`."""
    from .driver import detect as _detect

    return _detect(sdf, query, **kwargs)
