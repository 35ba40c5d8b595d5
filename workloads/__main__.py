"""Entry point: ``python -m workloads``."""

import sys

from workloads.cli import main

sys.exit(main())
