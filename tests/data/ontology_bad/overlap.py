"""LOCATION_HISTORY[2] overlaps LOCATION_HISTORY[0]."""

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

LOCATION_HISTORY = [
    {"id": "oslo", "city": "Oslo", "country": "Norway", "start": "2015-01", "end": "2016-06"},
    {"id": "porto", "city": "Porto", "country": "Portugal", "start": "2016-10", "end": None},
    {"id": "bergen", "city": "Bergen", "country": "Norway", "start": "2016-06", "end": "2016-09"},
]
