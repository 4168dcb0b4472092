"""Triton kernels, one file per family. Imports only triton / triton.language (never tritensor),
so every kernel can be run alone; installed as the subpackage ``tritensor.kernels``."""
