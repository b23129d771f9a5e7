"""The NFA of a MATCH_RECOGNIZE pattern, compiled and run as Apache Flink's CEP library does.

SQL's pattern is a sequence of variables with quantifiers; Flink turns it into CEP's ``Pattern`` (strict
contiguity: ``next`` between variables, ``consecutive`` inside loops; ``greedy`` unless reluctant) and
compiles that into states joined by TAKE (consume the row, move on) and PROCEED (an epsilon move) edges:
a variable becomes one state per row it must take, optional states that may PROCEED past it, and a
looping state that takes rows for ever. A greedy quantifier adds "and not this variable's condition" to
every edge of the state after it, so the rows it can take are never given to the next variable.

Running it (``Nfa.process``) advances every partial match by one row along every edge whose condition
holds, each path carrying its own rows; a new match may start at every row. A match that reaches the
final state is emitted only once no partial match that started earlier is still running, then the
AFTER MATCH SKIP strategy prunes the matches and partial matches it rules out. With WITHIN, a partial
match dies once a row (or the watermark) is that long after its first row (``advance_time``).
Everything here is a pure function of the rows given, in the order given: no I/O, no clock.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from runtime.cep.expressions import holds
from runtime.cep.queue import JavaPriorityQueue

TAKE, PROCEED = "take", "proceed"
START, NORMAL, FINAL = "start", "normal", "final"
ALL = "*"  # the default pattern variable: every row of the match
NO_START = (2**63, 2**63)  # a start state sorts after every partial match


class MatchError(RuntimeError):
    """A match the skip strategy cannot continue from (Flink fails the job the same way)."""


@dataclass(eq=False)
class State:
    """A state of the NFA: the variable whose row it waits for, and its outgoing edges in Flink's order."""
    id: str
    variable: str | None
    kind: str = NORMAL
    transitions: list[Transition] = field(default_factory=list)


@dataclass(eq=False)
class Transition:
    """An edge: TAKE the row into ``source``'s variable and move to ``target``, or PROCEED there without it.
    ``condition``: ``("true",)``, ``("var", name)`` (that variable's DEFINE), ``("and", a, b)``, ``("not", a)``."""
    action: str
    source: State
    target: State
    condition: tuple


@dataclass(frozen=True)
class Event:
    """A row in the order the NFA sees it: ``id`` is (event time, arrival number), ``ts`` the event time."""
    id: tuple[int, int]
    ts: int
    row: dict


class Partial:
    """A computation state: where a partial match stands, the rows it took (variable, event id, row) and
    the event it started at (None while it is the start state, which every row may leave)."""
    __slots__ = ("state", "path", "start_id", "start_ts")

    def __init__(self, state: str, path: tuple = (), start_id: tuple | None = None, start_ts: int = 0):
        self.state, self.path, self.start_id, self.start_ts = state, path, start_id, start_ts

    def __getstate__(self):
        return self.state, self.path, self.start_id, self.start_ts

    def __setstate__(self, values):
        self.state, self.path, self.start_id, self.start_ts = values

    def rows(self, variable: str) -> list[dict]:
        """The rows this partial match mapped to ``variable`` (ALL: every row), in order."""
        return [row for var, _, row in self.path if variable in (ALL, var)]


def _order(partial: Partial) -> tuple:
    return partial.start_id if partial.start_id is not None else NO_START


def new_queue() -> JavaPriorityQueue:
    """A queue of partial matches ordered by their first event, as Flink's NFAState keeps them."""
    return JavaPriorityQueue(_order)


@dataclass
class NfaState:
    """The NFA state of one key: its partial matches and the finished matches waiting for earlier ones."""
    partial: JavaPriorityQueue
    completed: JavaPriorityQueue


