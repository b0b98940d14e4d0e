"""detect-secrets behind the engine boundary: `engine` (its plugins run as an engine), `lines`
(which lines they must read), `readers` (stand-ins for their own reading) and `internals` (what
of the library beyond its documented use all this relies on)."""

from sync.anonymize.secrets.detect_secrets.engine import DetectSecrets

__all__ = ["DetectSecrets"]
