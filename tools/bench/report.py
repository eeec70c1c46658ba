#!/usr/bin/python3
"""Turn tools/bench/bench.sh's results into REPORT.md and plots.

    report.py DIR     reads DIR/results.jsonl and DIR/machine.json,
                      writes DIR/REPORT.md, DIR/*.png (gnuplot) and DIR/headline.md

Every figure is a median over the runs of a case, with min and max. Ratios
compare a case with the baseline it replaces, measured in the same run (for
guest rows: in the same guest run).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

TITLES = {
    "1": "Pass-through cost: what sluice hands to the kernel (routed with an IPv4 option; unknown unicast the bridge floods), 64 B",
    "2": "LAN to LAN: kernel bridge vs sluice's bridge fast path",
    "3": "LAN to WAN, 1000 established flows, 64 B: through NAT, and routed through the zone policy",
    "4": "Inbound port forward, 253 outside sources to one inside host, 64 B",
    "5": "Rule scaling: established flows and new connections, 64 B",
    "6": "Connection tracking scale: established flows (through NAT; routed through the zone policy), 64 B",
    "7": "Ruleset load and replace times",
    "8": "Shaping quality: 4 bulk TCP uploads, ping under load (Debian 6.12 guest)",
    "9": "Real drivers: TCP through a Debian 13 box on e1000e and virtio NICs (qemu TCG)",
    "10": "NAT over a PPPoE WAN, 100 flows, 64 B: the kernel's pppoe driver and nftables "
          "masquerade against sluice serving the session (Debian 6.1 guest, two vCPUs)",
}
HARNESS = "harness: generator to sink, no router"


def baseline(sc, case):
    """The case this one is compared with, or None."""
    if sc == "1" and case.startswith("kernel bridge flooding +"):
        return "kernel bridge flooding, no XDP"
    if sc == "1" and case not in (HARNESS, "kernel forwarding, no XDP",
                                  "kernel bridge flooding, no XDP"):
        return "kernel forwarding, no XDP"
    if sc == "2" and case.startswith("sluice"):
        return "kernel bridge, " + case.split(", ")[-1]
    if sc == "3" and case.startswith("routed, sluice zone policy"):
        return "routed, nftables ct state policy"
    if sc == "3" and case.startswith("routed"):
        return None
    if sc == "3" and case.endswith(": new connections"):
        base = "nftables masquerade + ct state: new connections"
        return base if case != base else None
    if sc == "3" and case != "nftables masquerade + ct state":
        return "nftables masquerade + ct state"
    if sc == "4" and case.startswith("sluice"):
        return "nftables dnat + ct state"
    if sc == "5":
        head, _, what = case.partition(": ")
        name, n = head.rsplit(", ", 1)
        if name.startswith("sluice"):
            return "nftables chain, %s: %s" % (n, what)
        if not n.startswith("0 "):
            return "%s, 0 rules: %s" % (name, what)
    if sc == "6" and "sluice" in case:
        return case.replace("sluice", "nftables")
    if sc == "10" and case.startswith("sluice"):
        return "kernel pppoe + nftables masquerade, " + case.split(", ")[1]
    return None


def med(vals):
    return statistics.median(vals) if vals else None


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return "%.2f M" % (v / 1e6)
    if v >= 1e3:
        return "%.1f k" % (v / 1e3)
    return "%.0f" % v


def load(d):
    machine = json.load(open(os.path.join(d, "machine.json")))["machine"]
    cases = {}   # (where, scenario, case) -> dict
    order = []
    for line in open(os.path.join(d, "results.jsonl")):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            print("report: %s: skipping a line that is not JSON (%s): %s"
                  % (d, e, line[:120]), file=sys.stderr)
            continue
        key = (r.get("guest", "host"), r["scenario"], r["case"])
        if key not in cases:
            cases[key] = {"runs": [], "notes": {}, "kernel": r.get("kernel", "")}
            order.append(key)
        c = cases[key]
        if "na" in r:
            c["na"] = r["na"]
        elif "pps" in r:
            c["runs"].append(r)
        else:
            for k, v in r.items():
                if k not in ("scenario", "case", "kernel", "guest"):
                    c["notes"][k] = v
    return machine, cases, order


def summarize(cases):
    for key, c in cases.items():
        runs = c["runs"]
        if not runs:
            continue
        for f in ("pps", "gbps", "loss", "busy_ns_per_pkt"):
            vals = [r[f] for r in runs]
            c[f] = (med(vals), min(vals), max(vals))
    for (where, sc, case), c in cases.items():
        # (a guest scenario measures its own harness; the host's is scenario 1's)
        h = cases.get((where, sc, HARNESS)) or cases.get((where, "1", HARNESS))
        # (a path that reads within 5% of the harness alone cannot be told
        # from the harness's own spread: no router-only figure then)
        if "busy_ns_per_pkt" in c and h and "busy_ns_per_pkt" in h and case != HARNESS and \
           c["busy_ns_per_pkt"][0] > 1.05 * h["busy_ns_per_pkt"][0]:
            c["router_ns"] = c["busy_ns_per_pkt"][0] - h["busy_ns_per_pkt"][0]


def rate_table(where, sc, cases, order):
    rows = ["| case | packets/s (median, min-max) | Gbit/s | loss | CPU ns/pkt, whole path | router ns/pkt (less harness) | program ns/pkt | vs baseline |",
            "|---|---|---|---|---|---|---|---|"]
    for key in order:
        if key[0] != where or key[1] != sc:
            continue
        c = cases[key]
        case = key[2]
        if "na" in c and "pps" not in c:
            rows.append("| %s | %s | | | | | | |" % (case, c["na"]))
            continue
        if "pps" not in c:
            continue
        p, lo, hi = c["pps"]
        ratio = ""
        b = baseline(sc, case)
        bc = cases.get((where, sc, b)) if b else None
        if bc and "pps" in bc and bc["pps"][0]:
            ratio = "%.2fx pps of %s" % (p / bc["pps"][0], b)
            if "router_ns" in c and "router_ns" in bc:
                ratio += "; %.2fx per core" % (bc["router_ns"] / c["router_ns"])
        elif b and bc and "na" in bc:
            ratio = "baseline not available"
        notes = c["notes"]
        extra = []
        if "conntrack_entries" in notes:
            extra.append("%s conntrack entries" % notes["conntrack_entries"])
        if "conntrack_max" in notes and notes["conntrack_max"]:
            extra.append("table max %s" % notes["conntrack_max"])
        if "bytes_per_entry" in notes:
            extra.append("%s B/entry (slab)" % notes["bytes_per_entry"])
        if "bytes_per_flow" in notes:
            extra.append("%s B/flow, %.0f MiB of tables" % (notes["bytes_per_flow"],
                                                           notes.get("table_bytes", 0) / 1048576))
        rows.append("| %s | %s (%s-%s) | %.3f | %.2f%% | %.0f | %s | %s | %s |" % (
            case + (" (%s)" % ", ".join(extra) if extra else ""),
            fmt_rate(p), fmt_rate(lo), fmt_rate(hi), c["gbps"][0], 100 * max(c["loss"][0], 0),
            c["busy_ns_per_pkt"][0],
            "%.0f" % c["router_ns"] if "router_ns" in c else "-",
            "%.1f" % notes["prog_ns"] if "prog_ns" in notes else "-", ratio))
    return rows


def load_table(cases, order):
    rows = ["| case | load (s) | replace (s) |", "|---|---|---|"]
    for key in order:
        if key[1] != "7":
            continue
        c = cases[key]
        if "na" in c:
            rows.append("| %s | %s | |" % (key[2], c["na"]))
        elif "load_s" in c["notes"]:
            rows.append("| %s | %.3f | %.3f |" % (key[2], c["notes"]["load_s"], c["notes"]["replace_s"]))
    return rows


def shape_table(cases, order):
    rows = ["| case | kernel | throughput (Mbit/s) | Jain index, 4 flows | idle RTT (ms) | RTT under load p50 / p95 (ms) | added latency (ms) |",
            "|---|---|---|---|---|---|---|"]
    for key in order:
        if key[1] != "8":
            continue
        c = cases[key]
        n = c["notes"]
        if "na" in c:
            rows.append("| %s | %s | %s | | | | |" % (key[2], key[0], c["na"]))
        elif "shape_stage_ns" in n:
            rows.append("| %s | %s | tc entry %.0f ns unshaped, %.0f ns shaped: the shape stage %.0f ns per packet | | | | |" % (
                key[2], key[0], n["tc_unshaped_ns"], n["tc_shaped_ns"], n["shape_stage_ns"]))
        elif "throughput_mbps" in n:
            rows.append("| %s | %s | %.1f | %.3f | %.2f | %.1f / %.1f | %.1f |" % (
                key[2], key[0], n["throughput_mbps"], n["jain"], n["idle_ms"],
                n["loaded_p50_ms"], n["loaded_p95_ms"], n["added_ms"]))
    return rows


def box_table(cases, order):
    """Scenario 9: each sluice row beside the kernel's path on the same pair."""
    rows = ["The box suite's Debian 13 box (selftests/box/bench.sh), its NICs and CPU emulated:",
            "sluice installed from its .deb in its default port modes (tc on e1000e, which has no native",
            "XDP, and on virtio, whose NIC merges segments that native XDP would turn off; the rows",
            "\"virtio forced to native XDP\" set `port IF mode xdp`; PPPoE: ppp0 from pppd against",
            "pppoe-server in a guest of its own) against the same box",
            "with sluice stopped and the kernel's path (nftables masquerade + ct state through NAT,",
            "the kernel bridge between LAN ports). One TCP stream from a LAN host for some seconds;",
            "the box's CPU time (all its CPUs) per Mbit delivered. Only the ratios mean anything.", "",
            "| case | Mbit/s | box CPU ms per Mbit | sluice / kernel |", "|---|---|---|---|"]
    for key in order:
        if key[1] != "9":
            continue
        c, n = cases[key], cases[key]["notes"]
        if "na" in c:
            rows.append("| %s | %s | | |" % (key[2], c["na"]))
            continue
        if "mbps" not in n:
            continue
        ratio = ""
        path, _, pair = key[2].partition(", ")
        if path.startswith("sluice"):
            k = cases.get((key[0], "9", "kernel, " + pair))
            kn = k["notes"] if k else {}
            if kn.get("mbps") and kn.get("box_cpu_ms_per_mbit"):
                ratio = "%.2fx throughput, %.2fx CPU per Mbit" % (
                    n["mbps"] / kn["mbps"], n["box_cpu_ms_per_mbit"] / kn["box_cpu_ms_per_mbit"])
        rows.append("| %s | %.1f | %.3f | %s |" % (key[2], n["mbps"], n["box_cpu_ms_per_mbit"], ratio))
    return rows


