"""Memory accounting and the capper that keeps tcccd inside its budget.

`readers` reads the kernel's figures under a host root, `budget` works out the
budget and each worker's share, `policy` decides the cheapest action that
helps, `capper` carries it out through the daemon, and `release` runs inside a
worker when it is asked to give memory back.
"""
