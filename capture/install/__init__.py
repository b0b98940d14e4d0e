"""`capture install` / `capture uninstall`: capture's hook entries in each agent's settings.

`targets` names each agent's settings files and our entries in them; `settings` merges them in
and takes them out again; `jsontext` edits JSON text in place, so the user's own formatting and
entries stay byte for byte. Touches no database: imports only the shared modules.
"""
