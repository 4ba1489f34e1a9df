"""Detour .bin export: the file's layout, and Detour itself (recast-navigation, Node) loading it and
finding the paths our query finds, about as long as ours and at our surface's heights, in one tile or many."""

from __future__ import annotations

import math
import subprocess
from dataclasses import replace

import numpy as np
import pytest
from shapely.geometry import LineString, Polygon
from shapely.ops import unary_union

import blender_navmesh as lib
from blender_navmesh import detour
from blender_navmesh.detail import surface_height
from blender_navmesh.detour import format as detour_format
from blender_navmesh.detour import tiles as detour_tiles
from blender_navmesh.detour.clip import MIN_TURN
from blender_navmesh.links import LinkSpec
from blender_navmesh.query import NavMeshQuery
from levels import Scene, random_solids
from tests.fixtures.io import navmeshes
from tests.fixtures.io.detour_tools import (
    SECTION_SIZES,
    TILE_HEADER,
    detour_queries,
    detour_rays,
    read_tile_set,
    tile_offsets,
    tile_polygons,
)
from tests.oracle import random_level

# Detour's path length against ours. Ours is the shortest path (seen from above) draped over the
# detail surface; Detour's straight path joins its corners in straight lines (shorter over hills,
# and 4% shorter where a path steps down off a ramp's side within a climb: ours drops with the
# floor, its line cuts through the air), so only seen from above is it never shorter. Its A*
# costs polygon-edge midpoints, so now and then it picks a corridor whose pulled string is longer
# (up to ~14% on the rooms level: not the export's doing). Tiles cut polygons at their borders, which
# changes the midpoints it costs: on the rooms level in 7 m tiles, 36 of 42 paths are within 2% (all
# 42 in one tile; with holes of more corners, hence more and smaller polygons, 38 and 41).
LENGTH_TOLERANCE = 0.02
SHARE_WITHIN_TOLERANCE = 0.8
LONGEST_RATIO = 1.2

PARAMS = lib.BakeParams(
    cell_size=0.2, agent_radius=0.4, agent_height=2.0, agent_max_climb=0.5, max_edge_error=0.2, max_height_error=0.1
)


def _bake(scene: Scene) -> lib.NavMesh:
    return lib.generate(scene.vertices, scene.triangles, PARAMS, walkable=scene.walkable)


def rooms_with_ramp() -> lib.NavMesh:
    """A floor with a dividing wall (one door), boxes, and a ramp up to a platform 1.5 m high."""
    scene = Scene().floor(0, 0, 24, 16)
    scene.wall(12, 0, 12, 7, height=3, thickness=0.4).wall(12, 9, 12, 16, height=3, thickness=0.4)
    scene.box((5, 5, 0), (2, 1.5, 1.5), yaw_deg=30).box((18, 11, 0), (1.2, 3, 1.5), yaw_deg=-15)
    scene.ramp(16, 1, 21, 4, 0.0, 1.5).floor(21, 1, 24, 6, z=1.5)
    scene.box((22.5, 3.5, 0), (3, 5, 1.5))
    return _bake(scene)


def hills_scene(size: float = 30.0, step: float = 0.5) -> Scene:
    """Smooth hills up to 1.2 m, a grid of triangles `step` apart."""
    n = int(size / step)
    x, y = np.meshgrid(np.arange(n + 1) * step, np.arange(n + 1) * step, indexing="ij")
    z = 0.6 * np.sin(x / 3.0) * np.cos(y / 4.0) + 0.6
    ids = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    quads = np.stack([ids[:-1, :-1], ids[1:, :-1], ids[1:, 1:], ids[:-1, 1:]], axis=-1).reshape(-1, 4)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    return Scene().add(np.column_stack([x.ravel(), y.ravel(), z.ravel()]), triangles)


def rolling_ground() -> lib.NavMesh:
    """The hills baked: the detail surface carries the heights between polygon corners."""
    return _bake(hills_scene())


def big_grid(cells: int = 200, step: float = 0.5, seed: int = 0) -> lib.NavMesh:
    """A gently sloped grid of square polygons with random holes: more polygons (~38,500) than one
    Detour tile addresses (32,767), so the export must cut it into tiles."""
    ids = np.arange((cells + 1) ** 2).reshape(cells + 1, cells + 1)
    x, y = np.meshgrid(np.arange(cells + 1) * step, np.arange(cells + 1) * step, indexing="ij")
    vertices = np.column_stack([x.ravel(), y.ravel(), 0.02 * x.ravel()])
    holes = set(map(tuple, np.random.default_rng(seed).integers(0, cells, size=(1500, 2)).tolist()))
    polygons = [
        [ids[i, j], ids[i + 1, j], ids[i + 1, j + 1], ids[i, j + 1]]
        for i in range(cells)
        for j in range(cells)
        if (i, j) not in holes
    ]
    return navmeshes.from_polygons(vertices, polygons)


@pytest.fixture(scope="module")
def rooms() -> lib.NavMesh:
    return rooms_with_ramp()


@pytest.fixture(scope="module")
def hills() -> lib.NavMesh:
    return rolling_ground()


def _pairs_on_mesh(mesh: lib.NavMesh, count: int, seed: int) -> np.ndarray:
    """Start/goal pairs at random points of the navmesh surface."""
    query, rng = NavMeshQuery(mesh), np.random.default_rng(seed)
    points = np.array([query.random_point(rng)[1] for _ in range(2 * count)])
    return np.hstack([points[:count], points[count:]])


def _top_view_length(points) -> float:
    return float(np.linalg.norm(np.diff(np.asarray(points)[:, :2], axis=0), axis=1).sum())


def _compare_paths(mesh: lib.NavMesh, path, pairs: np.ndarray) -> dict:
    """Detour on the exported file against our query on the same pairs; returns Detour's answer."""
    across = 2 * mesh.params.agent_radius + mesh.params.cell_size
    found = detour_queries(path, pairs, half_extents=(across, mesh.params.agent_height, across))
    assert found["polygons"] >= mesh.polygon_count, "Detour loaded every polygon (it loads 0 from a malformed file)"
    assert found["unlinkedPortals"] == 0, "Detour linked every portal: the tiles' border edges, no wall"
    query = NavMeshQuery(mesh)
    max_error = mesh.params.max_height_error
    ratios, top_ratios = [], []
    for pair, theirs in zip(pairs, found["paths"]):
        ours = query.find_path(pair[:3], pair[3:])
        reached = theirs["found"] and not theirs["partial"] and np.linalg.norm(theirs["points"][-1] - pair[3:]) < 0.05
        assert reached == (ours.status == "found"), f"Detour and our query disagree on reaching {pair.tolist()}"
        if not reached:
            continue
        ratios.append(theirs["length"] / ours.length if ours.length > 1e-3 else 1.0)
        top = _top_view_length(ours.points)
        top_ratios.append(_top_view_length(theirs["points"]) / top if top > 1e-3 else 1.0)
        for point in theirs["points"]:
            heights = [surface_height(mesh, p, point) for p in query.index.polygons_near(point[:2], 1e-3)]
            assert min(abs(point[2] - h) for h in heights) <= max_error, f"path point {point} off our surface"
    ratios = np.array(ratios)
    assert len(ratios) and min(top_ratios) >= 1 - LENGTH_TOLERANCE, "Detour is never shorter than our shortest path"
    assert abs(np.median(ratios) - 1) <= LENGTH_TOLERANCE
    assert np.mean(ratios <= 1 + LENGTH_TOLERANCE) >= SHARE_WITHIN_TOLERANCE
    assert ratios.max() <= LONGEST_RATIO
    return found


# -- the file ------------------------------------------------------------------------------------


