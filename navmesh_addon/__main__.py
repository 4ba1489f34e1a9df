"""`python -m navmesh_addon ...` from the repository root (scripts/navmesh from anywhere): the headless
CLI on the bpy module."""

import os
import sys

from . import cli, register

register()
code = cli.main(sys.argv[1:])
# Leave without the interpreter's teardown: the bpy module of Blender 4.2 crashes there (signal 11)
# once a property with an update callback has been registered, and the exit code would be lost.
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
