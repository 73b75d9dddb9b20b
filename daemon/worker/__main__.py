"""`python -m tcccd.worker SPEC.json`: how the supervisor starts a worker process."""

import sys

from tcccd.worker.process import main

sys.exit(main())
