"""A closure's upper bound far past any list (``B{1,1000000000000} b[]``): the same matches as a bound just past
the longest list, on both engines and every ``kleene`` mode, in work that grows with the members, not the bound.

Semantics section 6.2: ``{lo, hi}`` bounds a list's length; a bound past every list changes nothing.  A
loop over every length up to the bound (the reference's maximal runs, the compiled engine's
``closure_runs``, the planner's runs of a maximal closure) would never end, so the run happens in a child
process with a time limit: a hang fails the test instead of stopping the suite (the compiled kernels
release neither the GIL nor a signal until they return).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROBE = r"""
import json, sys
import polars as pl
import jitcep
types = ["A", "B", "B", "C"] * int(sys.argv[1])
df = pl.DataFrame({"type": types, "ts": list(range(len(types)))})
out = {}
for bounds in sys.argv[2:]:
    for kleene in ("maximal", "all"):
        q = jitcep.compile(f"PATTERN SEQ(A a, B{bounds} b[], C c) WITHIN 4 EVENTS", kleene=kleene, planner="dp_bushy")
        out[f"{bounds} {kleene}"] = [q.run(df, type="type", engine=engine).height for engine in ("compiled", "reference")]
print(json.dumps(out))
"""

N = 40
# (A 4i, B 4i + 1, B 4i + 2, C 4i + 3) N times, WITHIN 4 EVENTS: N records (a, c), each with the two B's between
# them as members; lists of 1 or 2 of them: [1], [2], [1, 2] (the same runs and subsets)
PER_RECORD = {"{1,1000000000000}": 3, "{2,1000000000000}": 1, "{1000000000000,}": 0}


def test_a_bound_past_every_list_finds_the_matches_written_by_hand():
    # one child for every case: starting one costs seconds (imports, the kernels' cache)
    out = subprocess.run([sys.executable, "-c", _PROBE, str(N), *PER_RECORD], capture_output=True, text=True,
                         timeout=600, env={**os.environ})
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {f"{b} {mode}": [N * k, N * k] for b, k in PER_RECORD.items() for mode in ("maximal", "all")}