def test_one_tile_header_describes_the_navmesh(rooms):
    data = detour.to_detour_bytes(rooms, piece_size=0)
    tile_set = read_tile_set(data)
    assert tile_set["magic"] == detour.SET_MAGIC and data[:4] == b"TESM", "'MSET' as a little-endian int"
    assert tile_set["version"] == 1 and len(tile_set["tiles"]) == 1
    y_up = lib.navmesh.to_y_up(rooms.vertices)
    assert tile_set["origin"] == pytest.approx(tuple(y_up.min(axis=0)), abs=1e-5)
    assert tile_set["max_tiles"] == 1 and tile_set["max_polys"] == rooms.polygon_count
    (entry,) = tile_set["tiles"]
    header = entry["header"]
    assert entry["reference"] != 0, "a zero tile reference stops RecastDemo's and recast-navigation's loaders"
    assert (header["magic"], header["version"]) == (b"VAND", 7)
    assert header["poly_count"] == header["detail_mesh_count"] == header["off_mesh_base"] == rooms.polygon_count
    assert header["vert_count"] == len(rooms.vertices)
    assert header["detail_tri_count"] == len(rooms.detail_triangles)
    assert header["bv_node_count"] == 2 * rooms.polygon_count - 1
    assert header["off_mesh_con_count"] == 0
    assert header["walkable"] == pytest.approx((2.0, 0.4, 0.5))
    assert header["quant"] == pytest.approx(1 / PARAMS.cell_size)
    assert header["bmin"] == pytest.approx(tuple(y_up.min(axis=0)), abs=1e-5)


