"""The episode contract: one typed definition of the episode and its parts.

`vocabulary` holds its words; `model` the episode and its parts as the store gives them;
`variants` the shapes derived from them (an upload, an export line); `schemas` their JSON
Schemas; `reference` the Markdown page that documents them.
"""
