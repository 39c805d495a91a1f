/*
 * creds: credentials, as a sequence of steps run in order.
 *   creds STEP...
 * Steps: show | setuid N | seteuid N | setreuid R E | setresuid R E S |
 *   setgid N | setegid N | setregid R E | setresgid R E S |
 *   setgroups G,G,... (or "-" for none) | setfsuid N | setfsgid N |
 *   initgroups USER GID | exec (re-executes itself with the steps left) |
 *   run CMD ARGS... (executes CMD, the rest of the arguments)
 * "show" prints "getuid=U geteuid=U getgid=G getegid=G resuid=R,E,S
 * resgid=R,E,S groups=G,..." ("groups=-" when empty); other steps print
 * "STEP ARGS: ok" or "STEP ARGS: ERR <errno>" (setfsuid/setfsgid print the
 * previous id they return).  Exits 0 unless the usage is wrong.
 */
#include "helper.h"

#include <grp.h>
#include <sys/fsuid.h>
#include <unistd.h>

static void show(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, gs[256];
	int n;

	printf("getuid=%lu geteuid=%lu getgid=%lu getegid=%lu",
	       (unsigned long)getuid(), (unsigned long)geteuid(),
	       (unsigned long)getgid(), (unsigned long)getegid());
	if (getresuid(&ru, &eu, &su) == 0)
		printf(" resuid=%lu,%lu,%lu", (unsigned long)ru,
		       (unsigned long)eu, (unsigned long)su);
	else
		printf(" resuid=ERR");
	if (getresgid(&rg, &eg, &sg) == 0)
		printf(" resgid=%lu,%lu,%lu", (unsigned long)rg,
		       (unsigned long)eg, (unsigned long)sg);
	else
		printf(" resgid=ERR");
	n = getgroups(256, gs);
	printf(" groups=");
	if (n < 0)
		printf("ERR");
	else if (n == 0)
		printf("-");
	for (int i = 0; i < n; i++)
		printf("%s%lu", i ? "," : "", (unsigned long)gs[i]);
	printf("\n");
}

static void result(const char *what, int r)
{
	printf("%s: ", what);
	if (r == 0)
		printf("ok\n");
	else
		err_out(errno);
}

/* setgroups of a comma-separated list, "-" for none. */
static void set_groups(const char *what, const char *a)
{
	gid_t gs[256];
	size_t n = 0;
	char buf[1024], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", a);
	if (strcmp(a, "-"))
		for (tok = strtok_r(buf, ",", &save);
		     tok && n < 256;
		     tok = strtok_r(NULL, ",", &save))
			gs[n++] = num(tok);
	result(what, setgroups(n, gs));
}

/* Step s, its arguments in arg (what: s and them, for the output).  0,
 * or main's exit status. */
static int one_step(const char *s, const char *what, char **arg)
{
	const char *a = arg[0];

	if (!strcmp(s, "setuid")) {
		result(what, setuid(num(a)));
	} else if (!strcmp(s, "seteuid")) {
		result(what, seteuid(num(a)));
	} else if (!strcmp(s, "setgid")) {
		result(what, setgid(num(a)));
	} else if (!strcmp(s, "setegid")) {
		result(what, setegid(num(a)));
	} else if (!strcmp(s, "setreuid")) {
		result(what, setreuid(num(a), num(arg[1])));
	} else if (!strcmp(s, "setregid")) {
		result(what, setregid(num(a), num(arg[1])));
	} else if (!strcmp(s, "setresuid")) {
		result(what, setresuid(num(a), num(arg[1]), num(arg[2])));
	} else if (!strcmp(s, "setresgid")) {
		result(what, setresgid(num(a), num(arg[1]), num(arg[2])));
	} else if (!strcmp(s, "setfsuid")) {
		printf("%s: %d\n", what, setfsuid(num(a)));
	} else if (!strcmp(s, "setfsgid")) {
		printf("%s: %d\n", what, setfsgid(num(a)));
	} else if (!strcmp(s, "initgroups")) {
		result(what, initgroups(a, num(arg[1])));
	} else if (!strcmp(s, "setgroups")) {
		set_groups(what, a);
	} else {
		return usage("creds: unknown STEP");
	}
	return 0;
}

int main(int argc, char **argv)
{
	char what[256];
	int i = 1;

	while (i < argc) {
		const char *s = argv[i];
		int left = argc - i - 1;

		if (!strcmp(s, "show")) {
			show();
			i += 1;
			continue;
		}
		if (!strcmp(s, "run") && left > 0) {
			fflush(stdout);
			execvp(argv[i + 1], argv + i + 1);
			result("run", -1);
			return 1;
		}
		if (!strcmp(s, "exec")) {
			fflush(stdout);
			argv[i] = argv[0];
			execv("/proc/self/exe", argv + i);
			result("exec", -1);
			return 1;
		}
		int need = !strcmp(s, "setresuid") || !strcmp(s, "setresgid")
				   ? 3
			   : !strcmp(s, "setreuid") || !strcmp(s, "setregid") ||
				   !strcmp(s, "initgroups")
				   ? 2
				   : 1;
		if (left < need)
			return usage("creds STEP... (see creds.c)");
		if (need == 1)
			snprintf(what, sizeof(what), "%s %s", s, argv[i + 1]);
		else if (need == 2)
			snprintf(what, sizeof(what), "%s %s %s", s,
				 argv[i + 1], argv[i + 2]);
		else
			snprintf(what, sizeof(what), "%s %s %s %s", s,
				 argv[i + 1], argv[i + 2], argv[i + 3]);
		int rc = one_step(s, what, argv + i + 1);

		if (rc)
			return rc;
		i += need + 1;
	}
	return 0;
}
