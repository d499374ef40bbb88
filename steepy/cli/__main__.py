from steepy.cli import entry

entry()
