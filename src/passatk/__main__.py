"""Run the passatk command line: ``python -m passatk``."""

from passatk.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
