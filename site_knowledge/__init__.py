"""site-knowledge: an "ask this site" system for MkDocs sites."""

__version__ = "0.2.0"
