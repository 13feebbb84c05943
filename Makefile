# pmon: one non-recursive GNU Makefile for the whole tree.
#
#   make            build pmon (the daemons, the command, the libraries,
#                   pmon(1)) into $(BUILD)/
#   make tests      also what the tests and benchmarks run
#   make test       unit tests, property tests, integration tests
#   make bench-merge  the ordering core's throughput (BENCHMARKS.md)
#   make bench-stop   how fast a breakpoint stops the tasks (BENCHMARKS.md)
#   make bench-overhead  small-message round trips (a ping-pong, NPpvm):
#                     plain, under pmon, under PVM's tracer (BENCHMARKS.md)
#   make bench-event  ns per recorded event inside a task (BENCHMARKS.md)
#   make bench-web    pmon web's page with 10^4, 10^5 and 10^6 events
#   make bench-soak   a message storm under pmon with a recorder attached
#   make bench-decode how fast libpmon and pmon trace's writers decode
#   make bench-export pmon export's speed and memory on a storm recording
#   make bench-record pmon record's events per CPU second, format 1 and 2
#   make check      the same suite built with ASan + UBSan
#   make fuzz       libFuzzer targets (clang), a short run of each
#   make demo       monitor master1 on a private virtual machine
#   make screenshots  PNGs of pmon web's views into doc/screenshots
#   make install    PREFIX=/usr/local DESTDIR=

BUILD	?= build
PREFIX	?= /usr/local
CC	?= cc

WARN	= -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	  -Wmissing-prototypes -Wwrite-strings -Werror=implicit-function-declaration
CFLAGS	?= -O2 -g
CFLAGS	+= -std=c11 -D_GNU_SOURCE -fPIC $(WARN)
# Each part sees its own headers and common/; the tools see only the
# headers pmon installs, staged in $(BUILD)/include, as a third party's
# tool does: a crossing fails to compile.  Tests and benchmarks reach
# everything.
PUBLIC_HEADERS	:= client-api/pmon.h common/pmon_calls.h
STAGED_HEADERS	:= $(addprefix $(BUILD)/include/,$(notdir $(PUBLIC_HEADERS)))
INC	= -Icommon -Iclient-api -Icoordinator -Inode-agent
LDLIBS_PVM = -lgpvm3 -lpvm3
# The agent stream and recordings are zlib.
LDLIBS_Z = -lz
# tools/export_otf2.c: Debian's libotf2 (libotf2-trace-dev), when it is
# there; without it, pmon export -f otf2 says what it needs
# (tools/export_otf2_none.c).
ifneq ($(shell otf2-config --version 2>/dev/null),)
OTF2_CFLAGS := $(shell otf2-config --cflags)
OTF2_LIBS := $(shell otf2-config --ldflags --libs)
OTF2_NOT := tools/export_otf2_none.c
else
OTF2_NOT := tools/export_otf2.c
endif

# SAN=1 (make check) builds the daemons, tools and tests with ASan and
# UBSan.  The instrumentation library gets UBSan only: it is preloaded
# into uninstrumented PVM programs, where the ASan runtime cannot come
# first.
ifeq ($(SAN),1)
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=undefined
PRELOAD_SANFLAGS = -fsanitize=undefined -fno-sanitize-recover=undefined
else
SANFLAGS =
PRELOAD_SANFLAGS =
endif

