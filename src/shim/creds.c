/*
 * Fake credentials.  The process's fake ids start as root (or as the
 * FAKEENV_UIDS/GIDS/GROUPS it was exec'd with), change only through the
 * set*id wrappers under the kernel's rules applied to the fake ids, and
 * are written back to the environment so that exec'd children inherit
 * them.  Readers take no lock: each id is an atomic; writers serialise on
 * a mutex.  Outside a session every call goes to libc.
 */
#include "shim.h"

#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "fakeenv/seccomp.h"

enum { R, E, S, FS };

static _Atomic uint32_t uids[4];
static _Atomic uint32_t gids[4];
static _Atomic uint32_t groups[FE_GROUPS_MAX];
static _Atomic int ngroups = 1;
/* Read by every exec wrapper, in fork children: where the loader's
 * writes have put a page already (FE_LOAD_DATA); in .bss it was a page
 * fault in every fork + exec. */
FE_LOAD_DATA static _Atomic int loaded;
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;

#define NOCHANGE ((uint32_t)-1)

_Static_assert(FE_CRED_BUF >= FE_GROUPS_MAX * 11 + 1,
	       "FE_CRED_BUF holds every fake group");

/* "a:b:c:d" into v[4]; a malformed value leaves the defaults (root). */
static void parse_ids(const char *s, _Atomic uint32_t *v)
{
	uint32_t tmp[4];

	if (!fe_parse_ids(s, tmp))
		return;
	for (int i = 0; i < 4; i++)
		atomic_store(&v[i], tmp[i]);
}

static void parse_groups(const char *s)
{
	uint32_t tmp[FE_GROUPS_MAX];
	int n = fe_parse_groups(s, tmp, FE_GROUPS_MAX);

	if (n < 0)
		return;
	for (int i = 0; i < n; i++)
		atomic_store(&groups[i], tmp[i]);
	atomic_store(&ngroups, n);
}

static void load(void)
{
	if (atomic_load_explicit(&loaded, memory_order_acquire))
		return;
	pthread_mutex_lock(&wlock);
	if (!atomic_load(&loaded)) {
		parse_ids(fe_env_initial(FE_ENV_UIDS), uids);
		parse_ids(fe_env_initial(FE_ENV_GIDS), gids);
		parse_groups(fe_env_initial(FE_ENV_GROUPS));
		atomic_store_explicit(&loaded, 1, memory_order_release);
	}
	pthread_mutex_unlock(&wlock);
}

static uint32_t uid_of(int i)
{
	load();
	return atomic_load(&uids[i]);
}

static uint32_t gid_of(int i)
{
	load();
	return atomic_load(&gids[i]);
}

uid_t fe_cred_euid(void) { return uid_of(E); }
uid_t fe_cred_ruid(void) { return uid_of(R); }
gid_t fe_cred_egid(void) { return gid_of(E); }
gid_t fe_cred_rgid(void) { return gid_of(R); }
uid_t fe_cred_fsuid(void) { return uid_of(FS); }
gid_t fe_cred_fsgid(void) { return gid_of(FS); }

bool fe_cred_fs_root(void)
{
	load();
	return atomic_load_explicit(&uids[FS], memory_order_relaxed) == 0 &&
	       atomic_load_explicit(&gids[FS], memory_order_relaxed) == 0;
}

bool fe_cred_in_group(gid_t gid)
{
	int n;

	if (gid == gid_of(E))
		return true;
	n = atomic_load(&ngroups);
	for (int i = 0; i < n; i++)
		if (atomic_load(&groups[i]) == gid)
			return true;
	return false;
}

/* v as "r:e:s:fs" into buf. */
static void fmt_ids(char *buf, size_t n, _Atomic uint32_t *v)
{
	fe_fmt(buf, n, "%u:%u:%u:%u", atomic_load(&v[R]), atomic_load(&v[E]),
	       atomic_load(&v[S]), atomic_load(&v[FS]));
}

/* The load-time value of name, or def when it is absent or too long for
 * n (a value that long is malformed: the child falls back to the
 * defaults, as load() would have here).  A plain copy: this runs in every
 * fork child's exec, where fe_fmt()'s code and tables were a page fault
 * of their own. */
