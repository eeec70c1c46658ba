# sluice: XDP/tc-BPF router for Debian mini PCs.
#   make            build build/sluice (BPF objects embedded via skeletons)
#   make deps       install the Debian packages for build, tests and demo
#   sudo make check run every test suite (see selftests/run.sh)
#   sudo make check-arm64  the arm64 build and .deb in Debian's arm64 kernels
#   sudo make demo  the reference box in namespaces, with traffic and stats
#   sudo make bench sluice against the kernel's own paths -> docs/bench/REPORT.md
#   sudo make bench-quick  every scenario once, small sizes (CI: the harness works)
#   make install    DESTDIR/PREFIX honoured
#   make deb        build/deb/sluice_VERSION_amd64.deb (dpkg-buildpackage, debian/)
#   make ARCH=arm64 [deb]  the same for arm64 boards, cross-built into build/arm64

PREFIX   ?= /usr/local
DESTDIR  ?=
SBINDIR  ?= $(PREFIX)/sbin
BUILD    ?= build

CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKG_CONFIG ?= pkg-config

# ARCH=arm64: the same build for an arm64 box, cross-compiled on an amd64
# machine into build/arm64 with Debian's cross compiler and the arm64 -dev
# packages (`make deps ARCH=arm64` installs them; `make deb ARCH=arm64`
# packages it). Any CC naming another target works the same way.
ifeq ($(ARCH),arm64)
CC       := aarch64-linux-gnu-gcc
BUILD    := build/arm64
endif
# What CC builds for: the BPF objects' __TARGET_ARCH (the one difference in
# them), and, built for another machine than this one, where that
# machine's libraries describe themselves (pkg-config).
TARGET   := $(shell $(CC) -dumpmachine 2>/dev/null)
BPF_ARCH := $(if $(filter aarch64%,$(TARGET)),arm64,x86)
CROSS    := $(if $(filter $(shell uname -m)-%,$(TARGET)),,1)
ifneq ($(CROSS),)
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(TARGET)/pkgconfig:/usr/share/pkgconfig $(PKG_CONFIG)
endif

# clang -target bpf does not search the multiarch include folder that holds
# <asm/types.h> on Debian; add it after the vendor headers.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Wextra -Werror \
	-Wno-unused-parameter -Ivendor/include -Ibpf \
	$(if $(MULTIARCH),-idirafter /usr/include/$(MULTIARCH))

WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
LIB_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf libmnl 2>/dev/null)
LIBS     := $(shell $(PKG_CONFIG) --libs libbpf libmnl 2>/dev/null || echo -lbpf -lmnl) -lelf -lz
# The package's version (debian/changelog), for the status page.
VERSION  := $(shell sed -n '1s/.*(\(.*\)).*/\1/p' debian/changelog)
ALL_CFLAGS := -DSLUICE_VERSION='"$(VERSION)"' -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(LIB_CFLAGS) -Ivendor/include -Ibpf -Iloader -I$(BUILD)

