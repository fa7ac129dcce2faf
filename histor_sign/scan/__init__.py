"""Catalog collision scan: lexical candidates, bounded schema intersection, witnesses."""

from histor_sign.scan._scanner import (
    ScanOptions,
    ScanResult,
    scan_catalogs,
    scan_paths,
    scan_tools,
)

__all__ = ["ScanOptions", "ScanResult", "scan_catalogs", "scan_paths", "scan_tools"]
