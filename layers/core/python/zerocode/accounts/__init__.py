"""Accounts and per-user rate limits (docs/accounts.md)."""