BPF_SRC  := bpf/sluice.bpf.c
BPF_HDRS := $(wildcard bpf/*.h)
LOADER_SRC := $(filter-out loader/main.c,$(wildcard loader/*.c))
LOADER_HDRS := $(wildcard loader/*.h)

# The programs: what the suites and the bench run (the arm64 guests' build
# is this, cross-built; `all` adds the man pages).
programs: $(BUILD)/sluice $(BUILD)/test_xdp $(BUILD)/test_config $(BUILD)/test_loader \
	$(BUILD)/xdp_foreign.bpf.o $(BUILD)/xdp_forge.bpf.o $(BUILD)/benchgen $(BUILD)/xdp_pass.bpf.o $(BUILD)/shapesim
all: programs

$(BUILD):
	@mkdir -p $@

$(BUILD)/sluice.bpf.o: $(BPF_SRC) $(BPF_HDRS) | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/xdp_foreign.bpf.o: selftests/netns/xdp_foreign.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/xdp_forge.bpf.o: selftests/netns/xdp_forge.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/sluice.skel.h: $(BUILD)/sluice.bpf.o
	$(BPFTOOL) gen skeleton $< name sluice > $@.tmp && mv $@.tmp $@

# The object's identity, for `reload` to tell whether the running programs
# are this binary's (computed here: hashing 1-2 MB at every reload costs
# seconds on a slow box).
$(BUILD)/sluice.objhash.h: $(BUILD)/sluice.bpf.o
	echo "#define SLUICE_OBJECT_HASH 0x$$(sha256sum $< | cut -c1-16)ULL" > $@.tmp && mv $@.tmp $@

# The status page's files (loader/web/), built into the binary.
WEB_FILES := loader/web/index.html loader/web/style.css loader/web/app.js
$(BUILD)/web_assets.c: $(WEB_FILES) tools/embed.sh | $(BUILD)
	sh tools/embed.sh $@ $(WEB_FILES)

$(BUILD)/sluice: loader/main.c $(LOADER_SRC) $(LOADER_HDRS) $(BPF_HDRS) $(BUILD)/sluice.skel.h $(BUILD)/sluice.objhash.h $(BUILD)/web_assets.c
	$(CC) $(ALL_CFLAGS) loader/main.c $(LOADER_SRC) $(BUILD)/web_assets.c -o $@ $(LDFLAGS) $(LIBS) -lcrypt

# The config parser, which the unit tests build on its own.
CONFIG_SRC := loader/config.c loader/config_lex.c loader/config_names.c loader/config_addr.c \
	loader/config_rule.c loader/config_opts.c
CONFIG_HDRS := loader/config.h loader/config_lex.h loader/config_names.h loader/config_addr.h \
	loader/config_stmt.h

TEST_XDP_SRC := loader/util.c $(CONFIG_SRC) loader/rules.c loader/rules_write.c \
	loader/rules_maps.c loader/rules_table.c
# The runner (test_xdp.c), the fixtures of each stage and their shared pairs.
TEST_XDP_FX := $(wildcard selftests/unit/fx_*.c) selftests/unit/fixture.c selftests/unit/pkt.c
TEST_XDP_FX_HDRS := selftests/unit/fixture.h selftests/unit/pkt.h
$(BUILD)/test_xdp: selftests/unit/test_xdp.c $(TEST_XDP_FX) $(TEST_XDP_FX_HDRS) $(TEST_XDP_SRC) loader/rules.h $(CONFIG_HDRS) $(BPF_HDRS) $(BUILD)/sluice.skel.h $(BUILD)/tc_vlan_meta.skel.h
	$(CC) $(ALL_CFLAGS) -Iselftests/unit $< $(TEST_XDP_FX) $(TEST_XDP_SRC) -o $@ $(LDFLAGS) $(LIBS)

# A tag moved into the skb's metadata before sluice's tc program runs, as a
# real port's kernel does (the test runner's skb keeps it in the frame).
$(BUILD)/tc_vlan_meta.bpf.o: selftests/unit/tc_vlan_meta.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tc_vlan_meta.skel.h: $(BUILD)/tc_vlan_meta.bpf.o
	$(BPFTOOL) gen skeleton $< name tc_vlan_meta > $@.tmp && mv $@.tmp $@

$(BUILD)/test_config: selftests/unit/test_config.c $(CONFIG_SRC) $(CONFIG_HDRS)
	$(CC) $(ALL_CFLAGS) $< $(CONFIG_SRC) -o $@

# The loader's arithmetic that needs no kernel (accounting, sizes), on its own.
UNIT_LOADER_SRC := loader/acct.c loader/acct_state.c loader/acct_names.c loader/run.c \
	loader/util.c loader/instance.c loader/conntrack.c
$(BUILD)/test_loader: selftests/unit/test_loader.c $(UNIT_LOADER_SRC) loader/acct.h loader/conntrack.h $(BUILD)/sluice.skel.h
	$(CC) $(ALL_CFLAGS) $< $(UNIT_LOADER_SRC) -o $@ $(LDFLAGS) $(LIBS)

# Man pages (tools/mkman.sh): prose from loader/man/*.in, the commands and
# options from the built binary's --help, the example config verbatim.
MAN_PAGES := $(BUILD)/man/sluice.8 $(BUILD)/man/sluice.conf.5
all: $(MAN_PAGES)

# (built for another machine, the commands' help comes from this machine's
# build of the same sources)
HELP_BIN := $(if $(CROSS),$(BUILD)/native/sluice,$(BUILD)/sluice)
$(BUILD)/man/sluice.8: loader/man/sluice.8.in $(HELP_BIN) tools/mkman.sh
	bash tools/mkman.sh -b $(HELP_BIN) $< $@

$(BUILD)/native/sluice: loader/main.c $(LOADER_SRC) $(LOADER_HDRS) $(BPF_HDRS)
	$(MAKE) --no-print-directory ARCH= CC=cc BUILD=$(BUILD)/native $(BUILD)/native/sluice

$(BUILD)/man/sluice.conf.5: loader/man/sluice.conf.5.in loader/sluice.conf.example tools/mkman.sh
	bash tools/mkman.sh -e loader/sluice.conf.example $< $@

# The shaper's arithmetic on synthetic traffic: the header the datapath
# compiles, built for user space (tools/shapesim.c).
$(BUILD)/shapesim: tools/shapesim.c bpf/sluice_shape.h | $(BUILD)
	$(CC) $(ALL_CFLAGS) $< -o $@ -lm

# The benchmark's generator and sink (tools/bench).
$(BUILD)/benchgen.bpf.o: tools/bench/benchgen.bpf.c tools/bench/benchgen.h | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -Itools/bench -c $< -o $@

$(BUILD)/xdp_pass.bpf.o: tools/bench/xdp_pass.bpf.c | $(BUILD)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/benchgen.skel.h: $(BUILD)/benchgen.bpf.o
	$(BPFTOOL) gen skeleton $< name benchgen > $@.tmp && mv $@.tmp $@

# Not in `all`: a developer's tool (docs/design.md's verifier figures).
$(BUILD)/verifier_steps: tools/verifier_steps.c $(BUILD)/sluice.skel.h
	$(CC) $(ALL_CFLAGS) $< -o $@ $(LDFLAGS) $(LIBS)

$(BUILD)/benchgen: tools/bench/benchgen.c tools/bench/benchgen.h $(BUILD)/benchgen.skel.h
	$(CC) $(ALL_CFLAGS) -Itools/bench $< -o $@ $(LDFLAGS) $(LIBS)

deps:
	@tools/deps.sh $(ARCH)

# check and demo install what they need first, so these two commands are
# all a fresh Debian machine needs.
check:
	@tools/deps.sh arm64
	@$(MAKE) --no-print-directory all
	@selftests/run.sh $(if $(KERNELS),--kernels "$(KERNELS)") $(if $(SUITES),--suites "$(SUITES)")

# The box suite: sluice's .deb on Debian 12 and 13 booted with systemd
# under qemu, e1000e and virtio NICs, a DHCP WAN (selftests/box).
check-box:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@selftests/box/run.sh $(BOX_RELEASES)

# The arm64 guests' other core suites (make check runs the arm64 build in
# Debian 12's and 13's arm64 kernels, the .deb installed, every fixture,
# NAT on a mixed box and shaping): the bridge, routing, the rules and a
# VLAN-filtering bridge on a mixed box, with the installed sluice.
check-arm64:
	@tools/deps.sh arm64
	@$(MAKE) --no-print-directory all
	@SLUICE_ARM64_PART=more selftests/run.sh --kernels "arm64-6.1 arm64-6.12" --suites "package netns tcmode"

# The soak: the Debian 13 box under slub_debug, 10 minutes of mixed traffic
# with reloads, link flaps and new WAN addresses, then 5 over PPPoE with
# re-dials (selftests/box/soak.sh).
check-soak:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@SLUICE_BOX_ONLY="t_soak t_soak_pppoe" SLUICE_BOX_APPEND=slub_debug=FZP selftests/box/run.sh 13

demo:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@tools/demo.sh

bench:
	@tools/deps.sh arm64
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory ARCH=arm64 all
	@tools/bench/bench.sh --out docs/bench

bench-quick:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@tools/bench/bench.sh --quick --out $(BUILD)/bench-quick

# What `install` puts in place, built without the test binaries (the
# package's build).
install-files: $(BUILD)/sluice
install-files: $(MAN_PAGES)

install: install-files
	install -D -m 0755 $(BUILD)/sluice $(DESTDIR)$(SBINDIR)/sluice
	install -D -m 0644 loader/sluice.conf.example $(DESTDIR)$(PREFIX)/share/doc/sluice/sluice.conf.example
	install -D -m 0644 $(BUILD)/man/sluice.8 $(DESTDIR)$(PREFIX)/share/man/man8/sluice.8
	install -D -m 0644 $(BUILD)/man/sluice.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/sluice.conf.5
	install -D -m 0644 loader/sluice.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/sluice

# The Debian package, built from a copy of the tree (dpkg-buildpackage
# writes its results beside the source folder and debian/ must stay
# clean): build/deb/sluice_*.deb, with lintian's verdict printed.
deb:
	@tools/deps.sh $(ARCH)
	@tools/mkdeb.sh $(BUILD)/deb $(ARCH)

clean:
	rm -rf $(BUILD)

.PHONY: all programs deps check check-box check-arm64 check-soak demo bench bench-quick install install-files deb clean
