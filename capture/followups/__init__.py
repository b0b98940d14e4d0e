"""What the user's next prompt says about the episode before it (pure): `rules` holds the
ordered rule table (English and Chinese) and `classify`, which names the label and the rule
that fired. Imports nothing of the project."""
