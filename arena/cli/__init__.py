"""The ``arena`` command line: wiring only; the behaviour lives in the library."""
