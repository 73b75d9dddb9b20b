"""System glue: systemd notification and policy, journald logging, the nvpmodel root helper."""
