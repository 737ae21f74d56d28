"""The loopback OpenAI-compatible server, shipped in the package as ``workbench.features.demo.loopback_server`` (the README
runs it in a workspace with ``python -m workbench.features.demo.loopback_server``); re-exported here for the tests that import
``tests.judges.loopback_server`` or run ``python tests/judges/loopback_server.py``."""

from workbench.features.demo.loopback_server import *  # noqa: F401,F403
from workbench.features.demo.loopback_server import LoopbackServer, main  # noqa: F401 - named for readers and linters

if __name__ == "__main__":
    main()
