/* error.c - error codes, their messages, and filling boar_error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

#define BOAR_STR_(x) #x
#define BOAR_STR(x) BOAR_STR_(x)

const char *boar_version(void)
{
	return BOAR_STR(BOAR_VERSION_MAJOR) "." BOAR_STR(BOAR_VERSION_MINOR) "."
		BOAR_STR(BOAR_VERSION_PATCH);
}

const char *boar_strerror(int code)
{
	switch (code) {
	case BOAR_OK:
		return "success";
#define BOAR_ERRNO_CASE(name, value, msg) \
	case BOAR_E##name:                \
		return msg;
		BOAR_ERRNO_MAP(BOAR_ERRNO_CASE)
#undef BOAR_ERRNO_CASE
	}
	return "unknown error";
}

void boar_error_clear(boar_error *err)
{
	if (!err)
		return;
	err->code = BOAR_OK;
	err->line = 0;
	err->message[0] = '\0';
}

static void set(boar_error *err, int code, uint64_t line, const char *prefix,
		const char *fmt, va_list ap)
{
	if (!err)
		return;
	err->code = code;
	err->line = line;
	int n = snprintf(err->message, sizeof err->message, "%s", prefix);
	if (n < 0 || (size_t)n >= sizeof err->message)
		return;
	vsnprintf(err->message + n, sizeof err->message - n, fmt, ap);
}

int boar_fail(boar_error *err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set(err, code, 0, "", fmt, ap);
	va_end(ap);
	return code;
}

int boar_fail_line(boar_error *err, int code, const char *path, uint64_t line,
		   const char *fmt, ...)
{
	char prefix[300];
	va_list ap;
	if (line)
		snprintf(prefix, sizeof prefix, "%s:%llu: ", path,
			 (unsigned long long)line);
	else
		snprintf(prefix, sizeof prefix, "%s: ", path);
	va_start(ap, fmt);
	set(err, code, line, prefix, fmt, ap);
	va_end(ap);
	return code;
}
