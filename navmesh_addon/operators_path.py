"""Viewport path test: Start/Goal handles on the navmesh, a path recomputed when they move, Path to Curve."""

from __future__ import annotations

import time
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.app.handlers import persistent

import blender_navmesh as lib
from blender_navmesh import query

from . import mesh_write, operators_bake, units

HANDLE_TAG = "navmesh_path_handle"


@dataclass
class PathState:
    """The last computed path and the inputs it was computed from (the cache key), and the query
    object of the navmesh it ran on, kept while that navmesh's revision stays the same."""

    key: tuple | None = None
    result: object | None = None
    query: object | None = None
    query_key: tuple | None = None

    @property
    def mesh(self) -> lib.NavMesh | None:
        return None if self.query is None else self.query.mesh


STATE = PathState()


def navmesh_for_path(context) -> bpy.types.Object:
    """The active navmesh object, else the only one in the scene, else the Path Test's Navmesh field
    when it names one of the scene's; NavMeshError saying what to do otherwise."""
    active = context.active_object
    if active is not None and active.get(mesh_write.TAG):
        return active
    found = mesh_write.find_navmesh_objects(context.scene)
    if len(found) == 1:
        return found[0]
    if context.scene.navmesh.path_navmesh in found:
        return context.scene.navmesh.path_navmesh
    raise lib.NavMeshError(
        "bake a navmesh first"
        if not found
        else "several navmesh objects: make the one to test active, or pick it as Navmesh"
    )


def path_target(scene) -> tuple:
    """(navmesh object, radius) the path is planned on: the chosen agent type's navmesh at its radius,
    else the Navmesh and Path Radius fields; the object is None when that type has no navmesh yet, or
    is no agent type any more (no path rather than one at Path Radius)."""
    settings = scene.navmesh
    if not settings.path_agent:
        return settings.path_navmesh, settings.path_radius
    agent = settings.agent_types.get(settings.path_agent)
    if agent is None:
        return None, settings.path_radius
    return operators_bake.agent_navmesh(scene, agent), agent.radius


def path_key(scene) -> tuple | None:
    """What the path depends on: handle positions, radius and the navmesh data; None if incomplete."""
    settings = scene.navmesh
    nav, radius = path_target(scene)
    start, goal = settings.path_start, settings.path_goal
    if nav is None or start is None or goal is None or nav.type != "MESH":
        return None
    return (
        tuple(start.matrix_world.translation),
        tuple(goal.matrix_world.translation),
        round(radius, 6),
        mesh_write.revision(nav),
    )


def navmesh_query(nav) -> query.NavMeshQuery:
    """The query object for a navmesh object, decoded once per revision of its data."""
    key = (nav.name_full, mesh_write.revision(nav))
    if STATE.query is None or STATE.query_key != key:
        mesh = mesh_write.read_navmesh_object(nav)
        if mesh.is_empty:
            raise lib.NavMeshError("the navmesh is empty: bake it again with walkable sources")
        STATE.query = query.NavMeshQuery(mesh)  # its default filter weighs areas by the navmesh's costs
        STATE.query_key = key
    return STATE.query


def update_path(scene) -> bool:
    """Recompute the test path if its inputs changed; True when it did."""
    settings = scene.navmesh
    key = path_key(scene)
    if key == STATE.key:
        return False
    STATE.key = key
    if key is None:
        STATE.result = None
        settings.path_status = ""
        return True
    try:
        nav, radius = path_target(scene)
        nav_query = navmesh_query(nav)
        meters = units.meters_per_unit(scene)  # the handles and radius are in Blender units
        began = time.perf_counter()
        result = nav_query.find_path(
            np.multiply(key[0], meters), np.multiply(key[1], meters), radius=round(radius * meters, 6)
        )
        elapsed = time.perf_counter() - began
    except lib.NavMeshError as exc:
        STATE.result = None
        settings.path_status = f"error: {exc}"
        return True
    STATE.result = result
    settings.path_status = str(result.status) if result.status == "found" else f"{result.status}: {result.reason}"
    settings.path_length = float(result.length) / meters
    settings.path_polygons = int(result.nodes_expanded)
    settings.path_time_ms = elapsed * 1000.0
    return True


