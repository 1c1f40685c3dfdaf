"""Stated facts for a product's documentation: NetBox, as its docs describe it.

The generic ontology form: ENTITIES lists the things the site documents, each with attributes,
and every attribute names the page that states it (its file under ``docs/``, with an optional
``#anchor``). The build checks each one against the site's published pages, and the answers
cite that page. The pages are NetBox's own documentation, copied unchanged into
``tests/corpora/netbox-docs`` (commit 43fe81f9, 2026-08-22); keep the values here in step
with them. Write versions as strings: the number 3.10 would read as 3.1.
"""

ENTITIES = [
    {
        "id": "netbox",
        "name": "NetBox",
        "kind": "network source-of-truth application",
        "attributes": [
            {
                "name": "licence",
                "value": "Apache License 2.0 (open source)",
                "source": "index.md",
            },
            {
                "name": "supported Python versions",
                "value": ["3.12", "3.13", "3.14"],
                "source": "installation/index.md#requirements",
                "as_of": "2026-08",
            },
            {
                "name": "supported PostgreSQL versions",
                "value": "14 or later (14 is deprecated; NetBox v4.7 requires 15 or later)",
                "source": "installation/index.md#requirements",
                "as_of": "2026-08",
            },
            {
                "name": "supported Redis versions",
                "value": "5.0 or later (versions before 6.0 are deprecated; NetBox v4.7 "
                "requires 6.0 or later)",
                "source": "installation/index.md#requirements",
                "as_of": "2026-08",
            },
            {
                "name": "operating system the installation guide is tested on",
                "value": "Ubuntu 24.04",
                "source": "installation/index.md",
            },
            {
                "name": "install command (from git)",
                "value": "sudo git clone https://github.com/netbox-community/netbox.git . "
                "then sudo git checkout vX.Y.Z for the chosen release",
                "source": "installation/3-netbox.md#option-b-clone-the-git-repository",
            },
            {
                "name": "installation steps",
                "value": ["PostgreSQL database", "Redis", "NetBox components",
                          "Gunicorn or uWSGI", "HTTP server", "LDAP authentication (optional)"],
                "source": "installation/index.md",
            },
        ],
    },
]

AUTHORITY = {
    "rules": [
        "Facts about versions are as of the date they state; the release notes may be newer.",
    ],
}
