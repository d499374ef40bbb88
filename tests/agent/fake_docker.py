"""A stand-in for the docker client: appends its argv as a JSON line to $FAKE_DOCKER_LOG.

`run` behaves like a container that runs until killed; `kill NAME` exits at once."""

import json
import os
import sys
import time

with open(os.environ["FAKE_DOCKER_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
if sys.argv[1:2] == ["run"]:
    print("container started", flush=True)
    time.sleep(float(os.environ.get("FAKE_DOCKER_RUN_S", "30")))
