"""Detail surface against the real floor, as an engine meets it.

    python -m bench.surface [--terrains N] [--first-seed S] [SCENE ...]

Every export (JSON, glTF, COLLADA, Detour, Godot) carries the detail surface, and engines take
heights from it. Samples: every detail vertex, three random points in each detail triangle, and
points every 10 cm along the detail triangles' edges on their polygon's boundary. A sample's gap is
the least |z - floor| over the walkable input triangles (slope within agent_max_slope) whose
nearest point seen from above lies within max_edge_error + cell_size / 2 of it (an outline strays
past the floor's edge by up to the edge error), taken at that nearest point. One JSON line per
level: samples of each kind, how many lie farther than max_height_error, the worst in units of it
and where. Stair risers (a surface crosses from tread to tread) and floor just past the walkable
slope (the surface follows it; the measure does not count it as floor) show as gaps too: look at
the worst samples' places before blaming the surface.

SCENE names are bench.run's (the shared levels when ../shared is there); --terrains adds random
rolling terrains with crates at random parameters, a third of them at radius 0.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from blender_navmesh import BakeParams, generate
from blender_navmesh.geometry import closest_on_triangles
from levels import Scene

KINDS = ("vertices", "interior", "wall_edges")
# Spacing of the samples along wall edges (m).
EDGE_STEP = 0.1
# Side of the bins that pair samples with floor triangles (m, at least this many reaches).
BIN = 2.0


def surface_samples(mesh, rng) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) points on the detail surface and (N,) their kind (an index into KINDS)."""
    dv, dt = mesh.detail_vertices, mesh.detail_triangles
    weights = rng.dirichlet([1.0, 1.0, 1.0], size=(len(dt), 3))
    inner = np.einsum("tkj,tjd->tkd", weights, dv[dt]).reshape(-1, 3)
    edges = np.concatenate([dt[:, [0, 1]], dt[:, [1, 2]], dt[:, [2, 0]]])
    _, inverse, counts = np.unique(np.sort(edges, axis=1), axis=0, return_inverse=True, return_counts=True)
    boundary = edges[counts[inverse.ravel()] == 1]  # used by one detail triangle: on its polygon's outline
    along = []
    for a, b in boundary.tolist():
        steps = max(int(np.hypot(*(dv[b, :2] - dv[a, :2])) / EDGE_STEP), 1)
        along.append(dv[a] + np.linspace(0.0, 1.0, steps + 1)[1:-1, None] * (dv[b] - dv[a]))
    wall = np.concatenate(along) if along else np.zeros((0, 3))
    points = np.concatenate([dv, inner, wall])
    kind = np.repeat([0, 1, 2], [len(dv), len(inner), len(wall)])
    return points, kind


def floor_gaps(points: np.ndarray, floor: np.ndarray, reach: float) -> np.ndarray:
    """(N,) each point's gap to the floor triangles (F, 3, 3) within `reach` seen from above (inf
    where none is)."""
    normal = np.cross(floor[:, 1] - floor[:, 0], floor[:, 2] - floor[:, 0])
    size = max(BIN, 4.0 * reach)
    lo = np.floor((floor[:, :, :2].min(axis=1) - reach) / size).astype(np.int64)
    hi = np.floor((floor[:, :, :2].max(axis=1) + reach) / size).astype(np.int64)
    bins: dict[tuple[int, int], list[int]] = {}
    for t, ((i0, j0), (i1, j1)) in enumerate(zip(lo.tolist(), hi.tolist())):
        for i in range(i0, i1 + 1):
            for j in range(j0, j1 + 1):
                bins.setdefault((i, j), []).append(t)
    gaps = np.full(len(points), np.inf)
    keys = np.floor(points[:, :2] / size).astype(np.int64)
    groups: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(map(tuple, keys.tolist())):
        groups.setdefault(key, []).append(k)
    for key, members in groups.items():
        near = bins.get(key)
        if not near:
            continue
        p = np.repeat(points[members], len(near), axis=0)
        tri = np.tile(floor[near], (len(members), 1, 1))
        n = np.tile(normal[near], (len(members), 1))
        q = closest_on_triangles(p[:, :2], tri[:, :, :2])
        z = tri[:, 0, 2] - (n[:, 0] * (q[:, 0] - tri[:, 0, 0]) + n[:, 1] * (q[:, 1] - tri[:, 0, 1])) / n[:, 2]
        gap = np.where(np.hypot(*(q - p[:, :2]).T) <= reach, np.abs(p[:, 2] - z), np.inf)
        gaps[members] = gap.reshape(len(members), len(near)).min(axis=1)
    return gaps


