"""Facts computed from the ontology at build time, written as plain evidence sentences.

Small models get date arithmetic wrong, so durations, the order of employers and year-by-year
whereabouts are worked out here once. A period counts its start and end months (September 2017
to May 2020 is 2 years and 9 months); an open period runs to the build month.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from itertools import groupby, pairwise

from site_knowledge.compiler.model import Section, Source
from site_knowledge.compiler.ontology import (
    MONTH_NAMES,
    Job,
    Ontology,
    Place,
    format_month,
    month_index,
)
from site_knowledge.compiler.ontology_sources import bounded_sections

_ARTICLE_COUNTRIES = {"Netherlands", "Philippines", "Czech Republic", "Bahamas", "Gambia"}


def format_duration(months: int) -> str:
    """``33`` → ``"2 years and 9 months"``; ``12`` → ``"1 year"``; ``8`` → ``"8 months"``."""
    years, rest = divmod(months, 12)
    parts = [f"{years} year{'s' * (years != 1)}"] if years else []
    if rest or not years:
        parts.append(f"{rest} month{'s' * (rest != 1)}")
    return " and ".join(parts)


def country_name(country: str) -> str:
    """A country as it reads mid-sentence: ``Netherlands`` → ``the Netherlands``."""
    if country in _ARTICLE_COUNTRIES or country.startswith("United "):
        return f"the {country}"
    return country


def derived_facts(ont: Ontology, today: date) -> Source:
    """Compute durations, employer order, year-by-year places and the current role.

    Args:
        ont: a validated ontology.
        today: the build date; open periods end in its month.

    Returns:
        The ``derived-facts`` source (authority ``fact``), linked to the career page.

    Raises:
        BuildError: the ontology has no PROFILE.
    """
    now = month_index(today.year, today.month)
    as_of = format_month(now)
    sections = [
        *_current(ont, now),
        *_countries_and_cities(ont, now),
        *_employers(ont, now),
        *_order(ont, now),
        *_studies(ont, now),
        *_compared(ont, now),
        *_moves(ont, now),
        *_experience(ont, now),
        *_years(ont, now),
    ]
    return Source(
        id="derived-facts",
        kind="ontology",
        title="Computed timeline facts",
        description=(
            f"How long {ont.person.short_name} lived in each place and worked at each employer, "
            f"the order of employers and where {ont.person.short_name} was each year, "
            f"as of {as_of}."
        ),
        url=ont.urls.get("CAREER", ont.person.site_url_path),
        authority="fact",
        path=None,
        sections=tuple(sections),
    )


def _anchor(ont: Ontology, category: str, anchor: str) -> str:
    """An anchor on the derived source's page, kept only if the category lives on that page."""
    source_url = ont.urls.get("CAREER", ont.person.site_url_path)
    return anchor if ont.urls.get(category) == source_url else ""


def _months(start: int, end: int | None, now: int) -> set[int]:
    return set(range(start, min(end if end is not None else now, now) + 1))


def _covered(periods: Iterable[tuple[int, int | None]], now: int) -> int:
    """How many months the periods cover together (a month in two of them counts once)."""
    return len(set().union(*(_months(start, end, now) for start, end in periods)))


def _span(start: int, end: int | None) -> str:
    return (
        f"since {format_month(start)}" if end is None else (f"{format_month(start)} to {format_month(end)}")
    )


