"""Tool collisions: the catalog scan (TC001–TC005, TC010, TC011) and the replay of observed calls
(TC006–TC009) — lexical candidates, bounded schema intersection, witnesses."""

from histor_sign.collisions._partition import Mapper, dask_mapper, local_mapper
from histor_sign.collisions._replay import ReplayOptions, ReplayResult, replay, replay_paths
from histor_sign.collisions._scanner import (
    ScanOptions,
    ScanResult,
    scan,
    scan_catalogs,
    scan_paths,
    scan_tools,
)

__all__ = [
    "Mapper",
    "ReplayOptions",
    "ReplayResult",
    "ScanOptions",
    "ScanResult",
    "dask_mapper",
    "local_mapper",
    "replay",
    "replay_paths",
    "scan",
    "scan_catalogs",
    "scan_paths",
    "scan_tools",
]
