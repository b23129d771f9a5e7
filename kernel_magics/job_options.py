"""``--parallelism N --checkpoint-interval DURATION --mode streaming|batch --from-savepoint PATH
[--allow-non-restored-state]``: the options
that shape the jobs a cell submits, declared and applied in one place for ``%%flink`` and ``%%flink sql``."""
from __future__ import annotations

from typing import Any

from IPython.core.magic_arguments import argument

from kernel_magics.errors import FlinkError

JOB_ARGUMENTS = (
    (("--parallelism",), {"type": int, "metavar": "N", "help": "default parallelism of the job's operators"}),
    (("--checkpoint-interval",), {"metavar": "DURATION", "help": "checkpoint every DURATION, e.g. 5s"}),
    (("--mode",), {"choices": ["streaming", "batch"], "help": "execution mode (batch implies --wait)"}),
    (("--from-savepoint",), {"metavar": "PATH", "help": "start from this savepoint or retained checkpoint"}),
    (("--allow-non-restored-state",), {"action": "store_true",
                                       "help": "with --from-savepoint: drop the state no operator of the job claims "
                                               "(Flink's --allowNonRestoredState)"}),
)


def job_arguments(options):
    """Add the job options to a magic's ``magic_arguments`` function, where the decorator stands."""
    for flags, kwargs in reversed(JOB_ARGUMENTS):
        options = argument(*flags, **kwargs)(options)
    return options


def apply_job_options(env: Any, args, magic: str) -> Any:
    """Set the options ``args`` carry on ``env`` (a StreamExecutionEnvironment); a FlinkError names a bad one."""
    try:
        if args.parallelism is not None:
            env.set_parallelism(args.parallelism)
        if args.checkpoint_interval:
            env.enable_checkpointing(args.checkpoint_interval)
        if args.mode:
            env.set_runtime_mode(args.mode)
        if args.from_savepoint:
            env.from_savepoint(args.from_savepoint, args.allow_non_restored_state)
        elif args.allow_non_restored_state:
            raise FlinkError(f"{magic} options: --allow-non-restored-state goes with --from-savepoint PATH")
    except ValueError as err:  # ConfigurationError is one
        raise FlinkError(f"{magic} options: {err}") from None
    return env
