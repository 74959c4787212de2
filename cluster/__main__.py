"""`python -m cluster ...` is `bmn ...` (handy under `ray job submit` without installing bmn)."""

import sys

from .cli import main

sys.exit(main())
