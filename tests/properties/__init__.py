"""Property-based tests (Hypothesis) of every importer: issue 49 item 3.

Every file the workbench reads from a user is generated in its format's shape, then mutated in one place (a value
of another type, a field dropped, written twice or added, a number out of range; the bytes cut short, in latin-1
or UTF-16, with a bad byte, a NUL or a BOM), and imported into a fresh copy of a template database with the
temporary folder redirected. Each outcome must be a whole import or a refusal, a ``WorkbenchError`` naming the file
(and, for a fault inside a record, the record or line), with every table as before and no file left behind; any
other exception fails (``harness.outcome``).

- ``test_workbench_files.py``: ``import items``, ``import labels``, ``import judgments`` (jsonl) and ``monitor
  ingest`` (jsonl, against an approved bundle);
- ``test_tool_files.py``: ``import --from`` promptfoo, DeepEval, Langfuse and Phoenix (their JSON; Langfuse and
  Phoenix as the saved API responses of tests/interop/fixtures, one file mutated), Inspect AI (a ``.json`` log built
  with inspect_ai's types) and MLflow (``Trace.to_dict()`` files);
- what Hypothesis found is kept as plain tests at the end of each module, with the sentence now said.

60 examples a property by default (the whole folder in about 20 s on 2 cores); ``test_thorough.py`` (``-m slow``)
or ``WORKBENCH_PROPERTIES=thorough`` runs 1000.
"""
