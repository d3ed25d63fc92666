"""What a notebook shows: a call's prompt, block by block, in its cache regions."""

from .call import CallView

__all__ = ["CallView"]
