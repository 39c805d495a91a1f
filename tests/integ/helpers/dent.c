/*
 * dent: directory entries through each readdir entry point.
 *   dent CALL DIR    prints "NAME TYPE" for each entry but . and ..,
 *                    TYPE one of reg dir chr blk fifo sock lnk unknown
 *   dent -o CALL DIR...  each DIR in turn as open(O_DIRECTORY) +
 *                    fdopendir, then closedir: one fd number for all of
 *                    them, reused; "DIR NAME TYPE"
 *   dent -d CALL DIR...  the same, each DIR by opendir
 * CALL: readdir readdir64 readdir_r readdir64_r
 */
#include "helper.h"

#include <dirent.h>
#include <fcntl.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static const char *tname(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return "reg";
	case DT_DIR:
		return "dir";
	case DT_CHR:
		return "chr";
	case DT_BLK:
		return "blk";
	case DT_FIFO:
		return "fifo";
	case DT_SOCK:
		return "sock";
	case DT_LNK:
		return "lnk";
	default:
		return "unknown";
	}
}

static const char *prefix = "";

static void show(const char *name, unsigned char t)
{
	if (strcmp(name, ".") && strcmp(name, ".."))
		printf("%s%s %s\n", prefix, name, tname(t));
}

static int list(DIR *d, const char *c)
{
	for (;;) {
		errno = 0;
		if (!strcmp(c, "readdir")) {
			struct dirent *e = readdir(d);

			if (!e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir64")) {
			struct dirent64 *e = readdir64(d);

			if (!e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir_r")) {
			struct dirent buf, *e;

			if (readdir_r(d, &buf, &e) != 0 || !e)
				break;
			show(e->d_name, e->d_type);
		} else if (!strcmp(c, "readdir64_r")) {
			struct dirent64 buf, *e;

			if (readdir64_r(d, &buf, &e) != 0 || !e)
				break;
			show(e->d_name, e->d_type);
		} else {
			return usage("dent [-o|-d] CALL DIR...");
		}
	}
	if (errno)
		return err_out(errno);
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	char buf[4096];
	DIR *d;

	if (argc == 3 && argv[1][0] != '-') {
		d = opendir(argv[2]);
		return d ? list(d, argv[1]) : err_out(errno);
	}
	if (argc < 4 || (strcmp(argv[1], "-o") && strcmp(argv[1], "-d")))
		return usage("dent [-o|-d] CALL DIR...");
	for (int i = 3; i < argc; i++) {
		int fd = -1, r;

		if (argv[1][1] == 'd')
			d = opendir(argv[i]);
		else if ((fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			d = fdopendir(fd);
		else
			d = NULL;
		if (!d)
			return err_out(errno);
		snprintf(buf, sizeof(buf), "%s ", argv[i]);
		prefix = buf;
		r = list(d, argv[2]);
		if (r)
			return r;
	}
	return 0;
}
