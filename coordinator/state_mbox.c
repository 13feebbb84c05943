/*
 * The message mailbox of the state model (doc/state.md): what
 * pvm_putinfo stored, by name and index, as the released events tell
 * it.  An entry goes when pvm_delinfo deletes it, when a pvm_recvinfo
 * reads it with PvmMboxReadAndDelete, and when its owner ends, unless
 * it was put persistent.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <pvm3.h>

#include "state_internal.h"
#include "xmalloc.h"

/* Where (name, index) is, or would go. */
static size_t
mbox_at(const struct mbox *m, const char *name, int32_t index, int *found)
{
	size_t lo = 0, hi = m->n, mid;
	int c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(m->v[mid].name, name);
		if (c == 0)
			c = m->v[mid].index < index ? -1 : m->v[mid].index > index;
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
mbox_remove(struct mbox *m, size_t i)
{
	free(m->v[i].name);
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
}

void
mbox_put(struct mbox *m, const char *name, int32_t index, int32_t owner,
    int32_t flags, int32_t bytes, uint64_t put)
{
	struct mbox_entry *e;
	size_t i, ncap;
	int found;
	char *copy;

	copy = xstrdup(name);
	i = mbox_at(m, name, index, &found);
	if (found)
		free(m->v[i].name);
	else {
		if (m->n == m->cap) {
			ncap = m->cap ? 2 * m->cap : 8;
			m->v = xreallocarray(m->v, ncap, sizeof(*m->v));
			m->cap = ncap;
		}
		memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
		m->n++;
	}
	e = &m->v[i];
	e->name = copy;
	e->index = index;
	e->owner = owner;
	e->flags = flags;
	e->bytes = bytes;
	e->put = put;
}

void
mbox_del(struct mbox *m, const char *name, int32_t index)
{
	size_t i;
	int found;

	i = mbox_at(m, name, index, &found);
	if (found)
		mbox_remove(m, i);
}

void
mbox_del_put(struct mbox *m, int32_t owner, uint64_t put)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].owner == owner && m->v[i].put == put) {
			mbox_remove(m, i);
			return;
		}
}

void
mbox_owner_end(struct mbox *m, int32_t owner)
{
	size_t i = 0;

	while (i < m->n)
		if (m->v[i].owner == owner &&
		    !(m->v[i].flags & PvmMboxPersistent))
			mbox_remove(m, i);
		else
			i++;
}

void
mbox_write_json(const struct mbox *m, FILE *fp)
{
	const struct mbox_entry *e;
	size_t i;

	fputs(",\"mailbox\":[", fp);
	for (i = 0; i < m->n; i++) {
		e = &m->v[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", fp);
		json_str_write(fp, e->name);
		fprintf(fp, ",\"index\":%" PRId32 ",\"owner\":%" PRId32
		    ",\"flags\":%" PRId32 ",\"bytes\":%" PRId32 ",\"put\":\"%"
		    PRId32 ":%" PRIu64 "\"}", e->index, e->owner, e->flags,
		    e->bytes, e->owner, e->put);
	}
	fputc(']', fp);
}

void
mbox_free(struct mbox *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}
