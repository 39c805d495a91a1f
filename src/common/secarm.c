/*
 * The session's seccomp filter and the arming of a process with it; see
 * secarm.h for the rules every line here keeps (vfork children).
 */
#include "secarm.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"


#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* strcmp() == 0 as a plain loop: the shim reads the mode at load and in
 * fork children about to exec, where a libc function costs a lazy symbol
 * lookup or a page fault on its code. */
static bool same(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

int fe_sec_mode_parse(const char *s)
{
	if (!s)
		return -1;
	if (same(s, "never"))
		return FE_SEC_NEVER;
	if (same(s, "auto"))
		return FE_SEC_AUTO;
	if (same(s, "always"))
		return FE_SEC_ALWAYS;
	return -1;
}

FE_HOT enum fe_sec_mode fe_sec_mode_of(const char *value)
{
	int m = fe_sec_mode_parse(value);

	return m < 0 ? FE_SEC_AUTO : (enum fe_sec_mode)m;
}

/* sys() with errno kept: the result, or -errno. */
static long call(fe_sys_fn *sys, long nr, long a, long b, long c, long d,
		 long e)
{
	int saved = errno;
	long r = sys(nr, a, b, c, d, e, 0L);

	if (r < 0)
		r = -errno;
	errno = saved;
	return r;
}

#define SYS1(nr, a) call(sys, nr, (long)(a), 0, 0, 0, 0)
#define SYS3(nr, a, b, c) call(sys, nr, (long)(a), (long)(b), (long)(c), 0, 0)
#define SYS4(nr, a, b, c, d)                                                \
	call(sys, nr, (long)(a), (long)(b), (long)(c), (long)(d), 0)
#define SYS5(nr, a, b, c, d, e)                                             \
	call(sys, nr, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))