def plot(d, name, title, xlabel, ylabel, series, logx=False, logy=False):
    """series: [(label, [(x, y), ...])]. Returns the PNG's name or None."""
    if not shutil.which("gnuplot") or not any(pts for _, pts in series):
        return None
    script = ["set terminal pngcairo size 900,540" if gnuplot_has_cairo() else "set terminal png size 900,540",
              "set output '%s'" % os.path.join(d, name + ".png"),
              "set title '%s'" % title, "set xlabel '%s'" % xlabel, "set ylabel '%s'" % ylabel,
              "set key outside right", "set grid"]
    if logx:
        script.append("set logscale x")
    if logy:
        script.append("set logscale y")
    plots = []
    for i, (label, pts) in enumerate(series):
        if not pts:
            continue
        f = os.path.join(d, "%s.%d.dat" % (name, i))
        with open(f, "w") as out:
            for x, y in pts:
                out.write("%s %s\n" % (x, y))
        plots.append("'%s' using 1:2 with linespoints title '%s'" % (f, label.replace("'", "")))
    script.append("plot " + ", ".join(plots))
    r = subprocess.run(["gnuplot"], input="\n".join(script), text=True, capture_output=True)
    for i in range(len(series)):
        f = os.path.join(d, "%s.%d.dat" % (name, i))
        if os.path.exists(f):
            os.unlink(f)
    return name + ".png" if r.returncode == 0 else None


