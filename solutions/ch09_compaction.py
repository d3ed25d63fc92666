"""Chapter 09: the verbatim appendix and the ladder's decision. The runtime's own code."""

from minimal_runtime.features.compaction import appendix, ladder_step

__all__ = ["appendix", "ladder_step"]
