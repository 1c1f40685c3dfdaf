"""The MkDocs adapter (thin): typed config, events, assets."""
