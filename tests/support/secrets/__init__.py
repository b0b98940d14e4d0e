"""The two generated secret corpora (seeded, every value in its provider's real format).

- `labelled_corpus`: secrets of 40+ kinds, each labelled with its kind and place, plus negative
  lines; what recall and false positives are measured on (tests/benchmarks/bench_secrets.py).
- `planted_secrets`: secrets planted in several places of each episode; what the end-to-end
  leak test searches the collector's stored bytes for.
"""
