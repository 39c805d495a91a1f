/*
 * Exec and spawn: a child given a cleared environment (env -i, env -u
 * LD_PRELOAD, its own envp) stays in the session, with the fake ids of
 * the moment.  The real call gets envp itself when it needs no repair,
 * else a repaired copy, on the stack when small, else in a mapping given
 * back after the call; the caller's environ is never changed.  Runs in
 * vfork children: no malloc, no lock, no write to a global but
 * exec_mem.c's notes of that mapping.
 *
 * Left unwrapped: system() and popen().  glibc runs /bin/sh through its
 * internal posix_spawn, past the PLT, with environ: the shell stays in the
 * session unless the program cleared its own environment (clearenv,
 * unsetenv("LD_PRELOAD")), and that exec never passes through here.
 */
#include "shim.h"
#include "exec_mem.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "common/util.h"
#include "fakeenv/env.h"
#include "fakeenv/seccomp.h"

#define PRELOAD "LD_PRELOAD"

/* Put back from the load-time copy when the child's envp lacks them:
 * restored[i] gets the load-time value of restored_from[i]. */
#define NAME_OF(name, from) name,
#define FROM_OF(name, from) from,
#define COUNT_ONE(name, from) +1
static const char *const restored[] = { FE_ENV_RESTORED(NAME_OF) };
static const char *const restored_from[] = { FE_ENV_RESTORED(FROM_OF) };
#define N_RESTORED (0 FE_ENV_RESTORED(COUNT_ONE))

/* Always replaced by the current fake ids (fe_cred_format() order). */
static const char *const ids[] = { FE_ENV_UIDS, FE_ENV_GIDS, FE_ENV_GROUPS };
#define N_IDS 3

/* At most this many entries beyond the caller's: LD_PRELOAD, the restored
 * ones, the ids, FAKEENV_ROOT, the final NULL. */
#define EXTRA (1 + N_RESTORED + N_IDS + 1 + 1)

/* One real call to make, whatever its envp. */
enum how { EXECVE, EXECVPE, FEXECVE, EXECVEAT, SPAWN, SPAWNP };

struct call {
	enum how how;
	const char *path;  /* path or file; execveat: relative to fd */
	char *const *argv; /* as given */
	int fd;            /* fexecve, execveat */
	int flags;         /* execveat */
	pid_t *pid;        /* posix_spawn* */
	const posix_spawn_file_actions_t *fa;
	const posix_spawnattr_t *attr;
	char *target;      /* posix_spawn*: PATH_MAX bytes for via's path */
	/* Set by sec_step(): */
	const char *via;   /* posix_spawn*: the launcher to arm through */
	bool leave_out;    /* another libc's program: not our library */
};

/* An argument list up to this many entries is built on the stack, a
 * longer one in a mapping of its size, as the environment is (STACK_ENV):
 * the caller's list must not decide how deep a small stack goes. */
#define STACK_ARGS 256

/*
 * posix_spawn of a program to put under the seccomp filter: glibc's child
 * runs no code of ours between its fork and its exec, so the launcher is
 * spawned instead, which arms itself and execs the program
 * (fe_sec_spawn_via()).  Any other spawn goes as it is.
 */
