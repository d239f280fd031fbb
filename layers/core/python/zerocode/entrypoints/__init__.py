"""How the platform starts: the local server, the Lambda handlers, the CLI and the demo."""
