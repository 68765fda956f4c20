"""Keeping current: folder watch and sync, source syncs with checkpoints, and their status."""
