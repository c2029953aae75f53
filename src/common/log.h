/*
 * log.h - the one logging facility of libbip and the NIC program.
 *
 * Messages at or above the level named by the environment variable BIP_LOG
 * (error, warn, info, debug, trace; default warn) go to stderr, prefixed with
 * the node number once it is known. A function that detects an error logs it
 * once; its callers only propagate the code.
 */
#ifndef BIP_COMMON_LOG_H
#define BIP_COMMON_LOG_H

enum bip_log_level {
	BIP_LOG_ERROR,
	BIP_LOG_WARN,
	BIP_LOG_INFO,
	BIP_LOG_DEBUG,
	BIP_LOG_TRACE,
};

extern int bip_log_threshold;

/* Parse a level name; returns the level or -1. */
int bip_log_parse(const char *name);
/* Set the threshold from BIP_LOG; returns -1 (and leaves warn) if invalid. */
int bip_log_init(void);
/* Set the node number shown in the prefix (-1: unknown). */
void bip_log_set_node(int node);

void bip_log_emit(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define bip_log(level, ...)                                                    \
	do {                                                                   \
		if ((level) <= bip_log_threshold)                              \
			bip_log_emit((level), __VA_ARGS__);                    \
	} while (0)

#define bip_err(...) bip_log(BIP_LOG_ERROR, __VA_ARGS__)
#define bip_warn(...) bip_log(BIP_LOG_WARN, __VA_ARGS__)
#define bip_info(...) bip_log(BIP_LOG_INFO, __VA_ARGS__)
#define bip_dbg(...) bip_log(BIP_LOG_DEBUG, __VA_ARGS__)
#define bip_trace(...) bip_log(BIP_LOG_TRACE, __VA_ARGS__)

#endif
