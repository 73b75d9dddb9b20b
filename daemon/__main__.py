import sys

from tcccd.cli import main

sys.exit(main())
