"""The file raises while it is imported."""

PROFILE = {
    "name": "Ada Example",
    "headline": "Engineer",
    "current_location": {"city": "Lisbon", "country": "Portugal"},
    "email": "ada@example.com",
    "summary": "A fixture person.",
}
AUTHORITY = {
    "categories": {
        "PROFILE": "fact",
        "CAREER": "fact",
        "LOCATION_HISTORY": "fact",
        "PROJECTS": "fact",
    },
    "rules": [],
}
URLS = {"PROFILE": "", "CAREER": "cv/", "LOCATION_HISTORY": "cv/", "PROJECTS": "projects/"}

CAREER = [{"id": "acme"}]
raise RuntimeError("ontology generation failed")
