/*
 * nonotif: runs a command where the kernel refuses seccomp user
 * notification, as a kernel older than 5.0 or a container's own filter
 * does: seccomp(2) with SECCOMP_FILTER_FLAG_NEW_LISTENER fails with
 * EINVAL, every other call (other filters included) goes through.
 *   nonotif CMD [ARG...]
 * For the seccomp tests' "refused" case: a session must say so in one
 * line and run its programs unfaked, never fail or hang.
 */
#include "helper.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARG1_LO offsetof(struct seccomp_data, args[1])

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LO),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
			 SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (argc < 2)
		return usage("nonotif CMD [ARG...]");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		printf("filter: ");
		return err_out(errno);
	}
	execvp(argv[1], argv + 1);
	printf("exec %s: ", argv[1]);
	return err_out(errno);
}
