"""The casualty card stage: deterministic rules that turn a final transcript into DD Form 1380 events."""
