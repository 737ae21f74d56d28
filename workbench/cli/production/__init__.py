"""Commands of an approved judge in production: `workbench monitor ingest|report|promote`."""