/* Up to n bytes at off of fd: the count read, or -errno. */
FE_HOT static long pread_all(fe_sys_fn *sys, int fd, void *buf, size_t n,
			     long off)
{
	size_t got = 0;

	while (got < n) {
		long k = SYS4(SYS_pread64, fd, (char *)buf + got, n - got,
			      off + (long)got);

		if (k == -EINTR)
			continue;
		if (k < 0)
			return k;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (long)got;
}

/* A Go build-id note ("Go", type 4) among the notes in b. */
static bool go_note(const unsigned char *b, size_t len)
{
	size_t p = 0;

	while (len - p >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr h;
		size_t name, desc;

		memcpy(&h, b + p, sizeof(h));
		name = (h.n_namesz + 3u) & ~3u;
		desc = (h.n_descsz + 3u) & ~3u;
		p += sizeof(h);
		if (name > len - p || desc > len - p - name)
			return false;
		/* "Go" and its NUL, padded with another NUL by Go's own
		 * linker: namesz 3 or 4. */
		if (h.n_type == 4 && (h.n_namesz == 3 || h.n_namesz == 4) &&
		    !memcmp(b + p, "Go", 3))
			return true;
		p += name + desc;
	}
	return false;
}

/* The first bytes of a file, read at once: an ELF header and, as linkers
 * lay programs out, its program headers and notes too, so that a dynamic
 * program costs one read.  Small: this runs in fork children about to
 * exec, where each page of stack touched is a page fault. */
#define HEAD 1024

/* Whether the PT_NOTE segment ph holds a Go build-id note (its first 2048
 * bytes), from head (the file's first got bytes) when it is there;
 * reading a note elsewhere takes a buffer, in a frame of its own. */
static __attribute__((noinline)) bool go_note_far(fe_sys_fn *sys, int fd,
						  const Elf64_Phdr *ph,
						  size_t len)
{
	unsigned char note[2048];
	long got = pread_all(sys, fd, note, len, (long)ph->p_offset);

	return got > 0 && go_note(note, (size_t)got);
}

static bool go_segment(fe_sys_fn *sys, int fd, const Elf64_Phdr *ph,
		       const char *head, size_t got)
{
	size_t len = ph->p_filesz < 2048 ? ph->p_filesz : 2048;

	if (ph->p_offset <= got && len <= got - ph->p_offset)
		return go_note((const unsigned char *)head + ph->p_offset,
			       len);
	return go_note_far(sys, fd, ph, len);
}

/* Whether a PT_INTERP of name (len bytes, NUL-terminated or not) is
 * another libc's loader: its basename is musl's "ld-musl-ARCH.so.1" and
 * ours is not, or the other way round.  The loader of our own libc in
 * another version (a chroot's glibc) is not foreign: the shim loads into
 * it. */
static bool interp_foreign(const char *name, size_t len)
{
	static const char musl[] = "ld-musl-";
	size_t base = 0, i;
	bool is_musl;

	for (i = 0; i < len && name[i]; i++)
		if (name[i] == '/')
			base = i + 1;
	len = i;
	is_musl = len - base >= sizeof(musl) - 1 &&
		  !memcmp(name + base, musl, sizeof(musl) - 1);
#ifdef __GLIBC__
	return is_musl;
#else
	return !is_musl;
#endif
}

/* The PT_INTERP segment ph's name is not in head: read, in a frame of its
 * own (a loader's path is short; a longer one is no loader we know). */
static __attribute__((noinline)) bool interp_far(fe_sys_fn *sys, int fd,
						 const Elf64_Phdr *ph)
{
	char name[256];
	size_t len = ph->p_filesz < sizeof(name) ? ph->p_filesz : sizeof(name);
	long got = pread_all(sys, fd, name, len, (long)ph->p_offset);

	return got > 0 && interp_foreign(name, (size_t)got);
}

static enum fe_sec_reach interp_verdict(fe_sys_fn *sys, int fd,
					const Elf64_Phdr *ph, const char *head,
					size_t got)
{
	bool foreign;

	if (ph->p_offset <= got && ph->p_filesz <= got - ph->p_offset)
		foreign = interp_foreign(head + ph->p_offset, ph->p_filesz);
	else
		foreign = interp_far(sys, fd, ph);
	return foreign ? FE_SEC_FOREIGN : FE_SEC_REACHED;
}

/* The verdict on n program headers at tab (unaligned: copied out one by
 * one): no PT_INTERP (static), a Go note, another libc's loader. */
static enum fe_sec_reach phdrs_verdict(fe_sys_fn *sys, int fd,
				       const char *tab, size_t n,
				       const char *head, size_t got)
{
	Elf64_Phdr ph, interp = { .p_type = PT_NULL };

	for (size_t i = 0; i < n; i++) {
		memcpy(&ph, tab + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_INTERP)
			interp = ph;
	}
	if (interp.p_type != PT_INTERP)
		return FE_SEC_BELOW;
	for (size_t i = 0; i < n; i++) {
		memcpy(&ph, tab + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_NOTE && go_segment(sys, fd, &ph, head, got))
			return FE_SEC_BELOW;
	}
	return interp_verdict(sys, fd, &interp, head, got);
}

/* Program headers that are not in the head: read, in a frame of their
 * own. */
static __attribute__((noinline)) enum fe_sec_reach
phdrs_far(fe_sys_fn *sys, int fd, const Elf64_Ehdr *eh, const char *head,
	  size_t got)
{
	Elf64_Phdr ph[64];
	size_t n = eh->e_phnum;

	if (pread_all(sys, fd, ph, n * sizeof(ph[0]), (long)eh->e_phoff) !=
	    (long)(n * sizeof(ph[0])))
		return FE_SEC_REACHED;
	return phdrs_verdict(sys, fd, (const char *)ph, n, head, got);
}

/* The ELF at fd, whose first got bytes are head.  A 32-bit ELF or
 * another machine's: reached (the filter is for the native ABI). */
FE_HOT static enum fe_sec_reach elf_verdict(fe_sys_fn *sys, int fd,
					     const char *head, size_t got)
{
	Elf64_Ehdr eh;
	size_t n, size;

	memcpy(&eh, head, sizeof(eh));
	n = eh.e_phnum;
	size = n * sizeof(Elf64_Phdr);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || n == 0 || n > 64)
		return FE_SEC_REACHED;
	if (eh.e_phoff <= got && size <= got - eh.e_phoff)
		return phdrs_verdict(sys, fd, head + eh.e_phoff, n, head, got);
	return phdrs_far(sys, fd, &eh, head, got);
}

