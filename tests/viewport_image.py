"""Off-screen images of what the 3D viewport shows: the scene's meshes in flat Solid-style shading
(material viewport colours, see-through where their alpha is below 1) with the add-on's overlay on
top, drawn by the overlay's own code (overlay.draw_view, overlay.draw_legend).

Background bpy refuses the gpu module until a render has set up the GPU, so `enable_gpu` runs one
tiny Workbench render first (software OpenGL is enough).
"""

from __future__ import annotations

import math
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix, Vector

from navmesh_addon import overlay

BACKGROUND = (0.18, 0.18, 0.2, 1.0)
LIGHT = np.array([0.3, -0.4, 0.87]) / np.linalg.norm([0.3, -0.4, 0.87])
_gpu_enabled = False


def enable_gpu() -> None:
    """Render the current scene once with Workbench (from a temporary camera) so gpu works headless."""
    global _gpu_enabled
    if _gpu_enabled:
        return
    scene = bpy.context.scene
    engine, camera, size = scene.render.engine, scene.camera, (scene.render.resolution_x, scene.render.resolution_y)
    temporary = bpy.data.objects.new("gpu_warmup", bpy.data.cameras.new("gpu_warmup"))
    scene.collection.objects.link(temporary)
    scene.camera, scene.render.engine = temporary, "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 8
    bpy.ops.render.render()
    scene.camera, scene.render.engine = camera, engine
    scene.render.resolution_x, scene.render.resolution_y = size
    camera_data = temporary.data
    bpy.data.objects.remove(temporary)
    bpy.data.cameras.remove(camera_data)
    _gpu_enabled = True


def look_at(eye, target, up=(0.0, 1.0, 0.0)) -> Matrix:
    """View matrix (world -> view; the camera looks down -Z) of a camera at eye looking at target,
    with `up` pointing up on screen as far as the view direction allows."""
    eye, forward = Vector(eye), (Vector(target) - Vector(eye)).normalized()
    side = forward.cross(Vector(up)).normalized()
    screen_up = side.cross(forward)
    rotation = Matrix((side, screen_up, -forward)).to_4x4()
    return rotation @ Matrix.Translation(-eye)


def perspective(fov_y_deg: float, aspect: float, near: float = 0.1, far: float = 200.0) -> Matrix:
    """OpenGL perspective projection."""
    f = 1.0 / math.tan(math.radians(fov_y_deg) / 2.0)
    return Matrix(
        (
            (f / aspect, 0, 0, 0),
            (0, f, 0, 0),
            (0, 0, (far + near) / (near - far), 2 * far * near / (near - far)),
            (0, 0, -1, 0),
        )
    )


def project(points, view: Matrix, projection: Matrix, size: tuple[int, int]) -> np.ndarray:
    """(N, 2) pixel coordinates (x right, y up from the bottom row) of world points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    clip = np.hstack([pts, np.ones((len(pts), 1))]) @ (np.array(projection) @ np.array(view)).T
    ndc = clip[:, :2] / clip[:, 3:4]
    return (ndc + 1.0) / 2.0 * np.array(size)


def _object_triangles(obj, depsgraph) -> tuple[np.ndarray, np.ndarray]:
    """World-space triangles (T, 3, 3) and their unit normals of an object's evaluated mesh."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    mesh.calc_loop_triangles()
    co = np.zeros(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", co)
    tris = np.zeros(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", tris)
    evaluated.to_mesh_clear()
    matrix = np.array(obj.matrix_world)
    world = np.hstack([co.reshape(-1, 3), np.ones((len(co) // 3, 1))]) @ matrix.T
    triangles = world[:, :3][tris.reshape(-1, 3)]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    return triangles, normals / np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)


def _viewport_color(obj) -> tuple[float, float, float, float]:
    material = obj.active_material
    return tuple(material.diffuse_color) if material is not None else (0.8, 0.8, 0.8, 1.0)


def _draw_scene_meshes(context) -> None:
    """Visible mesh objects, opaque ones first (writing depth), then see-through ones such as our navmesh."""
    import gpu
    from gpu_extras.batch import batch_for_shader

    shader = gpu.shader.from_builtin("SMOOTH_COLOR")
    depsgraph = context.evaluated_depsgraph_get()
    objects = [obj for obj in context.scene.objects if obj.type == "MESH" and obj.visible_get()]
    objects.sort(key=lambda obj: _viewport_color(obj)[3] < 1.0)
    gpu.state.depth_test_set("LESS_EQUAL")
    gpu.state.blend_set("ALPHA")
    for obj in objects:
        triangles, normals = _object_triangles(obj, depsgraph)
        if not len(triangles):
            continue
        color = np.array(_viewport_color(obj))
        gpu.state.depth_mask_set(bool(color[3] >= 1.0))
        shade = 0.55 + 0.45 * np.abs(normals @ LIGHT)
        colors = np.repeat(np.column_stack([color[:3] * shade[:, None], np.full(len(shade), color[3])]), 3, axis=0)
        batch = batch_for_shader(
            shader, "TRIS", {"pos": triangles.reshape(-1, 3).astype(np.float32), "color": colors.astype(np.float32)}
        )
        batch.draw(shader)
    gpu.state.depth_mask_set(True)
    gpu.state.blend_set("NONE")


def render(
    context, view: Matrix, projection: Matrix, size: tuple[int, int] = (400, 400), ui_scale: float = 1.0
) -> np.ndarray:
    """(H, W, 4) float image, row 0 at the bottom: the scene's meshes, then the add-on's overlay
    (surface, lines, path) and, when clearance is shown, its legend at Blender's UI scale `ui_scale`."""
    import gpu

    enable_gpu()
    width, height = size
    offscreen = gpu.types.GPUOffScreen(width, height)
    try:
        with offscreen.bind():
            framebuffer = gpu.state.active_framebuffer_get()
            framebuffer.clear(color=BACKGROUND, depth=1.0)
            with gpu.matrix.push_pop(), gpu.matrix.push_pop_projection():
                gpu.matrix.load_matrix(view)
                gpu.matrix.load_projection_matrix(projection)
                _draw_scene_meshes(context)
                batches = overlay.scene_batches(context)
                if batches is not None:
                    overlay.draw_view(batches, size)
            radius = overlay.legend_radius(context)
            if radius is not None:
                with gpu.matrix.push_pop(), gpu.matrix.push_pop_projection():
                    gpu.matrix.load_matrix(Matrix.Identity(4))
                    gpu.matrix.load_projection_matrix(
                        Matrix(((2 / width, 0, 0, -1), (0, 2 / height, 0, -1), (0, 0, 1, 0), (0, 0, 0, 1)))
                    )
                    overlay.draw_legend(radius, ui_scale)
            pixels = framebuffer.read_color(0, 0, width, height, 4, 0, "FLOAT")
    finally:
        offscreen.free()
    pixels.dimensions = width * height * 4
    return np.array(pixels, dtype=np.float32).reshape(height, width, 4)


def save_png(image: np.ndarray, path: Path) -> None:
    """Write an (H, W, 4) image (row 0 at the bottom, as Blender's images are) to a PNG file."""
    height, width = image.shape[:2]
    picture = bpy.data.images.new(path.stem, width, height, alpha=False)
    picture.pixels.foreach_set(np.clip(image, 0.0, 1.0).astype(np.float32).ravel())
    picture.filepath_raw = str(path)
    picture.file_format = "PNG"
    path.parent.mkdir(parents=True, exist_ok=True)
    picture.save()
    bpy.data.images.remove(picture)
