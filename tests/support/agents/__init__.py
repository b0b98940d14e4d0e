"""The real agent CLIs (Claude Code, Codex, Gemini CLI) run offline against a scripted model: the
model APIs each speaks (`model_api`), the scenarios that script them (`scenario`), and one session
of a CLI in a fresh repository and home where `capture install` wrote the hooks (`sessions`)."""
