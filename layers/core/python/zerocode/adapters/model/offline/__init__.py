"""The offline scripted model: the OpenAI wire format, the answer script, page templates."""