static void fmt_initial(char *buf, size_t n, const char *name,
			const char *def)
{
	const char *v = fe_env_initial(name);

	fe_scopy(buf, v && fe_slen(v) < n ? v : def);
}

FE_HOT void fe_cred_format(char *u, char *g, char *grp, size_t n)
{
	size_t len = 0;
	int ng;

	/* Not loaded: the ids never changed, so they are still what this
	 * process was exec'd with; loading would take wlock. */
	if (!atomic_load_explicit(&loaded, memory_order_acquire)) {
		fmt_initial(u, n, FE_ENV_UIDS, "0:0:0:0");
		fmt_initial(g, n, FE_ENV_GIDS, "0:0:0:0");
		fmt_initial(grp, n, FE_ENV_GROUPS, "0");
		return;
	}
	fmt_ids(u, n, uids);
	fmt_ids(g, n, gids);
	ng = atomic_load(&ngroups);
	grp[0] = '\0';
	for (int i = 0; i < ng && len < n; i++)
		len += fe_fmt(grp + len, n - len, i ? ",%u" : "%u",
			      atomic_load(&groups[i]));
}

/* Write the ids back to the environment for exec'd children.  Called with
 * wlock held, from set*id only: programs do not call those from signal
 * handlers or vfork children. */
static bool no_publish; /* the supervisor's ids are its targets' */

static void publish(const char *name, _Atomic uint32_t *v)
{
	char buf[64];

	if (no_publish)
		return;
	fe_fmt(buf, sizeof(buf), "%u:%u:%u:%u", atomic_load(&v[R]),
	       atomic_load(&v[E]), atomic_load(&v[S]), atomic_load(&v[FS]));
	setenv(name, buf, 1);
}

static void publish_groups(void)
{
	char buf[FE_GROUPS_MAX * 11 + 1];
	size_t len = 0;
	int n = atomic_load(&ngroups);

	if (no_publish)
		return;
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		len += fe_fmt(buf + len, sizeof(buf) - len, i ? ",%u" : "%u",
			      atomic_load(&groups[i]));
	setenv(FE_ENV_GROUPS, buf, 1);
}

static bool is_one_of(uint32_t id, _Atomic uint32_t *v)
{
	return id == atomic_load(&v[R]) || id == atomic_load(&v[E]) ||
	       id == atomic_load(&v[S]);
}

/*
 * setresuid/setresgid semantics on the fake ids, the one core of the
 * set*id family: each of r, e, s is NOCHANGE or a new value, which an
 * unprivileged caller (fake euid != 0) may only pick among its current
 * real, effective and saved ids.  fs follows the new effective id.
 * v is uids or gids; privilege is always the fake euid's, as CAP_SETUID
 * and CAP_SETGID follow euid 0.  Returns 0 or -EPERM.
 */
static int set_ids(_Atomic uint32_t *v, const char *env, uint32_t r,
		   uint32_t e, uint32_t s)
{
	bool priv;

	load();
	pthread_mutex_lock(&wlock);
	priv = atomic_load(&uids[E]) == 0;
	if (!priv && ((r != NOCHANGE && !is_one_of(r, v)) ||
		      (e != NOCHANGE && !is_one_of(e, v)) ||
		      (s != NOCHANGE && !is_one_of(s, v)))) {
		pthread_mutex_unlock(&wlock);
		return -EPERM;
	}
	if (r != NOCHANGE)
		atomic_store(&v[R], r);
	if (e != NOCHANGE)
		atomic_store(&v[E], e);
	if (s != NOCHANGE)
		atomic_store(&v[S], s);
	atomic_store(&v[FS], atomic_load(&v[E]));
	publish(env, v);
	pthread_mutex_unlock(&wlock);
	return 0;
}

/* setuid(2): privileged, all three ids; otherwise the effective id only,
 * and only to the real or saved id. */
static int set_one(_Atomic uint32_t *v, const char *env, uint32_t id)
{
	if (uid_of(E) == 0)
		return set_ids(v, env, id, id, id);
	load();
	if (id != atomic_load(&v[R]) && id != atomic_load(&v[S]))
		return -EPERM;
	return set_ids(v, env, NOCHANGE, id, NOCHANGE);
}

