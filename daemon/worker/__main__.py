"""`python -m tcccd.worker SPEC.json`: how the supervisor starts a worker process.

It leaves through os._exit, as multiprocessing's workers do: by then its stages are torn down and its sockets
closed, and the interpreter's own teardown only cost time (0.5-1 s more for a Whisper worker here, freeing torch's
modules one by one) or hung (PortAudio's terminate at exit under a frozen sound server), out of the lifeline's
reach once the interpreter is finalizing.
"""

import os
import sys

from tcccd.worker.process import main

code = main()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
