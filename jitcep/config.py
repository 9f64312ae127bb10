"""Caps, budgets and Numba flags: the one place that sets them."""

from __future__ import annotations

from pathlib import Path

from .cachedirs import numba_cache_trusted

# Numba: every kernel is compiled with these; nothing else sets them.  ``cache``: compiled code is
# kept on disk only in a directory nobody else can write (jitcep/cachedirs.py), as it is loaded by
# unpickling; decided when jitcep is imported, as the kernels are decorated then.
NUMBA_FLAGS = dict(cache=numba_cache_trusted(Path(__file__).parent / "kernels"), nogil=True, fastmath=False)

# Default caps.  Modes that can explode combinatorially stop with ExplosionError
# when they pass a cap; they never truncate silently.
DEFAULT_MAX_MATCHES = 10_000_000          # matches per run (all patterns)
DEFAULT_MAX_KLEENE = 1_000_000            # Kleene lists enumerated per binding of the other variables
DEFAULT_MAX_PARTIALS = 50_000_000         # intermediate partial matches in the reference evaluator
DEFAULT_MAX_MEMORY = 1 << 30              # bytes of intermediate results the compiled engine holds at once

# Pattern size (docs/language.md, Limits).  MAX_NESTING: the deepest tree a pattern may hold, and the
# deepest its text may nest parentheses; MAX_VARIABLES: the most variables it may bind.  Every pass over
# a pattern (parser, validation, printer, ==/hash of the AST, codegen, both engines) recurses once per
# level, and the plans and the reference evaluator's search once per variable.  At these limits the
# deepest pattern of each shape runs end to end in about 420 Python frames, and 50 Kleene variables
# with a 100-level predicate across them in about 570, leaving the rest of Python's default recursion
# limit (1000) to the caller (tests/test_bad_input.py runs them with 500 and 650 frames to spare).
MAX_NESTING = 100
MAX_VARIABLES = 50

# --- Tuning thresholds ------------------------------------------------------------------------------
# Speed or memory only, never results: each trades one cost for another, measured where its comment says.
# Read at call time (``config.NAME``), so a test or a benchmark can patch them; none is baked into compiled
# code (a kernel that needs one takes it as an argument: Numba's disk cache would keep a frozen global).

# Input coding (jitcep/events/coding.py).
STRING_VERIFY_CHUNK = 1 << 20  # rows of a long-string column hashed and checked per step: bounds the hash and
#                                comparison arrays to one chunk instead of a full-length copy
PY_SORT_MAX = 4096  # up to this many distinct strings Python's sort beats a Polars query
STRING_EXACT_MAX = 1 << 14  # a column with a string past 12 bytes and fewer rows is coded by the exact byte
#                            kernel in one pass: Polars' hash and check queries cost ~0.5 ms more there (CPU,
#                            more under load: each waits for Polars' pool), 2-3x the kernel (perf/notes/fixed_costs.md)
LONG_VIEW_CODES_MAX = 1 << 12  # past this many distinct strings (a power of two) a larger column with a string
#                                past 12 bytes is hashed by Polars and checked instead of coded from its views:
#                                at 10^6 rows the view table wins at 4,096 strings (18.5 against 27.2 ms CPU)
#                                and loses at 16,384 (46.7 against 31.1: its probes wait on memory)

# Sorting and coding kernels (jitcep/kernels/encode.py).
ARGSORT_RADIX_BITS = 11  # digit width of the stable LSD radix argsort: wider digits mean fewer passes over
#                          the n words but larger count tables (10^7 jittered timestamps: 396 -> 92 ms
#                          against sorting indices by key)
ARGSORT_SMALL = 2_048  # below this, numpy's sorts win over kernel call overhead
SORTED_CHECK_BLOCK = 4096  # elements per branch-free block of the sortedness check: an early exit at every
#                            element keeps the loop scalar (7 ms at 10^7); counting the descents of a block
#                            without a branch lets it vectorise (3 ms, memory bound), the exit between blocks
VIEW_RELABEL_AT = 1 << 16  # rows coded before the dictionary found so far is sorted (view_codes ``order``)
VIEW_RELABEL_MAX = 4096    # ... when it has at most this many strings (sorting more costs more than it saves)
VIEW_GATHER_CHUNK = 1 << 15  # views gathered per step of view_codes_at (512 KB: stays in cache); coding the
#                              views in place, at scattered rows, waited on memory 3x as long (10^6 of 10^7)

# Joins (jitcep/kernels/join.py).
JOIN_BY_LEFT = 8  # drive a SEQ join by its left input when that is this many times smaller than the right
THREAD_MIN_RECORDS = 1 << 18  # a join's input records, or candidate pairs, below which the work runs on one
#                               thread whatever ``threads=`` says (jitcep/threads.py).  At 2^14 a second thread
#                               made 10-80 ms runs up to 1.6x slower on an idle 2-core machine (seq_len12: 0.63x;
#                               perf/notes/threads.md, "Threads"): the split calls' hand-offs and fresh pages cost more
#                               than the halved work; at 2^18 no workload measured lost
JOIN_CHUNK_PAIRS = 1 << 16  # a SEQ join with predicates makes and tests about this many candidate pairs at a
#                            time (execute/join.py): they stay in cache, and only the survivors are kept
JOIN_WHERE_MIN_RIGHT = 1 << 12  # right records from which a SEQ join with predicates tests them in its loop
#                                (execute/join_where.py), records of its two inputs together for an AND join
#                                (execute/and_join_where.py): below, the join is cheap either way and the function
#                                generated for it would be compiled for nothing (~0.9 s the first time for
#                                googleIncrease's; perf/notes/opencep.md, "A SEQ join's predicates generated
#                                into its loop")
NEG_WHERE_MIN_RECORDS = 1 << 12  # records from which a negation with conditions tests them in the loop over its
#                                  candidates (execute/negation.py, codegen/negation_where.py): below, the
#                                  rounds of pairs are cheap and the function would be compiled for nothing
KERNEL_MIN_PAIRS = 1 << 14  # candidate pairs below which NumPy gathers a join's columns and keeps its pairs
#                             (pair_columns, keep_pairs): a kernel call's dispatch costs more than such a pass

