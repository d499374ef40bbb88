"""`python -m steepy ...` is the `steepy` command."""

from steepy.cli import entry

entry()
