"""Saved, versioned finance scenarios: a named workload and the plans to compare over years."""
