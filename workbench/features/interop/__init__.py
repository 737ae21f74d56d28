"""Meeting judges where they live: adapters that read other eval tools' results (``base.py``) and the explicit
mapping of their values onto a rubric's scale (``mapping.py``)."""
