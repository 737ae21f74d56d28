"""Where a workspace lives: an SQLite file (the default) or a Postgres database, and moving it between the two."""
