"""Chat model adapters: the OpenAI-compatible client and the offline scripted model."""
