"""Redis adapters: the shared window cache and rate limiter."""
