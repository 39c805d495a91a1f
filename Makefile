# fakeenv: one non-recursive Makefile.  Sources are globbed per room;
# objects go to $(BUILD)/obj mirroring the tree.  Flavours (the default
# build, `make asan`) never share objects: each has its own $(BUILD).

# CC is make's own default (cc) unless given: `make CC=clang`.
BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

# -Werror where warnings are ours to fix: a git checkout (development and
# CI, whose `make test` runs on one) and WERROR=1.  A packager's plain
# `make` of a released tree on a newer compiler gets the warnings without
# failing; WERROR=0 says the same in a checkout.
WERROR ?= $(if $(wildcard .git),1,0)
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes \
        -Wmissing-prototypes -Wformat=2 -Wvla
ifeq ($(WERROR),1)
WARN += -Werror
endif
# 1 when CC builds against glibc; else musl (fakeenv/libc.h says what
# each lacks).
FE_GLIBC := $(shell printf '\043include <features.h>\n\043ifdef __GLIBC__\n1\n\043endif\n' | \
	$(CC) -E -P -x c - 2>/dev/null | tr -d ' \n')

# -fPIC everywhere: common/ goes into the shim as well as the programs.
# initial-exec TLS: glibc's default model for a shared object may
# allocate on first touch, which a wrapper running inside malloc cannot
# afford.  musl's never allocates (dlopen gives every thread its block),
# and musl cannot dlopen a library of initial-exec TLS, which the
# launcher does for the supervisor: the default model there.
TLS_MODEL := $(if $(FE_GLIBC),initial-exec,global-dynamic)
BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -fPIC \
        -fvisibility=hidden -ftls-model=$(TLS_MODEL) \
        -Iinclude -Isrc -DFE_VERSION='"$(VERSION)"' -MMD -MP
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
        -fno-sanitize-recover=all
ifeq ($(SAN),1)
BASE_CFLAGS += $(SAN_FLAGS)
LDSAN := $(SAN_FLAGS)
endif
# A libc whose compiler has no kernel headers (Debian's musl-gcc, which
# searches musl's headers alone): the system's linux/, asm/ and
# asm-generic/, and those only, through a directory of links in $(BUILD).
# Alpine's musl finds them where its own headers are (linux-headers).
# t-musl's program, built with musl-gcc in a glibc build, takes them too.
MUSL_GCC := $(shell command -v musl-gcc 2>/dev/null)
KINC_MISSING := $(shell printf '\043include <linux/seccomp.h>\n' | \
	$(CC) -E -x c - >/dev/null 2>&1 || echo 1)
KINC := $(BUILD)/kinc
ifeq ($(KINC_MISSING),1)
BASE_CFLAGS += -isystem $(KINC)
endif
ifneq ($(KINC_MISSING)$(MUSL_GCC),)
KINC_ASM := $(firstword $(wildcard /usr/include/$(shell $(CC) \
	-print-multiarch 2>/dev/null)/asm /usr/include/asm))
$(shell mkdir -p $(KINC) && for d in /usr/include/linux $(KINC_ASM) \
	/usr/include/asm-generic; do [ -d $$d ] && \
	ln -sfn $$d $(KINC)/$$(basename $$d); done)
