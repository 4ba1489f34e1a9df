"""Writes are all or nothing: a full disk while writing leaves an existing file as it was, no
partial file beside it, and a clear error naming the path."""

from __future__ import annotations

import errno
import json
import stat

import pytest

import blender_navmesh as lib
from blender_navmesh import collada, detour, files, godot
from tests.fixtures.io import navmeshes


def _disk_full(*_args):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize(
    "write",
    [
        lambda mesh, path: lib.save(mesh, path),
        lambda mesh, path: collada.write_collada(mesh, path),
        lambda mesh, path: detour.write_detour(mesh, path),
        lambda mesh, path: godot.write_tres(mesh, path),
    ],
    ids=["json", "dae", "detour", "godot"],
)
def test_a_full_disk_leaves_the_existing_file_whole(tmp_path, monkeypatch, write):
    path = tmp_path / "level.out"
    path.write_text("the good file from yesterday")
    monkeypatch.setattr(files.os, "fsync", _disk_full)
    with pytest.raises(lib.NavMeshError, match="cannot write .*level.out.*No space left"):
        write(navmeshes.l_corridor(), path)
    assert path.read_text() == "the good file from yesterday"
    assert [p.name for p in tmp_path.iterdir()] == ["level.out"]


def test_a_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "level.json"
    path.write_text("old")
    lib.save(navmeshes.l_corridor(), path)
    assert lib.load(path).polygon_count == navmeshes.l_corridor().polygon_count
    assert [p.name for p in tmp_path.iterdir()] == ["level.json"]


def test_a_glb_export_on_a_full_disk_leaves_the_existing_file_whole(tmp_path, monkeypatch):
    import bpy

    from navmesh_addon import io_formats

    bpy.ops.wm.read_factory_settings(use_empty=True)
    path = tmp_path / "level.glb"
    io_formats.write_navmesh_file(navmeshes.l_corridor(), path, "glb", context=bpy.context)
    good = path.read_bytes()
    monkeypatch.setattr(files.os, "fsync", _disk_full)
    with pytest.raises(lib.NavMeshError, match="No space left"):
        io_formats.write_navmesh_file(navmeshes.mixed(), path, "glb", context=bpy.context)
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["level.glb"]


def test_glb_exports_one_after_another_in_one_session(tmp_path):
    """The view layer still lists the previous export's removed object (as None) for a moment."""
    import bpy

    from navmesh_addon import io_formats

    bpy.ops.wm.read_factory_settings(use_empty=True)
    for name in ("a.glb", "b.glb", "a.glb"):
        io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / name, "glb", context=bpy.context)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.glb", "b.glb"]


