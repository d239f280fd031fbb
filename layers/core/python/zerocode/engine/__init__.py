"""The turn: the agent loop, one-shot generation, the tools, the model port, the events it
streams and the system prompts (docs/engine.md).
"""
