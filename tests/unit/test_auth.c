/*
 * Protects authentication (doc/protocol.md, "Authentication"): the
 * secret's file is made fresh with mode 0600 and never written through
 * a link, is read back only when it is ours and nobody else's; both
 * hellos carry the secret through the agent's encoder and the
 * coordinator's decoders, a hello without one or with too long a one is
 * told apart, and the coordinator's check refuses a wrong or missing
 * secret with words that never hold the secret.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "agent.h"
#include "coord.h"
#include "paths.h"
#include "proto.h"
#include "secret.h"
#include "unit.h"
#include "wire.h"

#define S1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define S2 "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char dir[32];
static char file[96];

static int
auth_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pmon-auth.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(file, sizeof(file), "%s/pmon-secret.%u", dir,
	    (unsigned)getuid());
	return 0;
}

static int
auth_teardown(void)
{
	char other[128];

	snprintf(other, sizeof(other), "%s/target", dir);
	unlink(file);
	unlink(other);
	rmdir(dir);
	return 0;
}

/* Writes text to path with mode. */
static void
put_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_FATAL(write(fd, text, strlen(text)) ==
	    (ssize_t)strlen(text));
	CU_ASSERT_FATAL(fchmod(fd, mode) == 0);
	close(fd);
}

/* --- the secret and its file ------------------------------------------- */

static void
test_make(void)
{
	char a[PMON_SECRET_LEN + 1], b[PMON_SECRET_LEN + 1];

	CU_ASSERT_EQUAL_FATAL(pmon_secret_make(a), 0);
	CU_ASSERT_EQUAL_FATAL(pmon_secret_make(b), 0);
	CU_ASSERT_EQUAL(strlen(a), PMON_SECRET_LEN);
	CU_ASSERT(pmon_secret_valid(a));
	CU_ASSERT(pmon_secret_valid(b));
	CU_ASSERT(strcmp(a, b) != 0);
}

static void
test_valid_equal(void)
{
	char s[PMON_SECRET_LEN + 2];

	CU_ASSERT(pmon_secret_valid(S1));
	CU_ASSERT(!pmon_secret_valid(""));
	CU_ASSERT(!pmon_secret_valid("0123"));
	snprintf(s, sizeof(s), "%s", S1);
	s[10] = 'A';				/* upper case */
	CU_ASSERT(!pmon_secret_valid(s));
	snprintf(s, sizeof(s), "%s0", S1);	/* 65 digits */
	CU_ASSERT(!pmon_secret_valid(s));

	CU_ASSERT(pmon_secret_equal(S1, S1));
	CU_ASSERT(!pmon_secret_equal(S1, S2));
	CU_ASSERT(!pmon_secret_equal(S1, ""));
	CU_ASSERT(!pmon_secret_equal(S1, "0123456789abcdef"));
	CU_ASSERT(!pmon_secret_equal(S1, s));
	snprintf(s, sizeof(s), "%s", S1);
	s[PMON_SECRET_LEN - 1] = 'e';		/* the last digit differs */
	CU_ASSERT(!pmon_secret_equal(S1, s));
	/* A coordinator without a secret accepts nothing. */
	CU_ASSERT(!pmon_secret_equal("", ""));
	CU_ASSERT(!pmon_secret_equal("", S1));
}

static void
test_write_read(void)
{
	char got[PMON_SECRET_LEN + 1], text[PMON_SECRET_LEN + 2];
	const char *why = NULL;
	struct stat st;
	int fd;

	/* A stale file (even a read-only one) is replaced. */
	put_file(file, "stale\n", 0400);
	CU_ASSERT_EQUAL_FATAL(pmon_secret_write(file, S1), 0);
	CU_ASSERT_EQUAL_FATAL(lstat(file, &st), 0);
	CU_ASSERT(S_ISREG(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL(st.st_uid, getuid());
	CU_ASSERT_EQUAL(st.st_size, PMON_SECRET_LEN + 1);
	fd = open(file, O_RDONLY);
	CU_ASSERT_FATAL(fd != -1);
	CU_ASSERT_EQUAL(read(fd, text, sizeof(text)), PMON_SECRET_LEN + 1);
	close(fd);
	CU_ASSERT(memcmp(text, S1 "\n", PMON_SECRET_LEN + 1) == 0);

	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), 0);
	CU_ASSERT_STRING_EQUAL(got, S1);
	/* Without the newline too. */
	put_file(file, S2, 0600);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), 0);
	CU_ASSERT_STRING_EQUAL(got, S2);
	/* Not a secret. */
	CU_ASSERT_EQUAL(pmon_secret_write(file, "short"), -1);
	CU_ASSERT_EQUAL(errno, EINVAL);
}

