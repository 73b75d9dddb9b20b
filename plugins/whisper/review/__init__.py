"""From what Whisper heard to what the record says: vocabulary, numbers, and every rewrite checked on the audio."""
