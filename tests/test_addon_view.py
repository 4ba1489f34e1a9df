"""Tested by looking: a baked level and its overlay rendered off-screen (tests/viewport_image.py,
through the overlay's own drawing code), with assertions on the pixels.

The level: a 10 m x 10 m room with an obstacle crate, and six 0.2 m steps up to a landing at 1.2 m;
the test path runs from the room's corner up the stairs.
"""

from __future__ import annotations

import bpy
import numpy as np
import pytest

from navmesh_addon import mesh_write, operators_path, overlay
from tests import viewport_image
from tests.blender_scenes import box_object, grid_object

SIZE = (600, 400)
TOP = viewport_image.look_at((7.5, 5.0, 25.0), (7.5, 5.0, 0.0))
# Low over the room, looking across and up the stairs: steps stand between the eye and the surface.
OBLIQUE = viewport_image.look_at((7.0, -8.0, 8.0), (7.5, 4.0, 0.0), up=(0.0, 0.0, 1.0))
PROJECTION = viewport_image.perspective(40.0, SIZE[0] / SIZE[1])
STEPS = [((10.0 + 0.3 * i, 2.0, 0.0), (10.3 + 0.3 * i, 5.0, 0.2 * (i + 1))) for i in range(6)]
START, GOAL = (1.0, 1.0, 0.0), (14.0, 3.5, 1.2)


@pytest.fixture
def level(blender):
    """The baked level's NavMesh, with the test path not yet added."""
    grid_object("Floor", 10.0, 10.0)
    box_object("Crate", (4, 4, 0), (6, 6, 1.5)).navmesh_role = "OBSTACLE"
    for i, (lo, hi) in enumerate(STEPS):
        box_object(f"Step_{i}", lo, hi)
    box_object("Landing", (11.8, 2.0, 0.0), (15.0, 5.0, 1.2))
    settings = blender.scene.navmesh
    settings.source, settings.cell_size = "VISIBLE", 0.2
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    (obj,) = mesh_write.find_navmesh_objects(blender.scene)
    return mesh_write.read_navmesh_object(obj)


def add_path(context):
    """The test path from START to GOAL through the add-on's operator and handles; its points."""
    assert bpy.ops.navmesh.add_path_test() == {"FINISHED"}
    settings = context.scene.navmesh
    settings.path_start.location, settings.path_goal.location = START, GOAL
    context.view_layer.update()  # the handles' world matrices, which the path is keyed on
    operators_path.update_path(context.scene)
    assert settings.path_status == "found"
    return np.asarray(operators_path.STATE.result.points)


def is_navmesh_colored(pixels: np.ndarray) -> np.ndarray:
    """Teal (the navmesh fill over any grey): green and blue clearly above red."""
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return (g - r > 0.2) & (b - r > 0.15)


def is_path_colored(pixels: np.ndarray) -> np.ndarray:
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return (r > 0.7) & (b > 0.5) & (g < 0.3)


def screen_quad_mask(corners, view, inset_px: float) -> np.ndarray:
    """(H, W) pixels whose centres lie inside a convex polygon (world corners, counter-clockwise seen
    from above) projected on screen, at least inset_px from its edges (negative: grown)."""
    width, height = SIZE
    ys, xs = np.mgrid[0:height, 0:width] + 0.5
    projected = viewport_image.project(corners, view, PROJECTION, SIZE)
    inside = np.ones((height, width), dtype=bool)
    for a, b in zip(projected, np.roll(projected, -1, axis=0)):
        edge = b - a
        inside &= (edge[0] * (ys - a[1]) - edge[1] * (xs - a[0])) / np.linalg.norm(edge) >= inset_px
    return inside


def polygon_mask(mesh, view, inset_px: float) -> np.ndarray:
    """(H, W) pixels inside some navmesh polygon on screen (see screen_quad_mask)."""
    masks = (screen_quad_mask(mesh.vertices[mesh.polygon(p)], view, inset_px) for p in range(mesh.polygon_count))
    return np.logical_or.reduce(list(masks))


def along(points: np.ndarray, step: float = 0.1) -> np.ndarray:
    """Points every `step` meters along a polyline."""
    samples = [points[0]]
    for a, b in zip(points[:-1], points[1:]):
        count = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1)
        samples += [a + (b - a) * t for t in np.arange(1, count + 1) / count]
    return np.array(samples)


