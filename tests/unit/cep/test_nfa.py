"""The pattern NFA alone: rows in, matches out, with the answers Apache Flink 2.3 gives for the examples of its
"Pattern Recognition" page (checked against PyFlink: tests/integration/test_sql_patterns.py runs them there)."""
import cloudpickle
import pytest

from runtime.cep.nfa import Event, MatchError, Nfa
from runtime.cep.queue import JavaPriorityQueue


def var(name, low=1, high=1, greedy=True):
    return {"name": name, "min": low, "max": high, "greedy": greedy}


def price(v, n=0, end="last"):
    return ["nav", v, end, n, ["col", "price"]]


def fn(name, *args):
    return ["fn", name, *args]


def lit(x):
    return ["lit", x]


def run(spec, prices, step=1000, pickle_at=None):
    """Feed prices a step apart (advancing time first, as the operator does); the matches as (var, price) lists."""
    nfa, state, out = Nfa(spec), None, []
    state = nfa.initial()
    for i, p in enumerate(prices):
        if i == pickle_at:
            state = cloudpickle.loads(cloudpickle.dumps(state))
        out += nfa.advance_time(state, i * step)
        out += nfa.process(state, Event((i * step, i), i * step, {"price": p}))
    out += nfa.advance_time(state, 10**12)
    return [[(v, r["price"]) for v, _, r in match] for match in out]


GREEDY_CASE = {"A": fn("gt", price("A"), lit(10)), "B": fn("lt", price("B"), lit(15)), "C": fn("gt", price("C"), lit(12))}


def test_a_greedy_quantifier_takes_every_row_it_can_and_a_reluctant_one_as_few_as_it_can():
    rows = [10, 11, 12, 13, 14, 16]
    greedy = run({"variables": [var("A"), var("B", 0, None), var("C")], "define": GREEDY_CASE, "skip": ["past_last"]}, rows)
    assert [m[-1] for m in greedy] == [("C", 16)]
    assert greedy[0][:4] == [("A", 11), ("B", 12), ("B", 13), ("B", 14)]
    reluctant = run({"variables": [var("A"), var("B", 0, None, greedy=False), var("C")], "define": GREEDY_CASE,
                     "skip": ["past_last"]}, rows)
    assert reluctant == [[("A", 11), ("B", 12), ("C", 13)], [("A", 14), ("C", 16)]]


SUM_UNDER_30 = {"A": fn("lt", ["agg", "sum", "A", ["col", "price"]], lit(30))}
SKIP_ROWS = [7, 9, 10, 5, 10, 7, 14]


@pytest.mark.parametrize("skip, sums", [
    (["past_last"], [26, 17]),
    (["to_next"], [26, 24, 25, 22, 17]),
    (["to_last", "A"], [26, 25, 17]),
])
def test_after_match_skip_strategies_give_flinks_matches(skip, sums):
    matches = run({"variables": [var("A", 1, None), var("C")], "define": SUM_UNDER_30, "skip": skip}, SKIP_ROWS)
    assert [sum(p for v, p in m if v == "A") for m in matches] == sums


def test_skipping_to_the_first_row_of_a_match_fails_as_in_flink():
    with pytest.raises(MatchError, match="first row of a match"):
        run({"variables": [var("A", 1, None), var("C")], "define": SUM_UNDER_30, "skip": ["to_first", "A"]}, SKIP_ROWS)


def test_within_drops_a_partial_match_once_a_row_is_that_long_after_its_first():
    """B is 3 s after A in the first try (exactly WITHIN: too late, as Flink's >= says), 2 s in the second."""
    define = {"A": fn("gt", price("A"), lit(50)), "B": fn("lt", price("B"), lit(10))}
    spec = {"variables": [var("A"), var("X", 0, None, greedy=False), var("B")], "define": define, "skip": ["past_last"],
            "within_us": 3000}
    assert run(spec, [60, 20, 20, 5, 70, 20, 5]) == [[("A", 70), ("X", 20), ("B", 5)]]


def test_a_finished_match_waits_for_an_earlier_partial_match_and_loses_to_it():
    """[A=7, C=14] finishes at the third row while the match from A=5 still runs; that one finishes a row later,
    started earlier, and SKIP PAST LAST ROW keeps it alone (SKIP TO NEXT ROW keeps both, in start order)."""
    define = {"C": fn("eq", price("C"), fn("mul", price("A"), lit(2)))}
    pattern = [var("A"), var("B", 0, None, greedy=False), var("C")]
    rows = [5, 7, 14, 10]
    assert run({"variables": pattern, "define": define, "skip": ["past_last"]}, rows) == \
        [[("A", 5), ("B", 7), ("B", 14), ("C", 10)]]
    assert run({"variables": pattern, "define": define, "skip": ["to_next"]}, rows) == \
        [[("A", 5), ("B", 7), ("B", 14), ("C", 10)], [("A", 7), ("C", 14)]]


def test_times_quantifiers_take_their_exact_counts():
    define = {"B": fn("gt", price("B"), price("A")), "C": fn("lt", price("C"), lit(15))}
    exact = run({"variables": [var("A"), var("B", 2, 2), var("C")], "define": define, "skip": ["past_last"]},
                [10, 11, 12, 23, 1])
    assert exact == [[("A", 11), ("B", 12), ("B", 23), ("C", 1)]]
    ranged = run({"variables": [var("A"), var("B", 0, 2), var("C")], "define": define, "skip": ["to_next"]}, [20, 30, 1])
    assert ranged == [[("A", 20), ("B", 30), ("C", 1)], [("A", 30), ("C", 1)]]


def test_navigation_counts_from_either_end_of_a_variables_rows():
    falling = {"B": fn("or", fn("is_null", price("B", 1)), fn("lt", price("B"), price("B", 1))),
               "C": fn("gt", price("C"), price("B", 0, "first"))}
    spec = {"variables": [var("A"), var("B", 1, None), var("C")], "define": falling, "skip": ["past_last"]}
    assert run(spec, [1, 9, 7, 5, 10]) == [[("A", 1), ("B", 9), ("B", 7), ("B", 5), ("C", 10)]]


def test_the_nfa_state_pickles_mid_match_and_resumes():
    spec = {"variables": [var("A", 1, None), var("C")], "define": SUM_UNDER_30, "skip": ["to_next"]}
    assert run(spec, SKIP_ROWS, pickle_at=3) == run(spec, SKIP_ROWS)


def test_the_queue_breaks_ties_in_java_priority_queue_order():
    """Two items of key 1: Java's heap polls the one offered first, and after bulk removal keeps survivors in
    array order before rebuilding the heap."""
    queue = JavaPriorityQueue(lambda item: item[0])
    for item in [(3, "a"), (1, "b"), (2, "c"), (1, "d")]:
        queue.offer(item)
    assert queue.items == [(1, "b"), (1, "d"), (2, "c"), (3, "a")]
    queue.remove_if(lambda item: item[1] == "b")
    assert [queue.poll() for _ in range(3)] == [(1, "d"), (2, "c"), (3, "a")] and queue.poll() is None
