"""The Wyoming front door: Home Assistant and other Wyoming clients served as ordinary tcccd clients."""