static int spawn_armed(fe_posix_spawn_fn *spawn, const struct call *c,
		       char *const envp[])
{
	char *small[STACK_ARGS], **argv = small;
	const char *via = c->via;
	size_t n = 0, size = 0;
	int r;

	if (!via)
		return spawn(c->pid, c->path, c->fa, c->attr, c->argv, envp);
	while (c->argv && c->argv[n])
		n++;
	if (n + 4 > STACK_ARGS) {
		size = (n + 4) * sizeof(char *);
		argv = mmap(NULL, size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (argv == MAP_FAILED)
			return ENOMEM;
	}
	argv[0] = (char *)via;
	argv[1] = (char *)FE_SEC_EXEC_ARG;
	argv[2] = c->target;
	for (size_t i = 0; i <= n; i++)
		argv[3 + i] = i < n ? c->argv[i] : NULL;
	/* posix_spawnp's search is done: target is a path. */
	r = REAL(posix_spawn, c->pid, via, c->fa, c->attr, argv, envp);
	if (size)
		munmap(argv, size);
	return r;
}

/* The seccomp part of c, before its environment is made: arming this
 * process, or choosing the launcher a spawn arms through, and whether
 * the child must go without our library. */
FE_HOT static void sec_step(struct call *c)
{
	switch (c->how) {
	case EXECVE:
		c->leave_out = fe_sec_exec(FE_EXEC_PATH, c->path, -1, 0);
		break;
	case EXECVPE:
		c->leave_out = fe_sec_exec(FE_EXEC_SEARCH, c->path, -1, 0);
		break;
	case FEXECVE:
		c->leave_out = fe_sec_exec(FE_EXEC_FD, NULL, c->fd, 0);
		break;
	case EXECVEAT:
		c->leave_out = fe_sec_exec(FE_EXEC_AT, c->path, c->fd,
					   c->flags);
		break;
	case SPAWN:
	case SPAWNP:
		c->via = fe_sec_spawn_via(c->how == SPAWNP, c->path,
					  c->target, PATH_MAX, &c->leave_out);
		break;
	}
}

/*
 * The real function of c with envp, sec_step() done.  Exec forms return
 * -1 with the real call's errno (ENOSYS when libc lacks the symbol:
 * execveat before glibc 2.34); the spawn forms return 0 or an error
 * number, as they do.
 */
FE_HOT static int real_step(const struct call *c, char *const envp[])
{
	fe_posix_spawn_fn *spawn;

	switch (c->how) {
	case EXECVE:
		return REAL(execve, c->path, c->argv, envp);
	case EXECVPE:
		return REAL(execvpe, c->path, c->argv, envp);
	case FEXECVE:
		return REAL(fexecve, c->fd, c->argv, envp);
	case EXECVEAT:
		return REAL(execveat, c->fd, c->path, c->argv, envp, c->flags);
	case SPAWN:
	case SPAWNP:
		/* Same type: posix_spawnp's file is posix_spawn's path. */
		spawn = c->how == SPAWN ? real_posix_spawn() :
					  real_posix_spawnp();
		if (!spawn)
			return ENOSYS;
		return spawn_armed(spawn, c, envp);
	}
	return fe_enosys();
}

/* Whether entry e is NAME=... */
static bool is_var(const char *e, const char *name)
{
	return fe_var_value(e, name) != NULL;
}

/* Whether the LD_PRELOAD list names lib; ld.so splits on ':' and ' '.
 * Plain loops, as everywhere on this path (fe_slen() in shim.h says
 * why). */
static bool preload_has(const char *list, const char *lib)
{
	while (*list) {
		const char *l = lib;

		while (*list && *list != ':' && *list != ' ' && *list == *l) {
			list++;
			l++;
		}
		if (*l == '\0' && (*list == '\0' || *list == ':' || *list == ' '))
			return true;
		while (*list && *list != ':' && *list != ' ')
			list++;
		if (*list)
			list++;
	}
	return false;
}

/* strcmp() == 0, as a plain loop for the reason preload_has() gives. */
static bool same(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* "name=a" or "name=a:b" (b may be NULL) at *p, which moves past it. */
static char *put(char **p, const char *name, const char *a, const char *b)
{
	char *start = *p, *q = fe_scopy(*p, name);

	*q++ = '=';
	q = fe_scopy(q, a);
	if (b) {
		if (*a)
			*q++ = ':';
		q = fe_scopy(q, b);
	}
	*p = q + 1;
	return start;
}

/* "LD_PRELOAD=" with the entries of list but lib at *p, which moves past
 * it. */
static char *put_without(char **p, const char *list, const char *lib)
{
	char *start = *p, *q = fe_scopy(*p, PRELOAD "=");

	while (*list) {
		const char *e = list, *l = lib;

		while (*e && *e != ':' && *e != ' ' && *e == *l) {
			e++;
			l++;
		}
		if (*l == '\0' && (*e == '\0' || *e == ':' || *e == ' ')) {
			list = *e ? e + 1 : e;
			continue;
		}
		if (q[-1] != '=')
			*q++ = ':';
		while (*list && *list != ':' && *list != ' ')
			*q++ = *list++;
		if (*list)
			list++;
	}
	*q = '\0';
	*p = q + 1;
	return start;
}

/* A new environment up to this size is built on the stack, a bigger one
 * in a mapping of its size: a thread's stack may be small (128 KiB), an
 * environment is not (20,000 entries are 160 KB of pointers). */
#define STACK_ENV 2048

/* The real call with env, built in mem, then mem given back.  A spawn
 * returns to us, an exec only when it failed: one that succeeded in a
 * vfork child leaves mem to its parent (exec_mem.c). */
static int call_freeing(const struct call *c, char **env, void *mem,
			size_t size)
{
	int r = real_step(c, env);

	if (mem)
		fe_exec_mem_put(mem, size);
	return r;
}

/* What the child's envp has and lacks, from one pass over it: everything
 * call_repaired() decides by. */
struct scan {
	const char *lib;   /* our library, as loaded (FAKEENV_LIB) */
	const char *pre;   /* the LD_PRELOAD value ld.so would read, or NULL */
	const char *whole; /* the load-time LD_PRELOAD to put back, or NULL */
	bool fix_pre;      /* LD_PRELOAD does not name lib */
	bool leave_out;    /* lib left out: ldd (LD_TRACE_LOADED_OBJECTS) or
			      another libc's program (sec_step()) */
	size_t n;          /* entries in envp */
	const char *value[N_RESTORED]; /* load-time values to put back */
	const char *id_seen[N_IDS];    /* the last entry of each id */
	int id_count[N_IDS];           /* entries of each id */
	const char *root;              /* fe_root_ent(), or NULL */
	const char *root_seen;         /* the last FAKEENV_ROOT entry */
	int root_count;                /* FAKEENV_ROOT entries */
	/* The current ids, "NAME=value"; id_ent[i] + strlen(ids[i]) + 1 is
	 * the value. */
	char id_ent[N_IDS][sizeof(FE_ENV_GROUPS) + FE_CRED_BUF];
};

FE_HOT static void scan_env(struct scan *s, char *const envp[], bool leave_out)
{
	char *idv[N_IDS];

	/* Not id_ent, which is written whole below. */
	memset(s, 0, offsetof(struct scan, id_ent));
	s->lib = fe_root_lib();
	s->root = fe_root_ent();
	s->leave_out = leave_out;
	for (int i = 0; i < N_RESTORED; i++)
		s->value[i] = fe_env_initial(restored_from[i]);
	for (char *const *e = envp; e && *e; e++, s->n++) {
		if (is_var(*e, PRELOAD))
			s->pre = fe_var_value(*e, PRELOAD);
		if (is_var(*e, "LD_TRACE_LOADED_OBJECTS"))
			s->leave_out |=
				*fe_var_value(*e, "LD_TRACE_LOADED_OBJECTS");
		for (int i = 0; i < N_RESTORED; i++)
			if (is_var(*e, restored[i]))
				s->value[i] = NULL; /* the child's own stands */
		for (int i = 0; i < N_IDS; i++)
			if (is_var(*e, ids[i])) {
				s->id_seen[i] = *e;
				s->id_count[i]++;
			}
		if (is_var(*e, FE_ENV_ROOT)) {
			s->root_seen = *e;
			s->root_count++;
		}
	}
	for (int i = 0; i < N_IDS; i++) {
		char *q = fe_scopy(s->id_ent[i], ids[i]);

		*q = '=';
		idv[i] = q + 1;
	}
	fe_cred_format(idv[0], idv[1], idv[2], FE_CRED_BUF);
	/* ldd runs nothing of the program: the list it prints is the
	 * program's own, without our library (usrmerge's conversion copies
	 * each library ldd names). */
	if (s->leave_out) {
		s->fix_pre = s->pre && s->lib && preload_has(s->pre, s->lib);
		return;
	}
	s->fix_pre = s->lib && *s->lib &&
		     !(s->pre && preload_has(s->pre, s->lib));
	/* Gone altogether: the list this process was loaded with comes back
	 * whole, so that a sanitizer runtime that had to come first still
	 * does. */
	if (s->fix_pre && !s->pre) {
		s->whole = fe_env_initial(PRELOAD);
		if (s->whole && !preload_has(s->whole, s->lib))
			s->whole = NULL;
	}
}

/* Whether envp needs no repair: one entry of each id, with the current
 * value, and nothing to put back. */
FE_HOT static bool env_intact(const struct scan *s)
{
	bool intact = !s->fix_pre;

	for (int i = 0; i < N_RESTORED; i++)
		intact &= !s->value[i];
	for (int i = 0; i < N_IDS; i++)
		intact &= s->id_count[i] == 1 &&
			  same(s->id_seen[i], s->id_ent[i]);
	if (s->root)
		intact &= s->root_count == 1 && same(s->root_seen, s->root);
	else
		intact &= s->root_count == 0;
	return intact;
}

/* Bytes of the repaired environment: its pointers, then the strings
 * made for it. */
static size_t env_size(const struct scan *s)
{
	size_t need = 1;

	if (s->fix_pre)
		need += sizeof(PRELOAD) + 1 +
			(s->pre ? fe_slen(s->pre) + 1 : 0) +
			(s->whole ? fe_slen(s->whole) : fe_slen(s->lib));
	for (int i = 0; i < N_RESTORED; i++)
		if (s->value[i])
			need += fe_slen(restored[i]) + 2 + fe_slen(s->value[i]);
	return (s->n + EXTRA) * sizeof(char *) + need;
}

/* The repaired environment into env, which has env_size() bytes: envp's
 * entries in their order but the ids, LD_PRELOAD with lib once in place
 * of every LD_PRELOAD entry, then what was missing, then the ids. */
static void env_fill(char **env, struct scan *s, char *const envp[])
{
	char *p = (char *)(env + s->n + EXTRA);
	bool pre_done = false;
	size_t k = 0;

	for (char *const *e = envp; e && *e; e++) {
		bool drop = false;

		for (int i = 0; i < N_IDS; i++)
			drop |= is_var(*e, ids[i]);
		drop |= is_var(*e, FE_ENV_ROOT);
		if (drop)
			continue;
		if (s->fix_pre && is_var(*e, PRELOAD)) {
			if (!pre_done && s->leave_out)
				env[k++] = put_without(&p, s->pre, s->lib);
			else if (!pre_done)
				env[k++] = put(&p, PRELOAD, s->pre, s->lib);
			pre_done = true;
			continue;
		}
		env[k++] = *e;
	}
	if (s->fix_pre && !pre_done && !s->leave_out)
		env[k++] = put(&p, PRELOAD, s->whole ? s->whole : s->lib, NULL);
	for (int i = 0; i < N_RESTORED; i++)
		if (s->value[i])
			env[k++] = put(&p, restored[i], s->value[i], NULL);
	for (int i = 0; i < N_IDS; i++)
		env[k++] = s->id_ent[i];
	if (s->root)
		env[k++] = (char *)s->root;
	env[k] = NULL;
}

/*
 * Call c in the session: envp (NULL reads as empty, as the kernel reads
 * it) with LD_PRELOAD naming our library (the value ld.so would use, the
 * last one, with the library appended, in place of every LD_PRELOAD
 * entry; the load-time list when there is none), the FE_ENV_RESTORED
 * variables (FAKEENV_SOCKET, _LIB, _UNKNOWN_IS_REAL, FAKEROOTKEY) put back
 * when absent, and the FAKEENV_ ids replaced by the current ones.
 * Everything else keeps its order.  An envp that has all this already is
 * passed as it is.  May run in a vfork child.
 */
/* The repaired environment on the stack, and the real call.  A frame of
 * its own, entered after sec_step() has returned: in a fork child each
 * page of stack touched is a page fault, and the two need not be on the
 * stack at once.  Filling memory is all it does before the call, so that
 * the order is not to be seen. */
static __attribute__((noinline)) int call_small(const struct call *c,
						 struct scan *s,
						 char *const envp[])
{
	union {
		char *ptr[STACK_ENV / sizeof(char *)];
		char bytes[STACK_ENV];
	} small;

	env_fill(small.ptr, s, envp);
	return real_step(c, small.ptr);
}

FE_HOT static int call_repaired(struct call *c, char *const envp[])
{
	struct scan s;
	void *mem;
	size_t size;

	sec_step(c);
	scan_env(&s, envp, c->leave_out);
	if (env_intact(&s))
		return real_step(c, envp);
	size = env_size(&s);
	if (size <= STACK_ENV)
		return call_small(c, &s, envp);
	mem = fe_exec_mem_get(size);
	if (!mem) {
		if (c->how == SPAWN || c->how == SPAWNP)
			return ENOMEM;
		errno = ENOMEM;
		return -1;
	}
	env_fill(mem, &s, envp);
	return call_freeing(c, mem, mem, size);
}

/* A disabled process (FAKEENV_DISABLED) repairs too: its child may
 * drop the variable and fake again.  The variable itself is the child's
 * envp's business, never put back. */
FE_HOT static int run(struct call *c, char *const envp[])
{
	/* A vfork child forgets what it learnt of its fds: that memory is
	 * its parent's, whose fds may differ by now. */
	fe_fd_caches_drop();
	if (!fe_in_session())
		return real_step(c, envp);
	return call_repaired(c, envp);
}

FE_HOT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct call c = { .how = EXECVE, .path = path, .argv = argv };

	return run(&c, envp);
}

FE_HOT int execv(const char *path, char *const argv[])
{
	struct call c = { .how = EXECVE, .path = path, .argv = argv };

	if (!fe_in_session())
		return REAL(execv, path, argv);
	return call_repaired(&c, environ);
}

/* execvp is glibc's execvpe with environ: the PATH search reads the
 * caller's PATH, not the child's. */
FE_HOT int execvp(const char *file, char *const argv[])
{
	struct call c = { .how = EXECVPE, .path = file, .argv = argv };

	if (!fe_in_session())
		return REAL(execvp, file, argv);
	return call_repaired(&c, environ);
}

FE_HOT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct call c = { .how = EXECVPE, .path = file, .argv = argv };

	return run(&c, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct call c = { .how = FEXECVE, .fd = fd, .argv = argv };

	return run(&c, envp);
}

int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
	struct call c = { .how = EXECVEAT, .fd = dirfd, .path = path,
			  .argv = argv, .flags = flags };

	return run(&c, envp);
}

