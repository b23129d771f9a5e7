"""The SQL conformance suite (``make sql-conformance``): every case of tests/conformance/pages answered by Apache
Flink 2.3 (PyFlink, streaming, parallelism 2) and by Flinkbench on one shared local cluster, compared exactly.

Flink's run of all cases is one PyFlink process started first, in the background, so that it overlaps
Flinkbench's. The report (per page: counted, exact, refused, different, failed) is printed and written to
``$SQL_CONFORMANCE_REPORT`` (default test-output/sql-conformance.txt). ``$SQL_CONFORMANCE_PAGES`` (page module names,
comma-separated) runs only those pages, while one is being worked on; the count of cases is then not checked.
"""
from __future__ import annotations

import concurrent.futures
import os
from pathlib import Path

import pytest

from runtime.table import StreamTableEnvironment
from tests.conformance.harness import VERDICTS, flinkbench_answer, report, verdict
from tests.conformance.pages import pages
from tests.conformance.tables import TABLES

ONLY = os.environ.get("SQL_CONFORMANCE_PAGES", "")  # page modules to run, comma-separated (default: all)
PAGES = pages(ONLY)
CASES = [(page.title, case) for page in PAGES for case in page.cases]
MIN_CASES = 250  # counted or not; Flink rejects a few
MIN_EXACT_SHARE = 0.95
FLINK_TIMEOUT_S = 3600
FLINK_BATCH = 4  # queries whose jobs PyFlink runs side by side
# the first test waits for every case of both engines (the suite's usual 600 s is per test)
pytestmark = [pytest.mark.conformance, pytest.mark.slow, pytest.mark.timeout(FLINK_TIMEOUT_S + 600)]


def _setup(folder: Path) -> list[str]:
    """The tables' files under ``folder`` and every statement both engines run before the queries."""
    tables = TABLES + [t for page in PAGES for t in page.tables]
    for table in tables:
        table.write(folder)
    return [t.ddl(folder) for t in tables] + [v for page in PAGES for v in page.views]


@pytest.fixture(scope="module")
def outcomes(cluster, tmp_path_factory):
    from tests.helpers.flink_sql import flink_answers

    folder = tmp_path_factory.mktemp("conformance")
    statements = _setup(folder / "data")
    queries = {case.name: case.sql for _, case in CASES}
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyflink") as pool:
        flink = pool.submit(flink_answers, statements, queries, folder / "pyflink", FLINK_TIMEOUT_S, FLINK_BATCH)
        env = cluster.environment()
        env.set_parallelism(2)
        t_env = StreamTableEnvironment.create(env)
        t_env.get_config().set("table.local-time-zone", "UTC")
        for statement in statements:
            t_env.execute_sql(statement)
        ours = {case.name: flinkbench_answer(t_env, case.sql) for _, case in CASES}
        answers = flink.result()
    found = {case.name: verdict(page, case.name, case.sql, answers[case.name], ours[case.name]) for page, case in CASES}
    text = report(list(found.values()))
    target = Path(os.environ.get("SQL_CONFORMANCE_REPORT", "test-output/sql-conformance.txt"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text + "\n")
    print("\n" + text)
    return found


@pytest.mark.parametrize("page, case", CASES, ids=[case.name for _, case in CASES])
def test_flinkbench_gives_flinks_answer_or_refuses_clearly(outcomes, page, case):
    outcome = outcomes[case.name]
    assert outcome.verdict in ("exact", "refused", "not counted"), f"{outcome.verdict}: {outcome.detail}\n{case.sql}"
    if outcome.verdict == "refused":
        assert "not supported" in outcome.detail or "is not" in outcome.detail, outcome.detail


def test_most_of_what_flink_answers_is_answered_exactly(outcomes):
    counted = [o for o in outcomes.values() if o.verdict in VERDICTS[:4]]
    exact = [o for o in counted if o.verdict == "exact"]
    assert ONLY or len(CASES) >= MIN_CASES, f"{len(CASES)} cases; the suite promises at least {MIN_CASES}"
    assert len(exact) >= MIN_EXACT_SHARE * len(counted), f"{len(exact)} of {len(counted)} counted cases exact"