def test_byte_sizes_add_up_section_by_section(rooms):
    data = detour.to_detour_bytes(rooms, tile_size=6.0)
    tile_set = read_tile_set(data)
    assert tile_set["end"] == len(data), "the tiles fill the file exactly"
    for entry in tile_set["tiles"]:
        sections = [count * SECTION_SIZES[name] for name, count in entry["header"].items() if name in SECTION_SIZES]
        assert entry["size"] == TILE_HEADER.size + sum(-(-s // 4) * 4 for s in sections)


def test_polygons_keep_their_corners_area_and_walk_flag(rooms):
    areas = np.arange(rooms.polygon_count) % 64
    mesh = replace(rooms, areas=areas)
    data = detour.to_detour_bytes(mesh, piece_size=0)
    tile_set = read_tile_set(data)
    vertices, polys = tile_polygons(data, tile_set["tiles"][0], tile_offsets(tile_set)[0])
    assert np.all(polys["flags"] == detour.WALK_FLAG)
    assert polys["area_and_type"].tolist() == areas.tolist(), "area in the low 6 bits, type 0 (ground)"
    assert polys["vert_count"].tolist() == mesh.polygon_sizes.tolist()
    for p in range(mesh.polygon_count):
        corners = vertices[polys["verts"][p, : polys["vert_count"][p]]]
        assert np.allclose(corners, lib.navmesh.to_y_up(mesh.vertices[mesh.polygon(p)]), atol=1e-5)
        neighbours = polys["neis"][p, : polys["vert_count"][p]].astype(int) - 1
        assert neighbours.tolist() == mesh.neighbors[mesh.poly_offsets[p] : mesh.poly_offsets[p + 1]].tolist()


def test_tiles_cover_the_same_area_with_portals_on_their_borders(rooms):
    data = detour.to_detour_bytes(rooms, tile_size=5.0)
    tile_set = read_tile_set(data)
    assert len(tile_set["tiles"]) > 4 and tile_set["tile_width"] == tile_set["tile_height"] == 5.0
    assert len({(e["header"]["x"], e["header"]["y"]) for e in tile_set["tiles"]}) == len(tile_set["tiles"])
    area, portals = 0.0, 0
    for entry, offset in zip(tile_set["tiles"], tile_offsets(tile_set)):
        vertices, polys = tile_polygons(data, entry, offset)
        assert np.all(polys["vert_count"] <= 6), "clipped polygons are split back to six corners"
        x0 = tile_set["origin"][0] + 5.0 * entry["header"]["x"]
        z0 = tile_set["origin"][2] + 5.0 * entry["header"]["y"]
        for poly in polys:
            corners = vertices[poly["verts"][: poly["vert_count"]]]
            assert np.all((corners[:, 0] > x0 - 1e-4) & (corners[:, 0] < x0 + 5.0 + 1e-4))
            assert np.all((corners[:, 2] > z0 - 1e-4) & (corners[:, 2] < z0 + 5.0 + 1e-4))
            x, z = corners[:, 0], corners[:, 2]
            area += 0.5 * abs(np.sum(x * np.roll(z, -1) - np.roll(x, -1) * z))
            for k in np.flatnonzero(poly["neis"][: poly["vert_count"]] & detour.EXT_LINK):
                portals += 1
                side = poly["neis"][k] & 0xFF
                a, b = corners[k], corners[(k + 1) % poly["vert_count"]]
                axis, border = {0: (0, x0 + 5.0), 2: (2, z0 + 5.0), 4: (0, x0), 6: (2, z0)}[int(side)]
                assert abs(a[axis] - border) < 1e-4 and abs(b[axis] - border) < 1e-4, "a portal lies on its side"
    assert portals > 0
    assert area == pytest.approx(rooms.area_xy(), rel=1e-6)


def test_pieces_cover_the_polygons_and_are_each_others_neighbours_across_the_cuts(rooms):
    """Cut at a 1.5 m pitch inside one tile: the pieces cover the same area, each lies in one cell of
    the grid (its lines within CUT_SHIFT of the pitch's), and the two sides of every edge are each
    other's neighbours (a cut inside a tile is an internal link, not a portal); every original
    neighbour pair still meets."""
    data = detour.to_detour_bytes(rooms, piece_size=1.5)
    tile_set = read_tile_set(data)
    (entry,) = tile_set["tiles"]
    vertices, polys = tile_polygons(data, entry, tile_offsets(tile_set)[0])
    assert len(polys) > 3 * rooms.polygon_count
    level = detour_tiles._Level(rooms)
    size = level.span + level.cell
    pitch = size / math.ceil(size / 1.5)
    lines = level._cells(size, 1.5).lines
    origin = np.array(tile_set["origin"])[[0, 2]]
    for axis in range(2):
        regular = np.round((lines[axis] - origin[axis]) / pitch)
        assert np.all(np.abs(lines[axis] - origin[axis] - regular * pitch) <= detour_tiles.CUT_SHIFT * pitch + 1e-9)
    area = 0.0
    for p, poly in enumerate(polys):
        corners = vertices[poly["verts"][: poly["vert_count"]]][:, [0, 2]]
        cell = [np.searchsorted(lines[axis], corners[:, axis].mean()) - 1 for axis in range(2)]
        low = np.array([lines[0][cell[0]], lines[1][cell[1]]])
        high = np.array([lines[0][cell[0] + 1], lines[1][cell[1] + 1]])
        assert np.all(corners >= low - 1e-4) and np.all(corners <= high + 1e-4)
        area += 0.5 * abs(
            np.sum(corners[:, 0] * np.roll(corners[:, 1], -1) - np.roll(corners[:, 0], -1) * corners[:, 1])
        )
        for k in range(poly["vert_count"]):
            nei = int(poly["neis"][k])
            assert not nei & detour.EXT_LINK, "no portals inside one tile"
            if nei:
                other = polys[nei - 1]
                assert p + 1 in other["neis"][: other["vert_count"]].tolist(), "neighbours both ways"
    assert area == pytest.approx(rooms.area_xy(), rel=1e-6)


def test_polygons_cut_to_boxes_all_at_once_match_cutting_one_side_at_a_time():
    """Convex polygons cut to boxes all at once are what `_clip_to_plane` gives side by side, to
    the bit, labels included: on random polygons and boxes, and on grid-aligned ones whose corners
    lie on the box sides (a crossing at a corner, merged into it)."""
    from shapely.geometry import Polygon

    from blender_navmesh.detour.clip import _clip_to_box, clip_to_boxes

    rng = np.random.default_rng(11)
    count = 600
    corners = np.zeros((count, 6, 3))
    counts = np.zeros(count, dtype=np.int64)
    for k in range(count):
        while True:
            raw = rng.uniform(-2.0, 2.0, (rng.integers(3, 9), 2))
            if k % 3 == 0:
                raw = np.round(raw * 2.0) / 2.0  # on the half-metre grid the boxes below use
            hull = Polygon(raw).convex_hull
            ring = np.array(hull.exterior.coords)[:-1] if hull.geom_type == "Polygon" else np.zeros((0, 2))
            if 3 <= len(ring) <= 6:
                break
        counts[k] = len(ring)
        corners[k, : len(ring)][:, [0, 2]] = ring[::-1] if k % 2 else ring
        corners[k, : len(ring), 1] = rng.uniform(0.0, 1.0, len(ring))
    labels = rng.integers(0, 1000, (count, 6))
    low = np.where(
        np.arange(count)[:, None] % 3 == 0,
        np.round(rng.uniform(-2.0, 1.0, (count, 2)) * 2.0) / 2.0,
        rng.uniform(-2.0, 1.0, (count, 2)),
    )
    boxes = np.column_stack([low, low + rng.uniform(0.5, 2.0, (count, 1))])
    sides = -rng.integers(100, 10_000, (count, 4))
    cut = clip_to_boxes(corners, counts, labels, boxes, sides)
    kinds = {"gone": 0, "cut": 0}
    for k in range(count):
        alone = _clip_to_box(corners[k, : counts[k]], labels[k, : counts[k]], boxes[k], sides[k])
        assert (cut[k] is None) == (alone is None), k
        if alone is not None:
            assert np.array_equal(cut[k][0], alone[0]) and cut[k][1] == alone[1], k
        kinds["gone" if alone is None else "cut"] += 1
    assert min(kinds.values()) > 50


def test_detail_triangles_cut_to_pieces_are_exactly_their_overlap():
    """Random triangles cut to random convex pieces (up to six corners, either winding), against
    shapely's intersection: the fan covers exactly the overlap seen from above, its corners lie on
    the triangle's plane, a triangle wholly inside comes back whole and one outside gives nothing."""
    from shapely.geometry import Polygon

    from blender_navmesh.detour.clip import MIN_FRAGMENT_AREA, clip_to_pieces

    rng = np.random.default_rng(7)
    count = 400
    tris = np.zeros((count, 3, 3))
    tris[:, :, [0, 2]] = rng.uniform(-2.0, 2.0, (count, 1, 2)) + rng.uniform(-1.5, 1.5, (count, 3, 2))
    slope = rng.uniform(-0.5, 0.5, (count, 2))
    tris[:, :, 1] = 3.0 + np.einsum("tkd,td->tk", tris[:, :, [0, 2]], slope)
    corners = np.zeros((count, 6, 3))
    counts = np.zeros(count, dtype=np.int64)
    for k in range(count):
        while True:
            hull = Polygon(rng.uniform(-2.0, 2.0, (rng.integers(3, 9), 2))).convex_hull
            ring = np.array(hull.exterior.coords)[:-1] if hull.geom_type == "Polygon" else np.zeros((0, 2))
            if 3 <= len(ring) <= 6:
                break
        ring = ring[::-1] if k % 2 else ring
        counts[k] = len(ring)
        corners[k, : len(ring)][:, [0, 2]] = ring
    fan, pair, whole = clip_to_pieces(tris, corners, counts, (np.arange(count), np.arange(count)))
    assert np.all(np.diff(pair) >= 0)
    for k in range(count):
        triangle = Polygon(tris[k][:, [0, 2]])
        overlap = triangle.intersection(Polygon(corners[k, : counts[k]][:, [0, 2]])).area
        mine = fan[pair == k]
        area = sum(Polygon(t[:, [0, 2]]).area for t in mine)
        if overlap > 10 * MIN_FRAGMENT_AREA:
            assert area == pytest.approx(overlap, rel=1e-9, abs=1e-12)
        else:
            assert area <= 10 * MIN_FRAGMENT_AREA
        if whole[pair == k].any():
            assert len(mine) == 1 and np.array_equal(mine[0], tris[k])
            assert overlap == pytest.approx(triangle.area, rel=1e-9)
        on_plane = 3.0 + np.einsum("tkd,d->tk", mine[:, :, [0, 2]], slope[k])
        assert np.allclose(mine[:, :, 1], on_plane, atol=1e-9)


def test_more_than_six_corners_is_refused_with_the_fix():
    octagon = [(math.cos(a), math.sin(a), 0.0) for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)]
    mesh = navmeshes.from_polygons(octagon, [list(range(8))])
    with pytest.raises(lib.NavMeshError, match=r"8 vertices.*max_verts_per_poly <= 6"):
        detour.to_detour_bytes(mesh)


def test_empty_navmesh_is_refused_and_nothing_is_written(tmp_path):
    path = tmp_path / "level.bin"
    with pytest.raises(lib.NavMeshError, match="empty"):
        detour.write_detour(lib.NavMesh.empty(PARAMS, "no walkable surface"), path)
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_a_failed_export_leaves_the_previous_file_as_it_was(tmp_path, rooms):
    path = tmp_path / "level.bin"
    detour.write_detour(rooms, path)
    before = path.read_bytes()
    with pytest.raises(lib.NavMeshError):
        detour.write_detour(lib.NavMesh.empty(PARAMS, "no walkable surface"), path)
    with pytest.raises(lib.NavMeshError, match="tile_size"):
        detour.write_detour(rooms, path, tile_size=0)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["level.bin"]


def test_area_ids_beyond_detours_six_bits_are_refused(rooms):
    with pytest.raises(lib.NavMeshError, match="0..63"):
        detour.to_detour_bytes(replace(rooms, areas=np.full(rooms.polygon_count, 64)))


# -- Detour on the file --------------------------------------------------------------------------


@pytest.mark.parametrize("tile_size", [None, 3.0], ids=["one tile", "3 m tiles"])
def test_detour_turns_the_l_corridors_inner_corner(tmp_path, tile_size):
    path = tmp_path / "l.bin"
    detour.write_detour(navmeshes.l_corridor(), path, tile_size=tile_size)
    found = detour_queries(path, [navmeshes.L_START + navmeshes.L_GOAL])
    (route,) = found["paths"]
    assert route["length"] == pytest.approx(navmeshes.L_LENGTH, abs=1e-4)
    # The fixture's detail surface lies 1 cm above its polygons: Detour's corner follows the surface.
    assert np.allclose(route["points"], [(1, 1, 0.51), (8, 2, 0.51), (9, 9, 0.51)], atol=1e-4)


def test_a_wall_on_a_tile_border_stays_a_wall(tmp_path):
    """Two separate floors in 3 m tiles: the tile line x = 12.4 runs along the east floor's west
    wall, which lies 1e-15 m west of it. Clipped at that line the floor loses nothing but its wall,
    and the wall stays a wall: no portal there, and Detour links every portal it is given (a
    portal with nothing across was written along the wall, 4 of them left unlinked)."""
    scene = Scene().floor(0, 0, 10, 10).floor(12, 0, 22, 10, z=0.4)
    mesh = lib.generate(scene.vertices, scene.triangles, PARAMS)
    assert mesh.vertices[:, 0].min() == pytest.approx(0.4) and np.isclose(mesh.vertices[:, 0], 12.4).any()
    path = tmp_path / "floors.bin"
    detour.write_detour(mesh, path, tile_size=3.0)
    data = path.read_bytes()
    tile_set = read_tile_set(data)
    along_wall = 0
    for entry, offset in zip(tile_set["tiles"], tile_offsets(tile_set)):
        vertices, polys = tile_polygons(data, entry, offset)
        for poly in polys:
            corners = vertices[poly["verts"][: poly["vert_count"]]]
            for k in np.flatnonzero(poly["neis"][: poly["vert_count"]] & detour.EXT_LINK):
                a, b = corners[k], corners[(k + 1) % poly["vert_count"]]
                along_wall += abs(a[0] - 12.4) < 1e-4 and abs(b[0] - 12.4) < 1e-4
    assert along_wall == 0
    found = detour_queries(path, [[2, 2, 0, 8, 8, 0], [14, 2, 0.4, 20, 8, 0.4]])
    assert found["portals"] > 0 and found["unlinkedPortals"] == 0
    assert all(route["found"] and not route["partial"] for route in found["paths"])


@pytest.mark.parametrize("tile_size", [30.0, 3.0], ids=["cut inside the tile", "tile border"])
def test_an_edge_shared_along_a_cut_keeps_its_neighbour(tmp_path, tile_size):
    """Two polygons sharing the edge x = 12.399999999999999, 1e-15 m west of the cut line 12.4 (3 m
    pieces in one tile, or 3 m tiles): the east polygon loses nothing but that edge to the cut,
    which stays the shared edge. Inside a tile both sides are each other's neighbours (the cut's
    label, with no piece across, made them walls: the floor fell apart in two); on a tile border
    they are portals Detour links, and it walks from one polygon to the other."""
    xs = (0.4, 12.399999999999999, 21.6)
    vertices = [(x, y, 0.0) for x in xs for y in (0.0, 10.0)]
    mesh = navmeshes.from_polygons(vertices, [[0, 2, 3, 1], [2, 4, 5, 3]])
    path = tmp_path / "shared.bin"
    detour.write_detour(mesh, path, tile_size=tile_size, piece_size=3.0)
    data = path.read_bytes()
    tile_set = read_tile_set(data)
    on_line = []
    for entry, offset in zip(tile_set["tiles"], tile_offsets(tile_set)):
        vertices_, polys = tile_polygons(data, entry, offset)
        for poly in polys:
            corners = vertices_[poly["verts"][: poly["vert_count"]]]
            for k in range(poly["vert_count"]):
                a, b = corners[k], corners[(k + 1) % poly["vert_count"]]
                if abs(a[0] - 12.4) < 1e-4 and abs(b[0] - 12.4) < 1e-4:
                    on_line.append(int(poly["neis"][k]))
    assert len(on_line) >= 8
    if tile_size == 30.0:
        assert all(0 < nei < detour.EXT_LINK for nei in on_line), "neighbours inside the tile"
    else:
        assert all(nei & detour.EXT_LINK for nei in on_line), "portals on the tile border"
    found = detour_queries(path, [[2, 5, 0, 20, 5, 0]])
    assert found["unlinkedPortals"] == 0
    (route,) = found["paths"]
    assert route["found"] and not route["partial"] and route["length"] == pytest.approx(18.0, abs=1e-3)


def _height_gap_in_detour(mesh: lib.NavMesh, path, count: int, seed: int) -> float:
    """The largest gap between Detour's getPolyHeight on the file and our detail surface, at random
    points of the navmesh."""
    query = NavMeshQuery(mesh)
    rng = np.random.default_rng(seed)
    polygons, points = zip(*(query.random_point(rng) for _ in range(count)))
    truth = np.array([surface_height(mesh, p, x) for p, x in zip(polygons, points)])
    lifted = np.column_stack([np.array(points)[:, :2], truth + 0.05])
    found = detour_queries(path, [], points=lifted, half_extents=(0.1, 0.5, 0.1))
    return float(np.abs(np.array([h["height"] for h in found["heights"]]) - truth).max())


def test_detour_heights_are_our_detail_surface(tmp_path, hills):
    path = tmp_path / "hills.bin"
    detour.write_detour(hills, path)
    assert _height_gap_in_detour(hills, path, 300, seed=5) < 1e-3, "getPolyHeight reads the detail triangles we wrote"


def test_a_finely_detailed_surface_fits_detours_byte_indices(tmp_path):
    """Hills baked with a 1 cm height error want more detail triangles in their one polygon than
    Detour's byte indices hold (255, Recast's cap too): the polygon is cut until each surface fits
    (lib.polygons.rough), so the export works in one tile and Detour reads our heights."""
    scene = hills_scene()
    fine = lib.generate(scene.vertices, scene.triangles, replace(PARAMS, max_height_error=0.01))
    coarse = lib.generate(scene.vertices, scene.triangles, PARAMS)
    per_polygon = np.bincount(fine.detail_polygons, minlength=fine.polygon_count)
    assert coarse.polygon_count == 1 and fine.polygon_count > 1, "the fine bake cuts the hills' polygon"
    assert per_polygon.max() <= 255
    path = tmp_path / "fine.bin"
    detour.write_detour(fine, path)
    assert _height_gap_in_detour(fine, path, 100, seed=9) < 1e-3


@pytest.mark.parametrize("tile_size", [None, 7.0], ids=["one tile", "7 m tiles"])
def test_detour_finds_our_paths_through_rooms(tmp_path, rooms, tile_size):
    path = tmp_path / "rooms.bin"
    detour.write_detour(rooms, path, tile_size=tile_size)
    pairs = np.vstack([[[2, 2, 0, 22.5, 3.5, 1.5], [2, 14, 0, 20, 14, 0]], _pairs_on_mesh(rooms, 40, seed=1)])
    found = _compare_paths(rooms, path, pairs)
    assert found["tiles"] == (1 if tile_size is None else len(read_tile_set(path.read_bytes())["tiles"]))
    assert all(p["found"] for p in found["paths"][:2]), "the door and the ramp are crossed"


def test_detour_keeps_near_our_path_where_one_long_edge_misleads_its_search(tmp_path):
    """Detour's findPath costs a path by the midpoints of the polygon edges it crosses. On this
    random level the start's polygon meets the way round a thin wall's near end along one edge 20 m
    long, whose midpoint lies 9 m off: with whole polygons Detour goes round the far end, 2.8 times
    as long. Cut into pieces at the default pitch (8 agent radii), it takes the near end; and on
    30 random pairs it agrees with us as on the levels above."""
    from tests.oracle import PARAMS as ORACLE_PARAMS
    from tests.oracle import random_level

    level = random_level(2328)
    mesh = lib.generate(level.scene.vertices, level.scene.triangles, lib.BakeParams(**ORACLE_PARAMS["r0.6"]))
    pair = np.array([[16.91, 10.16, 0.0, 20.76, 12.85, 0.0]])
    ours = NavMeshQuery(mesh).find_path(pair[0, :3], pair[0, 3:]).length
    lengths = {}
    for piece_size in (0, None):
        path = tmp_path / f"level{piece_size}.bin"
        detour.write_detour(mesh, path, piece_size=piece_size)
        lengths[piece_size] = detour_queries(path, pair, half_extents=(1.5, 2.0, 1.5))["paths"][0]["length"] / ours
    assert lengths[0] > 2.5 and lengths[None] < 1.02
    _compare_paths(mesh, tmp_path / "levelNone.bin", _pairs_on_mesh(mesh, 30, seed=4))


@pytest.mark.parametrize("tile_size", [None, 6.0], ids=["one tile", "6 m tiles"])
def test_detour_finds_our_paths_over_hills(tmp_path, hills, tile_size):
    path = tmp_path / "hills.bin"
    detour.write_detour(hills, path, tile_size=tile_size)
    _compare_paths(hills, path, _pairs_on_mesh(hills, 40, seed=2))


def test_a_level_too_big_for_one_tile_is_cut_and_stays_connected(tmp_path):
    mesh = big_grid()
    assert mesh.polygon_count > detour.MAX_TILE_POLYGONS
    path = tmp_path / "grid.bin"
    detour.write_detour(mesh, path)
    tile_set = read_tile_set(path.read_bytes())
    assert len(tile_set["tiles"]) > 1
    assert max(e["header"]["poly_count"] for e in tile_set["tiles"]) <= detour.MAX_TILE_POLYGONS
    pairs = np.array([[0.3, 0.3, 0.006, 99.7, 99.7, 1.994], [0.3, 99.7, 0.006, 99.7, 0.3, 1.994]])
    _compare_paths(mesh, path, np.vstack([pairs, _pairs_on_mesh(mesh, 6, seed=3)]))


@pytest.mark.parametrize("case", range(0, 60, 6))
def test_the_count_that_passes_over_crowded_tile_sizes_is_at_most_what_cutting_gives(rooms, case):
    """Export passes over tile sizes whose tiles would clearly hold too many polygons by counting
    pieces without cutting. The count may leave out a piece split for having more than six
    corners, never add one, so a size that fits is never passed over: on the rooms level and the
    fuzzer's levels, at several tile and piece sizes, it is at most the most polygons a cut tile
    holds, and within 15% of it (fuzz case 24 splits 3 of a tile's 26 pieces for their corners)."""
    from blender_navmesh.detour.tiles import _Level
    from tests.soup_fuzz import forced_case

    mesh = rooms if case == 0 else forced_case(case, None, {}).bake()
    if mesh.is_empty or mesh.polygon_sizes.max() > detour.VERTS_PER_POLYGON:
        pytest.skip("nothing to export")
    level = _Level(mesh)
    for size in (level.span + level.cell, level.span / 3.0):
        for piece in (None, detour.default_piece_size(mesh), level.span / 7.0):
            most = max(tile.polygon_count for tile in level.tiles(size, piece))
            assert 0.85 * most <= level.most_pieces(size, piece) <= most


@pytest.mark.parametrize("case", range(0, 60, 3))
def test_pieces_of_random_soups_cover_their_navmesh_and_link_both_ways(case):
    """The fuzzer's levels (every family: stacked floors, duplicates, scales far from the origin),
    exported cut into pieces, in one tile and in tiles: the pieces cover the navmesh's area (to
    float32, which Detour's vertices are) and every internal link is one both ways; an empty
    navmesh is refused. (Run over cases 0-399 with recast-navigation loading each file too.)"""
    from tests.soup_fuzz import forced_case

    mesh = forced_case(case, None, {"max_verts_per_poly": 6.0}).bake()
    if mesh.is_empty:
        with pytest.raises(lib.NavMeshError, match="empty"):
            detour.to_detour_bytes(mesh)
        return
    rounding = np.abs(mesh.vertices).max() * 2.0**-23
    perimeter = np.hypot(*(mesh.vertices[mesh.edge_next_vertex] - mesh.vertices[mesh.poly_vertices])[:, :2].T).sum()
    for tile_size in (None, 16 * (mesh.params.agent_radius + mesh.params.cell_size)):
        data = detour.to_detour_bytes(mesh, tile_size=tile_size)
        tile_set = read_tile_set(data)
        area, walls = 0.0, []
        for entry, offset in zip(tile_set["tiles"], tile_offsets(tile_set)):
            vertices, polys = tile_polygons(data, entry, offset)
            for p, poly in enumerate(polys):
                if poly["area_and_type"] >> 6:
                    continue  # an off-mesh link's two ends, not floor
                xz = vertices[poly["verts"][: poly["vert_count"]]][:, [0, 2]].astype(np.float64)
                xz -= xz[0]
                area += 0.5 * abs(np.sum(xz[:, 0] * np.roll(xz[:, 1], -1) - np.roll(xz[:, 0], -1) * xz[:, 1]))
                sides = np.hypot(*(np.roll(xz, -1, axis=0) - xz).T)
                for nei, side in zip(poly["neis"][: poly["vert_count"]].astype(int), sides):
                    if nei == 0:
                        walls.append(side)
                    elif not nei & detour.EXT_LINK:
                        other = polys[nei - 1]
                        assert p + 1 in other["neis"][: other["vert_count"]].tolist()
        assert area == pytest.approx(mesh.area_xy(), rel=1e-6, abs=4 * rounding * perimeter + 1e-9)
        # Cuts add no walls but tile border edges too short for Detour to link (under 2 cm each).
        walls = np.array(walls)
        wall_xy = mesh.vertices[mesh.edge_next_vertex] - mesh.vertices[mesh.poly_vertices]
        expected = np.hypot(*wall_xy[mesh.neighbors < 0, :2].T).sum()
        slack = 4 * rounding * len(walls) + detour_format.MIN_PORTAL * np.sum(walls < detour_format.MIN_PORTAL)
        assert walls.sum() == pytest.approx(expected, rel=1e-6, abs=slack + 1e-9)


@pytest.mark.parametrize(
    "option, value, message",
    [
        *(("tile_size", v, "tile_size must be a positive number of meters") for v in (0, -3.0, math.inf, "big", True)),
        *(("piece_size", v, "piece_size must be a number of meters >= 0") for v in (-1.0, float("nan"), "wide")),
        ("tile_size", 0.01, r"tile_size 0.01 m is under 4 cells \(0.\d+ m at cell_size"),
        ("piece_size", 0.001, r"piece_size 0.001 m cuts .* use at least 0.0\d+ m \(default: 3.2 m\)"),
    ],
)
def test_tile_and_piece_sizes_are_meters_that_fit_or_are_refused_with_the_reason(rooms, option, value, message):
    with pytest.raises(lib.NavMeshError, match=message):
        detour.to_detour_bytes(rooms, **{option: value})


@pytest.mark.parametrize("angle", [0.0, 37.0])
def test_detour_goes_through_a_passage_half_a_cell_wider_than_the_agent(tmp_path, angle):
    """A gap 2r + cs/2 wide in a wall, kept open by bridge spans, is open in Detour too: it finds
    the path through it, as long as ours, and agrees with our query on random pairs."""
    r, cs = 0.6, 0.3
    params = lib.BakeParams(cell_size=cs, agent_radius=r, max_edge_error=1.3 * cs, region_min_area=64 * cs * cs)
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    scene = Scene().floor(-10, -10, 10, 10)
    for side in (-1, 1):
        along = side * (r + cs / 4 + 6.0)
        scene.box((along * c, along * s, 0.0), (12.0, 0.4, 2.5), angle)
    mesh = lib.generate(scene.vertices, scene.triangles, params)
    path = tmp_path / "gap.bin"
    detour.write_detour(mesh, path)
    across = [[-4 * s, 4 * c, 0.0, 4 * s, -4 * c, 0.0]]
    found = _compare_paths(mesh, path, np.vstack([across, _pairs_on_mesh(mesh, 30, seed=2)]))
    assert found["paths"][0]["found"] and not found["paths"][0]["partial"]
    assert found["paths"][0]["length"] < 8.5, "straight through the gap, not round the wall"


# -- off-mesh links in Detour --------------------------------------------------------------------

# Two platforms 2 m apart, the east one 1 m higher; with PARAMS' 0.4 m radius their floors span x
# 0.4..7.6 and 10.4..17.6, y 0.4..7.6.
PLATFORMS = Scene().floor(0, 0, 8, 8).floor(10, 0, 18, 8, z=1.0)
WEST_SPOT = (2.0, 4.0, 0.0)


def _detour_crosses(mesh: lib.NavMesh, path, pairs, links) -> dict:
    """Detour on the file: every off-mesh connection attached at both ends, and each pair's path
    reaching its goal over the links given (their userIds, in order), as our query does."""
    found = detour_queries(path, pairs, half_extents=(0.5, 2.0, 0.5))
    connections = found["offMeshConnections"]
    assert len(connections) == len(mesh.links)
    for con in connections:
        assert con["startAttached"] and con["endAttached"], f"Detour attached both ends of link {con['userId']}"
    query = NavMeshQuery(mesh)
    for pair, route, crossed in zip(np.asarray(pairs, dtype=float), found["paths"], links):
        assert query.find_path(pair[:3], pair[3:]).status == "found"
        assert route["found"] and not route["partial"], f"Detour reaches {pair[3:].tolist()}"
        np.testing.assert_allclose(route["points"][-1], pair[3:], atol=1e-3)
        assert route["links"] == crossed
    return found


@pytest.mark.parametrize(
    "scene, start, end, tile_size",
    [
        (PLATFORMS, (7.5, 4, 0), (18, 4, 1), None),
        (PLATFORMS, (7.5, 4, 0), (14, 0, 1), None),
        (PLATFORMS, (7.5, 4, 0), (18, 4, 1), 8.6),
        (PLATFORMS, (7.5, 4, 0), (14, 0, 1), 7.2),
        (Scene().floor(0, 3, 8, 5).floor(10, 0, 18, 8, z=1.0), (7.5, 4, 0), (10.5, 6.5, 1), 8.0),
        (Scene().floor(0, 0, 8.8, 8).floor(10, 0, 18, 8, z=1.0), (8.4, 4, 0), (10.5, 4, 1), 8.0),
    ],
    ids=[
        "end on the east edge",
        "end on the south edge",
        "end on the east edge, the last tile's border",
        "end on the south edge, the last tile's border",
        "end in the next tile beside the start tile's floor",
        "start on a ledge along a tile border",
    ],
)
def test_links_at_the_navmeshs_edges_and_across_tiles_attach_and_detour_crosses_them(
    tmp_path, scene, start, end, tile_size
):
    """Detour classifies a link's end against its start tile's box (bmin and bmax: the tile's
    square, not its polygons' bounds) and attaches it only in the tile that side names. Ends on the
    navmesh's east and south edges, in the next tile beyond the start tile's floor, on the grid's
    last border, and a start on a ledge along a tile border (which Detour's own rule would give to
    the tile beyond, without floor there) are attached, and its paths take the link both ways."""
    mesh = lib.generate(scene.vertices, scene.triangles, PARAMS, links=[LinkSpec(start, end, name="jump")])
    (link,) = mesh.links
    path = tmp_path / "links.bin"
    detour.write_detour(mesh, path, tile_size=tile_size)
    if tile_size is not None:
        assert len(read_tile_set(path.read_bytes())["tiles"]) > 1
    pairs = [[*WEST_SPOT, *link.end], [*link.end, *WEST_SPOT]]
    _detour_crosses(mesh, path, pairs, [[0], [0]])


def test_link_user_ids_are_their_index_in_the_navmesh_in_one_tile_or_many(tmp_path):
    """A dtOffMeshConnection's userId is its link's index in mesh.links (the JSON, glTF and Godot
    link lists), whichever tile it is written in: three links in three 8 m tiles, listed in
    another order than their tiles are written in."""
    scene = Scene().floor(0, 0, 8, 30).floor(10, 0, 18, 30, z=1.0)
    specs = [
        LinkSpec((7.5, 2, 0), (10.5, 2, 1), name="south"),
        LinkSpec((7.5, 27, 0), (10.5, 27, 1), name="north"),
        LinkSpec((7.5, 15, 0), (10.5, 15, 1), name="middle"),
    ]
    mesh = lib.generate(scene.vertices, scene.triangles, PARAMS, links=specs)
    assert [link.name for link in mesh.links] == ["south", "north", "middle"]
    for tile_size in (None, 8.0):
        path = tmp_path / f"links{tile_size}.bin"
        detour.write_detour(mesh, path, tile_size=tile_size)
        pairs = [[link.start[0] - 3, link.start[1], 0.0, *link.end] for link in mesh.links]
        found = _detour_crosses(mesh, path, pairs, [[0], [1], [2]])
        by_id = {con["userId"]: con for con in found["offMeshConnections"]}
        assert sorted(by_id) == [0, 1, 2]
        for k, link in enumerate(mesh.links):
            np.testing.assert_allclose(by_id[k]["start"], link.start, atol=1e-5)
        if tile_size:
            assert len({tuple(con["tile"]) for con in found["offMeshConnections"]}) == 3


def test_a_link_longer_than_the_tiles_allow_is_refused_with_the_tile_size_that_holds_it(tmp_path):
    """Detour attaches a link's end only in its start's tile or the 8 around it: a 13 m zipline in
    8 m tiles would be written dead, so the export refuses it, naming the link (its number when it
    has no name) and the tile size that holds it; in tiles of that size Detour crosses it."""
    scene = Scene().floor(0, 0, 8, 8).floor(20, 0, 28, 8, z=-3.0)
    zipline = LinkSpec((7.5, 4, 0), (20.5, 4, -3), bidirectional=False, name="zipline")
    mesh = lib.generate(scene.vertices, scene.triangles, PARAMS, links=[zipline])
    path = tmp_path / "zipline.bin"
    message = (
        r"tile_size 8 m does not fit Detour: off-mesh link 'zipline' spans 13 m along x or y and ends more than a "
        r"tile from its start's tile; Detour attaches a link's end only in its start's tile or one of the 8 around "
        r"it: use tile_size >= 13 m \(the longest link's span\)"
    )
    with pytest.raises(lib.NavMeshError, match=message):
        detour.write_detour(mesh, path, tile_size=8.0)
    assert not path.exists()
    unnamed = replace(mesh, links=(replace(mesh.links[0], name=""),))
    with pytest.raises(lib.NavMeshError, match=r"off-mesh link 0 spans 13 m"):
        detour.to_detour_bytes(unnamed, tile_size=8.0)
    detour.write_detour(mesh, path, tile_size=13.0)
    assert len(read_tile_set(path.read_bytes())["tiles"]) == 3
    _detour_crosses(mesh, path, [[*WEST_SPOT, 26.0, 4.0, -3.0]], [[0]])


@pytest.mark.parametrize("tile_size", [None, 8.0], ids=["one tile", "8 m tiles"])
def test_links_of_a_radius_0_bake_attach_in_detour(tmp_path, tile_size):
    """Detour attaches a link's ends within its dtOffMeshConnection.rad. Automatic links start on
    the navmesh's edge, where at radius 0 float32 rounding left 15 of these 76 unattached: rad is
    the link's radius but at least MIN_LINK_RADIUS, so all attach, and a link for wider agents keeps
    its radius there."""
    rng = np.random.default_rng(7)
    scene = Scene().floor(0, 0, 30, 30)
    for _ in range(8):
        cx, cy = rng.uniform(4, 26, 2)
        scene.box((cx, cy, 0), (*rng.uniform(2, 6, 2), rng.uniform(0.8, 2.5)), yaw_deg=float(rng.uniform(0, 90)))
    params = lib.BakeParams(
        cell_size=0.2, agent_radius=0.0, jump_max_distance=2.0, jump_max_up=2.6, jump_max_drop=3.0, region_min_area=0.5
    )
    mesh = lib.generate(scene.vertices, scene.triangles, params)
    assert len(mesh.links) > 50 and {link.radius for link in mesh.links} == {0.0}
    wide = replace(mesh, links=(replace(mesh.links[0], radius=0.35), *mesh.links[1:]))
    path = tmp_path / "radius0.bin"
    detour.write_detour(wide, path, tile_size=tile_size)
    connections = detour_queries(path, [])["offMeshConnections"]
    assert len(connections) == len(mesh.links)
    assert all(con["startAttached"] and con["endAttached"] for con in connections)
    radii = {con["userId"]: con["rad"] for con in connections}
    assert radii.pop(0) == pytest.approx(0.35)
    assert list(radii.values()) == pytest.approx([detour_format.MIN_LINK_RADIUS] * len(radii))


# A U-shaped floor, 2 m arms 6 m apart joined at the far end (our path round it: 39.3 m), and two
# spots at the arms' starts a 6 m link joins.
U_FLOOR = Scene().floor(0, 0, 20, 2).floor(0, 6, 20, 8).floor(18, 2, 20, 6)
U_PARAMS = lib.BakeParams(agent_radius=0.3, cell_size=0.1)
U_SOUTH, U_NORTH = (1.0, 1.0, 0.0), (1.0, 7.0, 0.0)


def test_a_link_no_agent_of_the_navmesh_fits_is_left_out_and_named(tmp_path):
    """A link of radius 0.1 m on a navmesh baked for 0.3 m agents is closed to every agent of it in
    our query; Detour's rad is only where its ends attach, so written it let Detour take the 6 m
    shortcut. It is left out (a door 2 m along, for the bake radius, is written, its userId still
    its index), the export warns naming it, and Detour goes through the door as we do. Left out, a
    link reaching beyond the tiles around its start no longer refuses the export either."""
    specs = [
        LinkSpec(U_SOUTH, U_NORTH, radius=0.1, name="cat_flap"),
        LinkSpec((3, 1, 0), (3, 7, 0), radius=0.3, name="door"),
        LinkSpec((1.5, 1, 0), (19, 7, 0), radius=0.2, name="far_flap"),
    ]
    mesh = lib.generate(U_FLOOR.vertices, U_FLOOR.triangles, U_PARAMS, links=specs)
    assert detour.closed_links(mesh) == [0, 2]
    ours = NavMeshQuery(mesh).find_path(U_SOUTH, U_NORTH)
    assert ours.status == "found" and ours.links == (1,) and ours.length == pytest.approx(10.0, abs=0.1)
    path = tmp_path / "flap.bin"
    detour.write_detour(mesh, path, tile_size=4.0)
    found = detour_queries(path, [[*U_SOUTH, *U_NORTH]])
    assert [con["userId"] for con in found["offMeshConnections"]] == [1]
    (route,) = found["paths"]
    assert route["found"] and not route["partial"] and route["links"] == [1]
    assert route["length"] == pytest.approx(ours.length, rel=LENGTH_TOLERANCE)
    (closed,) = detour.export_warnings(mesh)
    assert closed.startswith("off-mesh links 'cat_flap' and 'far_flap' are for agents narrower than the bake radius ")
    assert "0.3 m (link radius 0.1, 0.2 m)" in closed and "left out of the .bin" in closed


def test_a_link_cost_factor_detour_cannot_price_is_named_with_the_area_cost_that_keeps_it(tmp_path):
    """Detour prices an off-mesh connection by its area's cost alone: a link costing 20 times its
    length, in area 0 with the floor, is the 6 m shortcut for Detour while our query walks round.
    The export warns naming it and the way to keep the cost; given an area of its own (5) whose cost
    is set to 20 in Detour's filter, as the warning says, Detour walks round too."""
    ladder = LinkSpec(U_SOUTH, U_NORTH, cost=20.0, name="expensive_ladder")
    mesh = lib.generate(U_FLOOR.vertices, U_FLOOR.triangles, U_PARAMS, links=[ladder])
    ours = NavMeshQuery(mesh).find_path(U_SOUTH, U_NORTH)
    assert ours.status == "found" and not ours.links
    (warning,) = detour.export_warnings(mesh)
    assert warning == (
        "off-mesh link 'expensive_ladder' costs 20 times its length, but Detour prices an off-mesh connection by its "
        "area's cost alone: in the .bin it costs 1 per meter (area 0's cost) instead of 20; to keep the cost, give it "
        "an area of its own and set that area's cost to 20 in the game's dtQueryFilter (setAreaCost)"
    )
    path = tmp_path / "ladder.bin"
    detour.write_detour(mesh, path)
    assert detour_queries(path, [[*U_SOUTH, *U_NORTH]])["paths"][0]["links"] == [0], "Detour takes it"
    own = lib.generate(U_FLOOR.vertices, U_FLOOR.triangles, U_PARAMS, links=[replace(ladder, area=5)])
    (warning,) = detour.export_warnings(own)
    assert warning.endswith("to keep the cost, set area 5's cost to 20 in the game's dtQueryFilter (setAreaCost)")
    detour.write_detour(own, path)
    (route,) = detour_queries(path, [[*U_SOUTH, *U_NORTH]], area_costs={5: 20.0})["paths"]
    assert route["found"] and route["links"] == [] and route["length"] == pytest.approx(ours.length, rel=0.02)
    costly = replace(own, area_costs=((5, 2.0),))
    assert "costs 2 per meter (area 5's cost) instead of 40;" in detour.export_warnings(costly)[0]
    plain = lib.generate(U_FLOOR.vertices, U_FLOOR.triangles, U_PARAMS, links=[replace(ladder, cost=1.0)])
    assert detour.export_warnings(plain) == []


def test_a_link_longer_than_the_tiles_a_crowded_level_needs_is_refused_with_the_reason():
    """Without tile_size the export picks tiles small enough for Detour's per-tile limits: cut into
    6 cm pieces, two 60 m floors need 15 m tiles, which a 48 m zipline between them overreaches."""
    scene = Scene().floor(0, 0, 60, 3).floor(0, 5, 60, 8, z=1.0)
    zipline = LinkSpec((2, 2.5, 0), (50, 5.5, 1), name="zipline")
    mesh = lib.generate(scene.vertices, scene.triangles, PARAMS, links=[zipline])
    message = (
        r"cannot cut the level into tiles Detour can hold: its polygons need tiles of 1\d.\d+ m, and off-mesh link "
        r"'zipline' spans 48 m along x or y and ends more than a tile from its start's tile; .*: shorten the link, "
        r"or put fewer polygons in a tile with a larger piece_size \(or 0\)"
    )
    with pytest.raises(lib.NavMeshError, match=message):
        detour.to_detour_bytes(mesh, piece_size=0.06)
    assert len(read_tile_set(detour.to_detour_bytes(mesh))["tiles"]) == 1


# Paths priced by area costs against Detour's on the same file: neither search is exact (ours
# crosses portals where the line to the goal does, Detour's at edge midpoints). Ours drew the
# shortest path over every polygon no costlier than the corridor's costliest, cutting through
# costly areas beside the corridor: on this level 9.5% of paths cost more than 2% over Detour's,
# the worst 1.77 times as much (6.0% and 1.32 now; 11% and 2.6 before on six other levels).
COSTLIER_SHARE = 0.08
COSTLIEST_RATIO = 1.5
# Meters of cost forgiven our path: a path along an area's border counts as outside it only beyond
# the 1 cm the areas are shrunk by, and Detour's points are float32.
COST_SLACK = 0.05


def test_paths_priced_by_area_costs_cost_about_what_detours_do(tmp_path):
    rng = np.random.default_rng(114)
    scene = random_solids(Scene().floor(0, 0, 20, 20), rng, 8)
    volumes = []
    for k in range(5):
        patch = Scene().box((*rng.uniform(2, 18, 2), -1), (*rng.uniform(1.5, 6, 2), 5), rng.uniform(0, 180))
        volumes.append(lib.AreaVolume(patch.vertices, patch.triangles, int(rng.integers(1, 4)), f"patch{k}"))
    mesh = lib.generate(
        scene.vertices, scene.triangles, lib.BakeParams(agent_radius=0.3, cell_size=0.1), volumes=volumes
    )
    areas = {
        a: unary_union([Polygon(mesh.vertices[mesh.polygon(p)][:, :2]) for p in np.flatnonzero(mesh.areas == a)])
        for a in (1, 2, 3)
    }
    query = NavMeshQuery(mesh)
    pairs = [np.concatenate([query.random_point(rng)[1], query.random_point(rng)[1]]) for _ in range(30)]
    path = tmp_path / "painted.bin"
    detour.write_detour(mesh, path)
    ratios = []
    for costs in ({1: 5.0}, {1: 3.0, 2: 3.0, 3: 3.0}, {1: 0.3}):
        f = lib.query.QueryFilter(area_cost=costs)

        def cost(points, f=f):
            """Length, plus the extra cost of each area strictly inside it (a path along an area's
            border is not in it)."""
            line = LineString(np.asarray(points)[:, :2])
            return line.length + sum(
                (f.cost(a) - 1.0) * line.intersection(u.buffer(-0.01)).length for a, u in areas.items()
            )

        theirs = detour_queries(path, pairs, area_costs=costs)["paths"]
        for pair, found in zip(pairs, theirs):
            ours = query.find_path(pair[:3], pair[3:], filter=f)
            assert (ours.status == "found") == (found["found"] and not found["partial"])
            if ours.status == "found":
                ratios.append((cost(ours.points) - COST_SLACK) / cost(found["points"]))
    ratios = np.array(ratios)
    assert np.mean(ratios > 1.0 + LENGTH_TOLERANCE) <= COSTLIER_SHARE
    assert ratios.max() <= COSTLIEST_RATIO


# Random levels as a tester's: a 20 m floor with 10 solids, baked at radius 0.3 m and 0.1 m cells.
PRISM_PARAMS = lib.BakeParams(agent_radius=0.3, cell_size=0.1)


def _prism_level(seed: int) -> lib.NavMesh:
    level = random_level(seed, extent=20.0, count=10)
    return lib.generate(level.scene.vertices, level.scene.triangles, PRISM_PARAMS)


def _turns_and_widths(xz: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A polygon's (seen from above) sine of the turn at each corner, edge lengths and least width
    (the least, over its edges, of its farthest corner from the edge's line)."""
    edge = np.roll(xz, -1, axis=0) - xz
    length = np.hypot(edge[:, 0], edge[:, 1])
    before = np.roll(edge, 1, axis=0)
    turn = (before[:, 0] * edge[:, 1] - before[:, 1] * edge[:, 0]) / (np.roll(length, 1) * length)
    rel = xz[None, :, :] - xz[:, None, :]
    across = np.abs(edge[:, None, 0] * rel[..., 1] - edge[:, None, 1] * rel[..., 0]) / length[:, None]
    return turn, length, float(across.max(axis=1).min())


@pytest.mark.parametrize("seed", range(6))
def test_pieces_are_strictly_convex_in_float32_and_neither_slivers_nor_short_edged(seed):
    """Cut into pieces, a random level's polygons as Detour stores them (float32 corners): every
    corner turns the same way by MIN_TURN or more (a flat corner, or one rounding made reflex, is
    where Detour's raycast along an edge loops forever), no piece is thinner than a quarter of the
    cut lines' clearance from corners, and no edge is shorter than half of it or our own shortest
    edge (the cut lines used to graze corners: pieces of 1e-6 m², edges under 1 mm)."""
    mesh = _prism_level(seed)
    clearance = detour_tiles.MIN_CUT_CELLS * float(mesh.params.cell_size)
    ours = min(_turns_and_widths(mesh.vertices[mesh.polygon(p)][:, :2])[1].min() for p in range(mesh.polygon_count))
    data = detour.to_detour_bytes(mesh)
    tile_set = read_tile_set(data)
    pieces = 0
    for entry, offset in zip(tile_set["tiles"], tile_offsets(tile_set)):
        vertices, polys = tile_polygons(data, entry, offset)
        for poly in polys:
            xz = vertices[poly["verts"][: poly["vert_count"]]][:, [0, 2]].astype(np.float64)
            turn, length, width = _turns_and_widths(xz)
            assert np.all(turn >= 0.9 * MIN_TURN) or np.all(turn <= -0.9 * MIN_TURN), turn
            assert length.min() >= min(clearance / 2, ours) - 1e-5
            assert width >= clearance / 4
        pieces += len(polys)
    assert pieces > 4 * mesh.polygon_count, "the level is still cut into pieces"


def _rays_along_edges_and_through_corners(mesh: lib.NavMesh) -> list:
    """(start, end) of rays from each polygon corner along each of its edges, on to three times
    its length, both ways, and from each edge's middle through the corner after it."""
    rays = []
    for p in range(mesh.polygon_count):
        corners = mesh.vertices[mesh.polygon(p)]
        for a, b, c in zip(corners, np.roll(corners, -1, axis=0), np.roll(corners, -2, axis=0)):
            middle = 0.5 * (a + b)
            rays += [(a, a + 3 * (b - a)), (b, b + 3 * (a - b)), (middle, c + 2 * (c - middle))]
    return rays


@pytest.mark.parametrize("seed", range(6))
def test_detours_raycast_returns_along_our_edges_and_agrees_with_ours_on_random_rays_and_moves(tmp_path, seed):
    """On a random level cut into pieces, Detour's raycast returns on every ray along our edges and
    through our corners (it looped forever around a piece's flat corner), and random rays and
    moves of a few meters agree with ours to 2 cm (it stopped short on slivers). A ray exactly
    along an edge may still stop where a cut meets that edge: Detour's float32 test puts it just
    outside one of the two pieces there, as it may at any corner along an edge."""
    mesh = _prism_level(seed)
    path = tmp_path / "level.bin"
    detour.write_detour(mesh, path)
    query, rng = NavMeshQuery(mesh), np.random.default_rng(seed)
    starts = np.array([query.random_point(rng)[1] for _ in range(300)])
    ends = np.column_stack([starts[:, :2] + rng.normal(0.0, 3.0, (len(starts), 2)), np.zeros(len(starts))])
    rays = list(zip(starts[:200], ends[:200]))
    moves = list(zip(starts[200:], ends[200:]))
    edge_rays = _rays_along_edges_and_through_corners(mesh)
    try:
        found = detour_rays(path, rays + edge_rays, moves, timeout=60.0)
    except subprocess.TimeoutExpired:
        pytest.fail(f"Detour's raycast did not return on {len(edge_rays)} rays along edges and through corners")
    assert all(t is not None for t in found["rays"])
    for (start, end), t in zip(rays, found["rays"]):
        length = float(np.linalg.norm((end - start)[:2]))
        ours = min(query.raycast(start, end).t, 1.0) * length
        assert min(t, 1.0) * length == pytest.approx(ours, abs=0.02), (start, end)
    for (start, end), reached in zip(moves, found["moves"]):
        ours, _ = query.move_along_surface(start, end)
        assert np.linalg.norm((reached - ours)[:2]) <= 0.02, (start, end)