endif
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(LDSAN) $(LDFLAGS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

COMMON_SRC   := $(wildcard src/common/*.c)
SHIM_SRC     := $(wildcard src/shim/*.c)
DAEMON_SRC   := $(wildcard src/daemon/*.c)
JOURNAL_SRC  := $(wildcard src/journal/*.c)
LAUNCHER_SRC := $(wildcard src/launcher/*.c)
UNIT_SRC     := $(wildcard tests/unit/test_*.c)
HELPER_SRC   := $(wildcard tests/integ/helpers/*.c)
BENCH_SRC    := $(wildcard bench/*.c)

COMMON_OBJ  := $(call obj,$(COMMON_SRC))
SHIM_OBJ    := $(call obj,$(SHIM_SRC))
DAEMON_OBJ  := $(call obj,$(DAEMON_SRC))
# The journal codec: the daemon, the launcher (fsck) and the tests; never
# the shim, which has no business with files of its own.
JOURNAL_OBJ := $(call obj,$(JOURNAL_SRC))
# Unit tests link the daemon's modules, not its main().
DAEMON_LIB  := $(filter-out %/main.o,$(DAEMON_OBJ))
LAUNCHER_OBJ := $(call obj,$(LAUNCHER_SRC))

SHIM     := $(BUILD)/libfakeenv.so
DAEMON   := $(BUILD)/fakeenvd
LAUNCHER := $(BUILD)/fakeenv
UNITS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRC))
HELPERS  := $(patsubst tests/integ/helpers/%.c,$(BUILD)/tests/helpers/%,$(HELPER_SRC))
STATIC_HELPERS := $(patsubst %,$(BUILD)/tests/static/%,own st node mode xat acc creds mk rmv sigloop \
		  nsroot)
# A program of another libc (musl's), dynamic and static, for t-musl;
# built where Debian's musl-tools gives musl-gcc, else t-musl skips.
MUSL_HELPERS := $(if $(MUSL_GCC),$(BUILD)/tests/musl/mh $(BUILD)/tests/musl/mh-static)
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC)) \
	    $(BUILD)/bench/empty.so

.PHONY: all test unit integ asan valgrind bench bench-journal demo install uninstall clean check-exports deb \
	fuzz fuzz-cc musl musl-min

all: $(SHIM) $(DAEMON) $(LAUNCHER) $(UNITS) $(HELPERS) $(STATIC_HELPERS) \
	$(MUSL_HELPERS) $(BENCHES)

# The shim defines libc's own names: fortify's inline wrappers would
# collide with them, and a nonnull attribute copied from libc's prototype
# must not let the compiler drop the shim's own checks.
$(SHIM_OBJ): ALL_CFLAGS += -U_FORTIFY_SOURCE -fno-delete-null-pointer-checks

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The shim: -z defs so that an unresolved name fails our build, not a
# user's program.
# -z noseparate-code: two LOAD segments instead of four.  Every fork copies
# every mapping of every process in the session, and the two extra ones
# cost fork+exit about 5% on these machines.
$(SHIM): $(SHIM_OBJ) $(COMMON_OBJ)
	$(CC) -shared -Wl,-z,defs -Wl,-z,noseparate-code $(ALL_LDFLAGS) \
		-o $@ $^ -ldl -lpthread

$(DAEMON): $(DAEMON_OBJ) $(JOURNAL_OBJ) $(COMMON_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# export and ls read a journal and its delta through the daemon's own
# load (the table, its strings, the load), so that they show what a
# session shows.
DAEMON_LOAD := $(call obj,src/daemon/table.c src/daemon/table_path.c \
	src/daemon/arena.c src/daemon/shm.c src/daemon/load.c \
	src/daemon/load_delta.c)
$(LAUNCHER): $(LAUNCHER_OBJ) $(DAEMON_LOAD) $(JOURNAL_OBJ) $(COMMON_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(BUILD)/tests/unit/%: $(BUILD)/obj/tests/unit/%.o $(DAEMON_LIB) $(JOURNAL_OBJ) \
		$(COMMON_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# Helpers are ordinary programs, what a build would run: never sanitizer
# builds (an ASan binary binding the old __xstat@GLIBC_2.2.5 by .symver
# does not even load).
HELPER_OBJ := $(call obj,$(HELPER_SRC))
$(HELPER_OBJ): ALL_CFLAGS := $(filter-out $(SAN_FLAGS),$(ALL_CFLAGS))
# Against musl, glibc's names the helpers call are made plain (static.h).
ifneq ($(FE_GLIBC),1)
$(HELPER_OBJ): ALL_CFLAGS += -include tests/integ/helpers/static.h
endif

$(BUILD)/tests/helpers/%: $(BUILD)/obj/tests/integ/helpers/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lpthread

# The same helpers linked -static, for the seccomp tests: programs the
# preload cannot reach that make the dynamic ones' calls.  static.h
# stands in for what a static libc lacks (see there).
STATIC_CFLAGS := $(filter-out $(SAN_FLAGS) -MMD -MP,$(ALL_CFLAGS))
$(BUILD)/tests/static/%: tests/integ/helpers/%.c tests/integ/helpers/helper.h \
		tests/integ/helpers/static.h
	@mkdir -p $(@D)
	$(CC) $(STATIC_CFLAGS) -static -include tests/integ/helpers/static.h \
		$(LDFLAGS) -o $@ $< -lpthread

# musl-gcc searches musl's headers alone: ours and the kernel's given.
MUSL_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 $(WARN) -Iinclude -isystem $(KINC)
$(BUILD)/tests/musl/mh: tests/integ/musl/mh.c tests/integ/helpers/helper.h include/fakeenv/libc.h
	@mkdir -p $(@D)
	$(MUSL_GCC) $(MUSL_CFLAGS) -o $@ $<
$(BUILD)/tests/musl/mh-static: tests/integ/musl/mh.c tests/integ/helpers/helper.h include/fakeenv/libc.h
	@mkdir -p $(@D)
	$(MUSL_GCC) $(MUSL_CFLAGS) -static -o $@ $<

# jdump reads journals and mkjnl writes them with the journal code, as
# the unit tests do (and with their sanitizers in `make asan`); they never
# run in a session.
$(BUILD)/tests/helpers/jdump $(BUILD)/tests/helpers/mkjnl: \
		$(BUILD)/tests/helpers/%: $(BUILD)/obj/tests/integ/helpers/%.o \
		$(JOURNAL_OBJ) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# mkjournal writes journals with the journal code, for bench/scale.
$(BUILD)/bench/mkjournal: $(BUILD)/obj/bench/mkjournal.o $(JOURNAL_OBJ) \
		$(COMMON_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# Built as an ordinary library is (no -z noseparate-code): the "preload"
# column of bench/run, the cost of any LD_PRELOAD library.
$(BUILD)/bench/empty.so: bench/preload/empty.c
	@mkdir -p $(@D)
	$(CC) -shared -fPIC -O2 $(WARN) -o $@ $<

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# The README's first command: a sample rootfs packed as a fake root.
demo: $(SHIM) $(DAEMON) $(LAUNCHER)
	@scripts/demo.sh $(BUILD)

check-exports: $(SHIM)
	CC='$(CC)' CPPFLAGS='$(if $(KINC),-isystem $(KINC))' \
		scripts/check-exports.sh $(SHIM)

# FAKEENV_SAN tells the integration tests that the shim is a sanitizer
# build, whose runtime has to be preloaded first.
RUN_TESTS = FAKEENV_BUILD=$(BUILD) FAKEENV_SAN=$(if $(SAN),1,0) tests/run

test: all
	@$(RUN_TESTS)

unit: all
	@$(RUN_TESTS) --unit

integ: all
	@$(RUN_TESTS) --integ

# The whole musl build (docs/musl.md) in build-musl/, and the part of it
# that tests/integ/t-musl-build.sh runs: the programs and the helpers its
# sessions run (a third of the whole's build time).
MUSL_CC ?= musl-gcc
MUSL_MIN := libfakeenv.so fakeenv fakeenvd \
	$(addprefix tests/helpers/,own mode node st xat)
musl:
	$(MAKE) CC=$(MUSL_CC) BUILD=build-musl all check-exports
musl-min:
	$(MAKE) CC=$(MUSL_CC) BUILD=build-musl $(addprefix build-musl/,$(MUSL_MIN))

# The whole suite with AddressSanitizer and UBSan builds of every part.
asan:
	$(MAKE) BUILD=build-asan SAN=1 test

# The unit tests under valgrind, and every daemon of the integration
# tests under valgrind, each log checked.
valgrind: all
	@FAKEENV_VALGRIND=1 $(RUN_TESTS)

# The workloads side by side with native (and fakeroot and pseudo), then
# the state at scale (memory per record, checkpoint, load).
bench: all
	@FAKEENV_BUILD=$(BUILD) bench/run
	@FAKEENV_BUILD=$(BUILD) bench/journal

bench-journal: all
	@FAKEENV_BUILD=$(BUILD) bench/journal

# libFuzzer targets, clang only, in their own build-fuzz/ (never part of
# `make test`): the journal reader and the daemon's request decoder, each
# run FUZZ_SECONDS from a seed corpus that tests/fuzz/seeds.c writes and
# checks.  Crashes land in build-fuzz/artifacts/; each becomes a unit test.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZ_CFLAGS  := -std=gnu11 -D_GNU_SOURCE -O1 -g $(WARN) -Iinclude -Isrc \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -fno-omit-frame-pointer
FUZZ_DEPS    := $(wildcard include/fakeenv/*.h src/*/*.h)
SEEDS        := $(BUILD)/tests/fuzz/seeds

fuzz-cc:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
		echo "make fuzz: needs clang with libFuzzer, and '$(FUZZ_CC)'" \
			"is not installed (apt-get install clang, or set" \
			"FUZZ_CC=clang-NN)" >&2; exit 1; }