def _current(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    jobs = [j for j in ont.career if j.end is None and j.start <= now]
    homes = [r for r in ont.residences if r.end is None and r.start <= now]
    sentences = [
        f"As of {format_month(now)}, {who} is {j.title} at {j.company} in {j.place}, "
        f"a job held since {format_month(j.start)}."
        for j in jobs
    ]
    if not jobs and ont.career:
        last = max(ont.career, key=lambda j: (j.end or now, j.start))
        sentences.append(
            f"As of {format_month(now)}, {who} has no current employer listed; the most recent "
            f"was {last.company} ({_span(last.start, last.end)})."
        )
    sentences += [f"{who} currently lives in {r.place}, since {format_month(r.start)}." for r in homes]
    return (
        bounded_sections(
            "Current role and home", _anchor(ont, "CAREER", jobs[0].id if jobs else ""), sentences
        )
        if sentences
        else []
    )


def _countries_and_cities(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    countries: dict[str, list[tuple[Place, int, int | None]]] = {}
    for r in ont.residences:
        if r.start <= now:
            countries.setdefault(r.place.country, []).append((r.place, r.start, r.end))
    out = []
    for country, stays in countries.items():
        months = _covered(((s, e) for _, s, e in stays), now)
        ongoing = any(e is None for _, _, e in stays)
        detail = "; ".join(f"{p.city}: {_span(s, e)}" for p, s, e in stays)
        verb, total = ("has lived", "so far") if ongoing else ("lived", "in total")
        sentences = [
            f"{who} {verb} in {country_name(country)} for {format_duration(months)} {total} ({detail})."
        ]
        cities = {p: [(s, e) for q, s, e in stays if q == p] for p, _, _ in stays}
        for place, periods in cities.items() if len(cities) > 1 else ():
            months = _covered(periods, now)
            ongoing = any(e is None for _, e in periods)
            spans = "; ".join(_span(s, e) for s, e in periods)
            verb, total = ("has lived", " so far") if ongoing else ("lived", "")
            sentences.append(f"{who} {verb} in {place}, for {format_duration(months)}{total} ({spans}).")
        heading = f"How long {who} lived in {country_name(country)} ({', '.join(p.city for p in cities)})"
        out += bounded_sections(heading, _anchor(ont, "LOCATION_HISTORY", "places-lived"), sentences)
    if countries:
        names = ", ".join(country_name(c) for c in countries)
        out += bounded_sections(
            "Countries lived in",
            _anchor(ont, "LOCATION_HISTORY", "places-lived"),
            [f"{who} has lived in {len(countries)} countries: {names}."],
        )
    return out


def _employers(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    out = []
    for company, jobs in _by_company(ont.career, now).items():
        months = _covered(((j.start, j.end) for j in jobs), now)
        roles = "; ".join(f"{j.title} in {j.place}, {_span(j.start, j.end)}" for j in jobs)
        if any(j.end is None for j in jobs):
            text = f"{who} has worked at {company} for {format_duration(months)} so far ({roles})."
        else:
            text = f"{who} worked at {company} for {format_duration(months)} ({roles})."
        out += bounded_sections(
            f"How long {who} worked at {company}", _anchor(ont, "CAREER", jobs[0].id), [text]
        )
    for study in ont.education:
        if study.start <= now:
            text = (
                f"{who} studied at {study.institution} for "
                f"{format_duration(_covered([(study.start, study.end)], now))}, "
                f"for the {study.degree_named(_span(study.start, study.end))}."
            )
            out += bounded_sections(
                f"How long {who} studied at {study.institution}",
                _anchor(ont, "EDUCATION", study.id),
                [text],
            )
    return out


def _by_company(career: Iterable[Job], now: int) -> dict[str, list[Job]]:
    out: dict[str, list[Job]] = {}
    for job in sorted(career, key=lambda j: j.start):
        if job.start <= now:
            out.setdefault(job.company, []).append(job)
    return out


def _order(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    jobs = sorted((j for j in ont.career if j.start <= now), key=lambda j: (j.start, j.company))
    if not jobs:
        return []
    listing = ", ".join(f"{i}. {j.company} ({_span(j.start, j.end)})" for i, j in enumerate(jobs, 1))
    latest = "current" if jobs[-1].end is None else "most recent"
    out = bounded_sections(
        "Order of employers",
        "",
        [
            f"{who}'s employers in order, first to most recent: {listing}.",
            f"{who}'s first employer was {jobs[0].company}; the {latest} one is {jobs[-1].company}.",
        ],
    )
    for before, after in pairwise(jobs):
        sentences = [
            f"After {before.company}, {who} joined {after.company} in {format_month(after.start)}.",
            f"Right before {after.company}, {who} worked at {before.company}.",
        ]
        if before.end is not None and after.start - before.end > 1:
            gap_start, gap_end = before.end + 1, after.start - 1
            places = [
                str(r.place)
                for r in ont.residences
                if r.start <= gap_end and (r.end is None or r.end >= gap_start)
            ]
            where = f", living in {' and '.join(places)}" if places else ""
            sentences.append(
                f"Between {before.company} and {after.company}, {who} had no employer for "
                f"{format_duration(gap_end - gap_start + 1)} ({_gap(gap_start, gap_end)}){where}."
            )
        out += bounded_sections(
            f"After {before.company}: {after.company}", _anchor(ont, "CAREER", after.id), sentences
        )
    return out


def _studies(ont: Ontology, now: int) -> list[Section]:
    """Total time studied and the breaks between degrees; the time from the last degree to
    each job after it."""
    who = ont.person.short_name
    studies = sorted((s for s in ont.education if s.start <= now), key=lambda s: s.start)
    if not studies:
        return []
    each = "; ".join(f"{s.degree_named()} at {s.institution}, "
                     f"{format_duration(_covered([(s.start, s.end)], now))}" for s in studies)
    count = {1: "one degree", 2: "both degrees"}.get(len(studies), f"{len(studies)} degrees")
    total = _covered(((s.start, s.end) for s in studies), now)
    sentences = [f"{who} studied for {format_duration(total)} in total, across {count} "
                 f"({each})."]
    for before, after in pairwise(studies):
        if before.end is not None and after.start - before.end > 1:
            sentences.append(
                f"Between the {before.degree_named(f'finished {format_month(before.end)}')} and "
                f"the {after.degree_named(f'started {format_month(after.start)}')}, {who} had a "
                f"break of {format_duration(after.start - before.end - 1)} "
                f"({_gap(before.end + 1, after.start - 1)})."
            )
    anchor = _anchor(ont, "EDUCATION", studies[0].id)
    out = bounded_sections(f"How long {who} studied in total", anchor, sentences)
    last = studies[-1]
    if last.end is None:
        return out
    jobs = sorted((j for j in ont.career if last.end < j.start <= now), key=lambda j: j.start)
    since_last = [
        f"From finishing the {last.degree_named(format_month(last.end))} to starting at "
        f"{j.company} ({format_month(j.start)}): {format_duration(j.start - last.end)}"
        f"{' (the first job after it)' if i == 0 else ''}."
        for i, j in enumerate(jobs)
    ]
    return out + bounded_sections(f"From {who}'s last degree to each job", anchor, since_last)


def _compared(ont: Ontology, now: int) -> list[Section]:
    """For each employer, how its time compares with every other's; employers and cities
    ranked by time spent, and the cities where a job was."""
    who = ont.person.short_name
    employers = {c: _covered(((j.start, j.end) for j in jobs), now)
                 for c, jobs in _by_company(ont.career, now).items()}
    stays: dict[str, list[tuple[int, int | None]]] = {}
    for r in ont.residences:
        if r.start <= now:
            stays.setdefault(str(r.place), []).append((r.start, r.end))
    cities = {place: _covered(periods, now) for place, periods in stays.items()}
    out: list[Section] = []
    order = list(employers)
    if len(order) > 1:
        out += bounded_sections("Time at each employer ranked", "", [
            f"{who}'s employers by time worked, longest first: {_ranked(employers)}."])
    for i, company in enumerate(order if len(order) > 1 else ()):
        own = f"{who}'s {_ordinal(i)} job, at {company}"
        sentences = []
        for j, other in enumerate(order):
            if other == company:
                continue
            difference = employers[company] - employers[other]
            than = f"{_ordinal(j)} job, at {other}"
            how = (f"{format_duration(difference)} longer than the {than}" if difference > 0
                   else f"{format_duration(-difference)} shorter than the {than}" if difference
                   else f"as long as the {than}")
            sentences.append(f"{own} ({format_duration(employers[company])}), was {how} "
                             f"({format_duration(employers[other])}).")
        out += bounded_sections(f"{who}'s time at {company} compared", "", sentences)
    worked = {str(j.place) for j in ont.career if j.start <= now}
    if len(cities) > 1:
        lines = [f"The cities {who} has lived in, by time lived there, longest first: "
                 f"{_ranked(cities)}."]
        if 1 < len(worked & set(cities)) < len(cities):
            lines.append(f"The cities where {who} had a job, by time lived there, longest "
                         f"first: {_ranked({c: n for c, n in cities.items() if c in worked})}.")
        out += bounded_sections("Cities by time lived",
                                _anchor(ont, "LOCATION_HISTORY", "places-lived"), lines)
    return out


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")


def _ordinal(index: int) -> str:
    """``0`` → ``"first"``; past the tenth, ``"11th"``."""
    return _ORDINALS[index] if index < len(_ORDINALS) else f"{index + 1}th"


def _moves(ont: Ontology, now: int) -> list[Section]:
    """For each move into a new country: the countries lived in before it."""
    who = ont.person.short_name
    seen: list[str] = []
    sentences = []
    for r in sorted((r for r in ont.residences if r.start <= now), key=lambda r: r.start):
        country = r.place.country
        if seen and country not in seen:
            names = _join([country_name(c) for c in seen])
            sentences.append(
                f"Before moving to {country_name(country)} ({format_month(r.start)}), {who} had "
                f"lived in {len(seen)} countr{'ies' if len(seen) != 1 else 'y'}: {names}.")
        if country not in seen:
            seen.append(country)
    return bounded_sections(f"Countries {who} lived in before each move",
                            _anchor(ont, "LOCATION_HISTORY", "places-lived"), sentences)


def _ranked(months: dict[str, int]) -> str:
    ranked = sorted(months.items(), key=lambda kv: -kv[1])
    return "; ".join(f"{name} ({format_duration(n)})" for name, n in ranked)


def _gap(start: int, end: int) -> str:
    return format_month(start) if start == end else f"{format_month(start)} to {format_month(end)}"


def _experience(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    jobs = [j for j in ont.career if j.start <= now]
    if not jobs:
        return []
    months = _covered(((j.start, j.end) for j in jobs), now)
    first = min(j.start for j in jobs)
    companies = len({j.company for j in jobs})
    text = (
        f"As of {format_month(now)}, {who} has {format_duration(months)} of professional "
        f"experience at {companies} employer{'s' * (companies != 1)}, counting the months "
        f"employed since {format_month(first)}; time without an employer is not counted."
    )
    return bounded_sections("Total professional experience", "", [text])


def _years(ont: Ontology, now: int) -> list[Section]:
    who = ont.person.short_name
    starts = [p.start for p in ont.residences] + [p.start for p in ont.career]
    starts += [p.start for p in ont.education]
    if not starts:
        return []
    first_job = min((j.start for j in ont.career), default=None)
    out = []
    for year in range(min(starts) // 12, now // 12 + 1):
        year_months = set(range(month_index(year, 1), min(month_index(year, 12), now) + 1))
        lived = [
            f"{r.place} ({_runs(_months(r.start, r.end, now) & year_months)})"
            for r in ont.residences
            if _months(r.start, r.end, now) & year_months
        ]
        worked = [
            f"{j.title} at {j.company} in {j.place} ({_runs(months)})"
            for j in ont.career
            if (months := _months(j.start, j.end, now) & year_months)
        ]
        studied = [
            f"{s.institution} ({_runs(_months(s.start, s.end, now) & year_months)})"
            for s in ont.education
            if _months(s.start, s.end, now) & year_months
        ]
        employed = set().union(*(_months(j.start, j.end, now) for j in ont.career))
        idle = {m for m in year_months - employed if first_job is not None and m > first_job}
        clauses = []
        if lived:
            clauses.append(f"lived in {_join(lived)}")
        if worked:
            clauses.append(f"worked as {_join(worked)}")
        if studied:
            clauses.append(f"studied at {_join(studied)}")
        if idle:
            clauses.append(f"had no employer ({_runs(idle)})")
        if clauses:
            text = f"In {year}, {who} {'; '.join(clauses)}."
            out += bounded_sections(
                f"{who} in {year}", _anchor(ont, "LOCATION_HISTORY", "places-lived"), [text]
            )
    return out


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _runs(months: set[int]) -> str:
    if len(months) == 12:
        return "all year"
    parts = []
    for _, run in groupby(enumerate(sorted(months)), key=lambda pair: pair[1] - pair[0]):
        values = [m for _, m in run]
        a, b = MONTH_NAMES[values[0] % 12], MONTH_NAMES[values[-1] % 12]
        parts.append(a if a == b else f"{a} to {b}")
    return ", ".join(parts)
