"""The whisper stage: files and live streams, VAD, packing, partials."""
