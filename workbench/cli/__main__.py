"""`python -m workbench.cli`: the command line, as the `workbench` script runs it."""

from workbench.cli import main

if __name__ == "__main__":
    main()
