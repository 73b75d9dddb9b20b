"""The wire: the envelope every socket carries, a typed model per message, and the Python client."""
