"""The Python DataStream API."""
from runtime.api.datastream import DataStream, DataStreamSink, KeyedStream
from runtime.api.environment import StreamExecutionEnvironment
from runtime.api import functions, process
from runtime.api.process import (KeyedProcessFunction, ListStateDescriptor, MapStateDescriptor,
                                 ValueStateDescriptor)

__all__ = ["DataStream", "DataStreamSink", "KeyedStream", "StreamExecutionEnvironment", "functions", "process",
           "KeyedProcessFunction", "ValueStateDescriptor", "ListStateDescriptor", "MapStateDescriptor"]
