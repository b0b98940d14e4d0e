"""Rule sets shipped as data: gitleaks' provider rules (MIT), its own TOML (`gitleaks.toml`),
read by `gitleaks_config` and refreshed by `update_gitleaks.py`."""

__all__: list[str] = []
