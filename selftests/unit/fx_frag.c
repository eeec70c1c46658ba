// SPDX-License-Identifier: GPL-2.0
/* Out-of-order fragments (sluice_ct.h, loader/frag.c): a later fragment
 * that comes before its first is held for the daemon, which replays it
 * through XDP once the first has passed. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include "fixture.h"

static struct {
	int n;
	struct sluice_frag_held v[4];
} ring;

static int on_ring(void *ctx, void *data, size_t size)
{
	if (ring.n < 4 && size >= sizeof(struct sluice_frag_event))
		memcpy(&ring.v[ring.n++], data,
		       size < sizeof(ring.v[0]) ? size : sizeof(ring.v[0]));
	return 0;
}

static int frag_run(void (*build)(struct pkt *), enum port_id port, int tc, int meta,
		    struct pkt *out)
{
	return run_pkt(build, port, tc, meta, out, NULL);
}

/* A later fragment before its first: held (its whole frame in the ring,
 * with its datagram's key and port), released when the first passes, and
 * replayed through XDP like one that came after its first. */
void test_frag_hold(int tc)
{
	struct ring_buffer *rb;
	struct pkt in = {}, out = {}, want = {};
	struct sluice_frag4_key k = { .proto = IPPROTO_UDP, .zone = Z_LAN };
	struct sluice_gstats g0, g1;
	int a;

	rb = ring_buffer__new(bpf_map__fd(skel->maps.sluice_frag_events), on_ring, NULL, NULL);
	if (!rb) {
		frag_ok(0, "fragments: the ring buffer opens (%s)", strerror(errno));
		return;
	}
	baseline();
	f_frag_none();
	write_ports();
	cfg_flag(SLUICE_CFG_FRAG_HOLD, 1);
	ring_buffer__consume(rb);
	ring.n = 0;
	inet_pton(AF_INET, LAN_HOST, &k.src);
	inet_pton(AF_INET, INET_HOST, &k.dst);

	read_gstats(&g0);
	a = frag_run(nfrag_out, P_LAN5, tc, 0, &out);
	read_gstats(&g1);
	ring_buffer__consume(rb);
	nfrag_out(&in);
	frag_ok(a == (tc ? 2 : XDP_DROP) && ring.n == 1 && ring.v[0].ev.kind == SLUICE_FRAG_HOLD &&
		ring.v[0].ev.ifindex == ifindex_of[P_LAN5] && ring.v[0].ev.len == in.len &&
		!memcmp(ring.v[0].frame, in.b, in.len) && !memcmp(&ring.v[0].ev.key, &k, sizeof(k)) &&
		g1.nat_frag_held == g0.nat_frag_held + 1,
		"fragments: a later fragment before its first is held: dropped, its whole frame "
		"and datagram in the ring (action %d, %d records, held +%llu)", a, ring.n,
		(unsigned long long)(g1.nat_frag_held - g0.nat_frag_held));

	ring.n = 0;
	a = frag_run(nfirst_out, P_LAN5, tc, 0, &out);
	ring_buffer__consume(rb);
	frag_ok(a == (tc ? 0 : XDP_PASS) && ring.n == 1 &&
		ring.v[0].ev.kind == SLUICE_FRAG_RELEASE &&
		!memcmp(&ring.v[0].ev.key, &k, sizeof(k)),
		"fragments: its first fragment passes and releases it (action %d, %d records)", a,
		ring.n);

	ring.n = 0;
	a = frag_run(nfirst_out, P_LAN5, tc, 0, &out);
	ring_buffer__consume(rb);
	frag_ok(ring.n == 0, "fragments: a first fragment with nothing held announces nothing");

	if (!tc && !xdp_meta_ok)
		printf("SKIP xdp: fragments: a replay's word rides in metadata, which this "
		       "kernel's XDP refuses\n");
	else if (!tc) {
		read_gstats(&g0);
		a = frag_run(nfrag_out, P_LAN5, tc, 1, &out);
		read_gstats(&g1);
		nfrag_out_xlat(&want);
		/* (the pass's metadata in front, the replay word taken off) */
		frag_ok(a == XDP_PASS && out.len == want.len + 4 &&
			!memcmp(out.b + 4, want.b, want.len) &&
			g1.nat_frag_replayed == g0.nat_frag_replayed + 1,
			"fragments: replayed with the replay word, it leaves translated like "
			"its first's (action %d, replayed +%llu)", a,
			(unsigned long long)(g1.nat_frag_replayed - g0.nat_frag_replayed));
	}

	/* to the router's masquerading address: it may be a reply's */
	f_frag_none();
	cfg_flag(SLUICE_CFG_FRAG_HOLD, 1);
	ring.n = 0;
	a = frag_run(nfrag_in, P_WAN, tc, 0, &out);
	ring_buffer__consume(rb);
	frag_ok(a == (tc ? 2 : XDP_DROP) && ring.n == 1 && ring.v[0].ev.kind == SLUICE_FRAG_HOLD,
		"fragments: a later fragment to the masquerading address before its first is "
		"held (action %d, %d records)", a, ring.n);

	/* without a daemon: dropped as before */
	f_frag_none();
	cfg_flag(SLUICE_CFG_FRAG_HOLD, 0);
	ring.n = 0;
	a = frag_run(nfrag_out, P_LAN5, tc, 0, &out);
	ring_buffer__consume(rb);
	frag_ok(a == (tc ? 2 : XDP_DROP) && ring.n == 0,
		"fragments: without a daemon nothing is held (action %d, %d records)", a, ring.n);
	ring_buffer__free(rb);
	baseline();
	write_ports();
}
