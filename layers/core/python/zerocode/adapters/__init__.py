"""Adapters: one module per technology, each implementing ports from the domain modules."""
