#!/usr/bin/python3
"""Strict check of the Prometheus text exposition format, version 0.0.4.

    promcheck.py [--json] [FILE]     (FILE default: standard input)

Exit 0 when FILE is valid; otherwise every problem is printed as
"promcheck: line N: what" and the exit status is 1. --json prints what was
parsed: {"families": {name: {"type", "help"}}, "samples": [[name, {labels},
value], ...]} (values as floats, NaN and infinities as strings).

Beyond what the format itself requires (prometheus.io/docs/instrumenting/
exposition_formats, and what Prometheus's own parser refuses), sluice's
conventions are held here too, so that promtool's lint has nothing to say
either: every family has exactly one HELP and one TYPE line before its
samples, its samples are contiguous, every sample of a family has the same
label names, counters end in _total and nothing else does, and names use
base units, no abbreviations, no camelCase, no colons. Python 3 standard
library only.
"""
import json
import math
import re
import sys

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# Go's strconv.ParseFloat as Prometheus uses it, less hex and underscores.
VALUE = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|Inf|inf)|NaN")
TIMESTAMP = re.compile(r"-?[0-9]+")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
# promtool's lint (client_golang promlint): units it wants in base form and
# abbreviations it refuses.
NON_BASE_UNITS = {"minutes": "seconds", "hours": "seconds", "days": "seconds",
                  "weeks": "seconds", "bits": "bytes", "kelvins": "kelvin",
                  "fahrenheit": "celsius", "rankine": "celsius", "inches": "meters",
                  "yards": "meters", "miles": "meters", "calories": "joules",
                  "pounds": "grams", "ounces": "grams"}
BASE_UNITS = ("amperes", "bytes", "celsius", "grams", "joules", "kelvin", "meters",
              "metres", "seconds", "volts")
UNIT_PREFIXES = ("pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo",
                 "kibi", "mega", "mibi", "giga", "gibi", "tera", "tebi", "peta", "pebi")
ABBREVIATIONS = ("s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h",
                 "d")


