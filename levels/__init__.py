"""Levels built from numpy, shared by the tests and the benchmark, some with the exact answers the
tests compare against.

Each builder returns a `Scene`: a world-space triangle soup (Z-up, meters) with optional
per-triangle walkable flags. Geometry is closed and outward-facing like modelled levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# Corner order of a unit box: bit 0 = +x, bit 1 = +y, bit 2 = +z.
_BOX_QUADS = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]


@dataclass
class Scene:
    vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int64))
    walkable: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def add(self, vertices, triangles, walkable: bool = True) -> Scene:
        base = len(self.vertices)
        self.vertices = np.vstack([self.vertices, np.asarray(vertices, dtype=np.float64)])
        self.triangles = np.vstack([self.triangles, np.asarray(triangles, dtype=np.int64) + base])
        self.walkable = np.concatenate([self.walkable, np.full(len(triangles), walkable)])
        return self

    def quad(self, a, b, c, d, walkable: bool = True) -> Scene:
        """A planar quad a-b-c-d, counter-clockwise seen from the side its normal faces."""
        return self.add([a, b, c, d], [(0, 1, 2), (0, 2, 3)], walkable)

    def floor(self, x0, y0, x1, y1, z=0.0, walkable: bool = True) -> Scene:
        return self.quad((x0, y0, z), (x1, y0, z), (x1, y1, z), (x0, y1, z), walkable)

    def box(self, center, size, yaw_deg: float = 0.0, walkable: bool = True) -> Scene:
        """A closed box; center is the centre of its bottom face."""
        cx, cy, cz = center
        sx, sy, sz = size
        c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
        corners = []
        for k in range(8):
            lx = (sx / 2) * (1 if k & 1 else -1)
            ly = (sy / 2) * (1 if k & 2 else -1)
            corners.append((cx + c * lx - s * ly, cy + s * lx + c * ly, cz + (sz if k & 4 else 0.0)))
        tris = [(q[0], q[1], q[2]) for q in _BOX_QUADS] + [(q[0], q[2], q[3]) for q in _BOX_QUADS]
        return self.add(corners, tris, walkable)

    def wall(self, x0, y0, x1, y1, height, thickness, z=0.0, walkable: bool = True) -> Scene:
        """A wall box from (x0, y0) to (x1, y1) with the given thickness."""
        length = math.hypot(x1 - x0, y1 - y0)
        yaw = math.degrees(math.atan2(y1 - y0, x1 - x0))
        return self.box(((x0 + x1) / 2, (y0 + y1) / 2, z), (length, thickness, height), yaw, walkable)

    def stairs(self, x0, y0, width, step_run, step_rise, steps, z0=0.0) -> Scene:
        """Solid steps climbing along +x from (x0, y0), each a closed box."""
        for k in range(steps):
            top = z0 + (k + 1) * step_rise
            self.box((x0 + (k + 0.5) * step_run, y0 + width / 2, z0), (step_run, width, top - z0))
        return self

    def terrain(self, xs, ys, height, walkable: bool = True) -> Scene:
        """Ground over the grid of points xs x ys at height(x, y), each square cut along its
        diagonal from (x_i, y_j) to (x_i+1, y_j+1)."""
        xs, ys = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
        gx, gy = np.meshgrid(xs, ys)
        nx, ny = len(xs) - 1, len(ys) - 1
        a = (np.arange(nx)[None, :] + (nx + 1) * np.arange(ny)[:, None]).ravel()
        tris = np.concatenate([np.stack([a, a + 1, a + nx + 2], 1), np.stack([a, a + nx + 2, a + nx + 1], 1)])
        return self.add(np.stack([gx.ravel(), gy.ravel(), height(gx, gy).ravel()], axis=1), tris, walkable)

    def ramp(self, x0, y0, x1, y1, z0, z1) -> Scene:
        """A sloped quad rising along +x from z0 at x0 to z1 at x1."""
        return self.quad((x0, y0, z0), (x1, y0, z1), (x1, y1, z1), (x0, y1, z0))


def random_solids(scene: Scene, rng: np.random.Generator, count: int, low: float = 2.0, high: float = 18.0) -> Scene:
    """Adds `count` solids 2.6 m tall, centred in [low, high]² and turned at random: boxes 0.5-4 m,
    thin walls 3-8 m long and 0.1-0.25 m thick, and square pillars 0.3-0.8 m, a third of each."""
    for _ in range(count):
        kind = rng.integers(3)
        cx, cy = rng.uniform(low, high, 2)
        if kind == 0:
            sx, sy = rng.uniform(0.5, 4, 2)
        elif kind == 1:
            sx, sy = rng.uniform(3, 8), rng.uniform(0.1, 0.25)
        else:
            sx = sy = rng.uniform(0.3, 0.8)
        scene.box((cx, cy, -0.1), (sx, sy, 2.5), math.degrees(rng.uniform(0, math.pi)))
    return scene


def rotated_boxes_scene(seed: int, count: int = 8, extent: float = 20.0):
    """A square floor with boxes at random rotations, and the exact free space as a shapely geometry.

    Returns (scene, exact_free(r)) where exact_free(r) is the exact walkable area for radius r:
    on the floor, floor.buffer(-r) minus boxes.buffer(r); on the (walkable) box tops, their union's buffer(-r).
    """
    from shapely.geometry import Polygon
    from shapely.geometry import box as shapely_box
    from shapely.ops import unary_union

    rng = np.random.default_rng(seed)
    scene = Scene().floor(0, 0, extent, extent)
    footprints = []
    for _ in range(count):
        cx, cy = rng.uniform(3, extent - 3, size=2)
        sx, sy = rng.uniform(0.6, 2.5, size=2)
        yaw = float(rng.uniform(0, 180))
        scene.box((cx, cy, 0.0), (sx, sy, 1.5), yaw)
        c, s = math.cos(math.radians(yaw)), math.sin(math.radians(yaw))
        pts = [
            (cx + c * dx - s * dy, cy + s * dx + c * dy)
            for dx, dy in ((-sx / 2, -sy / 2), (sx / 2, -sy / 2), (sx / 2, sy / 2), (-sx / 2, sy / 2))
        ]
        footprints.append(Polygon(pts))
    floor = shapely_box(0, 0, extent, extent)
    obstacles = unary_union(footprints)

    def exact_free(r: float):
        # Boxes share one height, so overlapping tops form one walkable floor.
        return floor.buffer(-r).difference(obstacles.buffer(r)).union(obstacles.buffer(-r))

    return scene, exact_free


def large_terrain(target_triangles: int = 150_000, seed: int = 7) -> Scene:
    """Rolling terrain tessellated finely plus scattered crates: a big, realistic soup."""
    rng = np.random.default_rng(seed)
    crates = 400
    n = int(np.sqrt((target_triangles - crates * 12) / 2)) + 1
    size = 160.0
    xs = np.linspace(0, size, n + 1)
    scene = Scene().terrain(
        xs, xs, lambda x, y: 1.5 * np.sin(x / 13.0) * np.cos(y / 17.0) + 0.4 * np.sin(x / 3.1 + y / 4.3)
    )
    for _ in range(crates):
        cx, cy = rng.uniform(5, size - 5, size=2)
        scene.box((cx, cy, -1.0), (*rng.uniform(0.8, 3.0, size=2), 4.0), float(rng.uniform(0, 180)))
    return scene


def multi_storey() -> Scene:
    """Three floors stacked 3.5 m apart, joined by stairs through an opening in each slab, with pillars."""
    scene = Scene()
    run, rise, steps = 0.3, 0.25, 14
    stair_x0, stair_x1 = 20.0, 20.0 + run * steps
    bands = [(0.0, 4.0), (16.0, 20.0)]  # the y-band of the stairs leaving floor 0 and floor 1
    for level in range(3):
        z = level * 3.5
        if level == 0:
            scene.floor(0, 0, 30, 20, z)
        else:  # a slab with an opening where the stairs from the floor below arrive
            y0, y1 = bands[level - 1]
            rest = (4.0, 20.0) if y0 == 0.0 else (0.0, 16.0)
            scene.box((15, sum(rest) / 2, z - 0.2), (30, rest[1] - rest[0], 0.2))
            scene.box(((stair_x0 - 1) / 2, (y0 + y1) / 2, z - 0.2), (stair_x0 - 1, y1 - y0, 0.2))
            scene.box(((stair_x1 + 30) / 2, (y0 + y1) / 2, z - 0.2), (30 - stair_x1, y1 - y0, 0.2))
        for px in (8, 14):
            scene.box((px, 8, z), (0.6, 0.6, 3.3))
            scene.box((px, 12, z), (0.6, 0.6, 3.3))
        if level < 2:
            y0, y1 = bands[level]
            scene.stairs(stair_x0, y0 + 0.5, width=3.0, step_run=run, step_rise=rise, steps=steps, z0=z)
    return scene