/* The spawn forms: envp is the child's whole environment. */
int posix_spawn(pid_t *pid, const char *path,
		const posix_spawn_file_actions_t *fa,
		const posix_spawnattr_t *attr, char *const argv[],
		char *const envp[])
{
	char target[PATH_MAX];
	struct call c = { .how = SPAWN, .path = path, .argv = argv,
			  .pid = pid, .fa = fa, .attr = attr,
			  .target = target };

	return run(&c, envp);
}

int posix_spawnp(pid_t *pid, const char *file,
		 const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *attr, char *const argv[],
		 char *const envp[])
{
	char target[PATH_MAX];
	struct call c = { .how = SPAWNP, .path = file, .argv = argv,
			  .pid = pid, .fa = fa, .attr = attr,
			  .target = target };

	return run(&c, envp);
}

/*
 * The execl forms.  As glibc: the list is arg and what follows up to a
 * NULL (arg itself is not checked), more than INT_MAX is E2BIG.  execle's
 * envp follows the NULL.
 */
FE_HOT static size_t count_args(va_list *ap)
{
	size_t argc = 1;

	while (va_arg(*ap, const char *))
		if (++argc == INT_MAX)
			return 0;
	return argc;
}

/* argv[0] = arg, then argc more from ap, the NULL included. */
FE_HOT static void fill_args(char **argv, size_t argc, const char *arg,
			     va_list *ap)
{
	argv[0] = (char *)arg;
	for (size_t i = 1; i <= argc; i++)
		argv[i] = va_arg(*ap, char *);
}

