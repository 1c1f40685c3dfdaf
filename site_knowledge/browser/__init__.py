"""The chat box: its JavaScript, styles and vendored runtimes, and the step that ships them
into a built site (``assets``)."""
