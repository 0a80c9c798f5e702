"""The rules that reject a candidate, one module per rule (filled in below)."""
