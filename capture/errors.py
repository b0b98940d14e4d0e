"""The exceptions a user can meet. Each renders as one line on the command line.

CaptureError
├── InputError          the input given to a command is unusable (bad JSON, missing file, ...)
├── ConfigError         config.toml or an environment variable holds a bad value
├── StoreError          the database cannot be opened, migrated or written
└── NotFoundError       an id or path that names nothing recorded
"""

__all__ = ["CaptureError", "ConfigError", "InputError", "NotFoundError", "StoreError"]


class CaptureError(Exception):
    """Base of every error agent-capture reports to a user."""

    exit_code = 1


class InputError(CaptureError):
    exit_code = 2


class ConfigError(CaptureError):
    exit_code = 2


class StoreError(CaptureError):
    exit_code = 3


class NotFoundError(CaptureError):
    exit_code = 4
