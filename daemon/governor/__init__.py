"""The running profile: chosen from battery, heat and memory, and applied to the workers."""
