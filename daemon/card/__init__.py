"""The casualty card on the daemon's side: keeper, requests, missions, read-back, event log, projection, exports."""
