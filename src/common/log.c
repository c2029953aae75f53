/* log.c - level filtering and formatting for the logging facility. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bip_log_threshold = BIP_LOG_WARN;
static int log_node = -1;

static const char *const level_names[] = {
	[BIP_LOG_ERROR] = "error", [BIP_LOG_WARN] = "warn",
	[BIP_LOG_INFO] = "info",   [BIP_LOG_DEBUG] = "debug",
	[BIP_LOG_TRACE] = "trace",
};

int bip_log_parse(const char *name)
{
	for (int i = 0; i <= BIP_LOG_TRACE; i++)
		if (strcmp(name, level_names[i]) == 0)
			return i;
	return -1;
}

int bip_log_init(void)
{
	const char *v = getenv("BIP_LOG");
	int level;

	if (!v || !*v)
		return 0;
	level = bip_log_parse(v);
	if (level < 0)
		return -1;
	bip_log_threshold = level;
	return 0;
}

void bip_log_set_node(int node)
{
	log_node = node;
}

void bip_log_emit(int level, const char *fmt, ...)
{
	char line[1024];
	int n;
	va_list ap;

	if (log_node >= 0)
		n = snprintf(line, sizeof(line), "bip[%d:%d] %s: ", log_node,
			     (int)getpid(), level_names[level]);
	else
		n = snprintf(line, sizeof(line), "bip[%d] %s: ", (int)getpid(),
			     level_names[level]);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line so lines of several processes do not interleave. */
	(void)!write(STDERR_FILENO, line, (size_t)n);
}
