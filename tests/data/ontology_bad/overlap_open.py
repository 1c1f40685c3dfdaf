"""LOCATION_HISTORY[1] starts while the open-ended LOCATION_HISTORY[0] still runs."""

PROFILE = {
    "name": "Ada Example",
    "headline": "Engineer",
    "current_location": {"city": "Lisbon", "country": "Portugal"},
    "email": "ada@example.com",
    "summary": "A fixture person.",
}
AUTHORITY = {"categories": {"PROFILE": "fact", "LOCATION_HISTORY": "fact"}, "rules": []}
URLS = {"PROFILE": "", "LOCATION_HISTORY": "cv/"}

LOCATION_HISTORY = [
    {"id": "porto", "city": "Porto", "country": "Portugal", "start": "2016-10", "end": None},
    {"id": "lisbon", "city": "Lisbon", "country": "Portugal", "start": "2019-01", "end": None},
]