_cairo = None


def gnuplot_has_cairo():
    global _cairo
    if _cairo is None:
        r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
        _cairo = "pngcairo" in (r.stdout + r.stderr)
    return _cairo


def plots(d, cases):
    out = []
    by_rules = {}
    for (where, sc, case), c in cases.items():
        if where == "host" and sc == "5" and "pps" in c:
            head, _, what = case.partition(": ")
            name, n = head.rsplit(", ", 1)
            by_rules.setdefault("%s (%s)" % (name, what), []).append((int(n.split()[0]) or 1, c["pps"][0]))
    p = plot(d, "rules", "Packet rate against rule count (0 rules plotted at 1)", "rules", "packets/s",
             [(k, sorted(v)) for k, v in sorted(by_rules.items())], logx=True, logy=True)
    if p:
        out.append(p)
    by_flows = {}
    for (where, sc, case), c in cases.items():
        if where == "host" and sc == "6" and "pps" in c:
            name, n = case.rsplit(", ", 1)
            by_flows.setdefault(name, []).append((int(n.split()[0]), c["pps"][0]))
    p = plot(d, "flows", "Packet rate against concurrent flows", "flows", "packets/s",
             [(k, sorted(v)) for k, v in sorted(by_flows.items())], logx=True)
    if p:
        out.append(p)
    cdf = []
    for (where, sc, case), c in cases.items():
        s = c["notes"].get("rtt_samples") if sc == "8" else None
        if s:
            s = sorted(s)
            cdf.append((case, [(v, (i + 1) / len(s)) for i, v in enumerate(s)]))
    p = plot(d, "shaping", "Ping RTT under load (CDF)", "RTT (ms)", "fraction of pings", cdf, logx=True)
    if p:
        out.append(p)
    return out


