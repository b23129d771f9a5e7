"""Metrics where operators look for them: a Prometheus endpoint on every JobManager and TaskManager,
with Flink's metric names (endpoint.py serves, families.py names)."""
