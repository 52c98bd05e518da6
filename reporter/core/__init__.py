"""The contracts every stage shares: trace and result schemas, comparison rules, bounded reading.

Nothing here imports a stage (collect, validate, render, publish), and importing this package stays
free of pydantic and pandas: the GPU worker imports `core.schema` on machines that have neither.
"""

__version__ = "0.1.0"
# The name on the package index (pip install, --install, the Pages workflow). The command and the import package
# are `reporter`, but the index's `reporter` is an unrelated project (text extraction from HTML, 2012).
DISTRIBUTION = "kernel-reporter"
