"""Pattern recognition over ordered rows, as Apache Flink's CEP library does it (the engine under SQL's
MATCH_RECOGNIZE): the pattern compiled into an NFA of states and edges (nfa), the queues whose order decides
which of several matches wins (queue), and the expressions that DEFINE a variable and compute MEASURES
(expressions). Pure Python with no I/O, below both the SQL planner and the TaskManager: the planner ships a
pattern as plain data, the TaskManager's match operator runs it per key.
"""
