"""What a test run says: which shell commands run tests (`commands`), which files hold tests
(`testfiles`), counts read from a runner's summary (`summaries`, one module per runner
family in `runners`) or its JUnit XML
(`junit_xml`, found by `junit_paths`, read by `junit_files`), the best results at hand
(`results`), whether two records are one execution seen by two sources (`identity`), and which
episodes a run is evidence for (`linking`).

No database: these are decisions and readers the store and the sources build on. May import
`capture.errors`, `capture.model`, `capture.globs`, `capture.edits` and itself. Where runs come
from (the `capture run` wrapper, the pytest plugin, the JUnit watcher) is
`capture.testruns.sources`.
"""