# The rows the README quotes: (scenario, baseline case, sluice case, label).
HEADLINE = [
    ("1", "kernel forwarding, no XDP", "kernel forwarding + sluice (pass-through)",
     "what sluice costs on traffic it hands to the kernel"),
    ("2", "kernel bridge, 64 B", "sluice bridge fast path, 64 B", "LAN to LAN, 64 B"),
    ("2", "kernel bridge, 1518 B", "sluice bridge fast path, 1518 B", "LAN to LAN, 1518 B"),
    ("3", "nftables masquerade + ct state", "sluice NAT", "LAN to WAN through NAT, 64 B"),
    ("3", "nftables masquerade + ct state: new connections", "sluice NAT: new connections",
     "new connections through NAT (TCP SYN, every one new)"),
    ("4", "nftables dnat + ct state", "sluice port forward", "port forward WAN to LAN, 64 B"),
    ("3", "routed, nftables ct state policy", "routed, sluice zone policy",
     "LAN to WAN routed through the zone policy (no NAT), 64 B"),
    ("6", "routed, nftables conntrack, 100000 flows", "routed, sluice conntrack, 100000 flows",
     "100k established flows, routed through the zone policy"),
]


def generator_note(cases):
    """What sent the frames, where the kernel refused live frames (benchgen
    falls back to a packet socket and says so in each result)."""
    where = sorted({w for (w, _, _), c in cases.items()
                    if any(r.get("generator") == "packet socket" for r in c["runs"])})
    if not where:
        return []
    return ["**Generator in this run:** the kernel of %s refused XDP live frames" % " and ".join(
                "the host" if w == "host" else "the %s guest" % w for w in where),
            "(`BPF_PROG_TEST_RUN` returned EPERM), so `benchgen` sent the same frames from a packet",
            "socket (`sendmmsg`, 64 frames a call) on those rows. The harness then costs more per",
            "frame, which compresses the whole-path ratios (the router-only ones take it out), and",
            "each frame reaches the router as the socket's skb, not with the driver's headroom: a",
            "veth running native XDP first copies it into a page with XDP's headroom, a cost the",
            "kernel paths do not pay, so the native rows here understate sluice.", ""]


def kernel_note(machine):
    """What the host's native rows measure on a kernel that refuses XDP
    metadata (bench.sh probes it as the loader does)."""
    if machine.get("xdp_meta", True):
        return []
    return ["**This run's host kernel refuses `bpf_xdp_adjust_meta()`** (built that way;",
            "Debian's kernels allow it). sluice's XDP ports then hand every frame to tc, which",
            "does the work (`sluice status` says so for each port), so the host's native and",
            "mixed-box rows measure that hand-off and tc, not the native path; the tc-mode rows",
            "are tc alone. The native path is measured in the guest rows (the stock Debian 6.1,",
            "6.12 and arm64 6.12 kernels).", ""]


def headline(cases):
    rows = ["| scenario (one core, packets/s) | kernel path | sluice | sluice / kernel | per core, router only |",
            "|---|---|---|---|---|"]
    for sc, base, ours, label in HEADLINE:
        b = cases.get(("host", sc, base))
        o = cases.get(("host", sc, ours))
        if not b:
            continue
        bs = fmt_rate(b["pps"][0]) if "pps" in b else b.get("na", "-")
        core = "-"
        if o and "pps" in o:
            os_, ratio = fmt_rate(o["pps"][0]), "%.2fx" % (o["pps"][0] / b["pps"][0])
            if "router_ns" in o and "router_ns" in b:
                core = "%.2fx (%.0f vs %.0f ns/pkt)" % (b["router_ns"] / o["router_ns"],
                                                      o["router_ns"], b["router_ns"])
        else:
            os_, ratio = (o or {}).get("na", "not measured"), "-"
        rows.append("| %s | %s (%s) | %s | %s | %s |" % (label, bs, base, os_, ratio, core))
    return rows


