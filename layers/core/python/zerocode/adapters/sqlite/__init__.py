"""SQLite adapters: the embedded default for one machine, one database file."""
