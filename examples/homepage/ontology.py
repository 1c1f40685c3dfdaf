"""Structured facts for the example site: Teodor "Teo" Varga, a fictional engineer.

Plain data, loaded by path at build time by ``site_knowledge.compiler.ontology``. Every fact here
must agree with the pages under ``docs/``. Dates are "YYYY-MM" (or "YYYY"); an ``end`` of
None means "to the present". Ids are lower-case, digits and hyphens, unique across categories,
and each one is also the HTML anchor of the entry on the page that URLS names.
"""

PROFILE = {
    "name": "Teodor Varga",
    "short_name": "Teo",
    "headline": "Infrastructure engineer: data pipelines, Postgres, and small language models",
    "current_location": {"city": "Vienna", "country": "Austria"},
    "email": "teo@example.com",
    "links": {
        "GitHub": "https://github.com/teo-varga-example",
        "Mastodon": "https://mastodon.example/@teo",
    },
    "summary": (
        "Teo grew up in Pécs, Hungary, studied in Budapest and Delft, and has worked in "
        "Rotterdam, Berlin, Zurich and Vienna on freight pricing, streaming analytics, map "
        "tile pipelines and developer platforms. He writes about PostgreSQL, stream processing "
        "and running small language models honestly."
    ),
    "site_url_path": "",
}

CAREER = [
    {
        "id": "lumen-freight",
        "company": "Lumen Freight",
        "title": "Software Engineer",
        "start": "2014-09",
        "end": "2016-12",
        "location": {"city": "Rotterdam", "country": "Netherlands"},
        "notes": [
            "Built the quote engine, written in Go, that priced container trucking between "
            "the Port of Rotterdam and inland depots.",
            "Introduced Kafka for pricing events and started the first on-call rotation of a "
            "five-person team.",
            "Left at the end of 2016 to take an eight-month sabbatical in Lisbon.",
        ],
    },
    {
        "id": "kestrel-analytics",
        "company": "Kestrel Analytics",
        "title": "Senior Software Engineer",
        "start": "2017-09",
        "end": "2020-05",
        "location": {"city": "Berlin", "country": "Germany"},
        "notes": [
            "Built the streaming ingestion pipeline for retail footfall sensors on Kafka and Apache Flink.",
            "Led the 2018 migration of about 140 cron jobs to Apache Airflow.",
            "Wrote pg-shadow, a tool that replays production PostgreSQL queries against a "
            "shadow database; it was open-sourced in 2019.",
        ],
    },
    {
        "id": "northwind-maps",
        "company": "Northwind Maps",
        "title": "Staff Engineer",
        "start": "2020-06",
        "end": "2023-02",
        "location": {"city": "Zurich", "country": "Switzerland"},
        "notes": [
            "Owned the nightly pipeline that turns OpenStreetMap extracts into vector tiles "
            "for 40 countries.",
            "Cut the nightly tile build from about 9 hours to under 3 by replacing one large "
            "PostGIS instance with partitioned builds.",
            "Mentored four engineers and ran the platform guild.",
        ],
    },
    {
        "id": "fennec-systems",
        "company": "Fennec Systems",
        "title": "Principal Engineer",
        "start": "2023-04",
        "end": None,
        "location": {"city": "Vienna", "country": "Austria"},
        "notes": [
            "Leads the internal developer platform: build caching, preview environments and "
            "a fleet of about 60 PostgreSQL clusters.",
            "Since 2024 also runs the small-model experiments for internal documentation "
            "search on llama.cpp.",
        ],
    },
]

EDUCATION = [
    {
        "id": "bme",
        "institution": "Budapest University of Technology and Economics",
        "degree": "BSc",
        "field": "Computer Engineering",
        "start": "2008-09",
        "end": "2012-06",
        "location": {"city": "Budapest", "country": "Hungary"},
        "notes": ["Bachelor's thesis on lock-free queues in C."],
    },
    {
        "id": "tu-delft",
        "institution": "Delft University of Technology",
        "degree": "MSc",
        "field": "Computer Science (distributed systems track)",
        "start": "2012-09",
        "end": "2014-08",
        "location": {"city": "Delft", "country": "Netherlands"},
        "notes": [
            "Master's thesis on bounded staleness for geo-replicated key-value stores, graded cum laude.",
        ],
    },
]

