"""agent-capture: what coding agents proposed, what became of it, and the tests that followed."""

__version__ = "0.1.0"

__all__ = ["__version__"]
