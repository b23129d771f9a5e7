"""Restart strategies with Flink's config keys: fixed-delay, failure-rate, exponential-delay, none.

A strategy answers one question after each failure: restart (after how long) or give up. Left unset,
the strategy is ``none`` for jobs without checkpointing and ``fixed-delay`` for jobs with it, as in
Flink, so that a deterministic error in a plain job fails it instead of looping.
"""
from __future__ import annotations

import collections
import time
from dataclasses import dataclass

from runtime.config import Configuration


@dataclass
class RestartDecision:
    restart: bool
    delay_s: float
    reason: str = ""


class RestartStrategy:
    """Decides after each failure whether the job restarts, and after how long; this base never restarts."""
    name = "none"

    def on_failure(self, now: float | None = None) -> RestartDecision:
        return RestartDecision(False, 0.0, "restart-strategy.type is none")


class FixedDelay(RestartStrategy):
    """restart-strategy.type fixed-delay: a fixed number of restarts, each after the same delay."""
    name = "fixed-delay"

    def __init__(self, attempts: int, delay: float):
        self.attempts, self.delay, self.used = attempts, delay, 0

    def on_failure(self, now=None):
        if self.used >= self.attempts:
            return RestartDecision(False, 0.0, f"fixed-delay restart strategy used all {self.attempts} attempts")
        self.used += 1
        return RestartDecision(True, self.delay)


class FailureRate(RestartStrategy):
    """restart-strategy.type failure-rate: restart unless too many failures fall within the interval."""
    name = "failure-rate"

    def __init__(self, max_failures: int, interval: float, delay: float):
        self.max_failures, self.interval, self.delay = max_failures, interval, delay
        self.failures: collections.deque[float] = collections.deque()

    def on_failure(self, now=None):
        now = time.monotonic() if now is None else now
        self.failures.append(now)
        while self.failures and now - self.failures[0] > self.interval:
            self.failures.popleft()
        if len(self.failures) > self.max_failures:
            return RestartDecision(False, 0.0, f"more than {self.max_failures} failures within {self.interval:g} s")
        return RestartDecision(True, self.delay)


class ExponentialDelay(RestartStrategy):
    """restart-strategy.type exponential-delay: a pause that grows per failure and resets after a quiet time."""
    name = "exponential-delay"

    def __init__(self, initial: float, maximum: float, multiplier: float, reset_after: float, attempts: int):
        self.initial, self.maximum, self.multiplier = initial, maximum, multiplier
        self.reset_after, self.attempts = reset_after, attempts
        self.current, self.used, self.last = initial, 0, None

    def on_failure(self, now=None):
        now = time.monotonic() if now is None else now
        if self.last is not None and now - self.last > self.reset_after:
            self.current, self.used = self.initial, 0
        self.last = now
        if self.used >= self.attempts:
            return RestartDecision(False, 0.0, f"exponential-delay restart strategy used all {self.attempts} attempts")
        self.used += 1
        delay = self.current
        self.current = min(self.current * self.multiplier, self.maximum)
        return RestartDecision(True, delay)


def restart_strategy(conf: Configuration) -> RestartStrategy:
    """The strategy ``restart-strategy.type`` names, with Flink's default when it is unset."""
    kind = conf.get("restart-strategy.type")
    if kind is None:
        kind = "fixed-delay" if conf.get("execution.checkpointing.interval") > 0 else "none"
    if kind == "fixed-delay":
        return FixedDelay(conf.get("restart-strategy.fixed-delay.attempts"), conf.get("restart-strategy.fixed-delay.delay"))
    if kind == "failure-rate":
        return FailureRate(conf.get("restart-strategy.failure-rate.max-failures-per-interval"),
                           conf.get("restart-strategy.failure-rate.failure-rate-interval"),
                           conf.get("restart-strategy.failure-rate.delay"))
    if kind == "exponential-delay":
        return ExponentialDelay(conf.get("restart-strategy.exponential-delay.initial-backoff"),
                                conf.get("restart-strategy.exponential-delay.max-backoff"),
                                conf.get("restart-strategy.exponential-delay.backoff-multiplier"),
                                conf.get("restart-strategy.exponential-delay.reset-backoff-threshold"),
                                conf.get("restart-strategy.exponential-delay.attempts-before-reset-backoff"))
    return RestartStrategy()