COMMON_SRCS	:= $(wildcard common/*.c)
# The libraries never exit: the daemons' xmalloc stays out of them.
LIB_COMMON_SRCS	:= $(filter-out common/xmalloc.c, $(COMMON_SRCS))
# Tasks never compress: the instrumentation library goes without zlib.
PRELOAD_COMMON_SRCS := $(filter-out common/zstream.c common/recfile.c common/jsonstr.c \
		       common/recpack.c, $(LIB_COMMON_SRCS))
PRELOAD_SRCS	:= $(wildcard node-agent/preload*.c)
AGENT_SRCS	:= $(filter-out $(PRELOAD_SRCS), $(wildcard node-agent/*.c))
COORD_SRCS	:= $(wildcard coordinator/*.c)
LIBPMON_SRCS	:= $(wildcard client-api/*.c)
TOOL_SRCS	:= $(filter-out $(OTF2_NOT),$(wildcard tools/*.c))
UNIT_SRCS	:= $(wildcard tests/unit/*.c)
PROG_SRCS	:= $(wildcard tests/progs/*.c)
TESTTOOL_SRCS	:= $(wildcard tests/tools/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
pic = $(patsubst %.c,$(BUILD)/pic/%.o,$(1))
so = $(patsubst %.c,$(BUILD)/so/%.o,$(1))

COMMON_OBJS	:= $(call obj,$(COMMON_SRCS))
# The order core is linked into the unit tests as well as the daemon.
COORD_LIB_OBJS	:= $(call obj,$(filter-out coordinator/coordd.c,$(COORD_SRCS)))
AGENT_LIB_OBJS	:= $(call obj,$(filter-out node-agent/agentd.c,$(AGENT_SRCS)))

PMON		= $(BUILD)/bin/pmon
AGENTD		= $(BUILD)/bin/pmon-agentd
COORDD		= $(BUILD)/bin/pmon-coordd
PRELOAD		= $(BUILD)/lib/libpmon-pvm.so
LIBPMON		= $(BUILD)/lib/libpmon.a
# The installed library: a soname, and only the pmon_* of pmon.h exported.
LIBPMON_SO	= $(BUILD)/lib/libpmon.so.1
PMON_VERSION	= 1.0.0
# pmon(1) is made from pmon's own help (tools/mkman.sh); the others are
# written in doc/man/.
MAN_PMON	= $(BUILD)/man/pmon.1
MAN_PAGES	:= $(wildcard doc/man/*.[1-8])
UNIT		= $(BUILD)/tests/unit-tests
PROGS		= $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(PROG_SRCS))
TESTTOOLS	= $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TESTTOOL_SRCS))
# The PVM execution simulator and what runs on it.
SIM_OBJS	:= $(call obj,tests/sim/sim.c tests/sim/simtree.c)
PROPTEST	= $(BUILD)/tests/sim-proptest
BENCH_MERGE	= $(BUILD)/bench/bench_merge
BENCH_SCALE	= $(BUILD)/bench/bench_scale
BENCH_STOP	= $(BUILD)/bench/bench_stop
BENCH_EVENT	= $(BUILD)/bench/bench_event
PVMTRACER	= $(BUILD)/bench/pvmtracer
NPTASKS		= $(BUILD)/bench/nptasks.so
SMALLPP		= $(BUILD)/bench/smallpp
BENCH_SIZE	= $(BUILD)/bench/bench_size
BENCH_AGENT	= $(BUILD)/bench/bench_agent
BENCH_DECODE	= $(BUILD)/bench/bench_decode
# pmon trace's line writers, which the unit tests and bench_decode reach.
TRACE_FMT_OBJ	= $(BUILD)/obj/tools/trace_fmt.o
# pmon's tables from the coordinator's JSON, which the state tests reach.
RENDER_OBJ	= $(BUILD)/obj/tools/render.o
EXPORT_FLOOR	= $(BUILD)/bench/export_floor
BENCH_RECORD	= $(BUILD)/bench/bench_record

# The product: what the runtime packages build (no CUnit).
all: $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) $(LIBPMON) $(LIBPMON_SO) $(MAN_PMON)

# What the tests and benchmarks run besides.
tests: all $(UNIT) $(PROGS) $(TESTTOOLS) $(PROPTEST) $(BENCH_STOP) \
	$(BENCH_EVENT) $(PVMTRACER) $(NPTASKS) $(SMALLPP) $(BENCH_SIZE) \
	$(BENCH_AGENT) $(BENCH_MERGE) $(BENCH_SCALE) $(BENCH_DECODE) $(EXPORT_FLOOR) \
	$(BENCH_RECORD)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(SANFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(PRELOAD_SANFLAGS) -fvisibility=hidden -MMD -MP \
	    -c -o $@ $<

# libpmon.so loads into programs built without ASan: UBSan at most, as
# the instrumentation library.
$(BUILD)/so/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(PRELOAD_SANFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/obj/common/%.o $(BUILD)/pic/common/%.o $(BUILD)/so/common/%.o \
$(BUILD)/obj/node-agent/%.o $(BUILD)/pic/node-agent/%.o \
$(BUILD)/obj/coordinator/%.o \
$(BUILD)/obj/client-api/%.o $(BUILD)/so/client-api/%.o: INC = -Icommon
$(BUILD)/obj/tools/%.o: INC = -I$(BUILD)/include

$(BUILD)/include/pmon.h: client-api/pmon.h
$(BUILD)/include/pmon_calls.h: common/pmon_calls.h
$(STAGED_HEADERS):
	@mkdir -p $(dir $@)
	cp $< $@

$(call obj,$(TOOL_SRCS)): | $(STAGED_HEADERS)

$(LIBPMON_SO): $(call so,$(LIBPMON_SRCS) $(LIB_COMMON_SRCS)) client-api/libpmon.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(PRELOAD_SANFLAGS) -Wl,-soname,libpmon.so.1 \
	    -Wl,--version-script=client-api/libpmon.map -Wl,--no-undefined \
	    -o $@ $(filter %.o,$^) $(LDLIBS_Z)

$(MAN_PMON): $(PMON) tools/mkman.sh
	@mkdir -p $(dir $@)
	sh tools/mkman.sh $(PMON) $(PMON_VERSION) >$@.tmp && mv $@.tmp $@

$(PRELOAD): $(call pic,$(PRELOAD_SRCS) $(PRELOAD_COMMON_SRCS))
	@mkdir -p $(dir $@)
	$(CC) -shared $(PRELOAD_SANFLAGS) -o $@ $^ -ldl

$(AGENTD): $(call obj,$(AGENT_SRCS)) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent $(LDLIBS_PVM) $(LDLIBS_Z)

# The state model reads snapshots (coordinator/state_load.c): jansson.
$(COORDD): $(call obj,$(COORD_SRCS)) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) -lm

$(LIBPMON): $(call obj,$(LIBPMON_SRCS)) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The page of pmon web, compiled in (tools/web/embed.sh).
WEB_ASSETS	:= $(sort $(wildcard tools/web/*.html tools/web/*.js tools/web/*.css))
WEB_ASSETS_OBJ	= $(BUILD)/obj/gen/web_assets.o

$(BUILD)/gen/web_assets.c: $(WEB_ASSETS) tools/web/embed.sh
	@mkdir -p $(dir $@)
	sh tools/web/embed.sh $(WEB_ASSETS) >$@.tmp && mv $@.tmp $@

$(WEB_ASSETS_OBJ): $(BUILD)/gen/web_assets.c tools/web.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(BUILD)/include -Itools $(SANFLAGS) -c -o $@ $<

$(BUILD)/obj/tools/export_otf2.o: CFLAGS += $(OTF2_CFLAGS)

$(PMON): $(call obj,$(TOOL_SRCS)) $(WEB_ASSETS_OBJ) $(LIBPMON)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -ljansson -levent $(LDLIBS_PVM) $(LDLIBS_Z) \
	    $(OTF2_LIBS) -lm

$(BUILD)/obj/tests/unit/test_trace_fmt.o: CFLAGS += -Itools
$(BUILD)/obj/tests/unit/test_state.o: CFLAGS += -Itools

$(UNIT): $(call obj,$(UNIT_SRCS)) $(COORD_LIB_OBJS) $(AGENT_LIB_OBJS) $(LIBPMON) \
	    $(TRACE_FMT_OBJ) $(RENDER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -lcunit -levent $(LDLIBS_PVM) $(LDLIBS_Z) \
	    -ljansson -lm

$(PROPTEST): $(call obj,tests/sim/proptest.c) $(SIM_OBJS) $(COORD_LIB_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) -lm

$(BUILD)/obj/bench/%.o: CFLAGS += -Itests/sim

$(BENCH_SCALE): $(call obj,bench/scale_tree.c)

$(BENCH_MERGE) $(BENCH_SCALE): $(BUILD)/bench/%: $(BUILD)/obj/bench/%.o \
	    $(call obj,bench/siminput.c) $(SIM_OBJS) $(COORD_LIB_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) -lm

# The agent's own drain, pack and deflate code, without its daemon.
$(BENCH_SIZE) $(BENCH_AGENT): $(BUILD)/bench/%: $(BUILD)/obj/bench/%.o \
	    $(AGENT_LIB_OBJS) $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent $(LDLIBS_PVM) $(LDLIBS_Z)

# libpmon and pmon trace's writers on a stream made by the coordinator's
# frame encoders.
$(BUILD)/obj/bench/bench_decode.o: CFLAGS += -Itools

$(BENCH_DECODE): $(call obj,bench/bench_decode.c) $(COORD_LIB_OBJS) $(LIBPMON) \
	    $(TRACE_FMT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) -lm

# pmon export's floor: a recording through recfile and libpmon only.
$(EXPORT_FLOOR): $(call obj,bench/export_floor.c) $(LIBPMON)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS_Z)

# The recording writer and reader alone, and behind libpmon.
$(BENCH_RECORD): $(call obj,bench/bench_record.c) $(LIBPMON)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS_Z)

# A libpmon tool with a /proc poller thread.
$(BENCH_STOP): $(call obj,bench/bench_stop.c) $(LIBPMON)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -pthread -o $@ $^ -ljansson -lm $(LDLIBS_Z)

# PVM programs run with the instrumentation library preloaded (or under
# PVM's tracer), so built without sanitizers, like the test programs:
# the ASan runtime must come first in a process, the preload cannot.
$(BENCH_EVENT): bench/bench_event.c common/ring.h common/tsc.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -o $@ $< -ldl $(LDLIBS_PVM)

$(PVMTRACER): bench/pvmtracer.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -o $@ $< $(LDLIBS_PVM)

$(SMALLPP): bench/smallpp.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -o $@ $< $(LDLIBS_PVM)

# Preloaded into NPpvm: its pvm_tasks sees only NPpvm tasks.
$(NPTASKS): bench/nptasks.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -shared -o $@ $< -ldl

# Test programs are ordinary PVM programs, built without pmon.
$(BUILD)/tests/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -o $@ $< $(LDLIBS_PVM)

# Test tools (stream checkers, frame senders) read pmon's output.
$(BUILD)/tests/tools/%: tests/tools/%.c tests/tools/xalloc.h tests/tools/dial.h $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(SANFLAGS) -o $@ $(filter-out %.h,$^) -ljansson $(LDLIBS_Z)

# reqtool is a libpmon client that the request tests drive.
$(BUILD)/tests/tools/reqtool: tests/tools/reqtool.c tests/tools/xalloc.h $(LIBPMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) $(SANFLAGS) -o $@ $(filter-out %.h,$^) -ljansson $(LDLIBS_Z)

# --- tests ---------------------------------------------------------------

# Installs what the tests need first (tools/deps.sh: as root, else says
# what to install), then builds.
test:
	sh tools/deps.sh test
	$(MAKE) tests
	rm -rf $(BUILD)/install
	$(MAKE) install DESTDIR=$(abspath $(BUILD))/install PREFIX=/usr/local
	$(UNIT)
	$(PROPTEST) $(PROPTEST_FLAGS)
	PMON_BUILD=$(abspath $(BUILD)) sh tests/integ/run.sh

# The daemons run under pvmd, which passes them its environment: the
# sanitizer options reach them through the test's pvmd.  Under the
# sanitizers the property test runs 2000 executions (every scenario,
# with and without losses) instead of 7000, and t_soak_rss's storm,
# t_lost_match's rounds and the tasks of t_tree_netns and t_scale_netns
# are halved: the same paths, in the time CI has.
check:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	SOAK_ROUNDS=20000 LOST_MATCH_ROUNDS=2000 TREE_TASKS=32 SCALE_TASKS=160 \
	    $(MAKE) BUILD=build-check SAN=1 PROPTEST_FLAGS="-n 2000" test

FUZZ_SRCS	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS	:= $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRCS))
FUZZ_TIME	?= 20

FUZZ_LINKED	= $(COMMON_SRCS) $(filter-out coordinator/coordd.c,$(COORD_SRCS)) \
		  $(LIBPMON_SRCS) node-agent/agent_environ.c tools/web_query.c \
		  tools/render.c

build-fuzz/%: tests/fuzz/%.c $(FUZZ_LINKED)
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Icommon -Iclient-api -Icoordinator \
	    -Inode-agent -Itools \
	    -fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
	    -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) -lm

# pmon export from a recording: the exporters, with the command's own
# error printers replaced by the target's.
EXPORT_SRCS	:= $(filter-out $(OTF2_NOT),$(wildcard tools/export*.c))

build-fuzz/fuzz_export: tests/fuzz/fuzz_export.c $(FUZZ_LINKED) $(EXPORT_SRCS) \
	    tools/trace_fmt.c
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Icommon -Iclient-api -Icoordinator \
	    -Inode-agent -Itools $(OTF2_CFLAGS) \
	    -fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
	    -levent -ljansson $(LDLIBS_PVM) $(LDLIBS_Z) $(OTF2_LIBS) -lm

fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do \
	    echo "fuzz: $$f for $(FUZZ_TIME)s"; \
	    mkdir -p build-fuzz/corpus/$$(basename $$f); \
	    seeds=tests/fuzz/seeds/$$(basename $$f); [ -d $$seeds ] || seeds=; \
	    $$f -max_total_time=$(FUZZ_TIME) -print_final_stats=0 \
	        build-fuzz/corpus/$$(basename $$f) $$seeds \
	        2>build-fuzz/$$(basename $$f).log || { tail -30 build-fuzz/$$(basename $$f).log; exit 1; }; \
	done

# One core, the simulator's 64-task execution; results go to BENCHMARKS.md.
# BENCH_MERGE_FLAGS: e.g. -G (no groups), -s scale, -T budget seconds.
bench-merge: $(BENCH_MERGE)
	$(BENCH_MERGE) $(BENCH_MERGE_FLAGS)

# The order and the state model against the task count (8 to 4096
# simulated tasks); results go to BENCHMARKS.md ("Scale").
# BENCH_SCALE_FLAGS: e.g. -e events, -r runs, -p "TASKS:HOSTS ...".
bench-scale: $(BENCH_SCALE)
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_scale.sh $(BENCH_SCALE_FLAGS)

# A private virtual machine, pingpong under pmon exec, a breakpoint that
# stops every task at each pong; results go to BENCHMARKS.md.
# BENCH_STOP_FLAGS: e.g. -k workers, -n hits, -I (SCHED_IDLE poller).
bench-stop: $(BENCH_STOP) $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) \
	    $(BUILD)/tests/progs/pingpong
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_stop.sh $(BENCH_STOP_FLAGS)

# Round trips of a small-message ping-pong and NPpvm: plain, under pmon,
# under PVM's own tracer with a trace buffer, interleaved; results go to
# BENCHMARKS.md.  BENCH_OVERHEAD_FLAGS: e.g. -r repetitions, -n rounds,
# -c CPUs, -t (a subscribed tool).
bench-overhead: $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) $(PVMTRACER) $(NPTASKS) \
	    $(SMALLPP)
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_overhead.sh $(BENCH_OVERHEAD_FLAGS)

# ns per recorded event inside an instrumented task, with its agent
# draining; results go to BENCHMARKS.md.
# BENCH_EVENT_FLAGS: e.g. -r runs, -n bursts, -b calls per burst, -v.
bench-event: $(BENCH_EVENT) $(PMON) $(AGENTD) $(COORDD) $(PRELOAD)
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_event.sh $(BENCH_EVENT_FLAGS)

# Bytes per event: a synthetic NAS SP trace through the agent's packer
# and deflate stream, then real runs; results go to BENCHMARKS.md.
# BENCH_SIZE_FLAGS: e.g. -s steps (bench_size's).
bench-size: $(BENCH_SIZE) $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) \
	    $(BUILD)/tests/progs/pingpong
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_size.sh $(BENCH_SIZE_FLAGS)

# Events per CPU second libpmon decodes (no callback, a callback that
# reads every field) and pmon trace writes (--json, text), from a
# generated message storm or a recording; results go to BENCHMARKS.md.
# BENCH_DECODE_FLAGS: e.g. -i run.pmr, -n events, -r runs.
bench-decode: $(BENCH_DECODE)
	$(BENCH_DECODE) $(BENCH_DECODE_FLAGS)

# Records per second one agent drains, packs and deflates on one core.
# BENCH_AGENT_FLAGS: e.g. -t seconds -p producers.
bench-agent: $(BENCH_AGENT)
	$(BENCH_AGENT) $(BENCH_AGENT_FLAGS)

# The recording writer and reader alone, then pmon record end to end on
# a replayed storm recording (made first unless given), formats 1 and 2;
# results go to BENCHMARKS.md.  BENCH_RECORD_FLAGS: e.g. -i run.pmr,
# -r runs, -R storm rounds.
bench-record: $(BENCH_RECORD) $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) \
	    $(BUILD)/tests/progs/storm
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_record.sh $(BENCH_RECORD_FLAGS)

# PNGs of each view of pmon web for the README (needs chromium).
screenshots: tests
	PMON_BUILD=$(abspath $(BUILD)) bash tools/web/screenshots.sh doc/screenshots

# pmon export of a storm recording (4 M events, made first), every
# format, CPU time and peak RSS; results go to BENCHMARKS.md.
# BENCH_EXPORT_FLAGS: e.g. -K DIR (keep the recording), -n rounds,
# -r runs, -B OTHER_BUILD (the same exports of another build, A B A B).
bench-export: $(PMON) $(AGENTD) $(COORDD) $(PRELOAD) $(EXPORT_FLOOR) \
	    $(BUILD)/tests/progs/storm
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_export.sh $(BENCH_EXPORT_FLAGS)

# pmon web's page with 10^4 and 10^6 events (needs chromium and python3);
# results go to BENCHMARKS.md.  BENCH_WEB_FLAGS: e.g. -n runs.
bench-web: tests
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_web.sh $(BENCH_WEB_FLAGS)

# A message storm plain and under pmon with pmon record attached,
# interleaved: what is lost, the slowdown, the coordinator's CPU and
# memory, the tools' speed; results go to BENCHMARKS.md.
# BENCH_SOAK_FLAGS: e.g. -n tasks -r rounds -k runs [-- pmon start args].
bench-soak: tests
	PMON_BUILD=$(abspath $(BUILD)) bash bench/bench_soak.sh $(BENCH_SOAK_FLAGS)

# The demo installs missing Debian packages before it builds.
demo:
	MAKE="$(MAKE)" BUILD=$(BUILD) sh tools/demo.sh

# The daemons, the pmon command, the instrumentation library, and what
# a third party's tool builds against: libpmon.so (not the static
# libpmon.a of the tree's own tools, which holds the common code too),
# pmon.h, pmon.pc; the man pages and the gdb extension.
MANDIR	= $(DESTDIR)$(PREFIX)/share/man
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/pmon/gdb \
	    $(MANDIR)/man1 $(MANDIR)/man3 $(MANDIR)/man7 $(MANDIR)/man8
	install -m 755 $(PMON) $(AGENTD) $(COORDD) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(LIBPMON_SO) $(DESTDIR)$(PREFIX)/lib
	ln -sf libpmon.so.1 $(DESTDIR)$(PREFIX)/lib/libpmon.so
	install -m 644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(PMON_VERSION)|' \
	    client-api/pmon.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/pmon.pc
	install -m 644 tools/gdb/pmon.py $(DESTDIR)$(PREFIX)/share/pmon/gdb
	for m in $(MAN_PMON) $(MAN_PAGES); do \
	    s=$${m##*.}; install -m 644 $$m $(MANDIR)/man$$s || exit 1; \
	done

clean:
	rm -rf build build-check build-fuzz

.PHONY: bench-scale all tests test check fuzz demo install clean bench-merge bench-stop \
	bench-overhead bench-event bench-size bench-agent bench-web bench-soak \
	bench-decode bench-export bench-record screenshots

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