# Allocation (jitcep/kernels/alloc.py; measured at 10^7 events).
ALLOC_ROUND_UP = 1 << 19  # bytes: from here on, a bigger array that gets huge pages faults in faster, so
#                           arrays from here up to NumPy's 4 MB huge-page threshold are cut from a 4 MB one
SCRATCH_KEEP = 64 << 20  # bytes: larger scratch is allocated per call, not kept (memory held between calls
#                          against ~0.6 ms of page faults per fresh MB on this kind of virtual machine)
POOL_MIN = 1 << 16  # bytes: arrays from here up come from the run's buffer pool (kernels/alloc.BufferPool)
POOL_KEEP = 256 << 20  # bytes all compiled queries' buffer pools keep between runs, in all (memory held against a
#                        page fault per 4 KB written; OpenCEP's files at 136,500 events keep 39-184 MB a query)

# The compiled engine (jitcep/execute/, jitcep/plan/rules/).
NEG_PAIR_BUDGET = 1 << 20  # (record, negated event) or (record, closure member) pairs tested per chunk:
#                            bounds memory, not work
TYPE_BATCH = 8  # types grouped per pass over the events (execute/tables.py): a pass costs about the same for
#                 one type or eight
# A String key is coded at the records of the leaves' types alone when those are at most this share of
# the events (estimated from every KEY_SAMPLE_STEP-th event; plan/rules/key_coding.py): a record costs
# more than a row of the full pass (its view is gathered), and all those types are grouped at once, also
# ones no leaf may get to read.  Measured (perf/bench_seq.py str data, 10^7 events): 3 / 12 of 32 types
# read end to end 83 -> 71 / 86-89 -> 80 ms, 24 of 32: 82-93 -> 107-117 ms had it applied.
KEY_AT_RECORDS_SHARE = 0.5
KEY_SAMPLE_STEP = 64
# A pattern with an OR is also planned in DNF, one subplan per alternative (plan/rules/disjuncts.py), when it
# has at most this many: their number is a product over the ORs a SEQ / AND holds, each is planned and run
# on its own, and each shares the items outside the ORs, so past a few the unit plan wins anyway.
DNF_MAX_ALTERNATIVES = 16
# A SEQ of this many single variables or more gets the semi-join reduction (plan/rules/semijoin_reduction.py):
# two linear passes over its leaves, cheaper than the first join over the same leaves.  Below it, the one
# join of a SEQ of two is itself the pass.  perf/notes/reduction.md "Semi-join reduction" has the numbers.
REDUCE_MIN_VARS = 3
# Without statistics, a table counted in pattern order keeps the reduction only where its partial matches
# short of the whole chain may number more than twice the leaves' events plus this many: its fixed cost
# (~0.1 ms of Python a run) in partial matches a join builds (~8 ns each); semijoin_reduction.left_out.
# perf/notes/opencep.md "The reduction without statistics" has the crossover.  Tests set it to -1 << 62
# to plan the reduction on any small table.
REDUCE_FIXED_MATCHES = 8192

# Planning budgets (jitcep/plan/planner/algorithms/_common.py).  The searches are bounded by counted work,
# never by the clock, so a plan never depends on the machine's load: a *step* is one join priced under
# Cost_tree's node term (a slower model's join is charged more steps, _common.STEP_FACTORS and
# black_box_steps), and a budget is a number of steps.  PLAN_STEP_NS converts them to a virtual clock:
# measured with `PYTHONPATH=. python perf/bench_planning.py --problems 10` (its last table: median time over
# steps charged, where the exact searches ran), 0.55-0.6 µs per step for DP-B and 1.0-1.3 µs for DP-LD and
# ZStream's program (their per-set bookkeeping) on a quiet machine, ~1.8 µs at a load average of 19;
# rounded to 1 µs, so a budget's steps take about as long in real time on a quiet machine.  That is the
# Python searches' time (`bench_planning.py --python`); under Cost_tree, Cost_ord and ZStream's node terms
# the searches run compiled (kernels/join_search.py) at a small fraction of it, with the same steps counted,
# so the same plans (perf/notes/planning_time.md "Planning time at 10^6 events").
PLAN_STEP_NS = 1000
PLAN_DEFAULT_STEPS = 2_000_000  # an exact algorithm or iterative improvement called without a budget (~2 s):
#                                 asked for the optimum, so generous, yet bounded so a 22-unit pattern cannot
#                                 stall compile for hours (Kolchinsky 6.3: DP-B took over 50 hours at 22 units)
# planner="auto": AUTO_STEPS (~50 ms) called without a budget; in a run, AUTO_STEPS_PER_EVENT per event of the
# table (10 ns: the cheapest runs cost ~12 ns per event, perf/notes/statistics.md "Planner statistics", so from 10^6
# events the search stays within about the run's own time), from AUTO_MIN_STEPS (~10 ms) up to AUTO_STEPS.
AUTO_STEPS = 50_000
AUTO_MIN_STEPS = 10_000
AUTO_STEPS_PER_EVENT = 0.01
