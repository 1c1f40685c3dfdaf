"""No PROFILE at all."""

AUTHORITY = {"categories": {}, "rules": []}
URLS = {}
