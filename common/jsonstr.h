/*
 * JSON strings as the daemons write them (replies, notices, snapshots):
 * one emitter, and its inverse for what jansson reads back.
 */
#ifndef PMON_JSONSTR_H
#define PMON_JSONSTR_H

#include <stddef.h>
#include <stdio.h>

void	json_str_write(FILE *, const char *);
int	json_str_bytes(const char *utf8, char *out, size_t size);

#endif
