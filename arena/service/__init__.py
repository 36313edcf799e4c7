"""The league service (``arena league serve``): accounts, uploads and the round scheduler.

Each concern is one module: ``accounts`` (owners, tokens, the audit log, failed-login limits),
``uploads`` (a hostile upload streamed, unpacked and submitted by the local ``submit`` path),
``scheduler`` (when the next round is due) and ``worker`` (the process that plays a round or
checks a submission, with the same functions the CLI calls). ``client`` is the author's side
of an upload. The web routes live in ``arena.web.service``.
"""
