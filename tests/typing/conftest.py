"""The scripts here are read by type checkers (test_typing.py), never imported by pytest."""

collect_ignore = ["user_typed.py", "user_wrong.py"]
