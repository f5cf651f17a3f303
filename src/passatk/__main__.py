"""Run the command line: ``python -m passatk``."""

from passatk.cli import run

if __name__ == "__main__":
    run()
