"""The daemon's core: main loop, broker, requests, supervisor, profile switching and the hooks it runs."""
