"""The job of tests.helpers.savepoint_jobs written for Apache Flink (PyFlink), run by Flink's own CLI on a real
Flink cluster: v1 counts rows per key (uid ``counts``) and keeps each key's largest count (uid ``maxes``); v2 is
v1 without ``maxes``. Input: sequence numbers 0..rows-1 (uid ``src``), each held 10 ms by v1 (uid ``pace``; v1 is
stopped part of the way, v2 reads the rest at full speed), the key ``seq % 10``; output: ``(key,count)`` lines on
the TaskManager's standard output. Run by Flink's Python, not this project's (apache-flink lives in an environment
of its own, tests.helpers.pyflink)::

    flink run -py pyflink_counts.py -pyexec PYTHON v1|v2 ROWS
"""
import sys
import time

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource
from pyflink.datastream.state import ValueStateDescriptor


class Count(KeyedProcessFunction):
    def open(self, ctx: RuntimeContext):
        self.count = ctx.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value[0], n


class Largest(KeyedProcessFunction):
    def open(self, ctx: RuntimeContext):
        self.largest = ctx.get_state(ValueStateDescriptor("largest", Types.LONG()))

    def process_element(self, value, ctx):
        self.largest.update(max(self.largest.value() or 0, value[1]))
        yield value


version, rows = sys.argv[1], int(sys.argv[2])
HOLD_S = 0.01 if version == "v1" else 0.0


def paced(seq):
    time.sleep(HOLD_S)
    return seq % 10, seq


env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.enable_checkpointing(1000)
pair = Types.TUPLE([Types.LONG(), Types.LONG()])
stream = env.from_source(NumberSequenceSource(0, rows - 1), WatermarkStrategy.no_watermarks(), "seq").uid("src")
counted = (stream.map(paced, output_type=pair).uid("pace")
           .key_by(lambda t: t[0], key_type=Types.LONG()).process(Count(), output_type=pair).uid("counts"))
if version == "v1":
    counted = counted.key_by(lambda t: t[0], key_type=Types.LONG()).process(Largest(), output_type=pair).uid("maxes")
counted.print().uid("out")
env.execute(f"pyflink counts {version}")
