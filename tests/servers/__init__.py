"""Servers the tests start on loopback (an OpenAI-compatible chat endpoint)."""