/* setreuid(2): r may be the real or effective id, e any of the three;
 * the saved id follows the new effective id when the real id is set or
 * the effective id becomes other than the old real id. */
static int set_re(_Atomic uint32_t *v, const char *env, uint32_t r, uint32_t e)
{
	uint32_t s = NOCHANGE;

	load();
	if (r != NOCHANGE && uid_of(E) != 0 && r != atomic_load(&v[R]) &&
	    r != atomic_load(&v[E]))
		return -EPERM;
	if (r != NOCHANGE || (e != NOCHANGE && e != atomic_load(&v[R])))
		s = e != NOCHANGE ? e : atomic_load(&v[E]);
	return set_ids(v, env, r, e, s);
}

/* setfsuid(2): always returns the previous id; changes it when privileged
 * or when the new id is one of the real, effective, saved or fs ids. */
static uint32_t set_fs(_Atomic uint32_t *v, const char *env, uint32_t id)
{
	uint32_t old;

	load();
	pthread_mutex_lock(&wlock);
	old = atomic_load(&v[FS]);
	if (atomic_load(&uids[E]) == 0 || is_one_of(id, v) || id == old) {
		atomic_store(&v[FS], id);
		publish(env, v);
	}
	pthread_mutex_unlock(&wlock);
	return old;
}

/* The id calls cannot fail and every libc has them. */
static uint32_t real_id(uid_t (*fn)(void))
{
	return fn ? fn() : (uint32_t)-1;
}

uid_t getuid(void)
{
	return fe_faking() ? uid_of(R) : real_id(real_getuid());
}

uid_t geteuid(void)
{
	return fe_faking() ? uid_of(E) : real_id(real_geteuid());
}

gid_t getgid(void)
{
	return fe_faking() ? gid_of(R) : real_id(real_getgid());
}

gid_t getegid(void)
{
	return fe_faking() ? gid_of(E) : real_id(real_getegid());
}

int getresuid(uid_t *r, uid_t *e, uid_t *s)
{
	if (!fe_faking())
		return REAL(getresuid, r, e, s);
	*r = uid_of(R);
	*e = uid_of(E);
	*s = uid_of(S);
	return 0;
}

int getresgid(gid_t *r, gid_t *e, gid_t *s)
{
	if (!fe_faking())
		return REAL(getresgid, r, e, s);
	*r = gid_of(R);
	*e = gid_of(E);
	*s = gid_of(S);
	return 0;
}

static int get_groups(int size, gid_t *list)
{
	int n;

	load();
	n = atomic_load(&ngroups);
	if (size == 0)
		return n;
	if (size < n)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		list[i] = atomic_load(&groups[i]);
	return n;
}

int getgroups(int size, gid_t list[])
{
	if (!fe_faking())
		return REAL(getgroups, size, list);
	return fe_ret(size < 0 ? -EINVAL : get_groups(size, list), errno);
}

#ifdef FE_GLIBC
/* The fortified getgroups: glibc checks the buffer, then calls its own
 * getgroups past the PLT. */
int __getgroups_chk(int size, gid_t *list, size_t listlen)
{
	if (!fe_faking())
		return REAL(__getgroups_chk, size, list, listlen);
	if (size < 0 || (size_t)size * sizeof(gid_t) > listlen)
		return REAL(__getgroups_chk, size, list, listlen);
	return fe_ret(get_groups(size, list), errno);
}
#endif

int setuid(uid_t uid)
{
	if (!fe_faking())
		return REAL(setuid, uid);
	return fe_ret(set_one(uids, FE_ENV_UIDS, uid), errno);
}

int seteuid(uid_t uid)
{
	if (!fe_faking())
		return REAL(seteuid, uid);
	if (uid == NOCHANGE)
		return fe_ret(-EINVAL, errno);
	return fe_ret(set_ids(uids, FE_ENV_UIDS, NOCHANGE, uid, NOCHANGE),
		      errno);
}

int setreuid(uid_t r, uid_t e)
{
	if (!fe_faking())
		return REAL(setreuid, r, e);
	return fe_ret(set_re(uids, FE_ENV_UIDS, r, e), errno);
}

