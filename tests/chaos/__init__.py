"""A chaos run: a fault schedule, injectors acting on real processes, the job, and the output checker."""