/* The execl forms' lists up to this many entries (the NULL included) are
 * built on the stack, longer ones in a mapping: STACK_ARGS would put 2 KB
 * more of stack under every execl of a fork child, where each page of
 * stack touched is a page fault; a list written out in the source is
 * short. */
#define STACK_LIST 32

/* Run the list that follows arg in *ap, then (with_env) the envp after
 * its NULL; environ otherwise. */
FE_HOT static int run_list(enum how how, const char *path, const char *arg,
			   va_list *ap, bool with_env)
{
	char *small[STACK_LIST], **argv = small;
	char *const *envp = environ;
	size_t argc, size = 0;
	va_list count;
	int r;

	va_copy(count, *ap);
	argc = count_args(&count);
	va_end(count);
	if (argc == 0) {
		errno = E2BIG;
		return -1;
	}
	if (argc + 1 > STACK_LIST) {
		size = (argc + 1) * sizeof(char *);
		argv = fe_exec_mem_get(size);
		if (!argv) {
			errno = ENOMEM;
			return -1;
		}
	}
	fill_args(argv, argc, arg, ap);
	if (with_env)
		envp = va_arg(*ap, char *const *);
	struct call c = { .how = how, .path = path, .argv = argv };

	r = run(&c, envp);
	if (size)
		fe_exec_mem_put(argv, size);
	return r;
}

FE_HOT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = run_list(EXECVE, path, arg, &ap, false);
	va_end(ap);
	return r;
}

FE_HOT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = run_list(EXECVPE, file, arg, &ap, false);
	va_end(ap);
	return r;
}

FE_HOT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = run_list(EXECVE, path, arg, &ap, true);
	va_end(ap);
	return r;
}

/* The second names syscall() reaches this file's wrappers by
 * (wrap.def's SYSCALL rows of family exec). */
#define FE_HERE_exec 1
#include "self.h"
