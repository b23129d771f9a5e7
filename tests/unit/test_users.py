"""The user table: tokens shown once and kept as salted hashes, names checked, versions raised by each change."""
from __future__ import annotations

import json

import pytest

from runtime.users import CLUSTER_ADMIN, UnknownUser, UserError, UserTable


def test_a_token_is_kept_only_as_a_salted_hash_and_finds_its_user():
    table, token = UserTable().add("alice", 2, False)
    table, other = table.add("bob", None, True)
    stored = json.dumps(table.to_plain())
    assert token not in stored and other not in stored
    alice = table.users["alice"]
    assert alice.salt != table.users["bob"].salt
    assert table.find(token).name == "alice" and table.find(other).name == "bob"
    assert table.find(token[:-1] + ("A" if token[-1] != "A" else "B")) is None, "a token differing in one character"
    assert table.find("") is None and table.find("x" * 43) is None
    assert table.users["bob"].caller().admin and not alice.caller().admin


def test_the_plain_form_round_trips_and_each_change_raises_the_version():
    table, token = UserTable().add("alice", 3, False)
    assert table.version == 1
    again = UserTable.from_plain(json.loads(json.dumps(table.to_plain())))
    assert again == table and again.find(token).slots == 3
    removed = again.remove("alice")
    assert removed.version == 2 and removed.find(token) is None
    assert UserTable.from_plain(None) == UserTable()


@pytest.mark.parametrize("name, slots, expected", [
    ("alice", 0, "a slot quota must be at least 1, got 0"),
    (CLUSTER_ADMIN, None, "the cluster token's holder"),
    ("a b", None, "must be 1-64 letters, digits or _.@-"),
    ("", None, "must be 1-64 letters"),
    ("-x", None, "starting with a letter or digit"),
])
def test_bad_users_are_refused_naming_the_problem(name, slots, expected):
    with pytest.raises(UserError, match=expected):
        UserTable().add(name, slots, False)


def test_a_name_is_taken_once_and_an_unknown_one_cannot_be_removed():
    table, _ = UserTable().add("alice", None, False)
    with pytest.raises(UserError, match="user 'alice' exists already"):
        table.add("alice", 1, False)
    with pytest.raises(UnknownUser, match="no user 'bob'"):
        table.remove("bob")
