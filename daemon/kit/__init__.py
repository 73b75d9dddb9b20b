"""The plugin kit: what a plugin is built from and tested with (base class, stage contract, audio, accelerators)."""