$(FUZZ_BUILD)/fuzz_journal: tests/fuzz/fuzz_journal.c $(JOURNAL_SRC) \
		$(COMMON_SRC) $(FUZZ_DEPS) | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

$(FUZZ_BUILD)/fuzz_req: tests/fuzz/fuzz_req.c \
		$(filter-out %/main.c,$(DAEMON_SRC)) $(JOURNAL_SRC) $(COMMON_SRC) \
		$(FUZZ_DEPS) | fuzz-cc
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

$(SEEDS): $(BUILD)/obj/tests/fuzz/seeds.o $(DAEMON_LIB) $(JOURNAL_OBJ) \
		$(COMMON_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

# -rss_limit_mb: the machine is shared; a leak should stop the run, not it.
FUZZ_RUN = -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	-rss_limit_mb=1024 -artifact_prefix=$(FUZZ_BUILD)/artifacts/

fuzz: fuzz-cc $(FUZZ_BUILD)/fuzz_journal $(FUZZ_BUILD)/fuzz_req $(SEEDS)
	@rm -rf $(FUZZ_BUILD)/seeds
	$(SEEDS) $(FUZZ_BUILD)/seeds
	@mkdir -p $(FUZZ_BUILD)/corpus/journal $(FUZZ_BUILD)/corpus/req \
		$(FUZZ_BUILD)/artifacts
	$(FUZZ_BUILD)/fuzz_journal $(FUZZ_RUN) -max_len=16384 \
		$(FUZZ_BUILD)/corpus/journal $(FUZZ_BUILD)/seeds/journal
	$(FUZZ_BUILD)/fuzz_req $(FUZZ_RUN) -max_len=$$((64 + 4096 + 8)) \
		$(FUZZ_BUILD)/corpus/req $(FUZZ_BUILD)/seeds/req

install: $(SHIM) $(DAEMON) $(LAUNCHER)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/fakeenv \
		$(DESTDIR)$(PREFIX)/lib/fakeenv $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(LAUNCHER) $(DESTDIR)$(PREFIX)/bin/fakeenv
	install -m 0755 $(DAEMON) $(DESTDIR)$(PREFIX)/libexec/fakeenv/fakeenvd
	install -m 0644 $(SHIM) $(DESTDIR)$(PREFIX)/lib/fakeenv/libfakeenv.so
	install -m 0644 man/fakeenv.1 $(DESTDIR)$(PREFIX)/share/man/man1/fakeenv.1

# build/fakeenv_VERSION_ARCH.deb, from a `make install PREFIX=/usr` tree
# staged in build/deb/root (scripts/mkdeb: no root, no fakeroot needed).
DEB_STAGE = $(BUILD)/deb/root

deb: $(SHIM) $(DAEMON) $(LAUNCHER)
	rm -rf $(BUILD)/deb
	$(MAKE) --no-print-directory BUILD=$(BUILD) install \
		DESTDIR=$(abspath $(DEB_STAGE)) PREFIX=/usr
	scripts/mkdeb $(DEB_STAGE) $(VERSION) $(BUILD)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/fakeenv \
		$(DESTDIR)$(PREFIX)/libexec/fakeenv/fakeenvd \
		$(DESTDIR)$(PREFIX)/lib/fakeenv/libfakeenv.so \
		$(DESTDIR)$(PREFIX)/share/man/man1/fakeenv.1

clean:
	rm -rf $(BUILD) build-asan build-musl $(FUZZ_BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