static void
test_read_rejects(void)
{
	char got[PMON_SECRET_LEN + 1], target[128];
	const char *why = NULL;

	unlink(file);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	CU_ASSERT_STRING_EQUAL(why, strerror(ENOENT));
	CU_ASSERT_EQUAL(got[0], '\0');

	put_file(file, S1 "\n", 0640);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "mode 0600"));
	put_file(file, S1 "\n", 0604);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);

	put_file(file, S1 "\n\n", 0600);		/* one line only */
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "does not hold a secret"));
	put_file(file, S1 "0", 0600);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	put_file(file, "0123456789abcdef\n", 0600);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	put_file(file, "", 0600);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);

	/* A symbolic link is neither read nor written through. */
	snprintf(target, sizeof(target), "%s/target", dir);
	put_file(target, S1 "\n", 0600);
	unlink(file);
	CU_ASSERT_EQUAL_FATAL(symlink(target, file), 0);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "symbolic link"));
	CU_ASSERT_EQUAL(pmon_secret_write(file, S2), 0);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), 0);
	CU_ASSERT_STRING_EQUAL(got, S2);
	CU_ASSERT_EQUAL(pmon_secret_read(target, got, &why), 0);
	CU_ASSERT_STRING_EQUAL(got, S1);	/* untouched */

	/* A directory is not a secret. */
	unlink(file);
	CU_ASSERT_EQUAL_FATAL(mkdir(file, 0700), 0);
	CU_ASSERT_EQUAL(pmon_secret_read(file, got, &why), -1);
	rmdir(file);
}

static void
test_secret_path(void)
{
	char buf[128], want[128], sock[128];

	CU_ASSERT_EQUAL(pmon_secret_path_for(buf, sizeof(buf),
	    "/run/vm/pmon-coord.1234"), 0);
	CU_ASSERT_STRING_EQUAL(buf, "/run/vm/pmon-secret.1234");
	CU_ASSERT_EQUAL(pmon_secret_path_for(buf, sizeof(buf), "/x/sock"), 0);
	snprintf(want, sizeof(want), "/x/pmon-secret.%u", (unsigned)getuid());
	CU_ASSERT_STRING_EQUAL(buf, want);
	CU_ASSERT_EQUAL(pmon_secret_path_for(buf, sizeof(buf), "sock"), 0);
	CU_ASSERT_STRING_EQUAL(buf, want + 3);
	CU_ASSERT_EQUAL(pmon_secret_path_for(buf, 10, "/run/vm/pmon-coord.1"),
	    -1);
	CU_ASSERT_EQUAL(errno, ENAMETOOLONG);

	/* The coordinator's own name for it is the same file. */
	setenv("PVM_TMP", "/run/vm", 1);
	CU_ASSERT_EQUAL(pmon_runtime_path(want, sizeof(want),
	    PMON_FILE_SECRET), 0);
	CU_ASSERT_EQUAL(pmon_runtime_path(sock, sizeof(sock),
	    PMON_SOCK_COORD), 0);
	CU_ASSERT_EQUAL(pmon_secret_path_for(buf, sizeof(buf), sock), 0);
	CU_ASSERT_STRING_EQUAL(buf, want);
	unsetenv("PVM_TMP");
}

/* --- the hellos ---------------------------------------------------------- */