def pixels_at(image: np.ndarray, points, view, reach: int = 0) -> np.ndarray:
    """(N, (2 reach + 1)², 4) the pixels at and around each point's projection."""
    xy = np.floor(viewport_image.project(points, view, PROJECTION, SIZE)).astype(int)
    offsets = np.arange(-reach, reach + 1)
    rows = xy[:, 1, None, None] + offsets[None, :, None]
    columns = xy[:, 0, None, None] + offsets[None, None, :]
    return image[rows, columns].reshape(len(xy), -1, 4)


def test_the_navmesh_colours_exactly_the_floor_it_covers(level, blender):
    image = viewport_image.render(blender, TOP, PROJECTION, SIZE)
    teal = is_navmesh_colored(image[..., :3])
    covered = polygon_mask(level, TOP, inset_px=1.5)
    assert covered.sum() > 20000
    assert teal[covered].mean() > 0.99, "navmesh polygons (the stairs included) must be drawn in the navmesh colour"
    outside = ~polygon_mask(level, TOP, inset_px=-1.5)
    assert teal[outside].mean() < 0.001, "nothing outside the navmesh may look like it"


def test_the_path_is_visible_along_its_whole_length_from_above_and_across_the_stairs(level, blender):
    points = add_path(blender)
    assert points[:, 2].max() > 1.1  # it climbs to the landing
    for view in (TOP, OBLIQUE):
        image = viewport_image.render(blender, view, PROJECTION, SIZE)
        drawn = along(points) + (0.0, 0.0, overlay.LIFT)  # where the overlay draws the line
        # Within a pixel of each sample: the line's ends stop exactly at the first and last point.
        on_path = is_path_colored(pixels_at(image, drawn, view, reach=1)[..., :3]).any(axis=1)
        assert on_path.all(), f"{np.count_nonzero(~on_path)} of {len(on_path)} path samples hidden"


def is_boundary_colored(pixels: np.ndarray) -> np.ndarray:
    """Dark navy: the boundary lines (no floor, fill, portal or path pixel is this dark and blue)."""
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    return (r < 0.12) & (g < 0.2) & (b > r + 0.05) & (b < 0.4)


def test_the_boundary_is_drawn_along_every_navmesh_edge_and_nowhere_inside(level, blender):
    image = viewport_image.render(blender, TOP, PROJECTION, SIZE)
    navy = is_boundary_colored(image[..., :3])
    slots = np.flatnonzero(level.neighbors < 0)
    ends = level.vertices[level.poly_vertices[slots]], level.vertices[level.edge_next_vertex[slots]]
    samples = np.vstack([along(np.array([a, b])) for a, b in zip(*ends)]) + (0.0, 0.0, overlay.LIFT)
    on_line = is_boundary_colored(pixels_at(image, samples, TOP, reach=1)[..., :3]).any(axis=1)
    assert on_line.all(), f"{np.count_nonzero(~on_line)} of {len(on_line)} boundary samples not drawn"
    assert not navy[polygon_mask(level, TOP, inset_px=4.0)].any(), "boundary colour inside the navmesh"
    blender.scene.navmesh.show_boundary = False
    hidden = is_boundary_colored(viewport_image.render(blender, TOP, PROJECTION, SIZE)[..., :3])
    assert not hidden.any(), "the Boundary toggle turns the lines off"


def test_the_agent_radius_is_drawn_along_both_sides_of_the_path(level, blender):
    points = add_path(blender)
    radius = blender.scene.navmesh.path_radius
    image = viewport_image.render(blender, TOP, PROJECTION, SIZE)
    checked = 0
    for a, b in zip(points[:-1], points[1:]):
        if np.linalg.norm((b - a)[:2]) < 4 * radius or abs(b[2] - a[2]) > 1e-6:
            continue  # short, or climbing the stairs: the band is checked on the room's floor
        checked += 1
        middle, d = 0.5 * (a + b), (b - a) / np.linalg.norm(b - a)
        normal = np.array([-d[1], d[0], 0.0])
        sides = np.array([middle + radius * normal, middle - radius * normal]) + (0.0, 0.0, overlay.LIFT)
        seen = is_path_colored(pixels_at(image, sides, TOP, reach=1)[..., :3]).any(axis=1)
        assert seen.all(), f"the band at {radius} m is missing beside the segment {a} -> {b}"
        between = np.array([middle + 0.5 * radius * normal]) + (0.0, 0.0, overlay.LIFT)
        assert not is_path_colored(pixels_at(image, between, TOP)[..., :3]).any(), "the band is an outline"
    assert checked >= 1


