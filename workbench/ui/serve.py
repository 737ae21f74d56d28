"""``python -m workbench.ui.serve run app.py ...``: the Streamlit server, with the pages' libraries imported first.

Streamlit imports what a page needs on the page's first run, while the browser waits: pandas, pyarrow, Altair and
the services took seconds, and every page of a fresh server paid them on its first load. Here they are imported
before the server starts listening, so ``workbench ui`` prints its address a second or two later and every page
opens without that wait. Only modules that do not touch Streamlit are imported here: the pages' own modules make
their ``st.cache_data`` functions, which must be made inside the running server (a background thread importing
them competed with the first page's run and made light pages slower).
"""

from __future__ import annotations

import importlib
import logging
import sys

log = logging.getLogger(__name__)

#: What the pages import or call, heaviest first; none of it imports Streamlit.
PRELOAD = ("pandas", "pyarrow", "altair", "scipy.special", "workbench.features.export.charts", "workbench.calibration.presentation",
           "workbench.calibration.calibrate", "workbench.calibration.insights", "workbench.features.judging.service",
           "workbench.features.labeling.service", "workbench.features.export.bundle", "workbench.stats.intervals.bootstrap",
           "workbench.stats.categories")


def preload() -> None:
    """Import :data:`PRELOAD`; a module that fails is logged and left for the page that needs it to report."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page that needs the module shows its error
            log.warning("could not import %s ahead of the first page", name, exc_info=True)


def main() -> None:
    preload()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