def measure(name: str, vertices, triangles, walkable, params: BakeParams) -> dict:
    """One level's line: bake it and measure its surface."""
    mesh = generate(vertices, triangles, params, walkable=walkable)
    tri = np.asarray(vertices, dtype=np.float64)[np.asarray(triangles)]
    if walkable is not None:
        tri = tri[np.asarray(walkable, dtype=bool)]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    up = normal[:, 2] / np.maximum(np.linalg.norm(normal, axis=1), 1e-300)
    floor = tri[up >= np.cos(np.radians(params.agent_max_slope)) - 1e-9]
    points, kind = surface_samples(mesh, np.random.default_rng(0))
    gaps = floor_gaps(points, floor, params.max_edge_error + 0.5 * params.cell_size)
    tol = params.max_height_error
    row: dict = {"scene": name, "polygons": mesh.polygon_count, "max_height_error": round(tol, 4)}
    for k, label in enumerate(KINDS):
        g = gaps[(kind == k) & np.isfinite(gaps)]
        over = g > tol * (1 + 1e-6)
        row[label] = {
            "samples": len(g),
            "over": int(over.sum()),
            "worst": round(float(g.max() / tol), 3) if len(g) else 0,
        }
    finite = np.flatnonzero(np.isfinite(gaps))
    if len(finite):
        worst = finite[np.argmax(gaps[finite])]
        row["worst_at"] = [round(float(c), 3) for c in points[worst]]
    return row


def rolling_terrain(seed: int) -> tuple[Scene, BakeParams]:
    """A 40 m rolling terrain with up to nine crates, and random bake parameters."""
    rng = np.random.default_rng(seed)
    cells, size = 40, 40.0
    xs = np.linspace(0.0, size, cells + 1)
    amp, fx, fy, phase = rng.uniform(0.5, 3.0), rng.uniform(2.5, 6.0), rng.uniform(2.5, 6.0), rng.uniform(0.0, 6.0)
    scene = Scene().terrain(
        xs, xs, lambda x, y: amp * np.sin(x / fx + phase) * np.cos(y / fy) + 0.3 * np.sin(x / 1.3 + y / 1.7)
    )
    for _ in range(int(rng.integers(0, 10))):
        cx, cy = rng.uniform(4.0, size - 4.0, size=2)
        scene.box(
            (cx, cy, -5.0), (*rng.uniform(0.8, 3.0, size=2), 12.0), float(rng.uniform(0.0, 180.0)), walkable=False
        )
    cs = float(rng.uniform(0.15, 0.35))
    radius = 0.0 if rng.random() < 1 / 3 else float(rng.uniform(0.1, 0.6))
    params = BakeParams(
        cell_size=cs,
        agent_radius=radius,
        agent_max_slope=float(rng.uniform(30.0, 50.0)),
        max_edge_error=float(rng.uniform(1.0, 2.0) * cs),
        max_height_error=float(rng.uniform(0.05, 0.3)),
    )
    return scene, params


def main(argv: list[str] | None = None) -> None:
    from bench.run import scene_arrays

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenes", nargs="*", default=[])
    ap.add_argument("--terrains", type=int, default=0)
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args(argv)
    for name in args.scenes:
        v, t, w, p, _ = scene_arrays(name)
        print(json.dumps(measure(name, v, t, w, BakeParams(**p))), flush=True)
    for seed in range(args.first_seed, args.first_seed + args.terrains):
        scene, params = rolling_terrain(seed)
        row = measure(f"terrain_{seed}", scene.vertices, scene.triangles, scene.walkable, params)
        print(json.dumps({**row, "agent_radius": round(params.agent_radius, 3)}), flush=True)


if __name__ == "__main__":
    main()