def test_the_navmesh_shows_on_every_step_seen_from_across_the_room(level, blender):
    blender.scene.navmesh.show_boundary = False  # the fill alone: seen this low, a boundary line lies over a tread edge
    image = viewport_image.render(blender, OBLIQUE, PROJECTION, SIZE)
    teal = is_navmesh_colored(image[..., :3])
    inside = level.params.agent_radius + 0.3  # the erosion, and the rounding where the stairs meet the room
    for i, (lo, hi) in enumerate(STEPS):
        # Each whole tread across the navmesh: its near edge is where the detail surface dips most.
        tread = [
            (lo[0], lo[1] + inside, hi[2]),
            (hi[0], lo[1] + inside, hi[2]),
            (hi[0], hi[1] - inside, hi[2]),
            (lo[0], hi[1] - inside, hi[2]),
        ]
        seen = screen_quad_mask(tread, OBLIQUE, inset_px=1.5)
        assert seen.sum() > 100
        assert teal[seen].mean() > 0.97, f"step {i}: navmesh colour on {teal[seen].mean():.0%} of its tread"


def test_the_clearance_legend_shows_only_with_clearance(level, blender):
    legend_box = (slice(15, 90), slice(10, 230))  # rows, columns from the lower left corner
    settings = blender.scene.navmesh
    without = viewport_image.render(blender, TOP, PROJECTION, SIZE)[legend_box]
    settings.show_clearance = True
    with_legend = viewport_image.render(blender, TOP, PROJECTION, SIZE)[legend_box]
    pure_red = (with_legend[..., 0] > 0.9) & (with_legend[..., 1] < 0.15)
    pure_green = (with_legend[..., 1] > 0.9) & (with_legend[..., 0] < 0.15)
    white_text = with_legend[..., :3].min(axis=-1) > 0.8
    assert pure_red.sum() > 50 and pure_green.sum() > 50 and white_text.sum() > 50
    assert not np.any((without[..., 0] > 0.9) & (without[..., 1] < 0.15))


def test_the_legend_reads_the_clearance_range_in_meters():
    _, _, labels = overlay.legend(0.4)
    assert [text for _, _, text, _ in labels[:3]] == ["0.40 m", "0.80 m", "1.20 m+"]
    # Left, middle and right of the bar: each label is aligned on the text's own width when drawn.
    assert [align for _, _, _, align in labels[:3]] == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_the_legend_grows_with_the_ui_scale(scale):
    coords, _, labels = overlay.legend(0.4, scale)
    size = coords[:, :2].max(axis=0) - coords[:, :2].min(axis=0)
    assert size.tolist() == pytest.approx([200.0 * scale, 72.0 * scale])
    low, high = coords[:, :2].min(axis=0), coords[:, :2].max(axis=0)
    assert all(low[0] <= x <= high[0] and low[1] <= y <= high[1] for x, y, _, _ in labels)


def test_the_legend_drawn_at_twice_the_ui_scale_is_twice_as_wide(level, blender):
    blender.scene.navmesh.show_clearance = True

    def bar_width(ui_scale: float) -> int:
        """The longest run of heat colours (red through yellow to green) along the bar's middle row."""
        coords, _, _ = overlay.legend(level.params.agent_radius, ui_scale)
        middle = int(round(coords[6:, 1].min() + 7.0 * ui_scale))  # the bar starts after the backdrop's 6 corners
        row = viewport_image.render(blender, TOP, PROJECTION, SIZE, ui_scale=ui_scale)[middle]
        heat = (row[:, :2].max(axis=1) > 0.9) & (row[:, 2] < 0.15)
        edges = np.flatnonzero(np.diff(np.r_[0, heat.astype(np.int8), 0]))
        return int((edges[1::2] - edges[::2]).max())

    assert bar_width(1.0) == pytest.approx(180, abs=3)
    assert bar_width(2.0) == pytest.approx(360, abs=3)