/* depth: a script's interpreter is looked at, not the interpreter's. */
FE_HOT static enum fe_sec_reach verdict(fe_sys_fn *sys, const char *path,
					 int depth)
{
	union {
		Elf64_Ehdr eh;
		char text[HEAD];
	} u;
	long fd = SYS4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	long got;
	enum fe_sec_reach r = FE_SEC_REACHED;

	if (fd < 0)
		return FE_SEC_REACHED;
	got = pread_all(sys, (int)fd, &u, sizeof(u), 0);
	if (got >= (long)sizeof(u.eh) && !memcmp(u.eh.e_ident, ELFMAG, SELFMAG)) {
		r = elf_verdict(sys, (int)fd, u.text, (size_t)got);
	} else if (got > 2 && depth == 0 && u.text[0] == '#' &&
		   u.text[1] == '!') {
		char *p = u.text + 2, *end;

		/* The kernel reads the "#!" line from the first 256
		 * bytes. */
		u.text[got < 256 ? got : 255] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p;
		while (*end && *end != ' ' && *end != '\t' && *end != '\n')
			end++;
		*end = '\0';
		if (*p == '/')
			r = verdict(sys, p, depth + 1);
	}
	SYS1(SYS_close, fd);
	return r;
}

FE_HOT enum fe_sec_reach fe_sec_reach(fe_sys_fn *sys, const char *path)
{
	return path && *path ? verdict(sys, path, 0) : FE_SEC_REACHED;
}

bool fe_sec_which(fe_sys_fn *sys, const char *file, const char *path,
		  char *buf, size_t size)
{
	size_t flen = strlen(file);

	if (strchr(file, '/')) {
		if (flen >= size)
			return false;
		memcpy(buf, file, flen + 1);
		return true;
	}
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t dlen = end ? (size_t)(end - path) : strlen(path);

		/* An empty entry is the cwd, as execvp takes it. */
		if (dlen + 1 + flen < size) {
			size_t n = 0;

			if (dlen) {
				memcpy(buf, path, dlen);
				n = dlen;
				buf[n++] = '/';
			}
			memcpy(buf + n, file, flen + 1);
			if (SYS4(SYS_faccessat, AT_FDCWD, buf, X_OK, 0) == 0)
				return true;
		}
		path += dlen;
		if (*path == ':')
			path++;
	}
	return false;
}

unsigned fe_sec_addr(const char *sock, struct sockaddr_un *sa)
{
	size_t len = strlen(sock);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (len == 0 || len >= sizeof(sa->sun_path))
		return 0;
	memcpy(sa->sun_path, sock, len);
	if (sock[0] == '@') {
		sa->sun_path[0] = '\0';
		return (unsigned)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	return (unsigned)sizeof(*sa);
}

#ifdef FE_SEC_ARCH
/* Every trapped number, for the filter, with the argument whose O_CREAT
 * decides (-1: none: always trapped). */
static const struct {
	unsigned nr;
	int creat_arg;
} trapped[] = {
#define FE_SEC_NR(nr, flags, a0, a1, a2, a3, a4, a5, size)            \
	{ nr, ((flags) & FE_SEC_CREAT1) ? 1 : ((flags) & FE_SEC_CREAT2) ? 2 \
								      : -1 },
	FE_SEC_CALLS(FE_SEC_NR)
#undef FE_SEC_NR
};
#define NTRAP (sizeof(trapped) / sizeof(trapped[0]))
/* A conditional row's block: load the argument, test, two returns. */
#define BLOCK 4
/* The longest jump is past the rest of the chain, the returns and the
 * blocks: under 255 with up to 8 conditional rows (3 today). */
_Static_assert(NTRAP + 2 + 8 * BLOCK < 255, "a jump past 255 instructions");

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))

/*
 * The program: another ABI's call (x32, a 32-bit one) and every number
 * not listed go to the kernel; the probe number gets its errno; a listed
 * one goes to the supervisor, an open only with O_CREAT.  Jumps go
 * forward only: each conditional row has its block after the two
 * returns.  Returns the instructions written.
 */
static size_t build(struct sock_filter *f)
{
	size_t k = 0, ret_allow, block;

	f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS,
		      offsetof(struct seccomp_data, arch));
	f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, FE_SEC_ARCH, 1, 0);
	f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS,
		      offsetof(struct seccomp_data, nr));
	f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, FE_SEC_PROBE_NR, 0, 1);
	f[k++] = STMT(BPF_RET | BPF_K,
		      SECCOMP_RET_ERRNO | FE_SEC_PROBE_ERRNO);
	ret_allow = k + NTRAP;
	block = ret_allow + 2;
	for (size_t i = 0; i < NTRAP; i++, k++) {
		size_t to = trapped[i].creat_arg < 0 ? ret_allow + 1 : block;

		f[k] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, trapped[i].nr,
			    (unsigned char)(to - k - 1), 0);
		if (trapped[i].creat_arg >= 0)
			block += BLOCK;
	}
	f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	for (size_t i = 0; i < NTRAP; i++) {
		if (trapped[i].creat_arg < 0)
			continue;
		/* The low 32 bits, where the flags are (little-endian). */
		f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS,
			      offsetof(struct seccomp_data,
				       args[trapped[i].creat_arg]));
		f[k++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1);
		f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
		f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	return k;
}
#define NPROG (NTRAP * (1 + BLOCK) + 8)

