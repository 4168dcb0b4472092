"""tt.nn.utils: gradient clipping and parameter helpers."""
