"""site-knowledge: an "ask this site" system for MkDocs sites."""

__version__ = "0.1.0"
