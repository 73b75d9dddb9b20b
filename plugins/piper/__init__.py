"""Piper: text to speech, the first sentence in pieces so that its first audio leaves early."""
