"""Start FreeTAKServer 2.2.1 listening on loopback only (run by the separate venv's python, never tcccd's).

FreeTAKServer's data package services bind 0.0.0.0 whatever `-DataPackageIP`
says (DataPackageServerConstants hard-codes it); this sets it to 127.0.0.1
before FreeTAKServer starts, then runs its own main with the arguments given.
tests.support.takserver starts it and checks every socket it listens on.
"""

from __future__ import annotations

import runpy
import sys

from FreeTAKServer.core.configuration import DataPackageServerConstants as constants

_init = constants.DataPackageServerConstants.__init__


def _loopback(self: object, *args: object, **kwargs: object) -> None:
    _init(self, *args, **kwargs)
    self.IP = "127.0.0.1"  # type: ignore[attr-defined]


constants.DataPackageServerConstants.__init__ = _loopback  # type: ignore[method-assign]
sys.argv = ["FreeTAKServer", *sys.argv[1:]]
runpy.run_module("FreeTAKServer.controllers.services.FTS", run_name="__main__")
