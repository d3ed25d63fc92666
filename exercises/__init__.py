"""Your work. Fill in a chapter's module until ``.venv/bin/pytest tests/chNN_topic --impl exercises`` passes.
The solved versions are in ``solutions/`` (they are the runtime's own code)."""
