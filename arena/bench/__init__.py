"""Benchmarks behind ``arena bench``: the rules core (``engine``), the gRPC referee (``grpc``)
and the event runner (``event``). They print figures and run outside the test suite."""