/* The payload of the one frame in eb, into buf; returns its length. */
static size_t
only_frame(struct evbuffer *eb, uint8_t type, uint8_t *buf, size_t size)
{
	uint8_t hdr[FRAME_HDR_SIZE];
	struct frame_hdr h;
	const char *why;

	CU_ASSERT_FATAL(evbuffer_remove(eb, hdr, sizeof(hdr)) ==
	    FRAME_HDR_SIZE);
	CU_ASSERT_FATAL(frame_hdr_decode(hdr, &h, &why) == 0);
	CU_ASSERT_FATAL(h.type == type && h.len <= size);
	CU_ASSERT_FATAL(evbuffer_remove(eb, buf, h.len) == (int)h.len);
	CU_ASSERT_EQUAL(evbuffer_get_length(eb), 0);
	return h.len;
}

static void
test_agent_hello(void)
{
	struct evbuffer *eb = evbuffer_new();
	struct agent_hello h;
	uint8_t buf[1024];
	const char *why = NULL;
	size_t n;

	agent_frame_agent_hello(eb, 0x40000, 99, "node1", "LINUX64", S1);
	n = only_frame(eb, MSG_AGENT_HELLO, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, 8 + 2 + 5 + 2 + 7 + 2 + PMON_SECRET_LEN);
	CU_ASSERT_EQUAL(agent_hello_decode(buf, n, &h, &why), 0);
	CU_ASSERT_EQUAL(h.host_tid, 0x40000);
	CU_ASSERT_EQUAL(h.pid, 99);
	CU_ASSERT_STRING_EQUAL(h.host, "node1");
	CU_ASSERT_STRING_EQUAL(h.arch, "LINUX64");
	CU_ASSERT_STRING_EQUAL(h.secret, S1);

	/* No secret: an empty string, which parses; the check refuses it. */
	agent_frame_agent_hello(eb, 0x40000, 99, "node1", "LINUX64", "");
	n = only_frame(eb, MSG_AGENT_HELLO, buf, sizeof(buf));
	CU_ASSERT_EQUAL(n, 8 + 2 + 5 + 2 + 7 + 2);
	CU_ASSERT_EQUAL(n, proto_msg(MSG_AGENT_HELLO)->min_len + 12);
	CU_ASSERT_EQUAL(agent_hello_decode(buf, n, &h, &why), 0);
	CU_ASSERT_STRING_EQUAL(h.secret, "");

	/* The version-2 layout, without the field, is truncated. */
	CU_ASSERT_EQUAL(agent_hello_decode(buf, n - 2, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "truncated"));
	/* Trailing bytes after the secret. */
	buf[n] = 'x';
	CU_ASSERT_EQUAL(agent_hello_decode(buf, n + 1, &h, &why), -1);
	evbuffer_free(eb);
}

/* A TOOL_HELLO payload as libpmon builds it; a secret of slen bytes. */
static size_t
tool_hello(uint8_t *buf, uint32_t flags, const char *name, const char *sec,
    size_t slen)
{
	uint8_t *p;

	wire_put32(buf, flags);
	p = wire_putstr(buf + 4, name);
	wire_put16(p, (uint16_t)slen);
	memcpy(p + 2, sec, slen);
	return (size_t)(p + 2 + slen - buf);
}

