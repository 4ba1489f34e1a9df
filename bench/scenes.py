"""Benchmark scenes: the shared Recast demo levels (when present) and levels generated here."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable
from functools import partial

import numpy as np

from levels import Scene, large_terrain, multi_storey, rotated_boxes_scene

SHARED_SCENES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "scenes"


def load_obj_z_up(path: pathlib.Path) -> tuple[np.ndarray, np.ndarray]:
    """Read an OBJ (Y-up as written) into Z-up world arrays: (x, y, z) -> (x, -z, y), as Blender imports it."""
    verts, tris = [], []
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            verts.append([float(parts[1]), float(parts[2]), float(parts[3])])
        elif parts[0] == "f":
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
            tris += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    v = np.asarray(verts, dtype=np.float64)
    return np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1), np.asarray(tris, dtype=np.int64)


def y_up_to_z_up(points: np.ndarray) -> np.ndarray:
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    return np.stack([points[:, 0], -points[:, 2], points[:, 1]], axis=1)


def shared_scenes() -> list[tuple[str, np.ndarray, np.ndarray, pathlib.Path]]:
    """(name, vertices, triangles, obj path) for each shared OBJ; empty when ../shared is absent."""
    out = []
    for path in sorted(SHARED_SCENES.glob("*.obj")):
        v, t = load_obj_z_up(path)
        out.append((path.stem, v, t, path))
    return out


def shared_queries(obj_path: pathlib.Path) -> np.ndarray | None:
    """(Q, 6) start/goal pairs in Z-up world, from the scene's *.queries.json (Y-up)."""
    qpath = obj_path.with_suffix(".queries.json")
    if not qpath.exists():
        return None
    q = np.asarray(json.loads(qpath.read_text()), dtype=np.float64)
    return np.hstack([y_up_to_z_up(q[:, :3]), y_up_to_z_up(q[:, 3:])])


def tiled(vertices: np.ndarray, triangles: np.ndarray, tiles: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """tiles x tiles copies of a level side by side (a 1 m gap between copies), and the shift of the
    copy in the middle of the grid."""
    size = vertices[:, :2].max(axis=0) - vertices[:, :2].min(axis=0) + 1.0
    shifts = [np.array([i * size[0], j * size[1], 0.0]) for i in range(tiles) for j in range(tiles)]
    v = np.concatenate([vertices + s for s in shifts])
    t = np.concatenate([triangles + k * len(vertices) for k in range(len(shifts))])
    middle = tiles // 2
    return v, t, shifts[middle * tiles + middle]


def own_scenes() -> dict[str, Callable[[], Scene]]:
    """Our own levels by name, each built only when called: the process that bakes one builds
    nothing else, so its peak memory holds no other level's leftovers."""
    # The same 160 m terrain tessellated ever finer: bake time against triangle count.
    terrains = {f"large_terrain_{n // 1000}k": partial(large_terrain, n) for n in (37_500, 75_000, 150_000)}
    return {
        "rotated_boxes": lambda: rotated_boxes_scene(11, count=30, extent=40.0)[0],
        "multi_storey": multi_storey,
        **terrains,
    }
