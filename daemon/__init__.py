"""tcccd: the voice daemon of a combat medic's kit."""

__version__ = "0.1.0"
