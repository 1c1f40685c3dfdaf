"""The HTTP gateway in front of llama.cpp's llama-server.

A visitor sends a question and its history; the gateway owns retrieval, the prompt and the
model, so it is never an open model proxy. Modules, one job each:

- ``config``: limits and settings;
- ``policy``: origin, token, body, shape and rate checks before any work;
- ``admission``: one active generation and a bounded FIFO of waiters;
- ``prompt``: messages from the artifact's system prompt, frozen history and evidence;
- ``upstream``: the model servers by kind (``upstream_llama``, ``upstream_openai``), their
  shared stream reader (``upstream_stream``), tried in order;
- ``metrics``: privacy-safe counters and recent samples;
- ``answer``: one answer's steps (wait, assemble, stream, settle, record) and its stream;
- ``app``: the Starlette application (``/api/ask``, ``/healthz``, ``/metrics``);
- ``model``: model file verification; ``supervisor``: running llama-server;
- ``serve``: the whole local stack; ``cli``: the ``gateway`` and ``serve`` subcommands;
- ``feedback``: answer ids, ``/api/feedback`` votes and the counting around ``/api/ask``;
- ``gaps``: the content-gap ledger; ``reportcli``: ``site-knowledge report``.
"""
