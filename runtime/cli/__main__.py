"""``python -m runtime.cli``: the ``flinkbench`` command (LocalCluster starts its processes this way)."""
import sys

from runtime.cli import main

sys.exit(main())
