"""The contracts every stage shares: trace and result schemas, comparison rules, bounded reading.

Nothing here imports a stage (collect, validate, render, publish), and importing this package stays
free of pydantic and pandas: the GPU worker imports `core.schema` on machines that have neither.
"""

__version__ = "0.1.0"