LOCATION_HISTORY = [
    {
        "id": "lived-budapest",
        "city": "Budapest",
        "country": "Hungary",
        "start": "2008-09",
        "end": "2012-08",
        "notes": ["Moved from Pécs to study at BME; shared a flat in Józsefváros."],
    },
    {
        "id": "lived-delft",
        "city": "Delft",
        "country": "Netherlands",
        "start": "2012-09",
        "end": "2014-08",
        "notes": ["Master's studies at TU Delft."],
    },
    {
        "id": "lived-rotterdam",
        "city": "Rotterdam",
        "country": "Netherlands",
        "start": "2014-09",
        "end": "2016-12",
        "notes": ["Working at Lumen Freight; lived in Kralingen."],
    },
    {
        "id": "lived-lisbon",
        "city": "Lisbon",
        "country": "Portugal",
        "start": "2017-01",
        "end": "2017-08",
        "notes": [
            "Sabbatical with no employer: wrote tidewater, took Portuguese classes and surfed "
            "badly at Carcavelos.",
        ],
    },
    {
        "id": "lived-berlin",
        "city": "Berlin",
        "country": "Germany",
        "start": "2017-09",
        "end": "2020-05",
        "notes": ["Working at Kestrel Analytics; lived in Neukölln."],
    },
    {
        "id": "lived-zurich",
        "city": "Zurich",
        "country": "Switzerland",
        "start": "2020-06",
        "end": "2023-03",
        "notes": [
            "Working at Northwind Maps; stayed one more month after leaving the job in "
            "February 2023 to hand over the flat.",
        ],
    },
    {
        "id": "lived-vienna",
        "city": "Vienna",
        "country": "Austria",
        "start": "2023-04",
        "end": None,
        "notes": ["Current home, since joining Fennec Systems; lives in Wieden."],
    },
]

SKILLS = {
    "Programming languages": ["Go", "Python", "Rust", "SQL", "C"],
    "Data": ["PostgreSQL", "PostGIS", "Kafka", "Apache Flink", "Apache Airflow"],
    "Infrastructure": ["Kubernetes", "Terraform", "Nix", "Prometheus"],
    "Machine learning": ["llama.cpp", "sentence-transformers", "retrieval evaluation"],
    "Spoken languages": [
        "Hungarian (native)",
        "English (fluent)",
        "German (fluent)",
        "Dutch (conversational)",
        "Portuguese (basic)",
    ],
}

PROJECTS = [
    {
        "id": "tidewater",
        "name": "tidewater",
        "year": 2017,
        "summary": "A Rust library for downsampling time series that keeps each bucket's "
        "minimum and maximum, so dashboards never hide spikes. Written in Lisbon.",
        "page": "projects/",
        "tech": ["Rust"],
    },
    {
        "id": "pg-shadow",
        "name": "pg-shadow",
        "year": 2019,
        "summary": "A Go tool that replays sampled production PostgreSQL queries against a "
        "shadow database to catch query-plan regressions before upgrades.",
        "page": "projects/",
        "tech": ["Go", "PostgreSQL"],
    },
    {
        "id": "tram-clock",
        "name": "Tram clock",
        "year": 2021,
        "summary": "An e-ink display on an ESP32 showing the next trams at Teo's Zurich stop; "
        "it won first prize at Zurich Transit Hack Days.",
        "page": "projects/",
        "tech": ["MicroPython", "ESP32", "e-ink"],
    },
    {
        "id": "slotmeter",
        "name": "slotmeter",
        "year": 2024,
        "summary": "A Python harness that measures time to first token of llama.cpp's server "
        "with one versus several KV-cache slots. Built in Vienna at Fennec Systems.",
        "page": "projects/",
        "tech": ["Python", "llama.cpp"],
    },
]

