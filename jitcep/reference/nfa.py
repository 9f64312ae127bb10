"""NFA^b runs for the selection strategies other than skip-till-any-match (docs/semantics.md §8).

SASE+ section 3.1 defines a pattern's matches as the accepting runs of its
NFA^b automaton; section 3.2 gives the edge formulas (steps 2–5).  This
module simulates every run literally over the stream in position order:
no sharing, no merging beyond the identity of runs, which SASE+ defines as
(selected events, their naming, current state).
"""

from __future__ import annotations

from ..errors import UnsupportedPatternError
from ..pattern.ast import EventVar, Kleene, Neg, Seq
from ..pattern.expr import Agg, Attr, walk as walk_expr
from .search import Matcher

SINGLE, KLEENE = 0, 1


class NfaRuns(Matcher):
    """All runs of the pattern's NFA^b under ``options.strategy`` (§8)."""

    def __init__(self, info, table, options, budget, emit):
        super().__init__(info, table, options, budget)
        self.emit = emit
        self.strategy = options.strategy
        body = info.pattern.body  # linear (pattern.combinations checked it): one state per positive item
        items = body.items if isinstance(body, Seq) else (body,)
        self.states: list[tuple[int, str, object]] = []
        for it in items:
            if isinstance(it, Neg):
                continue
            if isinstance(it, EventVar):
                self.states.append((SINGLE, it.name, None))
            elif isinstance(it, Kleene) and isinstance(it.body, EventVar):
                self.states.append((KLEENE, it.body.name, info.kleene_of_node[id(it)]))
            else:
                raise UnsupportedPatternError(f"not a linear pattern item: {type(it).__name__} (semantics §8)")
        self.final = len(self.states)
        state_of = {var: s for s, (_, var, _) in enumerate(self.states)}
        # SASE+ step 2: each conjunct goes on the edge of its last identifier.
        self.take_conjs: list[list] = [[] for _ in self.states]
        self.proceed_conjs: list[list] = [[] for _ in self.states]
        for c in info.conjs:
            slot = (-1, 0)
            for n in walk_expr(c.expr):
                if isinstance(n, Agg):
                    slot = max(slot, (state_of[n.var], 1))
                elif isinstance(n, Attr):
                    whole = n.var in info.kid and n.index not in (None, "i", "i-1", 1)
                    slot = max(slot, (state_of[n.var], 1 if whole else 0))
            (self.proceed_conjs if slot[1] else self.take_conjs)[slot[0]].append(c)
        self.cand_sets = {var: set(self.cand[var].tolist()) for _, var, _ in self.states}

    # --- a run's buffer as the current binding ---------------------------------

    def load(self, mem) -> None:
        """Make ``mem`` (one tuple of positions per state) the current match."""
        self.used.clear()
        self.trail.clear()
        self.box = None
        self.key = None
        for s, (kind, var, _) in enumerate(self.states):
            x = mem[s]
            if kind == SINGLE:
                self.b[var] = x[0] if x else None
            else:
                self.b[var] = list(x)
        for p in sorted(p for x in mem for p in x):
            self.push(p)

    def consume(self, s: int, mem, p: int):
        """The begin/take edge at state s for event p: the new buffer, or None (§8)."""
        kind, var, K = self.states[s]
        if p not in self.cand_sets[var]:
            return None
        if kind == KLEENE and K.max is not None and len(mem[s]) >= K.max:
            return None
        events = [q for x in mem for q in x]
        ts = self.table.ts
        if events:
            first, last = min(events), max(events)
            if self.info.span is not None and int(ts[p]) - int(ts[first]) > self.info.span:
                return None
            if self.info.count is not None and p - first >= self.info.count:
                return None
            if self.order == "strict_ts" and not int(ts[p]) > int(ts[last]):
                return None
            if self.info.equiv_attrs and self.event_key(p) != self.event_key(first):
                return None
        new = mem[:s] + (mem[s] + (p,),) + mem[s + 1:]
        self.load(new)
        if not all(self.holds(c) for c in self.take_conjs[s]):
            return None
        return new

    def proceed_ok(self, s: int, mem) -> bool:
        kind, _, K = self.states[s]
        if kind != KLEENE or len(mem[s]) < K.min:
            return False
        if not self.proceed_conjs[s]:
            return True
        self.load(mem)
        return all(self.holds(c) for c in self.proceed_conjs[s])

    def closure(self, s: int, mem, p: int | None = None) -> list[int]:
        """States reachable from s through proceed (epsilon) edges, s included; may include F.

        With an event p, a proceed edge into a non-final state is constrained
        as in SASE+ step 6: it is taken only if p can be selected further on
        (peek), or opportunistically when neither take nor ignore is possible
        at the Kleene state.  Without p (right after a take) only F matters.
        """
        out = [s]
        while s < self.final and self.proceed_ok(s, mem):
            if p is not None and s + 1 < self.final and not self._can_select(s + 1, mem, p) \
                    and (self.consume(s, mem, p) is not None or self.ignore_ok(s, mem, p)):
                break
            s += 1
            out.append(s)
        return out

    def _can_select(self, s: int, mem, p: int) -> bool:
        """Can p be selected at state s or after proceeding over later states (peek, step 6)?"""
        while True:
            if s == self.final:
                return False
            if self.consume(s, mem, p) is not None:
                return True
            if not self.proceed_ok(s, mem):
                return False
            s += 1

    def ignore_ok(self, s: int, mem, p: int) -> bool:
        """The ignore edge at state s (SASE+ step 3); a run that has selected nothing cannot ignore."""
        if not any(mem):
            return False
        if self.strategy == "skip_till_any_match":
            return True
        if self.strategy == "strict_contiguity":
            return False
        if self.strategy == "partition_contiguity":
            first = min(q for x in mem for q in x)
            return self.event_key(p) != self.event_key(first)
        return self.consume(s, mem, p) is None  # skip_till_next_match: not begin/take

    def expired(self, mem, p: int) -> bool:
        first = min(q for x in mem for q in x)
        if self.info.span is not None and int(self.table.ts[p]) - int(self.table.ts[first]) > self.info.span:
            return True
        return self.info.count is not None and p - first >= self.info.count

    # --- the runs ------------------------------------------------------------

    def run(self) -> None:
        empty = tuple(() for _ in self.states)
        runs: set = set()
        for p in range(self.table.n):
            new: set = set()
            for j, mem in runs:
                if self.expired(mem, p):
                    continue  # cannot select p or anything later (window pushed down, step 5)
                for s in self.closure(j, mem, p):
                    if s == self.final:
                        continue
                    nm = self.consume(s, mem, p)
                    if nm is not None:
                        self._after_consume(s, nm, new)
                    if self.ignore_ok(s, mem, p):
                        new.add((s, mem))
            for s in self.closure(0, empty, p):  # every event may start a run; it must select that event
                if s == self.final:
                    continue
                nm = self.consume(s, empty, p)
                if nm is not None:
                    self._after_consume(s, nm, new)
            for _ in range(len(new)):
                self.budget.partial()
            runs = new

    def _after_consume(self, s: int, mem, new: set) -> None:
        nxt = s if self.states[s][0] == KLEENE else s + 1
        if self.final in self.closure(nxt, mem):
            self.load(mem)
            self.emit()
        if nxt < self.final:
            new.add((nxt, mem))