def test_a_read_only_folder_is_one_clear_error(tmp_path, monkeypatch):
    """(Simulated: as root a read-only folder still takes writes.) Nothing is left behind."""
    path = tmp_path / "level.json"

    def refuse(*_args, **_kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(files.Path, "write_text", refuse)
    with pytest.raises(lib.NavMeshError, match="cannot write .*level.json.*Permission denied"):
        lib.save(navmeshes.l_corridor(), path)
    assert list(tmp_path.iterdir()) == []


FORMATS = ["json", "dae", "bin", "tres", "glb", "gltf"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_read_only_file_is_refused_and_left_as_it_was(tmp_path, fmt):
    """A read-only export target (a file under version control, not checked out) was replaced, and
    made writable, as the writers rename a new file over it."""
    import bpy

    from navmesh_addon import io_formats

    path = tmp_path / f"level.{fmt}"
    path.write_text("checked in")
    path.chmod(0o444)
    with pytest.raises(lib.NavMeshError, match=rf"cannot write .*level\.{fmt}.*read-only"):
        io_formats.write_navmesh_file(navmeshes.l_corridor(), path, fmt, context=bpy.context)
    assert path.read_text() == "checked in" and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "level.json"
    path.write_text("old")
    path.chmod(0o664)
    lib.save(navmeshes.l_corridor(), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o664 and lib.load(path).polygon_count


def test_an_empty_navmesh_exports_as_gltf_as_it_does_as_glb(tmp_path):
    """The .gltf of an empty navmesh failed with "No such file or directory": Blender writes no
    buffer for a mesh without faces. Both carry the reason it is empty."""
    import bpy

    from navmesh_addon import io_formats

    bpy.ops.wm.read_factory_settings(use_empty=True)
    empty = lib.NavMesh.empty(lib.BakeParams(), "no walkable surface")
    for fmt in ("glb", "gltf"):
        io_formats.write_navmesh_file(empty, tmp_path / f"empty.{fmt}", fmt, context=bpy.context)
    gltf = json.loads((tmp_path / "empty.gltf").read_text())
    assert [node["extras"]["empty_reason"] for node in gltf["nodes"]] == ["no walkable surface"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.glb", "empty.gltf"]


def test_a_paths_report_onto_a_folder_fails_in_one_line(blender, tmp_path, capsys):
    from navmesh_addon import cli

    lib.save(navmeshes.l_corridor(), tmp_path / "l.json")
    (tmp_path / "q.json").write_text("[[1, 1, 0.5, 9, 9, 0.5]]")
    (tmp_path / "out").mkdir()
    code = cli.main(["paths", str(tmp_path / "l.json"), str(tmp_path / "q.json"), "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("navmesh: error: cannot write") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("fmt", ["glb", "gltf"])
def test_a_gltf_exporter_failure_is_one_clear_error(tmp_path, monkeypatch, fmt):
    import bpy

    from navmesh_addon import io_formats

    def fail(*_args):
        raise RuntimeError(
            "Error: Python: Traceback (most recent call last):\n  ...\nPermissionError: [Errno 13] denied"
        )

    bpy.ops.wm.read_factory_settings(use_empty=True)
    monkeypatch.setattr(io_formats, "_run_gltf_exporter", fail)
    with pytest.raises(lib.NavMeshError, match=rf"cannot write .*level\.{fmt}.*PermissionError: \[Errno 13\] denied$"):
        io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / f"level.{fmt}", fmt, context=bpy.context)
    assert list(tmp_path.iterdir()) == [] and len(bpy.data.objects) == 0


@pytest.mark.parametrize("name", ["level_nav", "level.navmesh"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_writes_exactly_the_path_given(tmp_path, fmt, name):
    """A .glb to a path not ending in .glb failed with "No such file or directory" and left
    `.level_nav.<pid>.partial.glb` behind: Blender's glTF exporter adds the extension it expects."""
    import bpy

    from navmesh_addon import io_formats

    bpy.ops.wm.read_factory_settings(use_empty=True)
    path = tmp_path / name
    assert io_formats.write_navmesh_file(navmeshes.l_corridor(), path, fmt, context=bpy.context) == path
    buffer = [path.with_suffix(".bin").name] if fmt == "gltf" else []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, *buffer])
    if fmt == "glb":
        assert path.read_bytes()[:4] == b"glTF"
    if fmt == "gltf":
        assert json.loads(path.read_text())["buffers"][0]["uri"] == buffer[0]
    assert len(bpy.data.objects) == 0


def test_a_glb_exporter_failure_leaves_nothing_beside_a_path_without_extension(tmp_path, monkeypatch):
    import bpy

    from navmesh_addon import io_formats

    def fail(_bpy, path, _fmt):
        with open(path if str(path).endswith(".glb") else f"{path}.glb", "wb") as fh:  # as Blender's exporter names it
            fh.write(b"glTF half")
        raise RuntimeError("Error: Python: Traceback (most recent call last):\n  ...\nOSError: disk full")

    bpy.ops.wm.read_factory_settings(use_empty=True)
    monkeypatch.setattr(io_formats, "_run_gltf_exporter", fail)
    with pytest.raises(lib.NavMeshError, match=r"cannot write .*level_nav'.*disk full$"):
        io_formats.write_navmesh_file(navmeshes.l_corridor(), tmp_path / "level_nav", "glb", context=bpy.context)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.filterwarnings("ignore:.*does not support blend relative")  # ExportHelper's filepath says so
def test_a_blend_relative_path_is_written_next_to_the_saved_blend_file(blender, tmp_path):
    """`//nav.json` (Blender's relative path) was written at the filesystem root. The folder below
    is one the root has not, so the test writes nothing outside tmp_path even where the fix is missing."""
    import bpy

    from navmesh_addon import io_formats, mesh_write

    folder = "navmesh_relative_export_test_8c1f"
    (tmp_path / folder).mkdir()
    mesh = navmeshes.l_corridor()
    with pytest.raises(
        lib.NavMeshError, match=rf"'//{folder}/nav.json' is relative to the .blend file, which is not saved"
    ):
        io_formats.write_navmesh_file(mesh, f"//{folder}/nav.json", "json")
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "level.blend"))
    assert io_formats.write_navmesh_file(mesh, f"//{folder}/nav.json", "json") == tmp_path / folder / "nav.json"
    assert lib.load(tmp_path / folder / "nav.json").polygon_count == mesh.polygon_count
    bpy.context.view_layer.objects.active = mesh_write.write_navmesh_object(bpy.context.scene, mesh, "L_navmesh")
    assert bpy.ops.export_scene.navmesh_glb(filepath=f"//{folder}/nav.glb") == {"FINISHED"}
    assert sorted(p.name for p in (tmp_path / folder).iterdir()) == ["nav.glb", "nav.json"]