AWARDS = [
    {
        "id": "award-cum-laude",
        "name": "MSc cum laude",
        "year": 2014,
        "issuer": "Delft University of Technology",
    },
    {
        "id": "award-kestrel",
        "name": "Kestrel Engineering Award, for the Airflow migration",
        "year": 2019,
        "issuer": "Kestrel Analytics",
    },
    {
        "id": "award-tram-hack",
        "name": "First prize, for the tram clock",
        "year": 2021,
        "issuer": "Zurich Transit Hack Days",
    },
]

ARCHITECTURE_RECEIPTS = [
    {
        "id": "receipt-published-only",
        "claim": "The ask box answers only from this site's published pages and these structured facts.",
        "evidence": "A build-time compiler turns published pages and ontology.py into one "
        "knowledge artifact; drafts are excluded before anything is indexed.",
    },
    {
        "id": "receipt-gate",
        "claim": "Questions the site cannot answer are refused before any model runs.",
        "evidence": "A relevance gate with calibrated thresholds on keyword coverage and "
        "embedding similarity decides first.",
    },
    {
        "id": "receipt-local",
        "claim": "Search runs in the visitor's browser with self-hosted model files.",
        "evidence": "The query encoder and the search index are files on this site; the "
        "fallback language model also runs on the visitor's device.",
    },
    {
        "id": "receipt-injection",
        "claim": "Text on the site cannot instruct the assistant.",
        "evidence": "Excerpts are passed as numbered evidence under a rule that they are never "
        "instructions, and a post with a planted injection is part of the evals.",
    },
]

BRANCHES = [
    {
        "id": "branch-bassoon",
        "title": "The bassoonist of Graz",
        "text": "In an alternate universe where Teo took a conservatory place instead of "
        "engineering, he plays second bassoon in a Graz orchestra and has never heard of Kafka.",
    },
    {
        "id": "branch-lighthouse",
        "title": "The lighthouse keeper of Texel",
        "text": "In another alternate universe Teo stayed in the Netherlands after Delft and "
        "keeps the lighthouse on Texel, where his only outage is fog.",
    },
]

LORE = [
    {
        "id": "lore-dijkstra",
        "title": "Dijkstra the pigeon",
        "text": "A running joke on this site: a pigeon called Dijkstra, who supposedly lived "
        "on Teo's Berlin balcony, is credited as the reviewer of every postmortem Teo writes.",
    },
    {
        "id": "lore-fourteen-minutes",
        "title": "The fourteen-minute rule",
        "text": "Another running joke: every migration Teo plans takes exactly fourteen "
        "minutes longer than the estimate, no matter how long the estimate was.",
    },
]

AUTHORITY = {
    "categories": {
        "PROFILE": "fact",
        "CAREER": "fact",
        "EDUCATION": "fact",
        "LOCATION_HISTORY": "fact",
        "SKILLS": "fact",
        "PROJECTS": "fact",
        "AWARDS": "fact",
        "ARCHITECTURE_RECEIPTS": "fact",
        "BRANCHES": "fiction",
        "LORE": "fiction",
    },
    "rules": [
        "Historical locations stay with their entries: a past job's city is where that job "
        "was, not where Teo lives now.",
        "Structured facts outrank blog prose when they disagree.",
        "Fiction (alternate universes and running jokes) is never evidence about the real Teo.",
    ],
}

URLS = {
    "PROFILE": "",
    "CAREER": "cv/",
    "EDUCATION": "cv/",
    "LOCATION_HISTORY": "cv/",
    "SKILLS": "cv/",
    "PROJECTS": "projects/",
    "AWARDS": "cv/",
    "ARCHITECTURE_RECEIPTS": "about-this-site/",
    "BRANCHES": "lore/",
    "LORE": "lore/",
}