class Checker:
    def __init__(self):
        self.problems = []
        self.families = {}      # name -> {"type", "help", "labels", "samples", "line"}
        self.order = []        # family names, as their lines came
        self.current = None    # the family whose lines come now
        self.closed = set()    # families whose lines ended
        self.series = {}       # (name, labels) -> line
        self.samples = []

    def problem(self, n, text):
        self.problems.append("line %d: %s" % (n, text))

    # ---- tokens ------------------------------------------------------------

    @staticmethod
    def unescape(s, i, allowed, n, problem):
        """Read an escaped text from s[i] up to an unescaped '"' (label
        values, ALLOWED = '\\\\"n') or the end (HELP, ALLOWED = '\\\\n').
        Returns (text, index after it)."""
        out = []
        while i < len(s):
            c = s[i]
            if c == '"' and '"' in allowed:
                return "".join(out), i
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in allowed:
                    problem(n, "invalid escape %r" % s[i:i + 2])
                    return "".join(out), -1
                out.append("\n" if s[i + 1] == "n" else s[i + 1])
                i += 2
                continue
            out.append(c)
            i += 1
        return "".join(out), i

    def family_of(self, name):
        """The family a sample name belongs to: histogram and summary
        samples carry a suffix."""
        for suffix, types in (("_bucket", ("histogram",)), ("_sum", ("histogram", "summary")),
                              ("_count", ("histogram", "summary"))):
            base = name[:-len(suffix)]
            if name.endswith(suffix) and self.families.get(base, {}).get("type") in types:
                return base
        return name

    def enter(self, name, n):
        """Lines of family NAME start or go on at line N."""
        if name == self.current:
            return
        if name in self.closed:
            self.problem(n, "%s: its lines are not together (it came before line %d)" %
                         (name, self.families[name]["line"]))
        if self.current is not None:
            self.closed.add(self.current)
        self.current = name
        if name not in self.families:
            self.families[name] = {"type": None, "help": None, "labels": None,
                                   "samples": 0, "line": n}
            self.order.append(name)

    # ---- lines -------------------------------------------------------------

    def comment(self, line, n):
        m = re.match(r"#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$", line)
        if not m:
            return  # a plain comment
        kind, name, rest = m.group(1), m.group(2), m.group(3) or ""
        if not METRIC_NAME.fullmatch(name):
            self.problem(n, "invalid metric name %r in %s" % (name, kind))
            return
        self.enter(name, n)
        fam = self.families[name]
        if fam["samples"]:
            self.problem(n, "%s: %s after its samples" % (name, kind))
        if kind == "HELP":
            if fam["help"] is not None:
                self.problem(n, "%s: a second HELP line" % name)
            text, end = self.unescape(rest, 0, "\\n", n, self.problem)
            fam["help"] = text if end >= 0 else ""
            if not text.strip():
                self.problem(n, "%s: empty HELP" % name)
        else:
            if fam["type"] is not None:
                self.problem(n, "%s: a second TYPE line" % name)
            rest = rest.strip()
            if rest not in TYPES:
                self.problem(n, "%s: unknown type %r" % (name, rest))
            fam["type"] = rest

    def sample(self, line, n):
        m = METRIC_NAME.match(line)
        if not m:
            self.problem(n, "invalid metric name at %r" % line[:40])
            return
        name, i = m.group(0), m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            i = self.labels(line, i + 1, labels, n)
            if i < 0:
                return
        rest = line[i:]
        if not rest[:1] in (" ", "\t"):
            self.problem(n, "%s: no blank before the value" % name)
            return
        fields = rest.split()
        if not fields or len(fields) > 2:
            self.problem(n, "%s: expected a value and an optional timestamp, got %r" %
                         (name, rest.strip()))
            return
        if not VALUE.fullmatch(fields[0]):
            self.problem(n, "%s: invalid value %r" % (name, fields[0]))
            return
        if len(fields) == 2 and not TIMESTAMP.fullmatch(fields[1]):
            self.problem(n, "%s: invalid timestamp %r" % (name, fields[1]))
        value = float(fields[0])

        family = self.family_of(name)
        self.enter(family, n)
        fam = self.families[family]
        if fam["help"] is None:
            self.problem(n, "%s: a sample before (or without) its HELP line" % family)
            fam["help"] = ""
        if fam["type"] is None:
            self.problem(n, "%s: a sample before (or without) its TYPE line" % family)
            fam["type"] = "untyped"
        fam["samples"] += 1
        names = frozenset(labels)
        if fam["labels"] is None:
            fam["labels"] = names
        elif names != fam["labels"]:
            self.problem(n, "%s: label names %s differ from the family's first sample's %s" %
                         (name, sorted(names), sorted(fam["labels"])))
        if fam["type"] == "counter" and (math.isnan(value) or value < 0):
            self.problem(n, "%s: a counter must not be negative or NaN (%s)" % (name, fields[0]))
        if fam["type"] == "histogram" and name.endswith("_bucket") and "le" not in labels:
            self.problem(n, "%s: a bucket without le" % name)
        # An empty label value is the label's absence.
        key = (name, frozenset((k, v) for k, v in labels.items() if v != ""))
        if key in self.series:
            self.problem(n, "%s: the same series as line %d" % (name, self.series[key]))
        else:
            self.series[key] = n
        self.samples.append([name, labels, value if math.isfinite(value) else fields[0]])

    def labels(self, line, i, labels, n):
        """Parse label pairs from line[i] (after '{') to '}'; the index
        after '}', or -1."""
        while True:
            while i < len(line) and line[i] in " \t":
                i += 1
            if i < len(line) and line[i] == "}":
                return i + 1
            m = LABEL_NAME.match(line, i)
            if not m:
                self.problem(n, "invalid label name at %r" % line[i:i + 30])
                return -1
            lname = m.group(0)
            if lname.startswith("__"):
                self.problem(n, "label name %r is reserved" % lname)
            i = m.end()
            while i < len(line) and line[i] in " \t":
                i += 1
            if line[i:i + 2] != '="':
                self.problem(n, "label %s: expected =\"" % lname)
                return -1
            value, i = self.unescape(line, i + 2, '\\"n', n, self.problem)
            if i < 0:
                return -1
            if i >= len(line):
                self.problem(n, "label %s: value not closed" % lname)
                return -1
            if lname in labels:
                self.problem(n, "label %s twice" % lname)
            labels[lname] = value
            i += 1
            while i < len(line) and line[i] in " \t":
                i += 1
            if i < len(line) and line[i] == ",":
                i += 1
            elif i < len(line) and line[i] == "}":
                return i + 1
            else:
                self.problem(n, "label %s: expected , or } after the value" % lname)
                return -1

    # ---- names (promtool's lint) --------------------------------------------

    def lint(self):
        for name in self.order:
            fam = self.families[name]
            where = "line %d: %s" % (fam["line"], name)
            t = fam["type"]
            if fam["samples"] == 0 and (fam["help"] is None or fam["type"] is None):
                self.problems.append("%s: HELP or TYPE of a family without samples" % where)
            if t == "counter" and not name.endswith("_total"):
                self.problems.append("%s: a counter's name must end in _total" % where)
            if t not in ("counter", "untyped") and name.endswith("_total"):
                self.problems.append("%s: only counters end in _total" % where)
            if ":" in name:
                self.problems.append("%s: colons are for recording rules" % where)
            if re.search(r"[a-z][A-Z]", name):
                self.problems.append("%s: camelCase" % where)
            for ln in sorted(fam["labels"] or ()):
                if re.search(r"[a-z][A-Z]", ln):
                    self.problems.append("%s: camelCase label name %s" % (where, ln))
            words = name.lower().split("_")
            for w in words[1:]:
                if w in ABBREVIATIONS:
                    self.problems.append("%s: abbreviated unit %r" % (where, w))
                for p in ("",) + UNIT_PREFIXES:
                    u = w[len(p):] if w.startswith(p) else None
                    if u in NON_BASE_UNITS or (p and u in BASE_UNITS):
                        self.problems.append("%s: %r is not a base unit" % (where, w))
                if w in ("counter", "gauge", "histogram", "summary"):
                    self.problems.append("%s: the type %r in the name" % (where, w))
            if t not in ("histogram",) and name.endswith("_bucket"):
                self.problems.append("%s: _bucket is for histograms" % where)
            if t not in ("histogram", "summary") and (name.endswith("_count") or
                                                      name.endswith("_sum")):
                self.problems.append("%s: _count and _sum are for histograms and summaries" %
                                     where)

    def check(self, text):
        if text and not text.endswith("\n"):
            self.problem(text.count("\n") + 1, "the last line does not end with a newline")
        for n, line in enumerate(text.split("\n"), 1):
            if "\r" in line:
                self.problem(n, "carriage return")
            if not line.strip():
                continue
            if line.lstrip(" \t").startswith("#"):
                self.comment(line.lstrip(" \t"), n)
            else:
                self.sample(line.lstrip(" \t"), n)
        self.lint()
        return not self.problems


def main(argv):
    args = [a for a in argv if a != "--json"]
    if len(args) > 1 or any(a.startswith("-") and a != "-" for a in args):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if args and args[0] != "-":
            with open(args[0], "rb") as f:
                raw = f.read()
        else:
            raw = sys.stdin.buffer.read()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print("promcheck: %s" % e, file=sys.stderr)
        return 1
    c = Checker()
    ok = c.check(text)
    for p in c.problems:
        print("promcheck: %s" % p, file=sys.stderr)
    if "--json" in argv:
        json.dump({"families": {k: {"type": v["type"], "help": v["help"]}
                                for k, v in c.families.items()},
                   "samples": c.samples}, sys.stdout)
        print()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
