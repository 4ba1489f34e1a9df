"""The project's own error type, so callers can tell bad input from bugs."""


class NavMeshError(ValueError):
    """Raised for input or parameters the generator cannot use. The message names the problem."""


class BakeCancelled(Exception):
    """Raised out of `generate` when its progress callback asks to stop."""
