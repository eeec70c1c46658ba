// The status page: read-only, refreshed every 5 s from /api/status and
// /api/hosts. Every text from the box (host names come from DHCP clients)
// goes in with textContent, never as HTML.
"use strict";

function human(v, unit) {
	const p = ["", "k", "M", "G", "T"];
	let i = 0;
	while (v >= 1000 && i < 4) { v /= 1000; i++; }
	return (i ? v.toFixed(1) : v.toFixed(0)) + " " + p[i] + unit;
}

function cell(tr, text, cls) {
	const td = document.createElement("td");
	td.textContent = text;
	if (cls) td.className = cls;
	tr.appendChild(td);
	return td;
}

function fill(id, rows, make) {
	const body = document.querySelector("#" + id + " tbody");
	body.replaceChildren();
	for (const r of rows) {
		const tr = document.createElement("tr");
		make(tr, r);
		body.appendChild(tr);
	}
}

// The last hour of one host: down in blue, up in orange, one scale.
function spark(hour) {
	const ns = "http://www.w3.org/2000/svg", w = 180, h = 28;
	const svg = document.createElementNS(ns, "svg");
	svg.setAttribute("class", "spark");
	svg.setAttribute("viewBox", "0 0 " + w + " " + h);
	const end = Math.floor(Date.now() / 10000) * 10, start = end - 3600;
	let top = 1;
	for (const s of hour) top = Math.max(top, s[1], s[2]);
	for (const [k, cls] of [[2, "down"], [1, "up"]]) {
		const pts = hour.filter(s => s[0] >= start)
			.map(s => ((s[0] - start) / 3600 * w).toFixed(1) + "," + (h - 1 - s[k] / top * (h - 2)).toFixed(1));
		if (!pts.length) continue;
		const line = document.createElementNS(ns, "polyline");
		line.setAttribute("class", cls);
		line.setAttribute("points", pts.join(" "));
		svg.appendChild(line);
	}
	return svg;
}

function showHosts(j) {
	fill("hosts", j.hosts, (tr, h) => {
		tr.dataset.mac = h.mac;
		cell(tr, h.name || "-", "name");
		cell(tr, h.mac, "mac");
		cell(tr, h.addresses.join(" "), "addr");
		cell(tr, human(h.rate_1m.down * 8, "bit/s"), "n down");
		cell(tr, human(h.rate_1m.up * 8, "bit/s"), "n up");
		cell(tr, String(h.connections), "n conns");
		cell(tr, human(h.month.down, "B"), "n month-down");
		cell(tr, human(h.month.up, "B"), "n month-up");
		cell(tr, "").appendChild(spark(h.hour || []));
	});
	document.getElementById("hosts-note").textContent =
		j.hosts.length ? "Rates over the last minute; months from day " + j.month_start + "." :
		"No host has sent or received through the box yet.";
}

function showStatus(j) {
	document.getElementById("version").textContent = "version " + j.version;
	const byName = {};
	for (const p of j.status.ports) byName[p.name] = p;
	fill("ports", j.stats.ports, (tr, s) => {
		const p = byName[s.name] || {};
		cell(tr, s.name);
		cell(tr, s.zone);
		cell(tr, p.mode || "?");
		cell(tr, p.up ? "up" : "down", p.up ? "up-link" : "down-link");
		cell(tr, s.rate ? human(s.rate.bps, "bit/s") : "-", "n");
		cell(tr, s.rate ? human(s.rate.pps, "") : "-", "n");
	});
	const shape = j.stats.shape || [];
	fill("shape", shape, (tr, s) => {
		cell(tr, s.zone);
		cell(tr, s.direction);
		cell(tr, human(s.rate, "bit/s"), "n");
		cell(tr, human(s.delivered, "bit/s"), "n");
		cell(tr, (s.backlog_ns / 1e6).toFixed(1) + " ms", "n");
		cell(tr, String(s.marks), "n");
		cell(tr, String(s.drops["shape-aqm"] + s.drops["shape-limit"]), "n");
	});
	document.getElementById("shape-note").textContent = shape.length ? "" : "No zone is shaped.";
	const log = document.getElementById("log");
	log.replaceChildren();
	for (const l of j.log.slice().reverse()) {
		const li = document.createElement("li");
		li.className = l.level;
		li.textContent = new Date(l.at * 1000).toLocaleTimeString() + "  " + l.text;
		log.appendChild(li);
	}
}

async function refresh() {
	const say = document.getElementById("updated");
	try {
		const [st, ho] = await Promise.all([fetch("/api/status"), fetch("/api/hosts")]);
		if (st.ok) showStatus(await st.json());
		if (ho.ok) showHosts(await ho.json());
		say.textContent = st.ok ? "updated " + new Date().toLocaleTimeString() :
			"the daemon is not running";
	} catch (e) {
		say.textContent = "no answer from the box";
	}
}

refresh();
setInterval(refresh, 5000);
