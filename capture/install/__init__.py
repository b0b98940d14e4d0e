"""`capture install` / `capture uninstall`: capture's hook entries in each agent's settings."""
