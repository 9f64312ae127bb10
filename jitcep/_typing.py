"""Allowed option values, declared once (Polars style: ``Literal`` aliases)."""

from __future__ import annotations

from typing import Literal, get_args

Order = Literal["position", "strict_ts", "nondecreasing_ts"]
SelectionStrategy = Literal[
    "skip_till_any_match", "skip_till_next_match", "partition_contiguity", "strict_contiguity"
]
OutputPolicy = Literal["all", "non_overlapping", "match_single", "match_next"]
KleeneMode = Literal["all", "maximal"]
KleeneWindow = Literal["match", "iteration"]
Shape = Literal["wide", "long"]
Engine = Literal["compiled", "reference", "auto"]
ExplainFormat = Literal["text", "dict"]
TimeUnit = Literal["ns", "us", "ms", "s", "min", "h", "d"]
# plan generation (Kolchinsky & Schuster 2018; ZStream section 5): jitcep/plan/planner/
Planner = Literal["trivial", "efreq", "greedy", "ii_random", "ii_greedy", "dp_left_deep", "zstream", "zstream_ord",
                  "dp_bushy", "auto"]
CostModel = Literal["intermediate", "order", "zstream", "latency", "skip_till_next_match", "strict_contiguity",
                    "partition_contiguity"]


def allowed(alias) -> tuple[str, ...]:
    """The values a Literal alias admits, for error messages and checks."""
    return get_args(alias)
