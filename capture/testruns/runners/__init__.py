"""One module per family of test runners, each reading its runners' own summary (and the
failing tests' names) from their output. `capture.testruns.summaries.parse_summary` tries them
in turn; each parser takes the output with colours removed and `\\n` line ends."""
