"""`python -m solverspace.cli`, as `python -m solverspace`."""
import sys

from solverspace.cli import main

sys.exit(main())