class Nfa:
    """A compiled pattern (``spec``: variables with quantifiers, DEFINE conditions, skip strategy, WITHIN)."""

    def __init__(self, spec: dict):
        self.define: dict[str, list] = spec.get("define", {})
        self.skip = tuple(spec.get("skip") or ("to_next",))
        self.within_us = spec.get("within_us") or 0
        self.states: dict[str, State] = {}
        self.start = _Compiler(self).compile(spec["variables"])

    def initial(self) -> NfaState:
        """The state of a key that has seen nothing: one partial match, at the start."""
        partial = new_queue()
        partial.offer(Partial(self.start.id))
        return NfaState(partial, new_queue())

    def process(self, nfa: NfaState, event: Event) -> list[tuple]:
        """Feed one row; returns the matches it completes that can be emitted now (each its path)."""
        partials, potential = new_queue(), new_queue()
        for partial in nfa.partial:
            for nxt in self._next(partial, event):
                (potential if self.states[nxt.state].kind == FINAL else partials).offer(nxt)
        return self._emit(nfa, potential, partials)

    def advance_time(self, nfa: NfaState, ts: int) -> list[tuple]:
        """Drop partial matches that started at least WITHIN before ``ts``; returns the matches that were
        waiting for them."""
        partials = new_queue()
        for partial in nfa.partial:
            if not self._timed_out(partial, ts):
                partials.offer(partial)
        return self._emit(nfa, new_queue(), partials)

    def is_empty(self, nfa: NfaState) -> bool:
        """Whether the key holds nothing but the start state."""
        return not nfa.completed and all(p.start_id is None for p in nfa.partial)

    def _timed_out(self, partial: Partial, ts: int) -> bool:
        return partial.start_id is not None and self.within_us > 0 and ts - partial.start_ts >= self.within_us

    # -- one row ----------------------------------------------------------------------------------
    def _next(self, partial: Partial, event: Event) -> list[Partial]:
        """Every partial match ``partial`` becomes with ``event`` (Flink's computeNextStates)."""
        out = []
        starting = partial.start_id is None
        for edge in self._edges(partial, event):
            start_id, start_ts = (event.id, event.ts) if starting else (partial.start_id, partial.start_ts)
            path = partial.path + ((edge.source.variable, event.id, event.row),)
            out.append(Partial(edge.target.id, path, start_id, start_ts))
            final = self._final_after(partial, edge.target, event)
            if final is not None:
                out.append(Partial(final.id, path, start_id, start_ts))
        if starting:
            out.append(Partial(partial.state))
        return out

    def _edges(self, partial: Partial, event: Event) -> list[Transition]:
        """The TAKE edges open to ``event`` from where ``partial`` stands, PROCEED edges followed depth first."""
        edges, stack = [], [self.states[partial.state]]
        while stack:
            for transition in stack.pop().transitions:
                if self._holds(transition.condition, partial, event):
                    if transition.action == PROCEED:
                        stack.append(transition.target)
                    else:
                        edges.append(transition)
        return edges

    def _final_after(self, partial: Partial, state: State, event: Event) -> State | None:
        """The final state, if PROCEED edges whose conditions hold lead there from ``state``."""
        stack = [state]
        while stack:
            for transition in stack.pop().transitions:
                if transition.action == PROCEED and self._holds(transition.condition, partial, event):
                    if transition.target.kind == FINAL:
                        return transition.target
                    stack.append(transition.target)
        return None

    def _holds(self, condition: tuple, partial: Partial, event: Event) -> bool:
        kind = condition[0]
        if kind == "true":
            return True
        if kind == "and":
            return self._holds(condition[1], partial, event) and self._holds(condition[2], partial, event)
        if kind == "not":
            return not self._holds(condition[1], partial, event)
        variable = condition[1]
        define = self.define.get(variable)
        if define is None:
            return True

        def rows(var: str) -> Sequence[dict]:
            mapped = partial.rows(var)
            return mapped + [event.row] if var in (variable, ALL) else mapped
        return holds(define, rows, event.row)

    # -- matches ----------------------------------------------------------------------------------
    def _emit(self, nfa: NfaState, potential: JavaPriorityQueue, partials: JavaPriorityQueue) -> list[tuple]:
        """Finished matches that no earlier-starting partial match can beat, pruned by the skip strategy
        (Flink's processMatchesAccordingToSkipStrategy); ``partials`` become the key's partial matches."""
        for match in potential:
            nfa.completed.offer(match)
        out = []
        earliest = nfa.completed.peek()
        while earliest is not None and (partials.peek() is None or _order(earliest) <= _order(partials.peek())):
            nfa.completed.poll()
            doomed = self._pruned(self._pruning_id(earliest.path))
            partials.remove_if(doomed)
            nfa.completed.remove_if(doomed)
            out.append(earliest.path)
            earliest = nfa.completed.peek()
        nfa.partial = partials
        return out

    def _pruned(self, pruning: tuple):
        """Which partial matches the skip strategy drops after a match: those that started at or before (past
        last row, to next row) or before (to first/last of a variable) the strategy's row."""
        inclusive = self.skip[0] in ("past_last", "to_next")

        def doomed(partial: Partial) -> bool:
            start = partial.start_id
            return start is not None and (start <= pruning if inclusive else start < pruning)
        return doomed

    def _pruning_id(self, path: tuple) -> Any:
        ids = [event_id for _, event_id, _ in path]
        if self.skip[0] == "past_last":
            return max(ids)
        if self.skip[0] == "to_next":
            return min(ids)
        variable = self.skip[1]
        mapped = [event_id for var, event_id, _ in path if var == variable]
        if not mapped:
            raise MatchError(f"could not skip to {variable}: no row of the match is mapped to it")
        pruning = mapped[0] if self.skip[0] == "to_first" else mapped[-1]
        if pruning == min(ids):
            raise MatchError("could not skip to the first row of a match (AFTER MATCH SKIP TO "
                             f"{'FIRST' if self.skip[0] == 'to_first' else 'LAST'} {variable} would find it again)")
        return pruning


