"""The SQL conformance suite: queries from the pages of Flink's SQL reference, each answered by Apache Flink 2.3
(PyFlink) and by Flinkbench over the same files, the final tables compared exactly, types included.

``make sql-conformance`` runs it (tests/conformance/test_conformance.py). A case is one entry of a page module
under tests/conformance/pages/ (runtime.sql's pages of the reference, one module each, found by name); the tables
all pages query are in tests/conformance/tables.py, and a page module may add its own (``TABLES``, ``VIEWS``).
"""
