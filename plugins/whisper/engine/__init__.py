"""The Whisper engine: weights, mel, encoder backends, the decoder and its search, teacher-forced scoring."""
