"""Battery, power and thermal readings, and the policy that caps the profile by them.

Everything here reads files under a host root (`/` on the box, a temporary tree in tests), so the
same code runs against a Jetson, a laptop and a fake sysfs without a branch.
"""
