"""Bytes in: opening, paths, lines, documents, tables; nothing about formats."""
