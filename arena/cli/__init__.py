"""The ``arena`` command line: wiring only; the behaviour lives in the library.

Importing it applies the process settings (``arena.runtime.configure``) before any command
module imports gRPC: the ``arena`` command is an entry point.
"""

from arena.runtime import configure

configure()
