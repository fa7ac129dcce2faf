"""Implementation details: no stability promise; import from ``histor_sign`` instead."""
