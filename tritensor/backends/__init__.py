"""Backends: the NumPy reference (cpu) and the Triton launchers (cuda)."""
