/*
 * mktar: write a ustar archive of N entries that only root could unpack
 * as it is: the tree of mktree (ROOT/dM/dL/fF, 100 entries a leaf
 * directory, 32 leaves a middle one, every member empty) with owners
 * spread over 97 uids and 89 gids (one entry in 5 root's), and in every
 * leaf a character device, a block device, a setuid and a setgid file
 * and a symlink.  Written directly rather than by tar under a fake root,
 * so that what the benchmark unpacks owes nothing to the tools it
 * measures.  Run outside any session.  Prints the number of entries
 * (directories included).
 *
 *   mktar [-n] FILE [N] [ROOT]   N defaults to 100,000, ROOT to "r"
 *
 * -n: the native variant: each device is an empty regular file of the
 * same name and permissions, so that an unprivileged tar makes as many
 * inodes, and the archive is as long, as in a session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PER_LEAF 100
#define PER_MID 32
#define MTIME 1000000000L

struct ustar {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12];
	char chksum[8], typeflag, linkname[100], magic[6], version[2];
	char uname[32], gname[32], devmajor[8], devminor[8], prefix[155];
	char pad[12];
};

static long entries;

/* v as len - 1 octal digits and a NUL (every value here fits). */
static void octal(char *field, size_t len, unsigned long v)
{
	field[len - 1] = '\0';
	for (size_t i = len - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
}

/* One header block; no names: tar then maps the numeric ids, as it would
 * for owners the extracting system does not know. */
static int put(FILE *out, const char *name, char type, unsigned mode,
	       unsigned uid, unsigned gid, const char *link, unsigned major,
	       unsigned minor)
{
	struct ustar h;
	unsigned sum = 0;

	memset(&h, 0, sizeof(h));
	if (strlen(name) >= sizeof(h.name))
		return -1;
	memcpy(h.name, name, strlen(name));
	octal(h.mode, sizeof(h.mode), mode);
	octal(h.uid, sizeof(h.uid), uid);
	octal(h.gid, sizeof(h.gid), gid);
	octal(h.size, sizeof(h.size), 0);
	octal(h.mtime, sizeof(h.mtime), MTIME);
	h.typeflag = type;
	if (link)
		memcpy(h.linkname, link, strlen(link));
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	octal(h.devmajor, sizeof(h.devmajor), major);
	octal(h.devminor, sizeof(h.devminor), minor);
	memset(h.chksum, ' ', sizeof(h.chksum));
	for (size_t i = 0; i < sizeof(h); i++)
		sum += ((unsigned char *)&h)[i];
	octal(h.chksum, 7, sum); /* six digits, a NUL, then the space */
	entries++;
	return fwrite(&h, sizeof(h), 1, out) == 1 ? 0 : -1;
}

/* Owner of the i-th entry: mostly other users', some root's. */
static unsigned owner_uid(long i)
{
	return i % 5 == 0 ? 0 : 1000 + (unsigned)(i % 97);
}

static unsigned owner_gid(long i)
{
	return i % 5 == 0 ? 0 : 2000 + (unsigned)(i % 89);
}

static int leaf_entry(FILE *out, const char *dir, long leaf, int f,
		      int native)
{
	char name[100];
	long i = entries;
	unsigned u = owner_uid(i), g = owner_gid(i);

	snprintf(name, sizeof(name), "%s/f%d", dir, f);
	switch (f) {
	case 0: /* a terminal: crw--w---- root:tty as in /dev */
		return native ? put(out, name, '0', 0620, u, g, NULL, 0, 0)
			      : put(out, name, '3', 0620, u, g, NULL, 4,
				    (unsigned)(leaf % 256));
	case 1: /* a disk */
		return native ? put(out, name, '0', 0660, u, g, NULL, 0, 0)
			      : put(out, name, '4', 0660, u, g, NULL, 8,
				    (unsigned)(leaf % 256));
	case 2:
		return put(out, name, '0', 04755, u, g, NULL, 0, 0);
	case 3:
		return put(out, name, '0', 02755, u, g, NULL, 0, 0);
	case 4:
		return put(out, name, '2', 0777, u, g, "f5", 0, 0);
	default:
		return put(out, name, '0', f % 3 ? 0644 : 0755, u, g, NULL,
			   0, 0);
	}
}

int main(int argc, char **argv)
{
	static const char zero[10240];
	int native = 0, a = 1;
	long n, made = 0, blocks;
	const char *root;
	char dir[100];
	FILE *out;

	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		native = 1;
		a++;
	}
	if (argc - a < 1 || argc - a > 3) {
		fprintf(stderr, "usage: mktar [-n] FILE [N] [ROOT]\n");
		return 2;
	}
	n = argc - a > 1 ? atol(argv[a + 1]) : 100000;
	root = argc - a > 2 ? argv[a + 2] : "r";
	if (strlen(root) > 40) {
		fprintf(stderr, "mktar: ROOT too long\n");
		return 2;
	}
	out = fopen(argv[a], "wx");
	if (!out) {
		perror(argv[a]);
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/", root);
	if (put(out, dir, '5', 0755, 0, 0, NULL, 0, 0) != 0)
		goto fail;
	for (long leaf = 0; made < n; leaf++) {
		if (leaf % PER_MID == 0) {
			snprintf(dir, sizeof(dir), "%s/d%ld/", root,
				 leaf / PER_MID);
			if (put(out, dir, '5', 0755, owner_uid(entries),
				owner_gid(entries), NULL, 0, 0) != 0)
				goto fail;
		}
		snprintf(dir, sizeof(dir), "%s/d%ld/d%ld/", root,
			 leaf / PER_MID, leaf % PER_MID);
		if (put(out, dir, '5', 0755, owner_uid(entries),
			owner_gid(entries), NULL, 0, 0) != 0)
			goto fail;
		dir[strlen(dir) - 1] = '\0';
		for (int f = 0; f < PER_LEAF && made < n; f++, made++)
			if (leaf_entry(out, dir, leaf, f, native) != 0)
				goto fail;
	}
	/* Two zero blocks end the archive; zeros fill the last record. */
	blocks = entries + 2;
	blocks += (20 - blocks % 20) % 20;
	if (fwrite(zero, 512, (size_t)(blocks - entries), out) !=
	    (size_t)(blocks - entries))
		goto fail;
	if (fclose(out) != 0) {
		perror(argv[a]);
		return 1;
	}
	printf("%ld\n", entries);
	return 0;
fail:
	perror(argv[a]);
	fclose(out);
	return 1;
}
