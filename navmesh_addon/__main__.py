"""`python -m navmesh_addon ...` from the repository root: the headless CLI on the bpy module."""

import sys

from . import cli, register

register()
sys.exit(cli.main(sys.argv[1:]))
