"""The history server: jobs that ended, from their archives (runtime.jobmanager.archive)."""
