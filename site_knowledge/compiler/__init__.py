"""The knowledge compiler: pages and ontology in, one validated artifact out. No MkDocs here."""
