import sys

from tcccd.cli.main import main

sys.exit(main())
