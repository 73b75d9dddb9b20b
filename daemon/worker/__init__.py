"""The worker process: hosts stages and serves them over ZeroMQ (`python -m tcccd.worker SPEC.json`)."""
