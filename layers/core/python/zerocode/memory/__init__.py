"""Conversation memory: the transcript, the window derived from it, and the facade the engine
uses (docs/memory.md).
"""
