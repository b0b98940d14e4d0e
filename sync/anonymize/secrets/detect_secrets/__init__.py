"""detect-secrets behind the engine boundary: `engine` (its plugins run as an engine), `lines`
(which lines they must read), `readers` (stand-ins for their own reading), `internals` (what of
the library beyond its documented use all this relies on) and `contract` (whether the installed
version still offers it)."""

from sync.anonymize.secrets.detect_secrets.engine import DetectSecrets

__all__ = ["DetectSecrets"]
