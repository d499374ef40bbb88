"""Small workflows the engine tests share."""

# fails on its first attempt (the state file counts attempts), succeeds on a retry
FAILS_ONCE = """
api: 4.7.0
name: fails once, then works
actions:
  - id: f
    type: execute
    service: flaky
    inputs:
      - {id: fail_times, value: 1}
      - {id: state, value: %s}
    outputs:
      - {id: output_file, var: out, store: true}
    retries: {maxAttempts: 1}
"""

# a chain that runs long enough to be cancelled
SLEEPY = """
api: 4.7.0
name: sleepy
actions:
  - {id: nap, type: execute, service: sleep, inputs: [{id: seconds, value: 30}]}
"""


def slowprint_fan_out(items: int, lines: int, interval: float) -> str:
    """A for-each of `items' chains, each printing `lines' lines every `interval' seconds."""
    values = ", ".join(f'"{i + 1}"' for i in range(items))
    return f"""
api: 4.7.0
vars:
  - {{id: items, value: [{values}]}}
actions:
  - type: for
    input: items
    enumerator: i
    actions:
      - type: execute
        service: slowprint
        inputs: [{{id: lines, value: {lines}}}, {{id: interval, value: {interval}}}]
"""
