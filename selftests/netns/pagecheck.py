#!/usr/bin/env python3
"""pagecheck.py PAGE.html < hosts.json: whether the hosts table of the
status page, as Chromium rendered it (--dump-dom), shows every host of the
JSON with its name, MAC, connections and this month's totals as the page
formats them. Prints "ok" or what differs."""
import html.parser
import json
import sys


class Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.cells, self.cls, self.text, self.in_hosts = {}, None, None, "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.in_hosts = a.get("id") == "hosts"
        elif tag == "tr" and self.in_hosts and "data-mac" in a:
            self.cells = {}
            self.rows[a["data-mac"]] = self.cells
        elif tag == "td" and self.cells is not None:
            self.cls, self.text = (a.get("class") or "").split(" ")[-1], ""

    def handle_data(self, data):
        if self.cls is not None:
            self.text += data

    def handle_endtag(self, tag):
        if tag == "td" and self.cls is not None:
            self.cells[self.cls] = self.text
            self.cls = None
        elif tag == "table":
            self.in_hosts, self.cells = False, None


def human(v, unit):
    p, i = ["", "k", "M", "G", "T"], 0
    while v >= 1000 and i < 4:
        v /= 1000
        i += 1
    return ("%.1f" % v if i else "%.0f" % v) + " " + p[i] + unit


page = Rows()
page.feed(open(sys.argv[1]).read())
want = json.load(sys.stdin)["hosts"]
bad = []
if not want:
    bad.append("no hosts in the JSON")
for h in want:
    got = page.rows.get(h["mac"])
    if got is None:
        bad.append("%s missing" % h["mac"])
        continue
    for k, v in (("name", h["name"] or "-"), ("mac", h["mac"]),
                 ("month-down", human(h["month"]["down"], "B")),
                 ("month-up", human(h["month"]["up"], "B"))):
        if got.get(k) != v:
            bad.append("%s %s: page %r, JSON %r" % (h["mac"], k, got.get(k), v))
print("; ".join(bad) if bad else "ok")
