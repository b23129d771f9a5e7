"""The Python DataStream API."""
from runtime.api.datastream import DataStream, DataStreamSink, KeyedStream
from runtime.api.environment import StreamExecutionEnvironment
from runtime.api import functions

__all__ = ["DataStream", "DataStreamSink", "KeyedStream", "StreamExecutionEnvironment", "functions"]
