"""`python -m steepy.events [FILE]`: the reference page of the timeline's events."""

import sys

from steepy.events.reference import main

raise SystemExit(main(sys.argv[1:]))
