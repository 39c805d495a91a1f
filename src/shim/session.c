/*
 * Whether this process is in a session, and the environment as it was
 * when the library loaded.  The constructor only copies FAKEENV_* out of
 * the environment: no connect, no dlsym.  Wrappers called before it (from
 * another library's constructor) initialise the same way on first use.
 */
#include "shim.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "common/secarm.h"
#include "common/util.h"
#include "fakeenv/env.h"

_Thread_local int fe_depth;

enum {
	ST_UNKNOWN,
	ST_BUSY,
	ST_ON = FE_SESSION_ON,
	ST_OFF,
	ST_DISABLED = FE_SESSION_DISABLED,
};
FE_LOAD_DATA _Atomic int fe_session_state = ST_UNKNOWN;
/* FAKEENV_UNKNOWN_IS_REAL=1; set before ST_ON */
FE_LOAD_DATA static bool unknown_real;
FE_LOAD_DATA static bool sec_filtered; /* under the session's seccomp filter */

/* "NAME=value\0NAME=value\0\0": the FAKEENV_* entries and LD_PRELOAD at
 * load time, whatever their size: env_small when they fit (a session's
 * own are some 300 bytes; 1 KiB keeps all of load's writes in one page),
 * else a mapping of their size, kept for the life of the process image.
 * A copy, not pointers into environ: the program may clear or rewrite
 * its environment (clearenv, setenv, environ = ...) and free what the
 * entries pointed to. */
FE_LOAD_DATA static char env_small[1024];
static char *env_copy = env_small;
/* Where the first ENV_AT entries of env_copy start, so that a look-up
 * compares names and skips no values (fe_env_initial() runs a dozen
 * times in every exec, with plain loops: fe_slen() in shim.h); env_more
 * when there are more entries than that. */
#define ENV_AT 64
FE_LOAD_DATA static uint32_t env_at[ENV_AT];
FE_LOAD_DATA static int env_n;
FE_LOAD_DATA static bool env_more;

extern char **environ;

/* Whether e starts with prefix. */
static bool starts(const char *e, const char *prefix)
{
	while (*prefix && *e == *prefix) {
		e++;
		prefix++;
	}
	return !*prefix;
}

static bool kept(const char *e, bool preload)
{
	return starts(e, preload ? "LD_PRELOAD=" : "FAKEENV_");
}

/* Copy what the shim reads of the environment; called once, before any
 * other reader of env_copy.  Nothing is dropped unless memory for the copy
 * cannot be had, and then it is said: LD_PRELOAD goes first (children the
 * shim repairs get the library alone), the session's own variables
 * last. */
FE_HOT static void capture(void)
{
	int saved = errno;
	size_t need = 1, size = sizeof(env_small), used = 0, lost = 0;
	char *buf = env_small;

	for (char **e = environ; e && *e; e++)
		if (kept(*e, false) || kept(*e, true))
			need += fe_slen(*e) + 1;
	if (need > size) {
		void *p = mmap(NULL, need, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			buf = p;
			size = need;
		}
	}
	/* Two passes, the session's variables first.  Sized again as it
	 * goes: environ may have changed since (another library's
	 * constructor, on another thread). */
	for (int pass = 0; pass < 2; pass++) {
		for (char **e = environ; e && *e; e++) {
			size_t n;

			if (!kept(*e, pass == 1))
				continue;
			n = fe_slen(*e) + 1;
			if (used + n + 1 > size) {
				lost += n;
				continue;
			}
			fe_scopy(buf + used, *e);
			if (env_n < ENV_AT)
				env_at[env_n++] = (uint32_t)used;
			else
				env_more = true;
			used += n;
		}
	}
	buf[used] = '\0';
	env_copy = buf;
	if (lost)
		fe_log("cannot keep a copy of %lu bytes of the environment "
		       "(FAKEENV_* and LD_PRELOAD): %s; %lu bytes of it are "
		       "not restored in children that drop them",
		       (unsigned long)need, fe_strerror(ENOMEM),
		       (unsigned long)lost);
	errno = saved;
}

FE_HOT int fe_session_init(void)
{
	int s = atomic_load_explicit(&fe_session_state, memory_order_acquire);
	int expect = ST_UNKNOWN;

	if (s == ST_ON || s == ST_OFF || s == ST_DISABLED)
		return s;
	if (atomic_compare_exchange_strong(&fe_session_state, &expect, ST_BUSY)) {
		const char *sock;

		capture();
		sock = fe_env_initial(FE_ENV_SOCKET);
		s = sock && sock[0] == '/' ? ST_ON : ST_OFF;
		sock = fe_env_initial(FE_ENV_UNKNOWN_REAL);
		unknown_real = sock && sock[0] == '1';
		/* Disabled is a state of its own, not a flag beside ON: the
		 * wrappers' one load of the state says "pass through", and
		 * the exec wrappers still see a session to hand on. */
		sock = fe_env_initial(FE_ENV_DISABLED);
		if (s == ST_ON && sock && sock[0] &&
		    !(sock[0] == '0' && sock[1] == '\0'))
			s = ST_DISABLED;
		/* Under the session's seccomp filter the supervisor answers
		 * every call: answering some here too would fake twice. */
		if (s == ST_ON &&
		    fe_sec_mode_of(fe_env_initial(FE_ENV_SECCOMP)) !=
			    FE_SEC_NEVER &&
		    fe_sec_filtered(fe_syscall)) {
			sec_filtered = true;
			s = ST_DISABLED;
		}
		if (s == ST_ON)
			fe_ignore_load(fe_env_initial(FE_ENV_IGNORE_PATHS));
		if (s == ST_ON || s == ST_DISABLED)
			fe_root_load();
		atomic_store_explicit(&fe_session_state, s, memory_order_release);
		return s;
	}
	/* Another thread is copying; it is a few microseconds of work. */
	while ((s = atomic_load_explicit(&fe_session_state, memory_order_acquire)) ==
	       ST_BUSY)
		;
	return s;
}

FE_HOT const char *fe_env_initial(const char *name)
{
	const char *p, *v;

	for (int i = 0; i < env_n; i++)
		if ((v = fe_var_value(env_copy + env_at[i], name)))
			return v;
	if (!env_more)
		return NULL;
	p = env_copy + env_at[ENV_AT - 1];
	for (p += fe_slen(p) + 1; *p; p += fe_slen(p) + 1)
		if ((v = fe_var_value(p, name)))
			return v;
	return NULL;
}

FE_HOT bool fe_sec_under(void)
{
	fe_session_init();
	return sec_filtered;
}

bool fe_unknown_is_real(void)
{
	return unknown_real;
}

FE_HOT bool fe_in_session(void)
{
	int s;

	if (fe_depth != 0)
		return false;
	s = fe_session_init();
	return s == ST_ON || s == ST_DISABLED;
}

const char *fe_socket_path(void)
{
	const char *s;

	if (fe_session_init() != ST_ON)
		return "";
	s = fe_env_initial(FE_ENV_SOCKET);
	return s ? fe_root_sock(s) : "";
}

/* The one symbol looked up at load, in a session only: the real execve,
 * which the exec wrappers call.  A fork child inherits what its parent
 * looked up; left to the child, every fork + exec paid its own dlsym,
 * about eight page faults on code and data that a fork child does not
 * inherit mapped (bench/RESULTS.md, fork + exec).  The resolver keeps
 * errno and remembers a missing symbol, as on first use. */
__attribute__((constructor)) static void fe_shim_load(void)
{
	int s = fe_session_init();

	if (s == ST_ON || s == ST_DISABLED)
		(void)real_execve();
}