@persistent
def on_depsgraph_update(scene, depsgraph) -> None:
    """depsgraph_update_post handler; cheap when nothing the path depends on moved."""
    if hasattr(scene, "navmesh"):
        update_path(scene)


def _handle(name: str, location, collection, nav_query, meters: float) -> bpy.types.Object:
    """Our handle `name` in the navmesh's collection (each scene has its own), made at `location`
    (meters, as the navmesh) if it does not exist; one the user already placed on this navmesh
    stays where it is."""
    obj = next((o for o in collection.objects if o.get(HANDLE_TAG) and o.name.startswith(name)), None)
    if obj is None:
        obj = bpy.data.objects.new(name, None)
        obj[HANDLE_TAG] = True
        obj.empty_display_type = "SINGLE_ARROW"
        obj.empty_display_size = 1.0
        collection.objects.link(obj)
        obj.location = np.divide(location, meters)
    elif nav_query.locate(np.multiply(obj.matrix_world.translation, meters)).polygon < 0:
        obj.location = np.divide(location, meters)
    obj.hide_render = True
    return obj


class NAVMESH_OT_add_path_test(bpy.types.Operator):
    """Add Start and Goal handles on the navmesh; moving them recomputes the test path"""

    bl_idname = "navmesh.add_path_test"
    bl_label = "Add Path Test"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return mesh_write.poll_navmesh(cls, context, "bake a navmesh first")

    def execute(self, context):
        try:
            nav = path_target(context.scene)[0] if context.scene.navmesh.path_agent else navmesh_for_path(context)
            if nav is None:
                raise lib.NavMeshError(f"agent type {context.scene.navmesh.path_agent} has no navmesh: bake first")
            nav_query = navmesh_query(nav)
        except lib.NavMeshError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        centroids = nav_query.index.centroid
        far = int(np.argmax(np.linalg.norm(centroids - centroids[0], axis=1)))
        # Snap onto the surface (the detail mesh follows the real floor, polygon centroids need not).
        start, goal = (nav_query.index.nearest(centroids[p])[2] for p in (0, far))
        collection = nav.users_collection[0]
        settings = context.scene.navmesh
        settings.path_navmesh = nav
        meters = units.meters_per_unit(context.scene)
        settings.path_start = _handle("Path Start", start, collection, nav_query, meters)
        settings.path_goal = _handle("Path Goal", goal, collection, nav_query, meters)
        update_path(context.scene)
        return {"FINISHED"}


class NAVMESH_OT_path_to_curve(bpy.types.Operator):
    """Write the current test path as a poly curve object"""

    bl_idname = "navmesh.path_to_curve"
    bl_label = "Path to Curve"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if path_key(context.scene) is not None:
            return True
        cls.poll_message_set("add a path test first")
        return False

    def execute(self, context):
        update_path(context.scene)
        result = STATE.result
        if result is None or len(result.points) < 2:
            self.report({"ERROR"}, "no path to convert: add a path test with a reachable goal first")
            return {"CANCELLED"}
        points = np.asarray(result.points, dtype=np.float64).reshape(-1, 3) / units.meters_per_unit(context.scene)
        curve = bpy.data.curves.new("Navmesh Path", "CURVE")
        curve.dimensions = "3D"
        spline = curve.splines.new("POLY")
        spline.points.add(len(points) - 1)
        spline.points.foreach_set("co", np.hstack([points, np.ones((len(points), 1))]).ravel())
        obj = bpy.data.objects.new("Navmesh Path", curve)
        mesh_write.collection_for_new_objects(context).objects.link(obj)
        self.report({"INFO"}, f"Path curve with {len(points)} points")
        return {"FINISHED"}


CLASSES = (NAVMESH_OT_add_path_test, NAVMESH_OT_path_to_curve)


def register_handlers() -> None:
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister_handlers() -> None:
    if on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(on_depsgraph_update)
    STATE.key = STATE.result = STATE.query = STATE.query_key = None