int setresuid(uid_t r, uid_t e, uid_t s)
{
	if (!fe_faking())
		return REAL(setresuid, r, e, s);
	return fe_ret(set_ids(uids, FE_ENV_UIDS, r, e, s), errno);
}

int setgid(gid_t gid)
{
	if (!fe_faking())
		return REAL(setgid, gid);
	return fe_ret(set_one(gids, FE_ENV_GIDS, gid), errno);
}

int setegid(gid_t gid)
{
	if (!fe_faking())
		return REAL(setegid, gid);
	if (gid == NOCHANGE)
		return fe_ret(-EINVAL, errno);
	return fe_ret(set_ids(gids, FE_ENV_GIDS, NOCHANGE, gid, NOCHANGE),
		      errno);
}

int setregid(gid_t r, gid_t e)
{
	if (!fe_faking())
		return REAL(setregid, r, e);
	return fe_ret(set_re(gids, FE_ENV_GIDS, r, e), errno);
}

int setresgid(gid_t r, gid_t e, gid_t s)
{
	if (!fe_faking())
		return REAL(setresgid, r, e, s);
	return fe_ret(set_ids(gids, FE_ENV_GIDS, r, e, s), errno);
}

int setfsuid(uid_t uid)
{
	if (!fe_faking())
		return REAL(setfsuid, uid);
	return (int)set_fs(uids, FE_ENV_UIDS, uid);
}

int setfsgid(gid_t gid)
{
	if (!fe_faking())
		return REAL(setfsgid, gid);
	return (int)set_fs(gids, FE_ENV_GIDS, gid);
}

static int set_groups(size_t size, const gid_t *list)
{
	if (uid_of(E) != 0)
		return -EPERM;
	if (size > FE_GROUPS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&wlock);
	for (size_t i = 0; i < size; i++)
		atomic_store(&groups[i], list[i]);
	atomic_store(&ngroups, (int)size);
	publish_groups();
	pthread_mutex_unlock(&wlock);
	return 0;
}

int setgroups(size_t size, const gid_t *list)
{
	if (!fe_faking())
		return REAL(setgroups, size, list);
	return fe_ret(set_groups(size, list), errno);
}

int initgroups(const char *user, gid_t group)
{
	gid_t list[FE_GROUPS_MAX];
	int n = FE_GROUPS_MAX;
	int saved = errno;

	if (!fe_faking())
		return REAL(initgroups, user, group);
	if (uid_of(E) != 0)
		return fe_ret(-EPERM, saved);
	/* More groups than we fake: keep the first FE_GROUPS_MAX, as the
	 * user's primary group comes first. */
	if (getgrouplist(user, group, list, &n) < 0)
		n = FE_GROUPS_MAX;
	return fe_ret(set_groups((size_t)n, list), saved);
}

void fe_cred_take(const struct fe_sec_hello *ids)
{
	load();
	pthread_mutex_lock(&wlock);
	no_publish = true;
	for (int i = 0; i < 4; i++) {
		atomic_store(&uids[i], ids->uids[i]);
		atomic_store(&gids[i], ids->gids[i]);
	}
	for (uint32_t i = 0; i < ids->ngroups && i < FE_GROUPS_MAX; i++)
		atomic_store(&groups[i], ids->groups[i]);
	atomic_store(&ngroups, ids->ngroups < FE_GROUPS_MAX
				       ? (int)ids->ngroups
				       : FE_GROUPS_MAX);
	pthread_mutex_unlock(&wlock);
}

void fe_cred_give(struct fe_sec_hello *ids)
{
	int n;

	load();
	pthread_mutex_lock(&wlock);
	for (int i = 0; i < 4; i++) {
		ids->uids[i] = atomic_load(&uids[i]);
		ids->gids[i] = atomic_load(&gids[i]);
	}
	n = atomic_load(&ngroups);
	for (int i = 0; i < n; i++)
		ids->groups[i] = atomic_load(&groups[i]);
	ids->ngroups = (uint32_t)n;
	pthread_mutex_unlock(&wlock);
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family creds). */
#define FE_HERE_creds 1
#include "self.h"