@pytest.mark.parametrize("color_by, mud_stands_out", [("NAVMESH", False), ("AREA", True)])
def test_color_by_area_sets_a_special_area_apart(blender, color_by, mud_stands_out):
    grid_object("Floor", 6.0, 10.0)
    grid_object("Mud", 4.0, 10.0, location=(6.0, 0.0, 0.0)).navmesh_area = 2
    settings = blender.scene.navmesh
    settings.source, settings.cell_size, settings.color_by = "VISIBLE", 0.25, color_by
    assert bpy.ops.navmesh.bake() == {"FINISHED"}
    view = viewport_image.look_at((5.0, 5.0, 20.0), (5.0, 5.0, 0.0))
    image = viewport_image.render(blender, view, PROJECTION, SIZE)
    floor, mud = pixels_at(image, [(3.0, 5.0, 0.0), (8.0, 5.0, 0.0)], view)[:, 0, :3]
    assert is_navmesh_colored(floor)
    assert (not is_navmesh_colored(mud)) == mud_stands_out
    assert (np.abs(floor - mud).max() > 0.2) == mud_stands_out


def path_pixels(context) -> int:
    return int(is_path_colored(viewport_image.render(context, TOP, PROJECTION, SIZE)[..., :3]).sum())


def test_the_test_path_hides_with_the_navmesh_it_runs_on(level, blender):
    """The path kept drawing when its navmesh was hidden (H) or its collection excluded."""
    add_path(blender)
    (nav,) = mesh_write.find_navmesh_objects(blender.scene)
    assert path_pixels(blender) > 100
    nav.hide_set(True)
    blender.view_layer.update()
    assert path_pixels(blender) == 0 and not overlay.path_shown(blender.scene)
    nav.hide_set(False)
    (layer,) = [c for c in blender.view_layer.layer_collection.children if c.collection in nav.users_collection]
    layer.exclude = True
    blender.view_layer.update()
    assert path_pixels(blender) == 0
    layer.exclude = False
    blender.view_layer.update()
    assert path_pixels(blender) > 100


def layout_view(context):
    """A real 3D view of the file's Layout screen, with its area, its window region and the window."""
    screen = bpy.data.screens["Layout"]
    area = next(a for a in screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "WINDOW")
    return area.spaces.active, dict(window=context.window_manager.windows[0], screen=screen, area=area, region=region)


def test_the_overlay_follows_the_viewports_overlays_toggle_local_view_and_its_own_toggle(level, blender):
    """The overlay drew with the viewport's Overlays off, and in Local View of other objects; the scene
    had no switch of its own."""
    add_path(blender)
    (nav,) = mesh_write.find_navmesh_objects(blender.scene)
    space, where = layout_view(blender)
    space.overlay.show_overlays = True
    assert overlay.shown_objects(blender.scene, space) == [nav] and overlay.path_shown(blender.scene, space)
    assert overlay.scene_batches(blender, space) is not None
    space.overlay.show_overlays = False
    assert overlay.scene_batches(blender, space) is None and not overlay.shown_objects(blender.scene, space)
    space.overlay.show_overlays = True
    settings = blender.scene.navmesh
    settings.show_overlay = False
    assert overlay.scene_batches(blender, space) is None and path_pixels(blender) == 0
    settings.show_overlay = True
    # Local View (numpad /) of the crate alone: the navmesh and its path are not in it.
    for obj in blender.view_layer.objects:
        obj.select_set(obj.name == "Crate")
    with blender.temp_override(**where):
        assert bpy.ops.view3d.localview() == {"FINISHED"}
    assert space.local_view is not None
    assert overlay.shown_objects(blender.scene, space) == [] and not overlay.path_shown(blender.scene, space)
    nav.local_view_set(space, True)  # the navmesh added to the Local View
    assert overlay.shown_objects(blender.scene, space) == [nav] and overlay.path_shown(blender.scene, space)
    assert overlay.legend_radius(blender, space) is None  # clearance off: no legend either way


def test_the_navmesh_colour_is_a_scene_setting(level, blender):
    """The fill colour was fixed teal, which nearly vanishes on a teal floor."""
    settings = blender.scene.navmesh
    assert tuple(settings.navmesh_color) == pytest.approx((*mesh_write.NAVMESH_COLOR[:3], overlay.SURFACE_ALPHA))
    point = [(2.0, 8.0, 0.0)]  # on the navmesh, in the room
    teal = pixels_at(viewport_image.render(blender, TOP, PROJECTION, SIZE), point, TOP)[0, 0, :3]
    assert is_navmesh_colored(teal)
    settings.navmesh_color = (1.0, 0.5, 0.0, 1.0)  # opaque orange
    orange = pixels_at(viewport_image.render(blender, TOP, PROJECTION, SIZE), point, TOP)[0, 0, :3]
    assert orange == pytest.approx((1.0, 0.5, 0.0), abs=0.02)
