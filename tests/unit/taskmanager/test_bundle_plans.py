"""The padded lengths of source bundles' offset ranges (runtime.taskmanager.datagen_sql.padded_count)."""
from __future__ import annotations

from runtime.taskmanager.datagen_sql import padded_count


def test_a_padded_count_holds_the_count_with_at_most_a_quarter_to_spare():
    for count in list(range(1, 5000)) + [10**5 + 7, 999_999, 2**20, 2**20 + 1, 10**9 + 3]:
        padded = padded_count(count)
        assert count <= padded, count
        assert padded <= max(64, count * 1.25), (count, padded)


def test_each_doubling_of_counts_shares_at_most_four_lengths():
    for low in (2**7, 2**12, 2**19):
        lengths = {padded_count(count) for count in range(low + 1, 2 * low + 1)}
        assert len(lengths) <= 4, sorted(lengths)
