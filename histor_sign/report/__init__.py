"""Findings and their renderings (human, JSON, SARIF 2.1.0)."""
