"""AUTHORITY names a category the ontology does not have."""

PROFILE = {
    "name": "Ada Example",
    "headline": "Engineer",
    "current_location": {"city": "Lisbon", "country": "Portugal"},
    "email": "ada@example.com",
    "summary": "A fixture person.",
}
AUTHORITY = {"categories": {"PROFILE": "fact", "HOBBIES": "prose"}, "rules": []}
URLS = {"PROFILE": ""}
