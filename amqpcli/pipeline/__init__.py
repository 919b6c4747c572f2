"""Capture sets → tables (connections, sessions, links, frames, deliveries, violations)."""
