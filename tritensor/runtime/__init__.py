"""Devices, memory and the torch-free Triton launch layer: the only code that talks to CUDA."""
