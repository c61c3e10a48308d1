"""`python -m tinyhost.cli`."""

import sys

from tinyhost.cli import main

sys.exit(main())