static void
test_tool_hello(void)
{
	char long_secret[PMON_SECRET_LEN + 2];
	struct tool_hello h;
	uint8_t buf[1024];
	const char *why = NULL;
	size_t n;

	n = tool_hello(buf, TOOL_SUBSCRIBE, "trace", S1, PMON_SECRET_LEN);
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), 0);
	CU_ASSERT_EQUAL(h.flags, TOOL_SUBSCRIBE);
	CU_ASSERT_STRING_EQUAL(h.name, "trace");
	CU_ASSERT_STRING_EQUAL(h.secret, S1);

	/* The smallest hello: no name, no secret. */
	n = tool_hello(buf, 0, "", "", 0);
	CU_ASSERT_EQUAL(n, proto_msg(MSG_TOOL_HELLO)->min_len);
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), 0);
	CU_ASSERT_STRING_EQUAL(h.secret, "");
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n - 2, &h, &why), -1);

	/* Too long a secret is refused as such, before it is copied. */
	snprintf(long_secret, sizeof(long_secret), "%s0", S1);
	n = tool_hello(buf, 0, "trace", long_secret, PMON_SECRET_LEN + 1);
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "secret longer than 64"));
	CU_ASSERT_STRING_EQUAL(h.secret, "");
	n = tool_hello(buf, 0, "trace", "", 0);
	wire_put16(buf + n - 2, 900);			/* and runs past */
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "secret longer"));
	/* A NUL inside the secret. */
	n = tool_hello(buf, 0, "trace", S1, PMON_SECRET_LEN);
	buf[n - 5] = '\0';
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), -1);
	/* A shorter secret parses: whether it is right is the check's. */
	n = tool_hello(buf, 0, "trace", "abc", 3);
	CU_ASSERT_EQUAL(tool_hello_decode(buf, n, &h, &why), 0);
	CU_ASSERT_STRING_EQUAL(h.secret, "abc");
}

static void
test_check(void)
{
	static struct coord c;
	char msg[256];

	snprintf(c.secret, sizeof(c.secret), "%s", S1);
	snprintf(c.secret_path, sizeof(c.secret_path), "/vm/pmon-secret.7");
	CU_ASSERT_EQUAL(coord_secret_check(&c, S1, msg, sizeof(msg)), 0);

	CU_ASSERT_EQUAL(coord_secret_check(&c, S2, msg, sizeof(msg)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "wrong secret"));
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "/vm/pmon-secret.7"));
	CU_ASSERT_PTR_NULL(strstr(msg, S1));
	CU_ASSERT_PTR_NULL(strstr(msg, S2));
	CU_ASSERT_EQUAL(coord_secret_check(&c, "abc", msg, sizeof(msg)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "wrong secret"));

	CU_ASSERT_EQUAL(coord_secret_check(&c, "", msg, sizeof(msg)), -1);
	CU_ASSERT_STRING_EQUAL(msg, "no secret: read /vm/pmon-secret.7");

	/* Without a secret of its own, nothing is right. */
	c.secret[0] = '\0';
	CU_ASSERT_EQUAL(coord_secret_check(&c, S1, msg, sizeof(msg)), -1);
}

/* Frames of version 2, and hellos of its sizes, are refused up front. */
static void
test_header(void)
{
	struct frame_hdr h;
	const char *why = NULL;
	uint8_t b[FRAME_HDR_SIZE];

	CU_ASSERT_EQUAL(PROTO_VERSION, 4);
	frame_hdr_encode(b, MSG_TOOL_HELLO, 8);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), 0);
	b[1] = 2;
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	b[1] = 3;		/* no ACK yet: its agents would not re-send */
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "version"));
	frame_hdr_encode(b, MSG_TOOL_HELLO, 6);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	frame_hdr_encode(b, MSG_AGENT_HELLO, 12);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), -1);
	frame_hdr_encode(b, MSG_AGENT_HELLO, 14);
	CU_ASSERT_EQUAL(frame_hdr_decode(b, &h, &why), 0);
}

static CU_TestInfo secret_tests[] = {
	{ "make", test_make },
	{ "valid and equal", test_valid_equal },
	{ "write and read back", test_write_read },
	{ "read refuses", test_read_rejects },
	{ "path next to the socket", test_secret_path },
	CU_TEST_INFO_NULL
};

static CU_TestInfo hello_tests[] = {
	{ "agent hello round trip", test_agent_hello },
	{ "tool hello", test_tool_hello },
	{ "coordinator's check", test_check },
	{ "header sizes and version", test_header },
	CU_TEST_INFO_NULL
};

static CU_SuiteInfo auth_suites[] = {
	{ "secret", auth_setup, auth_teardown, NULL, NULL, secret_tests },
	{ "hello secret", NULL, NULL, NULL, NULL, hello_tests },
	CU_SUITE_INFO_NULL
};

UNIT_SUITES(auth_suites)
