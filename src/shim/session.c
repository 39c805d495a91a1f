/*
 * Whether this process is in a session, and the environment as it was
 * when the library loaded.  The constructor only copies FAKEENV_* out of
 * the environment: no connect, no dlsym.  Wrappers called before it (from
 * another library's constructor) initialise the same way on first use.
 */
#include "shim.h"

#include <stdatomic.h>
#include <string.h>

#include "common/util.h"
#include "fakeenv/env.h"

_Thread_local int fe_depth;

enum { ST_UNKNOWN, ST_BUSY, ST_ON = FE_SESSION_ON, ST_OFF };
_Atomic int fe_session_state = ST_UNKNOWN;
static bool unknown_real; /* FAKEENV_UNKNOWN_IS_REAL=1; set before ST_ON */

/* "NAME=value\0NAME=value\0\0": the FAKEENV_* entries and LD_PRELOAD at
 * load time. */
static char env_copy[8192];

extern char **environ;

static void capture(void)
{
	size_t used = 0;

	for (char **e = environ; e && *e; e++) {
		size_t n;

		if (strncmp(*e, "FAKEENV_", 8) != 0 &&
		    strncmp(*e, "LD_PRELOAD=", 11) != 0)
			continue;
		n = strlen(*e) + 1;
		/* Keep room for the final empty string; an oversized
		 * environment loses its extra entries, not its session. */
		if (used + n + 1 > sizeof(env_copy))
			continue;
		memcpy(env_copy + used, *e, n);
		used += n;
	}
	env_copy[used] = '\0';
}

int fe_session_init(void)
{
	int s = atomic_load_explicit(&fe_session_state, memory_order_acquire);
	int expect = ST_UNKNOWN;

	if (s == ST_ON || s == ST_OFF)
		return s;
	if (atomic_compare_exchange_strong(&fe_session_state, &expect, ST_BUSY)) {
		const char *sock;

		capture();
		sock = fe_env_initial(FE_ENV_SOCKET);
		s = sock && sock[0] == '/' ? ST_ON : ST_OFF;
		sock = fe_env_initial(FE_ENV_UNKNOWN_REAL);
		unknown_real = sock && sock[0] == '1';
		atomic_store_explicit(&fe_session_state, s, memory_order_release);
		return s;
	}
	/* Another thread is copying; it is a few microseconds of work. */
	while ((s = atomic_load_explicit(&fe_session_state, memory_order_acquire)) ==
	       ST_BUSY)
		;
	return s;
}

const char *fe_env_initial(const char *name)
{
	size_t len = strlen(name);

	for (const char *p = env_copy; *p; p += strlen(p) + 1)
		if (strncmp(p, name, len) == 0 && p[len] == '=')
			return p + len + 1;
	return NULL;
}

bool fe_unknown_is_real(void)
{
	return unknown_real;
}

const char *fe_socket_path(void)
{
	const char *s;

	if (fe_session_init() != ST_ON)
		return "";
	s = fe_env_initial(FE_ENV_SOCKET);
	return s ? s : "";
}

__attribute__((constructor)) static void fe_shim_load(void)
{
	fe_session_init();
}
