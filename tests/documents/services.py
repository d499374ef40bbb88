"""Service metadata the documents tests share."""

CP = """\
- id: cp
  name: cp
  description: copy
  path: cp
  runtime: other
  parameters:
    - {id: i, name: i, description: i, type: input, cardinality: 1..1}
    - {id: o, name: o, description: o, type: output, cardinality: 1..1}
"""
