"""Settings, and wiring them into a platform per mode."""
