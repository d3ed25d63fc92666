"""A small local web for the running example: four competitors' pricing pages.

Acme fills its prices in client-side: a plain fetch gets the empty shell, and only a browser
(the ``browse`` tool, which runs the page's data script) sees the tiers. Initech moved its page, so
the obvious URL is a 404. ``docs.example/page/N?chars=C`` pages (C characters of text, 500 by
default, starting with the page's one key figure) exist for long synthetic runs.
"""

from __future__ import annotations

import json
import re

ACME_TIERS = [("Starter", 15, "3 seats, email support"), ("Team", 39, "unlimited seats, SSO"),
              ("Enterprise", 99, "audit log, SLA 99.9%")]

PAGES: dict[str, str] = {
    "https://acme.example/pricing": (
        "<html><head><title>Acme pricing</title></head><body><h1>Acme plans</h1>"
        '<div id="prices">Loading prices…</div>'
        f"<script>window.__PRICES__ = {json.dumps([dict(tier=t, usd=p, notes=n) for t, p, n in ACME_TIERS])};</script>"
        "</body></html>"
    ),
    "https://globex.example/pricing": (
        "<html><body><h1>Globex pricing</h1><ul>"
        "<li>Basic: $12 per user per month (5 projects)</li>"
        "<li>Pro: $29 per user per month (unlimited projects, SSO)</li>"
        "<li>Scale: $79 per user per month (audit log, SLA 99.95%)</li>"
        "</ul><p>Annual billing saves 15%.</p></body></html>"
    ),
    "https://initech.example/plans": (
        "<html><body><h1>Initech plans</h1><table>"
        "<tr><td>Solo</td><td>$9 per user per month</td><td>1 seat</td></tr>"
        "<tr><td>Business</td><td>$45 per user per month</td><td>SSO, priority support</td></tr>"
        "</table><p>No free trial. Enterprise: contact sales.</p></body></html>"
    ),
    "https://umbrella.example/pricing": (
        "<html><body><h1>Umbrella pricing</h1>"
        "<p>Free: $0 (1 user, community support)</p>"
        "<p>Plus: $19 per user per month (10 users, integrations)</p>"
        "<p>Corporate: $65 per user per month (SSO, audit log, SLA 99.9%)</p>"
        "</body></html>"
    ),
}

# Real pricing pages are mostly everything but the prices: plan comparisons, FAQs, legal footers.
# About 6,000 characters of it per page, after the tiers, so a fetch returns a realistic amount.
def _boilerplate(company: str) -> str:
    faq = [("Can I change plans later?", f"Yes. {company} prorates upgrades to the day and applies downgrades at the next renewal."),
           ("Do you offer discounts for non-profits?", "Registered non-profits get a reduced rate on request; contact the sales team with proof of status."),
           ("Which payment methods are accepted?", "All major cards, bank transfer on annual plans, and purchase orders for larger accounts."),
           ("Where is my data stored?", f"{company} runs in two regions; customers on higher tiers can pin their data to one of them."),
           ("Is there a minimum term?", "Monthly plans can be cancelled at any time; annual plans renew unless cancelled thirty days before."),
           ("What happens when I exceed my seat count?", "New seats are added at the plan rate and appear on the next invoice, prorated.")]
    body = "".join(f"<h3>{q}</h3><p>{a}</p>" for q, a in faq * 5)
    legal = (f"<p>{company} Inc. All plan names are trademarks of their owners. Prices exclude applicable taxes. "
             "Features described as coming soon are not part of any plan until released. Terms of service and the data "
             "processing addendum apply to every subscription.</p>") * 4
    return f"<section><h2>Frequently asked questions</h2>{body}</section><footer>{legal}</footer>"


for _url, _html in list(PAGES.items()):
    _company = _url.split("//")[1].split(".")[0].capitalize()
    PAGES[_url] = _html.replace("</body>", _boilerplate(_company) + "</body>")


COMPETITORS = {
    "Acme": "https://acme.example/pricing",
    "Globex": "https://globex.example/pricing",
    "Initech": "https://initech.example/pricing",  # moved to /plans: the first fetch fails
    "Umbrella": "https://umbrella.example/pricing",
}


def key_figure(n: int) -> int:
    """The one fact on reference page ``n``: what a run must not lose."""
    return (n * 7919) % 10007


class NotFound(Exception):
    pass


def _page(url: str) -> str:
    match = re.fullmatch(r"https://docs\.example/page/(\d+)(?:\?chars=(\d+))?", url)
    if match:
        n, chars = int(match.group(1)), int(match.group(2) or 500)
        fact = f"Key figure for section {n}: {key_figure(n)}. "
        sentence = f"Section {n} of the reference manual. "
        body = fact + (sentence * (chars // len(sentence) + 1))[: max(0, chars - len(fact))]
        return f"<html><body><h1>Reference page {n}</h1><p>{body}</p></body></html>"
    if url not in PAGES:
        raise NotFound(f"404 Not Found: {url}")
    return PAGES[url]


def _text(html: str) -> str:
    html = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    html = re.sub(r"</(p|li|tr|h1|h2|h3|div)>", "\n", html)
    html = re.sub(r"<td>|</td>", " ", html)
    return re.sub(r"[ \t]+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def fetch_text(url: str) -> str:
    """What a plain HTTP fetch sees: the server's HTML as text, scripts not run."""
    return _text(_page(url))


def browse_text(url: str) -> str:
    """What a browser sees after the page's scripts ran (here: the price data is rendered)."""
    html = _page(url)
    data = re.search(r"window\.__PRICES__ = (\[.*?\]);", html)
    if data:
        tiers = json.loads(data.group(1))
        rendered = "".join(f"<p>{t['tier']}: ${t['usd']} per user per month ({t['notes']})</p>" for t in tiers)
        html = html.replace('<div id="prices">Loading prices…</div>', f'<div id="prices">{rendered}</div>')
    return _text(html)
