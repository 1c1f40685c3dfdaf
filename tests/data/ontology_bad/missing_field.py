"""CAREER[1] has no company."""

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


def job(id, start="2015-01", end="2016-06", **extra):
    entry = {
        "id": id,
        "company": "Acme",
        "title": "Engineer",
        "start": start,
        "end": end,
        "location": {"city": "Oslo", "country": "Norway"},
        "notes": [],
    }
    entry.update(extra)
    return entry


CAREER = [job("acme"), {k: v for k, v in job("globex", "2017-01", None).items() if k != "company"}]