/* The filter, with its listener: the fd or -errno. */
static long install(fe_sys_fn *sys)
{
	struct sock_filter f[NPROG];
	struct sock_fprog prog = { .filter = f };
	long lfd;

	prog.len = (unsigned short)build(f);
	if (SYS5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* Killable only once received: a signal before that interrupts
	 * the call as the kernel would, after it the supervisor's answer
	 * (which may have changed a record) is the call's. */
	lfd = SYS3(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		   SECCOMP_FILTER_FLAG_NEW_LISTENER |
			   SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
		   &prog);
	if (lfd == -EINVAL)
		lfd = SYS3(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return lfd;
}

/* Send lfd and the hello on s, then wait for the supervisor's byte. */
static long hand_over(fe_sys_fn *sys, int s, int lfd,
		      const struct fe_sec_hello *hello)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)hello, sizeof(*hello) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	char ack;
	long r;

	memset(&u, 0, sizeof(u));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	do
		r = SYS3(SYS_sendmsg, s, &mh, MSG_NOSIGNAL);
	while (r == -EINTR);
	if (r != (long)sizeof(*hello))
		return r < 0 ? r : -EPIPE;
	do
		r = SYS3(SYS_read, s, &ack, 1);
	while (r == -EINTR);
	return r == 1 ? 0 : -EPIPE;
}

int fe_sec_arm(fe_sys_fn *sys, const char *sock,
	       const struct fe_sec_hello *hello, const char **why)
{
	struct sockaddr_un sa;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	unsigned alen = sock ? fe_sec_addr(sock, &sa) : 0;
	long s, lfd, r;

	*why = "no seccomp supervisor in this session (seccomp user "
	       "notification is refused here)";
	if (!alen)
		return -ENOENT;
	s = SYS3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		*why = "socket";
		return (int)s;
	}
	r = SYS3(SYS_connect, s, &sa, alen);
	if (r == 0)
		r = SYS5(SYS_getsockopt, s, SOL_SOCKET, SO_PEERCRED, &cr,
			 &crlen);
	/* The real uid from the auxiliary vector: no call that a library
	 * of ours in this process could fake. */
	if (r == 0 && cr.uid != (uid_t)getauxval(AT_UID))
		r = -EPERM; /* not our supervisor: hand it nothing */
	/* The supervisor's first byte says it is serving: without it no
	 * filter goes in, since a filter without a supervisor answers
	 * ENOSYS to every trapped call, getuid's included. */
	if (r == 0) {
		char ready;

		do
			r = SYS3(SYS_read, s, &ready, 1);
		while (r == -EINTR);
		r = r == 1 ? 0 : r < 0 ? r : -ECONNRESET;
	}
	if (r < 0) {
		*why = "cannot reach the session's supervisor";
		SYS1(SYS_close, s);
		return (int)r;
	}
	/* For Yama's ptrace_scope 1: the supervisor reads our memory. */
	SYS5(SYS_prctl, PR_SET_PTRACER, cr.pid, 0, 0, 0);
	lfd = install(sys);
	if (lfd < 0) {
		*why = "seccomp user notification is refused here";
		SYS1(SYS_close, s);
		return (int)lfd;
	}
	r = hand_over(sys, (int)s, (int)lfd, hello);
	SYS1(SYS_close, lfd);
	SYS1(SYS_close, s);
	if (r < 0)
		*why = "the supervisor went away";
	return (int)r;
}
#else
int fe_sec_arm(fe_sys_fn *sys, const char *sock,
	       const struct fe_sec_hello *hello, const char **why)
{
	(void)sys, (void)sock, (void)hello;
	*why = "no seccomp filter for this architecture";
	return -ENOSYS;
}
#endif

FE_HOT bool fe_sec_filtered(fe_sys_fn *sys)
{
	return SYS1(FE_SEC_PROBE_NR, 0) == -FE_SEC_PROBE_ERRNO;
}
