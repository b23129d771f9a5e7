"""Python functions for SQL written once for two engines: Flinkbench's tests register them (runtime.udf) and
Apache Flink 2.3 runs the very same source (pyflink.table.udf, in its own venv: tests.helpers.flink_sql); the
tests compare both with the same logic written in pandas (tests/integration/test_python_functions.py)."""
try:
    from pyflink.table import DataTypes
    from pyflink.table.udf import AggregateFunction, udaf, udf, udtf
except ImportError:
    from runtime.udf import AggregateFunction, DataTypes, udaf, udf, udtf


@udf(result_type=DataTypes.STRING())
def band(amount):
    """Row at a time: an amount's band."""
    if amount is None:
        return None
    return "low" if amount < 30 else "mid" if amount < 70 else "high"


@udf(result_type="DOUBLE", func_type="pandas")
def with_tax(amount):
    """Vectorised: a pandas Series in, one out (NULL in, NULL out)."""
    return amount * 1.25


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def segments(url):
    """A url's pieces between the letters 'a', with their positions."""
    for position, piece in enumerate(url.strip("/").split("a")):
        if piece:
            yield piece, position


@udtf(result_types="INT")
def digits(amount):
    """The digits of an amount's whole part; nothing for NULL (LEFT JOIN LATERAL keeps the row)."""
    if amount is None:
        return
    for d in str(int(amount)):
        yield int(d)


class MeanOf(AggregateFunction):
    """The mean of the non-NULL values: accumulators merge and retract."""

    def create_accumulator(self):
        return [0.0, 0.0]

    def accumulate(self, accumulator, value):
        if value is not None:
            accumulator[0] += value
            accumulator[1] += 1

    def retract(self, accumulator, value):
        if value is not None:
            accumulator[0] -= value
            accumulator[1] -= 1

    def merge(self, accumulator, accumulators):
        for other in accumulators:
            accumulator[0] += other[0]
            accumulator[1] += other[1]

    def get_value(self, accumulator):
        return accumulator[0] / accumulator[1] if accumulator[1] else None


class Longest(AggregateFunction):
    """The longest string (the smallest of equally long ones): accumulates only (no merge, no retract)."""

    def create_accumulator(self):
        return [None]

    def accumulate(self, accumulator, value):
        if value is not None and (accumulator[0] is None or (-len(value), value) < (-len(accumulator[0]), accumulator[0])):
            accumulator[0] = value

    def get_value(self, accumulator):
        return accumulator[0]


mean_of = udaf(MeanOf(), result_type=DataTypes.DOUBLE(), accumulator_type=DataTypes.ARRAY(DataTypes.DOUBLE()))
longest = udaf(Longest(), result_type=DataTypes.STRING(), accumulator_type=DataTypes.ARRAY(DataTypes.STRING()))


@udaf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def median(amount):
    """Vectorised: the median of a window's values (a pandas Series in, one value out)."""
    return float(amount.median()) if amount.notna().any() else None


FUNCTIONS = ["band", "with_tax", "segments", "digits", "mean_of", "longest", "median"]
