"""jitcep's performance suite: workloads, baselines, a runner, a regression gate and plots.

Run it as ``python -m perf run|compare|plot|list`` (see perf/README.md).  The
workloads follow the experimental setups of ZStream (section 6) and SASE
(section 5.1) plus real tables; every baseline's answer is checked against
jitcep's before its time is reported.
"""

from __future__ import annotations

# Threads given to jitcep (``Query.run(threads=)``), DuckDB and Polars (set by ``python -m perf --threads``
# before Polars is imported): every engine gets the same count, so each ratio compares like with like.
THREADS = 1

SCHEMA_VERSION = 1
