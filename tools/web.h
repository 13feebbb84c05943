/*
 * pmon web: the parts of the web view that the command, its store of
 * kept events and the fuzz targets share.
 */
#ifndef PMON_WEB_H
#define PMON_WEB_H

#include <stddef.h>

/* The page's key: 32 random bytes in hex, in every URI it loads. */
#define WEB_KEY_LEN		64

/* The longest request text the page may POST to /request. */
#define WEB_REQUEST_MAX		1024

/* What a URI's query string asks for (doc/web.md). */
struct web_query {
	char	 key[WEB_KEY_LEN + 1];	/* "k": the page's key */
	int	 once;				/* "once=1": no live updates */
};

/* web_query.c */
int	web_key_make(char *);
int	web_key_equal(const char *, const char *);
int	web_query_parse(const char *, struct web_query *, const char **);
int	web_request_text(const char *, size_t, char *, size_t,
	    const char **);

/* One embedded asset (the Makefile generates the table from tools/web/). */
struct web_asset {
	const char		*name;		/* "web.js" */
	const unsigned char	*data;
	size_t			 len;
};
extern const struct web_asset web_assets[];
extern const size_t web_nassets;

#endif
