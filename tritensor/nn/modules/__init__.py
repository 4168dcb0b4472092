"""tt.nn modules: Module and the layers built on it."""
