/*
 * JSON strings (jsonstr.h).  Valid UTF-8 is written as it is, so names
 * read as their owners wrote them.  A byte that is no part of valid
 * UTF-8 (a name in Latin-1, say) is written as the private-use code
 * point U+EF00 plus the byte (U+EF80 to U+EFFF, as OPTU-8 does): the
 * string stays valid JSON and the byte is not lost, and
 * json_str_bytes gives it back.  A name holding those code points
 * itself reads back as the bytes; no program name does.
 */
#include <stdint.h>
#include <stdio.h>

#include "jsonstr.h"

#define RAW_BASE	0xef00	/* a raw byte B is U+EF00 + B */

/* The length of the valid UTF-8 sequence at p, or 0. */
static size_t
utf8_len(const unsigned char *p)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* up to U+10FFFF */
	} else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

void
json_str_write(FILE *fp, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");
	size_t n;

	fputc('"', fp);
	while (*p != '\0') {
		switch (*p) {
		case '"': fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\b': fputs("\\b", fp); break;
		case '\f': fputs("\\f", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(fp, "\\u%04x", *p);
			else if ((n = utf8_len(p)) == 0)
				fprintf(fp, "\\u%04x", RAW_BASE + *p);
			else {
				fwrite(p, 1, n, fp);
				p += n;
				continue;
			}
		}
		p++;
	}
	fputc('"', fp);
}

/*
 * The bytes a string json_str_write wrote stands for, from its UTF-8 as
 * jansson decodes it: the code points U+EF80 to U+EFFF are raw bytes
 * again, the rest is copied.  -1 when the bytes and their NUL do not
 * fit in size.
 */
int
json_str_bytes(const char *utf8, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)utf8;
	size_t n = 0, len;
	unsigned cp;

	while (*p != '\0') {
		len = utf8_len(p);
		if (len == 3 && p[0] == 0xee && (p[1] & 0xfc) == 0xbc) {
			cp = (unsigned)(p[0] & 0x0f) << 12 |
			    (unsigned)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
			if (cp >= RAW_BASE + 0x80 && cp <= RAW_BASE + 0xff) {
				if (n + 1 >= size)
					return -1;
				out[n++] = (char)(cp - RAW_BASE);
				p += 3;
				continue;
			}
		}
		if (len == 0)
			len = 1;	/* not from jansson: as it is */
		if (n + len >= size)
			return -1;
		while (len-- > 0)
			out[n++] = (char)*p++;
	}
	out[n] = '\0';
	return 0;
}
