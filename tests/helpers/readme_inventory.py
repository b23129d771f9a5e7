"""Every command the README shows (tests.helpers.readme.commands), and what becomes of it in the tests: run by a
test that takes it from the README's text (``Run``), run by a test that writes the same command its own way
(``Elsewhere``, with how it differs), or not run on this machine (``NotRun``, with the reason).

tests/unit/test_readme_commands.py fails when the README shows a command this does not list, or this lists one
the README no longer shows: a new command in the README must be run by a test or said here why it cannot be.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    """Run by ``test``, which reads the command from the README (tests.helpers.readme)."""
    test: str


@dataclass(frozen=True)
class Elsewhere:
    """Run by ``test``, which writes the same command its own way: ``how``."""
    test: str
    how: str


@dataclass(frozen=True)
class NotRun:
    """Not run on this machine: ``reason``."""
    reason: str


NOTEBOOK = "tests/notebooks/test_readme_notebook.py"
NEWCOMER = "tests/ui/test_newcomer.py"  # the "In a notebook" section's cells, pasted into JupyterLab in Chromium
CLI = "tests/integration/test_cli.py"
USERS = "tests/integration/test_users.py"
WHEEL = "tests/install/test_wheel_install.py"
SAVED_VIEWS = "tests/notebooks/test_saved_views.py"
CERTIFICATES = "tests/helpers/certificates.py"  # every TLS test makes its certificates with them
PYTHON = "Python shown as an example of the API, not a command: "
ANOTHER_MACHINE = ("names hosts of another deployment ({}); no test may reach out of this machine, and {} plays the "
                   "same set-up here")

CLICKS_CELL = ("from runtime.examples import clicks\n"
               "clicks.build(env, rows=None, rows_per_second=1000, realtime=True, users=50)")

PYTHON_FUNCTIONS = "tests/notebooks/test_python_function_errors.py"
PYTHON_FUNCTIONS_CELL = """%%flink sql --wait
CREATE TEMPORARY SYSTEM FUNCTION band AS 'my_functions.band' LANGUAGE PYTHON;
CREATE TEMPORARY SYSTEM FUNCTION pieces AS 'my_functions.pieces' LANGUAGE PYTHON;
CREATE TEMPORARY SYSTEM FUNCTION mean_of AS 'my_functions.mean_of' LANGUAGE PYTHON;
CREATE TABLE visits (url STRING, amount DOUBLE, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
WITH ('connector' = 'datagen', 'number-of-rows' = '2000', 'fields.url.length' = '6',
      'fields.amount.min' = '0', 'fields.amount.max' = '100');
SELECT window_start, band(amount) AS band, COUNT(*) AS visits, mean_of(amount) AS mean
FROM TABLE(TUMBLE(TABLE visits, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, band(amount);
SELECT url, piece, pos FROM visits, LATERAL TABLE(pieces(url)) AS P(piece, pos)"""

DATABASE_CELL = """%%flink sql --checkpoint-interval 1s
CREATE TABLE orders (
  id BIGINT, customer_id INT, amount DECIMAL(10, 2), proc_time AS PROCTIME(),
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'postgres-cdc', 'hostname' = '127.0.0.1', 'port' = '5432', 'username' = 'flinkbench',
        'password' = 'flinkbench-secret', 'database-name' = 'shop', 'schema-name' = 'public',
        'table-name' = 'orders', 'slot.name' = 'revenue_orders');
CREATE TABLE customers (id INT, name STRING, country STRING, PRIMARY KEY (id) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5432/shop', 'table-name' = 'customers',
      'username' = 'flinkbench', 'password' = 'flinkbench-secret',
      'lookup.cache.max-rows' = '1000', 'lookup.cache.ttl' = '10 s');
CREATE TABLE revenue (country STRING, orders BIGINT, total DECIMAL(12, 2), PRIMARY KEY (country) NOT ENFORCED)
WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5432/shop', 'table-name' = 'revenue',
      'username' = 'flinkbench', 'password' = 'flinkbench-secret');
INSERT INTO revenue
SELECT c.country, COUNT(*), SUM(o.amount)
FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id
GROUP BY c.country"""

INVENTORY: dict[str, Run | Elsewhere | NotRun] = {
    # Install, and In a notebook (the newcomer's cells; tests/ui/test_newcomer.py runs them all in JupyterLab)
    "sudo apt-get install openjdk-17-jre-headless": NotRun(
        "changes the machine's system packages; make test installs Java through scripts/install-system-deps.sh, and "
        "tests/install/test_java_check.py checks the one line said when Java is missing"),
    'pip install "flinkbench[jupyter]"': Run(WHEEL),
    "jupyter lab": Run(WHEEL),
    "%load_ext kernel_magics": Run(NOTEBOOK),
    "%flink local --taskmanagers 2 --slots 2": Run(NOTEBOOK),
    "%%flink --name clicks --parallelism 2 --checkpoint-interval 2s\n" + CLICKS_CELL: Run(NOTEBOOK),
    "%%flink sql --name tumble-sql\n"
    "CREATE TABLE clicks (`user` BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3),\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n"
    ") WITH ('connector' = 'datagen', 'rows-per-second' = '1000', 'fields.user.min' = '0', 'fields.user.max' = '9');\n"
    "SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS total\n"
    "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
    "GROUP BY window_start, window_end, `user`": Run(NEWCOMER),
    # From a clone
    "make demo": Run("tests/integration/test_demo.py"),
    "make test": NotRun("the whole suite, which this test is part of: the lead runs it when branches land"),
    "make sql-conformance": NotRun("the SQL conformance suite against Apache Flink, a run of its own after make test "
                                   "(.ci/run calls it): tens of minutes of two engines on every query page"),
    "make lint": NotRun("static checks, run by .ci/run before the suite rather than by a test"),
    "make dist": Elsewhere(WHEEL, "builds the same sdist and wheel with `python -m build`, as make dist does, and "
                                  "installs the wheel"),
    "make bench": NotRun("prints figures against Spark Structured Streaming over about an hour: a benchmark, not a "
                         "test (figures are meaningless on a shared, loaded machine)"),
    "make bench-report": NotRun("make bench's hour of figures, then its report step, which "
                                "tests/unit/benchmarks/test_report.py runs (python -m tests.benchmarks.report) on "
                                "made-up figures: plots and tables written beside the JSON"),
    "make screenshots": NotRun("rewrites the README's pictures; tests/ui takes the same screenshots into test-output"),
    # Streaming SQL
    "%%flink sql --result-mode changelog\n"
    "CREATE TABLE clicks (`user` BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3),\n"
    "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n"
    ") WITH ('connector' = 'datagen', 'rows-per-second' = '1000', 'fields.user.min' = '0', 'fields.user.max' = '9');\n"
    "SELECT `user`, COUNT(*) AS clicks FROM clicks GROUP BY `user`": Run(NOTEBOOK),
    # Databases
    'pip install "flinkbench[postgres]"': NotRun(
        "changes the Python environment; make setup installs the same psycopg through the test extra (all includes "
        "postgres), and the wheel test installs the runtime alone"),
    "%flink local --taskmanagers 2 --slots 2 -D spark.jars=/usr/share/java/postgresql.jar": Elsewhere(
        "tests/integration/test_jdbc.py", "its scan runs on the shared test cluster, started with the same spark.jars "
                                          "(tests/helpers/postgres.jdbc_driver_config), not from a notebook"),
    DATABASE_CELL: Run("tests/integration/test_jdbc.py"),
    # Python functions and dependencies
    "%flink add-file my_functions.py": Elsewhere(
        PYTHON_FUNCTIONS, "my_functions.py is the README's file of functions written into a temporary folder, added "
                          "by its full path (the kernel's working directory is the repository)"),
    PYTHON_FUNCTIONS_CELL: Run(PYTHON_FUNCTIONS),
    # Checkpoints, savepoints, recovery
    'curl -X POST -H "Authorization: Bearer $(cat TOKEN_FILE)" $JM/jobs/$JOB/stop -d \'{"targetDirectory": "/tmp/sp"}\'':
        Run(CLI),
    'curl -H "Authorization: Bearer ..." $JM/jobs/$JOB/savepoints/$REQUEST_ID': Run(CLI),
    "env.from_savepoint(location); env.set_parallelism(3)": Elsewhere(
        "tests/integration/test_checkpoints.py", PYTHON + "it resumes jobs from savepoints at other parallelisms"),
    # The savepoint browser
    "%flink savepoints": Elsewhere("tests/ui/test_savepoint_fronts.py", "a notebook of its own, in JupyterLab"),
    "%flink savepoints show PATH": Elsewhere("tests/ui/test_savepoint_fronts.py", "with the path of its savepoint"),
    "%flink drilldown JOB": Elsewhere("tests/ui/test_drilldown_fronts.py", "with an id prefix of its job"),
    "%flink drilldown JOB --task Heavy --subtask 3": Elsewhere(
        "tests/ui/test_drilldown_fronts.py", "its job's task is Source, its subtask 1"),
    "%flink savepoints check PATH --job JOB": Elsewhere("tests/ui/test_savepoint_fronts.py",
                                                        "against the job that took its savepoint, by an id prefix"),
    "flinkbench run -s PATH --allowNonRestoredState job.py": Elsewhere(
        "tests/integration/test_savepoint_browser.py", "with the shared cluster's -m and --token-file and its own job "
                                                       "program, once without the flag (refused) and once with it"),
    # High availability
    "LocalCluster(jobmanagers=2, taskmanagers=2)": Elsewhere(
        "tests/integration/test_high_availability.py", PYTHON + "its clusters are LocalCluster(jobmanagers=2, ...)"),
    "%flink local --jobmanagers 2": Elsewhere(
        "tests/notebooks/test_jobmanager_failover.py", "adds --taskmanagers 1 --slots 1 and kills the leader"),
    "flinkbench jobmanager -D high-availability.type=file -D high-availability.storageDir=/shared/ha": NotRun(
        ANOTHER_MACHINE.format("/shared/ha, a directory the JobManagers' machines share",
                               "tests/integration/test_high_availability.py")),
    "flinkbench taskmanager --jobmanager URL --token-file F -D high-availability.type=file "
    "-D high-availability.storageDir=/shared/ha": NotRun(
        ANOTHER_MACHINE.format("/shared/ha", "tests/integration/test_high_availability.py")),
    # History server
    "flinkbench historyserver -D historyserver.archive.fs.dir=/shared/archives -D security.token-file=/shared/token":
        Elsewhere("tests/integration/test_job_archives.py", "the same keys with an S3 directory and a token file of its "
                  "own (and a free port), through tests/helpers/history.py; also after a leader's death in "
                  "tests/integration/test_high_availability.py"),
    # Resource providers
    "flinkbench cluster start --taskmanagers 0 --slots 2 -D resourcemanager.taskmanager-timeout='10 s'": Run(CLI),
    "%flink local --taskmanagers 1 -D resourcemanager.standby-taskmanagers=1": Elsewhere(
        "tests/integration/test_resource_provider.py", "a LocalCluster with resourcemanager.standby-taskmanagers, "
                                                       "not a notebook"),
    'LocalCluster(taskmanagers=0, config={"resourcemanager.provider": "local"})': Elsewhere(
        "tests/integration/test_resource_provider.py", PYTHON + "its clusters start this way"),
    # Spark clusters
    "flinkbench taskmanager --jobmanager URL --token-file F -D spark.master=spark://spark-master:7077 "
    "-D spark.cores.max=2 -D spark.executor.memory=2g -D spark.master=yarn -D spark.submit.deployMode=client "
    "-D spark.master=k8s://https://api:6443 -D spark.kubernetes.container.image=spark-py:4.3": NotRun(
        ANOTHER_MACHINE.format("a Spark master, YARN, Kubernetes", "tests/integration/test_spark_engines.py (a "
                                                                   "standalone master and workers)")),
    "flinkbench taskmanager ... -D spark.remote=sc://connect-host:15002": NotRun(
        ANOTHER_MACHINE.format("connect-host", "tests/integration/test_spark_engines.py (a Spark Connect server)")),
    'LocalCluster(config={"spark.master": "spark://..."})': Elsewhere(
        "tests/integration/test_spark_engines.py", PYTHON + "with its own standalone master's address"),
    # Several machines
    "flinkbench jobmanager -D rest.address=jm-1.example -D rest.bind-address=0.0.0.0 -D rest.port=8081 "
    "-D security.token-file=/etc/flinkbench/token -D state.checkpoints.dir=s3://bucket/checkpoints": NotRun(
        ANOTHER_MACHINE.format("jm-1.example, s3://bucket", "tests/integration/test_several_hosts.py (127.0.0.1-3)")),
    "flinkbench taskmanager --jobmanager http://jm-1.example:8081 --token-file /etc/flinkbench/token "
    "-D taskmanager.host=$(hostname -f) -D taskmanager.bind-host=0.0.0.0 --slots 4": NotRun(
        ANOTHER_MACHINE.format("jm-1.example", "tests/integration/test_several_hosts.py (127.0.0.1-3)")),
    # Command line
    "flinkbench cluster start [--taskmanagers N] [--slots N] [--conf conf.yaml] [-D key=value ...] [--detach]":
        Run(CLI),
    "flinkbench cluster stop": Run(CLI),
    "flinkbench jobmanager [-c conf.yaml] [-D key=value ...]": Run(CLI),
    "flinkbench taskmanager [-m HOST:PORT] --token-file F --slots N": Run(CLI),
    "flinkbench run [-p N] [-D key=value ...] [-s SAVEPOINT [-n]] [-pyfs FILES] [-pyreq FILE] [--detached] job.py [args]":
        Run(CLI),
    "flinkbench historyserver [-c conf.yaml] [-D key=value ...]": Elsewhere(
        "tests/integration/test_job_archives.py", "tests/helpers/history.py starts it with -D keys of its own"),
    "flinkbench list [-r | -a]": Run(CLI),
    "flinkbench checkpoint JOB": Run(CLI),
    "flinkbench savepoint JOB [DIR]  |  flinkbench savepoint --dispose PATH": Run(CLI),
    "flinkbench stop [--drain] [-p DIR] JOB": Run(CLI),
    "flinkbench cancel JOB": Run(CLI),
    "flinkbench dashboard [JOB]": Run(CLI),
    "flinkbench users add NAME [--slots N] [--admin] [-o FILE]": Run(USERS),
    "flinkbench users list": Run(USERS),
    "flinkbench users remove NAME": Run(USERS),
    "flinkbench --version": Run(CLI),
    # Flink's own CLI
    "export FLINK_HOME=.../site-packages/pyflink": Elsewhere(
        "tests/integration/test_flink_cli.py", "tests/helpers/pyflink.py installs apache-flink into a cached "
                                               "environment and sets FLINK_HOME to its pyflink folder"),
    'export FLINK_REST_CLIENT_HEADERS="Authorization:Bearer $(cat TOKEN_FILE)"': Elsewhere(
        "tests/integration/test_flink_cli.py", "the same header, from the cluster's token"),
    **{f"$FLINK_HOME/bin/flink {verb}": Elsewhere(
        "tests/integration/test_flink_cli.py", "the same verb against a cluster on a free port, not 8081")
       for verb in ("list -a -m 127.0.0.1:8081", "savepoint -m 127.0.0.1:8081 JOB_ID /tmp/sp",
                    "stop -m 127.0.0.1:8081 --savepointPath /tmp/sp JOB_ID", "cancel -m 127.0.0.1:8081 JOB_ID")},
    # TLS
    'openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 -subj "/CN=flinkbench CA" '
    "-keyout ca.key -out ca.pem": Run(CERTIFICATES),
    'openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=flinkbench" -keyout node.key '
    "-out node.csr": Run(CERTIFICATES),
    'printf "subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth,clientAuth\\n" > node.ext':
        Run(CERTIFICATES),
    "openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 365 -extfile node.ext "
    "-out node.pem": Run(CERTIFICATES),
    "chmod 600 ca.key node.key": Run(CERTIFICATES),
    # In a notebook
    "%flink connect http://127.0.0.1:8081 --token-file ~/.flinkbench/token": Elsewhere(
        "tests/notebooks/test_sql_cells.py", "connects to a cluster of its own, on a free port, with its token file"),
    "%flink connect --zookeeper zk1:2181 --token-file ~/.flinkbench/token": NotRun(
        "a ZooKeeper quorum at zk1:2181 of another deployment; no notebook test connects through a quorum yet "
        "(tests/integration/test_high_availability_zookeeper.py follows the leader through RestClient(ha=...))"),
    "%%flink --name clicks --parallelism 2 --checkpoint-interval 2s -o clicks_out\n" + CLICKS_CELL: Run(NOTEBOOK),
    "%flink record JOB counting.jsonl": Elsewhere(SAVED_VIEWS, "records a running job of its own, named by its id, "
                                                              "to a file in the test's folder, and replays it"),
    "%flink replay notebooks/recordings/counting-with-a-lost-taskmanager.jsonl --speed 10": Run(SAVED_VIEWS),
    "make notebooks": Elsewhere("tests/notebooks/test_teaching_notebooks.py", "runs every notebook as make notebooks "
                                "does (in its folder, then tidied) and compares it with the committed copy instead "
                                "of writing it back"),
    "%%flink --name counts --chart line --x window_end --y clicks --by user\n...": NotRun(
        "a sketch: the cell's body is '...'; tests/notebooks/test_result_charts.py runs --chart cells"),
}


def run_by(test: str) -> list[str]:
    """The README's commands ``test`` runs, taken from the README."""
    return [command for command, how in INVENTORY.items() if isinstance(how, Run) and how.test == test]
