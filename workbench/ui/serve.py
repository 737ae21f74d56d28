"""``python -m workbench.ui.serve run app.py ...``: the Streamlit server, with the pages' libraries imported early.

Streamlit imports a page's modules on its first run, in the browser's wait: pandas, pyarrow, Altair, the services
and the statistics take seconds, and every page of a fresh server paid them on its first load. Here a background
thread imports them as soon as the server's runtime exists, while the server starts and the browser loads
Streamlit's scripts; a page's first run then finds them imported (or waits only for the rest of an import under
way: Python's import lock makes the two threads share it).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import sys
import threading
import time

log = logging.getLogger(__name__)

#: Imported lazily by the pages (charts draw with Altair; intervals use scipy.special): worth having ready.
LAZY = ("workbench.charts", "scipy.special")


def warm_imports(*, wait_s: float = 60.0) -> None:
    """Import the app, every page module and the libraries they load lazily, once the runtime exists.

    The pages' ``st.cache_data`` functions must be made while the runtime exists (else they get a cache of their
    own), hence the wait. A failure is logged and left for the page's own run to report.
    """
    from streamlit.runtime import Runtime

    deadline = time.monotonic() + wait_s
    while not Runtime.exists():
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    from . import views

    names = ["workbench.ui.app"] + [f"{views.__name__}.{m.name}" for m in pkgutil.iter_modules(views.__path__)]
    for name in names + list(LAZY):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page that needs the module shows its error
            log.warning("could not import %s ahead of the first page", name, exc_info=True)


def main() -> None:
    threading.Thread(target=warm_imports, name="warm-imports", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())


if __name__ == "__main__":
    main()