class _Compiler:
    """Builds the states back to front, as Flink's NFACompiler does: the final state, then each variable's
    states leading into what follows it, the first variable's first state being the start."""

    def __init__(self, nfa: Nfa):
        self.nfa = nfa
        self.count = 0

    def compile(self, variables: list[dict]) -> State:
        sink = self._state(None, FINAL)
        for variable in reversed(variables):
            sink = self._variable(variable, sink)
        sink.kind = START
        return sink

    def _state(self, variable: str | None, kind: str = NORMAL) -> State:
        self.count += 1
        state = State(f"{variable or '$end'}:{self.count}", variable, kind)
        self.nfa.states[state.id] = state
        return state

    def _variable(self, variable: dict, sink: State) -> State:
        """A variable's states as Flink's quantifiers make them: ``*`` and ``+`` (and ``{n,}``) loop; ``?`` is an
        optional single state; ``{n,m}`` is n states then m-n optional ones (``{0,m}``: optional, from 1)."""
        name, low, high = variable["name"], variable["min"], variable["max"]
        take = ("var", name)
        if high is None:
            greedy = variable["greedy"]
            looping = self._looping(name, sink, take, greedy)
            return self._times(name, looping, sink, max(low, 1), max(low, 1), take, optional=low == 0)
        if (low, high) in ((0, 1), (1, 1)):
            return self._single(name, sink, sink, take, optional=low == 0)
        greedy = variable["greedy"] and low != high
        if greedy:
            _greedy(sink, take)
        return self._times(name, sink, sink, max(low, 1), high, take, optional=low == 0)

    def _looping(self, name: str, sink: State, take: tuple, greedy: bool) -> State:
        looping = self._state(name)
        looping.transitions.append(Transition(PROCEED, looping, sink, ("true",)))
        if greedy:
            _greedy(sink, take)
        looping.transitions.append(Transition(TAKE, looping, looping, take))
        return looping

    def _times(self, name: str, sink: State, proceed: State, low: int, high: int, take: tuple,
               optional: bool) -> State:
        last = sink
        for _ in range(low, high):
            last = self._single(name, last, proceed, take, optional=True)
        for _ in range(1, low):
            last = self._single(name, last, None, take, optional=False)
        return self._single(name, last, proceed, take, optional=optional)

    def _single(self, name: str, sink: State, proceed: State | None, take: tuple, optional: bool) -> State:
        state = self._state(name)
        state.transitions.append(Transition(TAKE, state, sink, take))
        if optional and proceed is not None:
            state.transitions.append(Transition(PROCEED, state, proceed, ("true",)))
        return state


def _greedy(state: State, take: tuple) -> None:
    """A greedy quantifier's rows are not the next state's: every edge out of ``state`` also needs NOT ``take``."""
    for transition in state.transitions:
        transition.condition = ("and", transition.condition, ("not", take))
