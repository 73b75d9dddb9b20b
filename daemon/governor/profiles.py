"""The one place profile files are read: each profile once per config in force, and which ones are installed.

A profile (profiles/*.yaml, or `profiles_dir`) overlays plugin parameters and
carries the memory budget, power mode and read-back setting of its mode of
operation. Everything that needs one (the switcher validating a switch, the
governor's power mode, the memory hook's budget, the read-back, the stage
parameters a worker starts with) asks this book, which reads each file once per
config in force and again after a reload (SIGHUP), when it may have changed.
"""

from __future__ import annotations

from tcccd import config as cfg
from tcccd.ports import ConfigSource


class ProfileBook:
    def __init__(self, config: ConfigSource) -> None:
        self.config = config
        self._read_for: cfg.Config | None = None
        self._files: dict[str, cfg.ProfileFile] = {}

    def load(self, name: str) -> cfg.ProfileFile:
        """The profile's settings; ConfigError (naming the file and what is wrong) when it cannot be used."""
        config = self.config.current()
        if config is not self._read_for:
            self._read_for, self._files = config, {}
        if name not in self._files:
            self._files[name] = cfg.load_profile(config, name)
        return self._files[name]

    def available(self) -> list[str]:
        return cfg.available_profiles(self.config.current())
