"""Rule sets read as data: gitleaks' provider rules (MIT), converted by `update_gitleaks.py`."""

__all__: list[str] = []
