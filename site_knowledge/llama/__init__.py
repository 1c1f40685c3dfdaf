"""llama-server as a process and its models: presets from PyPI, verification, the supervisor
that starts and restarts it, and the service files that run the stack at boot."""
