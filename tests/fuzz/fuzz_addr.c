/*
 * Fuzzes addr_split, which reads the addresses of pmon's command lines
 * (-l, -c) and of the DIAL message any task of the virtual machine can
 * send an agent (node-agent/agent_pvm.c).  Whatever the bytes, the
 * split either fails or gives back the text it was made of: the host,
 * in brackets when the text had them, then the port after a colon when
 * one was found; each part non-empty and within its buffer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char host[64], port[8], *s, back[96];

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';		/* both sources are C strings */
	port[0] = '\0';
	if (addr_split(s, host, sizeof(host), port, sizeof(port)) == 0) {
		if (host[0] == '\0' || strlen(host) >= sizeof(host) ||
		    strlen(port) >= sizeof(port))
			__builtin_trap();
		snprintf(back, sizeof(back), s[0] == '[' ? "[%s]%s%s" :
		    "%s%s%s", host, port[0] != '\0' ? ":" : "", port);
		if (strcmp(back, s) != 0)
			__builtin_trap();
	}
	free(s);
	return 0;
}
