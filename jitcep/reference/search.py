"""Brute-force enumeration of matches under skip-till-any-match (docs/semantics.md §3–§7).

The structure is bound in structure order by backtracking.  When an element
of a SEQ is bound, everything to its left in every enclosing SEQ is already
bound, so the SEQ condition (§5) becomes a lower bound on the next event;
the window (§2) becomes a box around the events bound so far (under
``kleene_window="iteration"``, for a variable of a Kleene group, the box of
the events outside every group and of the group's current iteration).  Both
are monotone (adding events only shrinks the admissible range), and a WHERE
conjunct is evaluated as soon as every variable it reads is complete, which
is monotone too: a partial binding is abandoned only if *every* extension of
it would be rejected, so pruning never changes the result.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from ..errors import ExplosionError, UnsupportedPatternError
from ..pattern.ast import Conj, Disj, EventVar, Kleene, Neg, Seq
from ..pattern.structure import variables
from .analysis import Conjunct, PatternInfo
from .candidates import Bounds, candidates, filter_conjuncts, index_range
from .exprs import Ctx, value_at


class Budget:
    """Counters behind the caps of §12, shared by all patterns of one ``evaluate`` call."""

    def __init__(self, options):
        self.options = options
        self.partials = 0
        self.matches = 0

    def partial(self) -> None:
        self.partials += 1
        if self.partials > self.options.max_partials:
            raise ExplosionError(
                f"the reference evaluator created more than max_partials={self.options.max_partials} partial "
                f"matches; narrow the window or the predicates, or raise the cap with "
                f"jitcep.compile(..., max_partials=N)")

    def match(self, n: int = 1) -> None:
        self.matches += n
        if self.matches > self.options.max_matches:
            raise ExplosionError(
                f"more than max_matches={self.options.max_matches} matches; raise the cap with "
                f"jitcep.compile(..., max_matches=N) or make the pattern more selective")

    def kleene(self, n: int, var: str) -> None:
        if n > self.options.max_kleene:
            raise ExplosionError(
                f"Kleene variable {var!r} has more than max_kleene={self.options.max_kleene} lists for one "
                f"binding of the other variables; raise the cap with jitcep.compile(..., max_kleene=N), "
                f"bound the closure ({{n,m}}), or use kleene=\"maximal\"")


class Matcher:
    """State shared by the enumeration, negation checks and the NFA^b runs of one pattern."""

    def __init__(self, info: PatternInfo, table, options, budget: Budget):
        self.info = info
        self.table = table
        self.order = options.order
        self.options = options
        self.budget = budget
        self.b: dict = {v: None for v in info.events}
        self.ctx = Ctx(table, self.b, info.kid)
        self.used: set[int] = set()
        self.trail: list[int] = []
        self.box = None          # (min ts, max ts, min pos, max pos) of the positive events bound
        self.rbox = None         # ... of those outside every Kleene group (§2, kleene_window)
        self.ibox = None         # ... of the Kleene group iteration being bound
        self.per_iteration = options.kleene_window == "iteration"
        self.group_vars = frozenset(v for v, k in info.kid.items() if not info.kleene[k].is_array)
        self.key = None          # the [attr] key of the match, once an event is bound
        self.complete: set[str] = set()
        self.cand: dict[str, np.ndarray] = {}
        self.cand_ts: dict[str, np.ndarray] = {}
        self.prefiltered: set[int] = set()
        for v in info.events:
            conjs = info.conjs if v in info.positive else next(n.conjs for n in info.negs if n.var.name == v)
            self.cand[v] = candidates(info, table, v, conjs)
            self.cand_ts[v] = table.ts[self.cand[v]]
            if v in info.single:
                self.prefiltered.update(id(c) for c in filter_conjuncts(info, v, conjs))
        self.by_var: dict[str, list[Conjunct]] = {v: [c for c in info.conjs if v in c.vars] for v in info.events}

    # --- binding events ----------------------------------------------------

    def event_key(self, p: int):
        return tuple(value_at(self.table, a, p) for a in self.info.equiv_attrs)

    def push(self, p: int, outer: bool = True):
        """Add position p to the match; None if it breaks the [attr] key (§4).

        ``outer``: p is not bound inside a Kleene group iteration (§2, kleene_window).
        """
        saved = (self.box, self.key, self.rbox, self.ibox)
        if self.info.equiv_attrs:
            k = self.event_key(p)
            if self.key is None:
                self.key = k
            elif k != self.key:
                return None
        t = int(self.table.ts[p])
        self.box = _grow(self.box, t, p)
        if outer:
            self.rbox = _grow(self.rbox, t, p)
        else:
            self.ibox = _grow(self.ibox, t, p)
        self.used.add(p)
        self.trail.append(p)
        return saved

    def pop(self, p: int, saved) -> None:
        self.trail.pop()
        self.used.discard(p)
        self.box, self.key, self.rbox, self.ibox = saved

    def push_all(self, ps, outer: bool = True, admit=None):
        """Push every position of ps, or none of them: the undo list for :meth:`pop_all`, or None.

        ``admit(p)``, if given, is checked just before p is pushed (with the
        earlier positions of ps already in the match).
        """
        saved = []
        for p in ps:
            s = self.push(p, outer) if admit is None or admit(p) else None
            if s is None:
                self.pop_all(saved)
                return None
            saved.append((p, s))
        return saved

    def pop_all(self, saved) -> None:
        for p, s in reversed(saved):
            self.pop(p, s)

    def window_box(self, var: str):
        """The events ``var``'s event must be within the window of (§2).

        Under kleene_window="iteration", an event of a group iteration answers only
        to the events outside every group and to its own iteration; any other
        event answers to every event of the match (the window is pairwise).
        """
        if self.per_iteration and var in self.group_vars:
            return _merge(self.rbox, self.ibox)
        return self.box

    def range_of(self, var: str, bounds: Bounds) -> tuple[int, int]:
        return index_range(self.cand[var], self.cand_ts[var], self.table, self.order, bounds,
                           self.window_box(var), self.info.span, self.info.count)

    # --- predicates ----------------------------------------------------------

    def holds(self, c: Conjunct, fixed: dict[int, int] | None = None) -> bool:
        """Is conjunct c TRUE for every instance of its quantified Kleene indexes (§4)?"""
        ranges = []
        for k in c.quant:
            if fixed is not None and k in fixed:
                ranges.append((fixed[k],))
            else:
                ranges.append(range(len(self.b[self.info.kleene[k].vars[0]])))
        it = self.ctx.it
        for combo in product(*ranges):
            for k, j in zip(c.quant, combo):
                it[k] = j
            if any(it[k] == 0 for k in c.prev):
                continue  # b[i-1] at i = 1: holds vacuously
            if c.fn(self.ctx) is not True:
                return False
        return True

    def applies(self, c: Conjunct) -> bool:
        """A conjunct constrains a match only if all its variables are bound in it (§4)."""
        return all(self.b[u] is not None for u in c.vars)

    def complete_vars(self, vars_, skip=frozenset()) -> bool:
        """Mark vars_ complete and check every conjunct that just became evaluable."""
        self.complete.update(vars_)
        seen: set[int] = set()
        for v in vars_:
            for c in self.by_var[v]:
                i = id(c)
                if i in seen or i in skip or i in self.prefiltered:
                    continue
                seen.add(i)
                if c.vars <= self.complete and self.applies(c) and not self.holds(c):
                    return False
        return True


class AnyMatchSearch(Matcher):
    """§6.1 / §6.2 enumeration: every binding satisfying the structure, window and predicates."""

    def __init__(self, info, table, options, budget, emit):
        super().__init__(info, table, options, budget)
        self.emit = emit
        # kleene="maximal" patterns were checked (pattern.combinations): each closure is an item of the
        # normal form's top-level SEQ
        self.maximal = options.kleene == "maximal" and bool(info.kleene)
        self.disj_others: dict[tuple[int, int], tuple[str, ...]] = {}

    def run(self) -> None:
        if self.maximal:
            self._bind_maximal_seq(self.info.pattern.body, self.emit)
        else:
            self.bind(self.info.pattern.body, Bounds(), self.emit)

    # --- structure ---------------------------------------------------------

    def bind(self, node, bounds: Bounds, cont) -> None:
        if isinstance(node, EventVar):
            self._bind_var(node.name, bounds, cont)
        elif isinstance(node, Neg):
            cont()
        elif isinstance(node, Seq):
            self._bind_seq(node.items, 0, bounds, cont)
        elif isinstance(node, Conj):
            self._bind_all(node.items, 0, bounds, cont)
        elif isinstance(node, Disj):
            self._bind_disj(node, bounds, cont)
        elif isinstance(node, Kleene):
            self._bind_kleene(node, bounds, cont)
        else:
            raise UnsupportedPatternError(f"unknown structure node {type(node).__name__}")

    def _bind_var(self, v: str, bounds: Bounds, cont) -> None:
        cand = self.cand[v]
        i, j = self.range_of(v, bounds)
        in_list = v in self.info.kid
        for idx in range(i, j):
            p = int(cand[idx])
            if p in self.used:
                continue
            self.budget.partial()
            saved = self.push(p, v not in self.group_vars)
            if saved is None:
                continue
            if in_list:  # a member of a Kleene group iteration; the group completes it (§6)
                self.b[v].append(p)
                cont()
                self.b[v].pop()
            else:
                self.b[v] = p
                if self.complete_vars((v,)):
                    cont()
                self.complete.discard(v)
                self.b[v] = None
            self.pop(p, saved)

    def _bind_seq(self, items, i: int, bounds: Bounds, cont) -> None:
        if i == len(items):
            cont()
            return
        mark = len(self.trail)

        def rest():
            self._bind_seq(items, i + 1, bounds.after(self.table, self.trail[mark:]), cont)
        self.bind(items[i], bounds, rest)

    def _bind_all(self, items, i: int, bounds: Bounds, cont) -> None:
        if i == len(items):
            cont()
            return
        self.bind(items[i], bounds, lambda: self._bind_all(items, i + 1, bounds, cont))

    def _bind_disj(self, node: Disj, bounds: Bounds, cont) -> None:
        for bi, branch in enumerate(node.items):
            others = tuple(v for k, other in enumerate(node.items) if k != bi for v in variables(other))
            fresh = [v for v in others if v not in self.complete]
            self.complete.update(fresh)  # unbound (None): no conjunct on them applies (§4)
            self.bind(branch, bounds, cont)
            self.complete.difference_update(fresh)

    def _bind_kleene(self, node: Kleene, bounds: Bounds, cont) -> None:
        K = self.info.kleene_of_node[id(node)]
        if isinstance(node.body, Conj):
            self._bind_kleene_set(node, K, bounds, cont)
            return
        vars_ = K.vars
        for v in vars_:
            self.b[v] = []
        touching = {id(c): c for v in vars_ for c in self.by_var[v]}
        incr = [c for c in touching.values()
                if c.member_wise(K.kid) and id(c) not in self.prefiltered
                and all(u in vars_ or (u in self.complete and self.b[u] is not None) for u in c.vars)]
        skip = frozenset(id(c) for c in incr)
        n_lists = 0

        def step(j: int, bnds: Bounds) -> None:
            nonlocal n_lists
            if j >= K.min:
                n_lists += 1
                self.budget.kleene(n_lists, vars_[0])
                # the empty list never went through after_iteration: check the incremental conjuncts
                # on it too (vacuous for "every i", NULL for a fixed index such as b[1], section 4)
                if self.complete_vars(vars_, skip if j else frozenset()):
                    cont()
                self.complete.difference_update(vars_)
            if K.max is None or j < K.max:
                mark = len(self.trail)

                def after_iteration():
                    if all(self.holds(c, {K.kid: j}) for c in incr):
                        step(j + 1, bnds.iteration(self.table, self.trail[mark:]))
                ibox, self.ibox = self.ibox, None  # a new iteration (§2, kleene_window)
                self.bind(node.body, bnds, after_iteration)
                self.ibox = ibox

        step(0, bounds)
        for v in vars_:
            self.b[v] = None

    def _bind_kleene_set(self, node: Kleene, K, bounds: Bounds, cont) -> None:
        """Kleene over an AND group (§6): a set of distinct body matches, listed in canonical order.

        AND imposes no order, so its repetitions are not ordered either; they
        may share events with each other (never with variables outside the
        closure).  OpenCEP's KL(AND(..)) behaves the same way.
        """
        vars_ = K.vars
        for v in vars_:
            self.b[v] = []
        body_matches: list[tuple[int, ...]] = []

        def collect():
            body_matches.append(tuple(self.b[v][-1] for v in vars_))
        ibox, self.ibox = self.ibox, None  # each body match is one iteration (§2, kleene_window)
        self.bind(node.body, bounds, collect)
        self.ibox = ibox
        # iteration-local conjuncts are checked per body match, before subsets are formed; an iterative
        # one (v[i-1]) relates consecutive iterations of the chosen set, in its canonical order (§4, §6),
        # so it waits for the whole set
        touching = {id(c): c for v in vars_ for c in self.by_var[v]}
        incr = [c for c in touching.values()
                if c.member_wise(K.kid) and not any(k != K.kid for k in c.quant) and K.kid not in c.prev
                and all(u in vars_ or (u in self.complete and self.b[u] is not None) for u in c.vars)]
        skip = frozenset(id(c) for c in incr)
        good = []
        for bm in body_matches:
            for v, p in zip(vars_, bm):
                self.b[v] = [p]
            if all(self.holds(c, {K.kid: 0}) for c in incr):
                good.append(bm)
        good.sort(key=lambda bm: (max(bm), min(bm), tuple(p for _, p in sorted(zip(vars_, bm)))))
        n_lists = 0

        def choose(start: int, chosen: list) -> None:
            nonlocal n_lists
            k = len(chosen)
            if k >= K.min and (k > 0 or K.min == 0):
                n_lists += 1
                self.budget.kleene(n_lists, vars_[0])
                for i, v in enumerate(vars_):
                    self.b[v] = [bm[i] for bm in chosen]
                if self.complete_vars(vars_, skip):
                    cont()
                self.complete.difference_update(vars_)
            if K.max is not None and k >= K.max:
                return
            for t in range(start, len(good)):
                # body matches were collected with the outer variables' events excluded, so an
                # event already used here belongs to an earlier chosen iteration: shared, allowed
                fresh = [p for p in dict.fromkeys(good[t]) if p not in self.used]
                # per iteration, the body match was already bounded with the outside events
                saved = self.push_all(fresh, outer=False, admit=None if self.per_iteration else self._in_box)
                if saved is None:
                    continue
                self.budget.partial()
                chosen.append(good[t])
                choose(t + 1, chosen)
                chosen.pop()
                self.pop_all(saved)

        choose(0, [])
        for v in vars_:
            self.b[v] = None

    def _in_box(self, p: int) -> bool:
        """Does adding p keep the match inside the window (§2)?"""
        if self.box is None:
            return True
        t = int(self.table.ts[p])
        mn_t, mx_t, mn_p, mx_p = self.box
        if self.info.span is not None and max(mx_t, t) - min(mn_t, t) > self.info.span:
            return False
        return self.info.count is None or max(mx_p, p) - min(mn_p, p) < self.info.count

    # --- kleene="maximal" (§6.2) ---------------------------------------------

    def _bind_maximal_seq(self, body, cont) -> None:
        items = body.items if isinstance(body, Seq) else (body,)
        marks: dict[int, tuple[int, int]] = {}

        def forward(i: int, bounds: Bounds) -> None:
            if i == len(items):
                self._fill_maximal(items, marks, 0, cont)
                return
            item = items[i]
            if isinstance(item, Kleene):
                forward(i + 1, bounds)
                return
            start = len(self.trail)

            def rest():
                marks[i] = (start, len(self.trail))
                forward(i + 1, bounds.after(self.table, self.trail[start:]))
            self.bind(item, bounds, rest)

        forward(0, Bounds())

    def _fill_maximal(self, items, marks, t: int, cont) -> None:
        kpos = [i for i, it in enumerate(items) if isinstance(it, Kleene)]
        if t == len(kpos):
            cont()
            return
        i = kpos[t]
        K = self.info.kleene_of_node[id(items[i])]
        v = K.vars[0]
        left = [p for k in range(i) if k in marks for p in self.trail[marks[k][0]:marks[k][1]]]
        right = [p for k in range(i + 1, len(items)) if k in marks for p in self.trail[marks[k][0]:marks[k][1]]]
        qualifying = [p for p in self.cand[v].tolist()
                      if p not in self.used and self._in_range(p, left, right)
                      and (not self.info.equiv_attrs or self.event_key(p) == self.key)
                      and self._member_ok(K, v, p)]
        if K.max is None:
            lists = [qualifying] if len(qualifying) >= K.min else []
        else:  # ZStream's closure count: a window sliding over the qualifying events
            # no list is longer than the qualifying events: a bound past them adds none (and is not looped to)
            lists = [qualifying[s:s + k] for k in range(max(K.min, 1), min(K.max, len(qualifying)) + 1)
                     for s in range(len(qualifying) - k + 1)]
            if K.min == 0:
                lists.append([])
        for lst in lists:
            # each member is in range, but under nondecreasing_ts a member tied with a neighbour may
            # lie past it by position: a list that breaks the window is no match (§2, §6.2)
            saved = self.push_all(lst, admit=self._in_box)
            if saved is None:
                continue
            self.budget.partial()
            self.b[v] = list(lst)
            if self.complete_vars((v,)):
                self._fill_maximal(items, marks, t + 1, cont)
            self.complete.discard(v)
            self.b[v] = None
            self.pop_all(saved)

    def _member_ok(self, K, v: str, p: int) -> bool:
        self.b[v] = [p]
        try:
            for c in self.by_var[v]:
                if (K.kid in c.quant and not c.member_wise(K.kid)) or K.kid not in c.quant or K.kid in c.first:
                    continue
                if any(u != v and (u in self.info.kid or self.b[u] is None) for u in c.vars):
                    continue
                if not self.holds(c, {K.kid: 0}):
                    return False
            return True
        finally:
            self.b[v] = None

    def _in_range(self, p: int, left: list[int], right: list[int]) -> bool:
        """Strictly between the neighbours (§1), or within the window of the match on an open side."""
        t = int(self.table.ts[p])
        ts = self.table.ts
        if left:
            m = max(left)
            if not _before(self.order, m, int(ts[m]), p, t):
                return False
        elif self.box is not None:
            if self.info.span is not None and t < self.box[1] - self.info.span:
                return False
            if self.info.count is not None and p <= self.box[3] - self.info.count:
                return False
        if right:
            m = min(right)
            if not _before(self.order, p, t, m, int(ts[m])):
                return False
        elif self.box is not None:
            if self.info.span is not None and t > self.box[0] + self.info.span:
                return False
            if self.info.count is not None and p >= self.box[2] + self.info.count:
                return False
        return True


def _grow(box, t: int, p: int):
    """A (min ts, max ts, min pos, max pos) box extended by event (t, p)."""
    if box is None:
        return (t, t, p, p)
    a, b, c, d = box
    return (min(a, t), max(b, t), min(c, p), max(d, p))


def _merge(x, y):
    if x is None:
        return y
    if y is None:
        return x
    return (min(x[0], y[0]), max(x[1], y[1]), min(x[2], y[2]), max(x[3], y[3]))


def _before(order: str, p: int, tp: int, q: int, tq: int) -> bool:
    """before(p, q) of §1 for distinct events."""
    if order == "position":
        return p < q
    if order == "strict_ts":
        return tp < tq
    return tp <= tq and p != q
