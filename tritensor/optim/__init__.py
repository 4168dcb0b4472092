"""tt.optim: optimizers and learning-rate schedulers with torch's names and semantics."""
