"""Facts about providers: the per-model table (sourced, dated) and dollars from usage."""
