"""The chaos run's verdict on the committed output: pure, over plain columns.

The job (tests.chaos.job) turns input row ``i`` of ``N`` into key ``i % K`` with per-key sequence
number ``i // K``, and its keyed process function counts the rows of each key in keyed state, emitting
that running count with every row. Exactly-once then means, whatever failed in between:

- every (key, seq) of the input is committed once: none lost, none duplicated, nothing else;
- each key's sequence numbers run 0, 1, 2, ... without a hole (a gap);
- each key's running counts are exactly 1..n for its n committed rows, in any order: the state a
  restart restored matched the input position it rewound to (state and output agree).
"""
from __future__ import annotations

import collections
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    expected_rows: int
    committed_rows: int
    lost: int  # input rows with no committed row
    duplicated: int  # committed rows beyond the first for the same (key, seq)
    unexpected: int  # committed rows that no input row explains
    keys_with_gaps: int  # keys missing a sequence number below their highest committed one
    keys_with_state_mismatch: int  # keys whose running counts are not exactly 1..n
    gap_examples: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.unexpected or self.keys_with_gaps
                    or self.keys_with_state_mismatch)


def expected_per_key(rows: int, keys: int) -> dict[int, int]:
    """How many rows each key gets from ``rows`` input rows spread round-robin over ``keys`` keys."""
    return {k: len(range(k, rows, keys)) for k in range(keys)}


def check(key: Sequence[int], seq: Sequence[int], count: Sequence[int], expected_rows: int,
          num_keys: int) -> Verdict:
    """Compare committed (key, seq, count) columns with the input of ``expected_rows`` rows over ``num_keys`` keys."""
    if not len(key) == len(seq) == len(count):
        raise ValueError(f"columns of unequal length: {len(key)}, {len(seq)}, {len(count)}")
    wanted = expected_per_key(expected_rows, num_keys)
    seen = collections.Counter(zip(key, seq))
    valid = {ks: n for ks, n in seen.items() if 0 <= ks[1] < wanted.get(ks[0], 0)}
    lost = expected_rows - len(valid)
    duplicated = sum(n - 1 for n in valid.values())
    unexpected = sum(n for ks, n in seen.items() if ks not in valid)
    seqs_by_key: dict[int, set[int]] = collections.defaultdict(set)
    counts_by_key: dict[int, list[int]] = collections.defaultdict(list)
    for k, s in valid:
        seqs_by_key[k].add(s)
    for k, c in zip(key, count):
        counts_by_key[k].append(c)
    gaps = []
    for k, present in sorted(seqs_by_key.items()):
        holes = max(present) + 1 - len(present)
        if holes:
            first = min(set(range(max(present) + 1)) - present)
            gaps.append(f"key {k}: {holes} missing below seq {max(present)}, the first at {first}")
    mismatched = sum(1 for counts in counts_by_key.values() if sorted(counts) != list(range(1, len(counts) + 1)))
    return Verdict(expected_rows, len(key), lost, duplicated, unexpected, len(gaps), mismatched, tuple(gaps[:5]))