def main():
    d = sys.argv[1]
    machine, cases, order = load(d)
    summarize(cases)
    md = ["# sluice benchmark report", "",
          "Generated by `make bench` (tools/bench/bench.sh); regenerate it rather than edit it.", "",
          "| | |", "|---|---|",
          "| machine | %s, %s cores |" % (machine["cpu"], machine["cores"]),
          "| OS, kernel | %s, %s |" % (machine["os"], machine["kernel"]),
          "| commit | %s |" % machine["commit"],
          "| date | %s |" % machine["date"],
          "| mode | %s: %s run(s) of %s s per case, figures are medians (min-max) |" % (
              "quick" if machine["quick"] else "full", machine["runs"], machine["seconds"]),
          "", "## Method", "",
          "The reference box (router with lan1..lan5 in a bridge, wan0, five LAN hosts, an internet",
          "namespace; selftests/netns/topology.sh) in network namespaces joined by veth pairs.",
          "`build/benchgen` runs an XDP program with `BPF_F_TEST_XDP_LIVE_FRAMES` in the sending host:",
          "it writes every header from a template on every frame (live-frame pages are recycled",
          "unreset) and transmits with XDP_TX; a tc sink on the receiving host counts the",
          "generator's frames and drops them. Each frame reaches the router with the headroom its",
          "ingress port's driver would give: 256 bytes where the port runs native XDP (native and",
          "mixed-box rows), 64 where it does not (tc and generic XDP rows, the kernel paths): what a",
          "driver without XDP (e1000e, r8169) leaves in front of its skbs, and what makes generic",
          "XDP copy every skb into a 256-byte headroom on those NICs. The sink is at tc, not XDP,",
          "so that every path ends alike in an skb (a veth running XDP would copy the kernel's",
          "and tc's skbs for their short headroom, and spare the frames XDP redirects). The generator is pinned to one CPU and everything the",
          "frames cause (the router's driver path, XDP or kernel forwarding, the sink) runs on that",
          "same CPU in softirq context, so the packet rate is a **one-core** figure for the whole",
          "chain. *CPU ns/pkt, whole path* is that CPU's busy time (/proc/stat) per delivered",
          "frame; *router ns/pkt* subtracts the harness's own cost (generator straight into the",
          "sink, scenario 1's first row), which is the per-core cost of the router alone and what",
          "the per-core ratios compare. *Program ns/pkt* is sluice's `run_time_ns / run_cnt`",
          "with `kernel.bpf_stats_enabled=1`, the median of five 2-second runs apart from the",
          "rate runs, so the packet rates never carry the statistics' clock reads. Frame sizes are on the wire (64 B = 60 bytes + FCS).",
          "Rates are at the maximal offered load (the generator never waits); *loss* is what the",
          "path dropped at that load. Baselines (kernel bridge, nftables, cake) are configured the",
          "way their users run them; connection-tracking baselines are primed with one reply per",
          "flow so their flows are established. The new-connection and table-scale rows send",
          "every flow from one host, so sluice runs them with its per-host limits lifted",
          "(`nat-host-ports`, `host-flows`): they time connections, not refusals. Rows whose",
          "sluice feature has not landed say so.",
          "Guest rows run inside the stock Debian kernel under qemu TCG (no KVM here): only ratios",
          "within the same guest run mean anything. Scenario 10 measures its own harness in its",
          "guest, and runs multi-threaded TCG, so the guest's two vCPUs are two host threads: with",
          "`spread on` a PPPoE session's frames are judged on both (a veth receives on the",
          "sender's CPU, so the generator's CPU keeps the frames hashed to it).", ""]
    md += generator_note(cases)
    for sc in ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10"):
        md += ["## %s. %s" % (sc, TITLES[sc]), ""]
        if sc == "7":
            md += load_table(cases, order)
        elif sc == "8":
            md += shape_table(cases, order)
        elif sc == "9":
            md += box_table(cases, order)
        else:
            wheres = sorted({k[0] for k in order if k[1] == sc}, key=lambda w: w != "host")
            for w in wheres:
                if w != "host":
                    md += ["", "In the Debian %s guest (qemu TCG; ratios only):" % w, ""]
                md += rate_table(w, sc, cases, order)
            if not wheres:
                md.append("(not run)")
        md.append("")
    imgs = plots(d, cases)
    if imgs:
        md += ["## Plots", ""] + ["![%s](%s)" % (i[:-4], i) for i in imgs] + [""]
    elif not shutil.which("gnuplot"):
        md += ["Plots: gnuplot is not installed (`make bench` installs gnuplot-nox).", ""]
    head = headline(cases) + [""] + kernel_note(machine)
    md[md.index("## Method"):md.index("## Method")] = ["## Headline", ""] + head
    with open(os.path.join(d, "REPORT.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(d, "headline.md"), "w") as f:
        f.write("\n".join(head) + "\n")
    print("bench: wrote %s" % os.path.join(d, "REPORT.md"))


if __name__ == "__main__":
    main()
