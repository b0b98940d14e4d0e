"""The labelled secrets corpus (generated, seeded) and its negatives."""
