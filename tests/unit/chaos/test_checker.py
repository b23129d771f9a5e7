"""The chaos run's output check: loss, duplicates, strays, per-key gaps and running counts that
disagree with the rows, each counted on its own."""
from __future__ import annotations

import pytest

from tests.chaos.checker import check, expected_per_key


def exact(rows: int, keys: int) -> tuple[list[int], list[int], list[int]]:
    key = [i % keys for i in range(rows)]
    seq = [i // keys for i in range(rows)]
    return key, seq, [s + 1 for s in seq]


def test_the_output_of_a_run_without_faults_passes():
    verdict = check(*exact(103, 10), expected_rows=103, num_keys=10)
    assert verdict.ok and verdict.committed_rows == 103 and verdict.lost == 0


def test_rows_per_key_cover_every_row():
    per_key = expected_per_key(103, 10)
    assert sum(per_key.values()) == 103 and per_key[2] == 11 and per_key[3] == 10


def test_a_missing_row_is_lost_and_a_gap_of_its_key():
    key, seq, count = exact(100, 10)
    i = next(j for j in range(100) if (key[j], seq[j]) == (4, 5))
    del key[i], seq[i], count[i]
    count = [c if not (k == 4 and s > 5) else c - 1 for k, s, c in zip(key, seq, count)]
    verdict = check(key, seq, count, 100, 10)
    assert (verdict.lost, verdict.duplicated, verdict.keys_with_gaps, verdict.keys_with_state_mismatch) == (1, 0, 1, 0)
    assert verdict.gap_examples == ("key 4: 1 missing below seq 9, the first at 5",)
    assert not verdict.ok


def test_a_lost_tail_is_loss_but_not_a_gap():
    key, seq, count = exact(100, 10)
    verdict = check(key[:-3], seq[:-3], count[:-3], 100, 10)
    assert (verdict.lost, verdict.keys_with_gaps, verdict.keys_with_state_mismatch) == (3, 0, 0)


def test_a_replayed_row_whose_state_was_rolled_back_is_a_duplicate_only():
    key, seq, count = exact(100, 10)
    verdict = check(key + [7], seq + [9], count + [10], 100, 10)
    assert (verdict.duplicated, verdict.lost, verdict.keys_with_state_mismatch) == (1, 0, 1)


def test_a_replay_counted_twice_is_a_state_mismatch_even_without_duplicates():
    key, seq, count = exact(100, 10)
    count = [c + (1 if k == 3 and s >= 4 else 0) for k, s, c in zip(key, seq, count)]  # state not rolled back
    verdict = check(key, seq, count, 100, 10)
    assert (verdict.lost, verdict.duplicated, verdict.keys_with_state_mismatch) == (0, 0, 1)


def test_rows_no_input_explains_are_counted_apart():
    key, seq, count = exact(20, 4)
    verdict = check(key + [9, 1], seq + [0, 5], count + [1, 6], 20, 4)
    assert (verdict.unexpected, verdict.lost, verdict.duplicated) == (2, 0, 0) and not verdict.ok


def test_columns_of_unequal_length_are_refused():
    with pytest.raises(ValueError, match="unequal length"):
        check([1], [1, 2], [1], 2, 1)
