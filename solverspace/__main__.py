import sys

from solverspace.cli import main

sys.exit(main())
