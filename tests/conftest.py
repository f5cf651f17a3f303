import sys
from pathlib import Path

# tests/oracle.py is imported by name from the test modules.
sys.path.insert(0, str(Path(__file__).parent))
