"""Apps: their records, workspaces, the one-turn-per-app lease, deletion and input guards."""
