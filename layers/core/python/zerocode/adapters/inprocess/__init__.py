"""In-process adapters: the window cache and rate limiter held in this process's memory."""
